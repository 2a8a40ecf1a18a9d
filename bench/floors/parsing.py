"""Floor of detection and parsing: one RTDS trade frame to a typed trade, shared by its copies.

    .venv/bin/python bench/floors/parsing.py [--copies 10]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from decimal import Decimal

from floor_clock import cpu_ms

FRAME = json.dumps({
    "topic": "activity", "type": "trades", "timestamp": 1765000000000,
    "payload": {"proxyWallet": "0x" + "ab" * 20, "asset": "7" * 77, "side": "BUY",
                "size": 20, "price": 0.5, "timestamp": 1765000000,
                "conditionId": "0x" + "cd" * 32, "outcome": "Yes", "outcomeIndex": 0,
                "slug": "scale-0", "transactionHash": "0x" + "ef" * 32}})


@dataclass(slots=True)
class Trade:
    """The fields a copy needs."""

    wallet: str
    asset: str
    side: str
    size: Decimal
    price: Decimal
    timestamp: int


def parse() -> Trade:
    """One frame, decoded and typed."""
    p = json.loads(FRAME, parse_float=Decimal)["payload"]
    return Trade(p["proxyWallet"].lower(), p["asset"], p["side"], Decimal(p["size"]),
                 p["price"], int(p["timestamp"]))


def measure(copies: int) -> float:
    """ms of CPU per copy order (one frame parsed per fill of ``copies``)."""
    return cpu_ms(parse) / copies


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    print(f"detect: {measure(parser.parse_args().copies):.4f} ms per copy")
