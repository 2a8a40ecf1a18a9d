"""The venue's history: fills, redemptions, CLOB trades and price points, in sequence.

The Data API, the RTDS feed and the CLOB's trade and price-history routes read it.
Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

import time
import uuid
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
    # Shown as this many trade entities, ``part_every`` s apart (lifecycle.py's split
    # switch): the venue breaks a match into several trades (ACCOUNTS.md §12).
    parts: int = 1
    part_every: float = 0.0

    def split(self) -> list[TradePart]:
        """The trade entities ``GET /data/trades`` shows for this match, first to last.

        Each part takes an equal share of the size (the last the rest), cut along the maker
        fills; the first keeps the trade's id and time, part ``i`` comes ``i * part_every``
        s later under an id of its own.
        """
        parts = self.parts if self.parts > 1 and self.size >= self.parts else 1
        if parts == 1:
            return [TradePart(self.id, self, tuple(self.maker_fills), self.size,
                              self.price, self.matched_at)]
        quota = self.size // parts
        pieces: list[list[tuple[BookOrder, int, Decimal]]] = [[] for _ in range(parts)]
        index, room = 0, quota
        for order, shares, price in self.maker_fills:
            while shares > 0:
                take = shares if index == parts - 1 else min(shares, room)
                pieces[index].append((order, take, price))
                shares -= take
                room -= take
                if room == 0 and index < parts - 1:
                    index, room = index + 1, quota
        return [TradePart(self.id if i == 0 else str(uuid.uuid5(uuid.UUID(self.id), str(i))),
                          self, tuple(piece), sum(s for _, s, _ in piece),
                          self._taker_price(piece[0]), self.matched_at + i * self.part_every)
                for i, piece in enumerate(pieces) if piece]

    def _taker_price(self, fill: tuple[BookOrder, int, Decimal]) -> Decimal:
        """A maker fill's price in the taker's token (a mint or merge maker holds the other)."""
        order, _, price = fill
        return price if order.token_id == self.taker_order.token_id else 1 - price


@dataclass(frozen=True)
class TradePart:
    """One trade entity of ``GET /data/trades``: a whole match, or one part of a split one."""

    id: str
    trade: ClobTrade
    maker_fills: tuple[tuple[BookOrder, int, Decimal], ...]
    size: int
    price: Decimal      # in the taker's token
    matched_at: float   # when it appears (and its settlement starts)

    @property
    def match_time(self) -> int:
        """Its ``match_time``, epoch seconds."""
        return int(self.matched_at)


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
