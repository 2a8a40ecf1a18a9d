"""The venue's history: fills, redemptions, CLOB trades and price points, in sequence.

The Data API, the RTDS feed and the CLOB's trade and price-history routes read it.
Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal

from devstack.venue.catalog import Market
from devstack.venue.matching import BookOrder


@dataclass
class Fill:
    """One side of one match, as the Data API and RTDS report it."""

    proxy_wallet: str  # checksummed
    side: str
    asset: str
    condition_id: str
    size: int  # shares, base units
    price: Decimal
    usdc: int  # pUSD paid or received, base units (fees excluded)
    fee: int
    timestamp: int
    transaction_hash: str
    role: str  # TAKER or MAKER
    outcome: str
    outcome_index: int
    order_id: str
    trade_id: str
    seq: int
    # When the venue made the fill visible (Data API and RTDS), epoch seconds: the start of
    # a copier's overhead in the latency benchmark (stamped by the venue, like arrivals).
    published_at: float = 0.0


@dataclass
class Redemption:
    """A REDEEM activity row."""

    proxy_wallet: str
    condition_id: str
    asset: str
    size: int
    usdc: int
    timestamp: int
    transaction_hash: str
    outcome: str
    outcome_index: int
    seq: int


@dataclass
class ClobTrade:
    """A CLOB trade (GET /data/trades): one taker order against its maker orders."""

    id: str
    taker_order: BookOrder
    market: Market
    size: int
    price: Decimal
    taker_usdc: int
    fee_rate_bps: int
    match_time: int
    transaction_hash: str
    maker_fills: list[tuple[BookOrder, int, Decimal]] = field(default_factory=list)
    matched_at: float = 0.0  # epoch seconds (settlement statuses run from here)
    fails: bool = False      # ends FAILED (a control switch chose it; lifecycle.py)


class Tape:
    """Everything that happened, oldest first, numbered by one sequence shared with orders."""

    def __init__(self) -> None:
        self.fills: list[Fill] = []
        self.redemptions: list[Redemption] = []
        self.clob_trades: dict[str, ClobTrade] = {}
        self.price_history: dict[str, list[tuple[int, Decimal]]] = {}
        self._seq = 0

    def next_seq(self) -> int:
        """The next number of the venue's one sequence (orders, fills, redemptions)."""
        self._seq += 1
        return self._seq

    def open_history(self, market: Market, at: int) -> None:
        """Start a market's price history at its fair price."""
        self.price_history[market.token_ids[0]] = [(at, market.fair_price)]
        self.price_history[market.token_ids[1]] = [(at, 1 - market.fair_price)]

    def record_trade(self, trade: ClobTrade, fills: list[Fill], book_price: Decimal,
                     at: int) -> None:
        """Keep a match: its CLOB trade, its fills (stamped published now) and its price."""
        market = trade.market
        self.price_history[market.token_ids[0]].append((at, book_price))
        self.price_history[market.token_ids[1]].append((at, 1 - book_price))
        self.clob_trades[trade.id] = trade
        self.fills.extend(fills)
        published = time.time()
        for fill in fills:
            fill.published_at = published

    def record_redemption(self, redemption: Redemption) -> None:
        """Keep a REDEEM row."""
        self.redemptions.append(redemption)

    def last_taker_side(self, token_id: str) -> str:
        """The side of the latest taker fill in a token ("" before any)."""
        for fill in reversed(self.fills):
            if fill.asset == token_id and fill.role == "TAKER":
                return fill.side
        return ""
