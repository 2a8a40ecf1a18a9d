"""Typed venue data: what Gamma, the CLOB, the Data API and RTDS answer, with Decimal money.

Prices, sizes and amounts are ``Decimal`` parsed from the venue's exact text; token ids stay
strings (they are 256-bit integers); timestamps keep the venue's unit and say it in the name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from operator import attrgetter
from typing import Any, Generic, TypeVar

from venue import fees


class Side(StrEnum):
    """A trade's or an order's side, as the venue writes it on the wire ("BUY", "SELL").

    The one side type of the code: text from elsewhere (the API's "buy", a stored column)
    becomes a ``Side`` once, where it comes in (``Side.parse``), and goes back to text only
    where it goes out (``Side.BUY.lower()`` is the API's "buy").
    """

    BUY = "BUY"
    SELL = "SELL"

    @classmethod
    def parse(cls, text: object) -> Side:
        """The side named by ``text`` in any case; ValueError for anything else."""
        if type(text) is cls:
            return text
        try:
            return cls(str(text).strip().upper())
        except ValueError:
            raise ValueError(f"side must be BUY or SELL, not {text!r}") from None


BUY = Side.BUY
SELL = Side.SELL

# Tick sizes the CLOB allows (0.005 and 0.0025 since July 2026, sports spreads); anything
# else is a parsing or configuration error.
ALLOWED_TICK_SIZES: frozenset[Decimal] = frozenset(
    Decimal(t) for t in ("0.1", "0.01", "0.005", "0.0025", "0.001", "0.0001")
)

ORDER_TYPES: frozenset[str] = frozenset({"GTC", "GTD", "FOK", "FAK"})


@dataclass(frozen=True, slots=True)
class Tag:
    """A Gamma tag (category) such as ``sports`` or ``world-affairs``."""

    id: str
    label: str
    slug: str


@dataclass(frozen=True, slots=True)
class FeeSchedule:
    """Gamma ``feeSchedule``: taker fee = shares x rate x (p(1-p))^exponent."""

    rate: Decimal
    exponent: Decimal
    taker_only: bool
    rebate_rate: Decimal

    def taker_fee(self, shares: Decimal, price: Decimal) -> Decimal:
        """Platform fee in pUSD for a taker fill of ``shares`` at ``price``, as charged."""
        return fees.taker_fee(self.rate, self.exponent, shares, price)


@dataclass(frozen=True, slots=True)
class MarketParameters:
    """A market's live trading parameters, from CLOB ``/clob-markets/<cid>`` (ACCOUNTS.md
    §11): tick size ``mts``, minimum order size ``mos``, fee model ``fd`` (None: fee-free),
    neg-risk ``nr`` and the taker delay (seconds; 0: none)."""

    condition_id: str
    tick_size: Decimal | None
    min_order_size: Decimal | None
    fees: FeeSchedule | None
    neg_risk: bool | None
    taker_delay: Decimal = Decimal(0)


@dataclass(frozen=True, slots=True)
class Market:
    """A binary market from Gamma, with its outcomes paired to CLOB token ids by index."""

    id: str
    condition_id: str
    slug: str
    question: str
    outcomes: tuple[str, ...]
    outcome_prices: tuple[Decimal, ...]
    clob_token_ids: tuple[str, ...]
    active: bool
    closed: bool
    archived: bool
    accepting_orders: bool
    enable_order_book: bool
    neg_risk: bool
    neg_risk_market_id: str | None
    tick_size: Decimal | None
    min_order_size: Decimal | None
    best_bid: Decimal | None
    best_ask: Decimal | None
    last_trade_price: Decimal | None
    liquidity: Decimal | None
    volume: Decimal | None
    volume_24hr: Decimal | None
    start_date: datetime | None
    end_date: datetime | None
    description: str
    image: str
    icon: str
    group_item_title: str
    tags: tuple[Tag, ...]
    event_slugs: tuple[str, ...]
    fees_enabled: bool
    fee_type: str | None
    fee_schedule: FeeSchedule | None
    uma_resolution_statuses: tuple[str, ...]
    # Protocol V2 (ACCOUNTS.md §11): Gamma's ``version`` ("v1" or "v2") decides the trading
    # ids, ``positionIds`` for a V2 market and ``clobTokenIds`` for a V1 one.
    position_ids: tuple[str, ...] = ()
    version: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_v2(self) -> bool:
        """Whether the market is a protocol-V2 one (its positions trade by position id)."""
        return self.version.lower() == "v2" and bool(self.position_ids)

    @property
    def token_ids(self) -> tuple[str, ...]:
        """The ids its outcomes trade by (orders, books, positions, claims), by ``version``:
        ``positionIds`` for a V2 market, ``clobTokenIds`` otherwise."""
        return self.position_ids if self.is_v2 else self.clob_token_ids

    def token_id_for(self, outcome: str) -> str:
        """Token id of the outcome labelled ``outcome`` (case-insensitive)."""
        for label, token in zip(self.outcomes, self.token_ids, strict=False):
            if label.lower() == outcome.lower():
                return token
        raise KeyError(outcome)

    def outcome_for(self, token_id: str) -> str:
        """Outcome label of ``token_id``."""
        return self.outcomes[self.token_ids.index(token_id)]

    @property
    def resolved(self) -> bool:
        """Whether the market is closed with its outcome decided (UMA ``resolved``)."""
        return self.closed and "resolved" in self.uma_resolution_statuses

    def payout(self, token_id: str) -> Decimal | None:
        """What one share of ``token_id`` redeems for once resolved (its outcome price: 1 or
        0, a split or neg-risk market's fraction); None while unresolved or not its token."""
        if not self.resolved or token_id not in self.token_ids:
            return None
        index = self.token_ids.index(token_id)
        return self.outcome_prices[index] if index < len(self.outcome_prices) else None


@dataclass(frozen=True, slots=True)
class Event:
    """A Gamma event grouping one or more markets."""

    id: str
    slug: str
    title: str
    description: str
    active: bool
    closed: bool
    archived: bool
    neg_risk: bool
    liquidity: Decimal | None
    volume: Decimal | None
    start_date: datetime | None
    end_date: datetime | None
    markets: tuple[Market, ...]
    tags: tuple[Tag, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Gamma ``/public-search`` answer: matching events and paging hints."""

    events: tuple[Event, ...]
    tags: tuple[Tag, ...]
    has_more: bool
    total_results: int | None


@dataclass(frozen=True, slots=True)
class Level:
    """One price level of a book side: shares resting at a price."""

    price: Decimal
    size: Decimal


_price = attrgetter("price")


class _BookDerived:
    """Slots an OrderBook fills on first use with what it derives from its levels.

    They are not dataclass fields, so equality, hashing, repr and pickling ignore them; an
    unpickled or copied book computes them again. The copy engine prices and walks one book
    for every follower of a fill, so each is computed once per book instead of per order.
    """

    __slots__ = ("_asks_best_first", "_best", "_bids_best_first")


@dataclass(frozen=True, slots=True)
class OrderBook(_BookDerived):
    """CLOB ``/book`` snapshot; sides in the venue's order (worst first, best last)."""

    market: str
    asset_id: str
    timestamp_ms: int
    hash: str
    bids: tuple[Level, ...]
    asks: tuple[Level, ...]
    min_order_size: Decimal | None
    tick_size: Decimal | None
    neg_risk: bool | None
    last_trade_price: Decimal | None

    @property
    def best_bid(self) -> Decimal | None:
        """Highest bid price, or None on an empty side."""
        return self.top_of_book()[0]

    @property
    def best_ask(self) -> Decimal | None:
        """Lowest ask price, or None on an empty side."""
        return self.top_of_book()[1]

    @property
    def midpoint(self) -> Decimal | None:
        """Mean of best bid and best ask when both exist."""
        return self.top_of_book()[2]

    def top_of_book(self) -> tuple[Decimal | None, Decimal | None, Decimal | None]:
        """(best bid, best ask, midpoint), computed on first use and kept."""
        try:
            return self._best
        except AttributeError:  # first use (the slot is empty until then)
            bid = max(map(_price, self.bids), default=None)
            ask = min(map(_price, self.asks), default=None)
            return self._keep("_best", (
                bid, ask, None if bid is None or ask is None else (bid + ask) / 2))

    def asks_best_first(self) -> tuple[Level, ...]:
        """The asks sorted by price, lowest first (ties keep the venue's order)."""
        try:
            return self._asks_best_first
        except AttributeError:
            return self._keep("_asks_best_first", tuple(sorted(self.asks, key=_price)))

    def bids_best_first(self) -> tuple[Level, ...]:
        """The bids sorted by price, highest first (ties keep the venue's order)."""
        try:
            return self._bids_best_first
        except AttributeError:
            return self._keep("_bids_best_first",
                              tuple(sorted(self.bids, key=_price, reverse=True)))

    def _keep(self, slot: str, value: Any) -> Any:
        object.__setattr__(self, slot, value)  # the book is frozen; its derived slots are not
        return value

    def computed_hash(self) -> str:
        """SHA-1 of the book as the venue hashes it (see venue-samples README)."""

        def text(value: Decimal | None) -> str:
            return "" if value is None else str(value)

        payload = {
            "market": self.market,
            "asset_id": self.asset_id,
            "timestamp": str(self.timestamp_ms),
            "hash": "",
            "bids": [{"price": str(lv.price), "size": str(lv.size)} for lv in self.bids],
            "asks": [{"price": str(lv.price), "size": str(lv.size)} for lv in self.asks],
            "min_order_size": text(self.min_order_size),
            "tick_size": text(self.tick_size),
            "neg_risk": self.neg_risk,
            "last_trade_price": text(self.last_trade_price),
        }
        compact = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha1(compact.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class PriceChange:
    """CLOB market-channel ``price_change`` entry: the new total size at one level."""

    market: str
    asset_id: str
    price: Decimal
    size: Decimal
    side: str
    hash: str
    best_bid: Decimal | None
    best_ask: Decimal | None
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class LastTradePrice:
    """CLOB market-channel ``last_trade_price`` message."""

    market: str
    asset_id: str
    price: Decimal
    size: Decimal
    side: str
    fee_rate_bps: int
    timestamp_ms: int
    transaction_hash: str


@dataclass(frozen=True, slots=True)
class PriceHistoryPoint:
    """One point of ``/prices-history``: unix seconds and price."""

    t: int
    p: Decimal


@dataclass(frozen=True, slots=True)
class ActivityItem:
    """A wallet's activity row or trade (Data API v1/v2, RTDS ``activity/trades``).

    ``type`` is ``TRADE`` for fills (``/trades`` and RTDS rows carry no type and are trades);
    ``role`` is ``maker``/``taker`` when the source says so, else None.
    """

    proxy_wallet: str
    timestamp: int
    condition_id: str
    type: str
    asset: str
    side: str
    size: Decimal
    price: Decimal
    usdc_size: Decimal | None
    outcome: str
    outcome_index: int | None
    transaction_hash: str
    title: str
    slug: str
    event_slug: str
    name: str
    pseudonym: str
    fee: Decimal | None = None
    role: str | None = None

    @property
    def is_trade(self) -> bool:
        """True for fills (BUY/SELL trades), False for redeems, splits, rewards..."""
        return self.type == "TRADE" and self.side in (BUY, SELL)

    @property
    def wallet(self) -> str:
        """The proxy wallet, lowercased: RTDS sends checksummed case, Data API lowercase."""
        return self.proxy_wallet.lower()

    @property
    def dedup_key(self) -> tuple[str, str, str, str]:
        """Identity of one fill of one wallet across polling and the live feed."""
        return (self.transaction_hash.lower(), self.asset, self.side, self.wallet)


@dataclass(frozen=True, slots=True)
class ActivityPage:
    """A cursor page of Data API v2 activity or trades."""

    items: tuple[ActivityItem, ...]
    next_cursor: str | None
    has_more: bool


# Data API v2 position statuses (ACCOUNTS.md §12, docs migrate/data-api-v1-to-v2). Any
# other text the venue sends is kept as it is: a status we do not know never fails a read.
OPEN, REDEEMABLE, REDEEMABLE_LOST, MERGEABLE, CLOSED = (
    "OPEN", "REDEEMABLE", "REDEEMABLE_LOST", "MERGEABLE", "CLOSED")
POSITION_STATUSES = (OPEN, REDEEMABLE, REDEEMABLE_LOST, MERGEABLE, CLOSED)


def position_status(*, redeemable: bool, mergeable: bool, size: Decimal,
                    price: Decimal) -> str:
    """The v2 status a holding without one stands for (a v1 row, a paper position): a
    resolved one priced 0 lost."""
    if redeemable:
        return REDEEMABLE if price > 0 else REDEEMABLE_LOST
    if mergeable:
        return MERGEABLE
    return OPEN if size > 0 else CLOSED


@dataclass(frozen=True, slots=True)
class Position:
    """A wallet's position in one outcome token (Data API ``/positions``)."""

    proxy_wallet: str
    asset: str
    condition_id: str
    size: Decimal
    avg_price: Decimal
    initial_value: Decimal | None
    current_value: Decimal
    cash_pnl: Decimal | None
    realized_pnl: Decimal | None
    cur_price: Decimal
    redeemable: bool
    mergeable: bool
    title: str
    slug: str
    event_slug: str
    outcome: str
    outcome_index: int | None
    opposite_outcome: str
    opposite_asset: str
    end_date: str
    negative_risk: bool
    # Data API v2 ``status`` as the venue wrote it, unknown ones too (ACCOUNTS.md §12):
    # OPEN, REDEEMABLE, REDEEMABLE_LOST, MERGEABLE, CLOSED; derived for v1 rows.
    status: str = "OPEN"


@dataclass(frozen=True, slots=True)
class PositionPage:
    """A cursor page of Data API v2 positions."""

    items: tuple[Position, ...]
    next_cursor: str | None
    has_more: bool


ItemT = TypeVar("ItemT")


@dataclass(frozen=True, slots=True)
class KeysetPage(Generic[ItemT]):
    """A Gamma keyset page (``/markets/keyset``, ``/events/keyset``): no cursor on the last."""

    items: tuple[ItemT, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """A trader on the Data API leaderboard."""

    rank: int
    proxy_wallet: str
    user_name: str
    x_username: str
    verified_badge: bool
    vol: Decimal
    pnl: Decimal
    profile_image: str


@dataclass(frozen=True, slots=True)
class OpenOrder:
    """A resting order from ``GET /data/orders`` (sizes as the venue sends them)."""

    id: str
    status: str
    owner: str
    maker_address: str
    market: str
    asset_id: str
    side: str
    original_size: Decimal
    size_matched: Decimal
    price: Decimal
    outcome: str
    expiration: int
    order_type: str
    # A hint only: deprecated from 2026-12-14, when it may be empty while the order has
    # fills (ACCOUNTS.md §12); the fills are the /data/trades naming the order.
    associate_trades: tuple[str, ...]
    created_at: int

    @property
    def is_live(self) -> bool:
        """True for ``LIVE`` and ``ORDER_STATUS_LIVE`` (both spellings are seen)."""
        return self.status.upper().removeprefix("ORDER_STATUS_") == "LIVE"


@dataclass(frozen=True, slots=True)
class OpenOrdersPage:
    """One page of open orders and the cursor of the next (``LTE=`` ends)."""

    orders: tuple[OpenOrder, ...]
    next_cursor: str

    @property
    def is_last(self) -> bool:
        """True when no further page exists."""
        return self.next_cursor in ("", "LTE=")


@dataclass(frozen=True, slots=True)
class PostOrderResult:
    """``POST /order`` answer; amounts are decimal units (not base units)."""

    success: bool
    order_id: str
    status: str
    making_amount: Decimal | None
    taking_amount: Decimal | None
    error_msg: str
    transactions_hashes: tuple[str, ...]
    trade_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CancelResult:
    """Cancel answer: ids cancelled, and id -> reason for those that were not."""

    canceled: tuple[str, ...]
    not_canceled: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ApiCreds:
    """CLOB L2 credentials, with the signer (EOA) address they belong to."""

    api_key: str
    secret: str
    passphrase: str
    address: str

    def __repr__(self) -> str:
        # Never print the secret or passphrase into logs.
        return f"ApiCreds(api_key={self.api_key!r}, address={self.address!r})"


@dataclass(frozen=True, slots=True)
class BuilderCreds:
    """The operator's builder API key (relayer auth): key, secret, passphrase."""

    api_key: str
    secret: str
    passphrase: str

    def __repr__(self) -> str:
        # Never print the secret or passphrase into logs.
        return f"BuilderCreds(api_key={self.api_key!r})"


@dataclass(frozen=True, slots=True)
class BalanceAllowance:
    """``GET /balance-allowance``: the maker's balance (whole units) and, per spender, the
    allowance the CLOB sees (base units; max uint256 when approved)."""

    balance: Decimal
    allowances: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class RelayerApiKey:
    """One account's Relayer API key (polymarket.com → Settings → API Keys) and its address."""

    key: str
    address: str

    def __repr__(self) -> str:
        # The key alone authorizes the account's gasless wallet operations.
        return f"RelayerApiKey(address={self.address!r})"


@dataclass(frozen=True, slots=True)
class RelayerTransaction:
    """A relayer transaction as last read: its id, state, chain hash and failure reason."""

    transaction_id: str
    state: str  # a relayer_rules.TransactionState value (kept as text: the venue may add some)
    transaction_hash: str | None = None
    error: str | None = None
    # what ``GET /transactions`` lists too: the signed body's signature and nonce, its type
    # and sender (how a caller whose submit answer was lost finds its own transaction; an
    # unsigned ``WALLET-CREATE`` by its type and owner)
    signature: str | None = None
    nonce: str | None = None
    kind: str | None = None
    sender: str | None = None


@dataclass(frozen=True, slots=True)
class TickSizeChange:
    """CLOB market-channel ``tick_size_change``: a token's minimum tick moved."""

    market: str
    asset_id: str
    old_tick_size: Decimal | None
    new_tick_size: Decimal
    timestamp_ms: int
