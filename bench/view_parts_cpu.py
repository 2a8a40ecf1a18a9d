"""The keyed GET's view, part by part: the profile's dump and its wallet read, thread CPU per call.

Prints µs per call (median of the rounds) and the machine's load for: marshmallow's own
``UserProfileSchema.dump``, the compiled dump (``schemas/dump.py``, where the tree has it),
and ``wallets.address_of`` on a fresh SQLite database for a user without and with a trading
wallet. Run it from a base tree and this one alternately::

    PYTHONPATH=$PWD .venv/bin/python bench/view_parts_cpu.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _time(call: Callable[[], object], calls: int, rounds: int) -> tuple[float, list[float]]:
    figures = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(calls):
            call()
        figures.append((time.thread_time() - started) / calls * 1e6)
    return statistics.median(figures), figures


def _print(name: str, result: tuple[float, list[float]]) -> None:
    median, figures = result
    print(f"{name}: {median:.1f} µs (rounds {', '.join(f'{f:.1f}' for f in figures)}), "
          f"load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()

    from schemas.users import UserProfileSchema

    profile = {"id": uuid.uuid4(), "email": "a@example.com", "tier": "free",
               "limits": {"max_active_configs": 3, "max_api_keys": None},
               "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
               "trading_wallet_address": None}
    schema = UserProfileSchema()
    _print("marshmallow dump", _time(lambda: schema.dump(profile), args.calls, args.rounds))
    try:
        from schemas.dump import compile_dump
    except ImportError:
        print("compiled dump: not in this tree")
    else:
        fast = compile_dump(UserProfileSchema())
        _print("compiled dump", _time(lambda: fast(profile), args.calls, args.rounds))

    from models import User, database, migrate
    from models.wallet import TradingWallet
    from services.wallets import wallets

    migrate.migrate(database.bind(f"sqlite:///{tempfile.mkdtemp()}/view.db"))
    without = User.create(email="without@example.com")
    _print("address_of, no wallet",
           _time(lambda: wallets.address_of(without), args.calls, args.rounds))
    holder = User.create(email="with@example.com")
    TradingWallet.create(user=holder, address="0x" + "1" * 40, private_key_sealed="x",
                         key_id="k", funder_address="0x" + "2" * 40)
    _print("address_of, a wallet",
           _time(lambda: wallets.address_of(holder), args.calls, args.rounds))


if __name__ == "__main__":
    main()
