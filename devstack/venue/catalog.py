"""Markets, events and tags the sandbox lists, and the seeded starting catalog."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from eth_abi import encode
from eth_utils import keccak

from devstack.ctf import binary_token_ids, condition_id, protocol_position_ids
from devstack.venue.amounts import on_tick_grid
from devstack.venue.rejections import VenueRejection

TAGS: dict[str, dict[str, str]] = {
    "politics": {"id": "2", "label": "Politics"},
    "sports": {"id": "1", "label": "Sports"},
    "crypto": {"id": "21", "label": "Crypto"},
    "culture": {"id": "596", "label": "Culture"},
    "geopolitics": {"id": "100265", "label": "Geopolitics"},
    "economy": {"id": "100328", "label": "Economy"},
}


FEE_UNIT = Decimal("0.00001")  # the venue's fee rounding and smallest fee


@dataclass
class FeeSchedule:
    """Gamma feeSchedule: taker fee = shares x rate x (p(1-p))^exponent, in pUSD."""

    rate: Decimal
    exponent: int = 1
    taker_only: bool = True
    rebate_rate: Decimal = Decimal("0.15")
    fee_type: str = "standard_fees_v1"

    def taker_fee(self, shares: Decimal, price: Decimal) -> Decimal:
        """Fee in pUSD for a taker fill of `shares` at `price`, as the venue charges it:
        half-up to 5 decimals, at least 0.00001 when not zero (ACCOUNTS.md §7.6)."""
        raw = shares * self.rate * (price * (1 - price)) ** self.exponent
        if raw <= 0:
            return Decimal(0)
        return max(FEE_UNIT, raw.quantize(FEE_UNIT, ROUND_HALF_UP))

    @classmethod
    def for_category(cls, category: str, rate: Decimal, **terms: Any) -> FeeSchedule:
        """A market's schedule, with the fee type its category shows on Gamma."""
        return cls(rate=rate, fee_type="sports_fees_v3" if category == "sports"
                   else "crypto_fees_v1", **terms)


@dataclass
class Event:
    """A Gamma event grouping one or more markets."""

    id: str
    slug: str
    title: str
    description: str
    category: str
    neg_risk: bool
    neg_risk_market_id: str
    created_at: str
    start_date: str
    end_date: str
    market_ids: list[str] = field(default_factory=list)


@dataclass
class Market:
    """One binary market: a CTF condition with two outcome tokens and an order book."""

    id: str
    question: str
    slug: str
    description: str
    category: str
    event_id: str
    question_id: str
    condition_id: str
    token_ids: tuple[str, str]
    outcomes: tuple[str, str]
    neg_risk: bool
    neg_risk_market_id: str
    tick_size: Decimal
    min_order_size: Decimal
    fees: FeeSchedule | None
    fair_price: Decimal  # price of outcome 0 the house quotes around
    created_at: str
    start_date: str
    end_date: str
    group_item_title: str = ""
    position_ids: bool = False  # outcomes carry protocol-v2 position ids: Exchange V3 orders
    collateral: str = ""  # what its outcome tokens are split from (their ids derive from it)
    active: bool = True
    closed: bool = False
    winner: int | None = None  # outcome index that won, once resolved
    closed_time: str = ""
    house_liquidity: bool = True
    volume: Decimal = Decimal(0)
    last_trade_price: Decimal | None = None
    image: str = ""
    seconds_delay: int = 0  # Gamma secondsDelay: marketable orders answer "delayed"
    # The CLOB's per-market taker delay (ACCOUNTS.md §11), in ms; served as clob-markets td.
    taker_delay_ms: int = 0
    ends_at: float | None = None  # epoch s the sandbox's schedule resolves it (lifespans.py)
    # A neg-risk question of the dev chain's NegRiskAdapter the sandbox made: the adapter's
    # prepareMarket data of its event (b"": not one), to prepare it there before a split.
    neg_risk_request: bytes = b""

    def taker_delay(self) -> float:
        """Seconds a marketable order waits, delayed and not cancellable (0: none)."""
        return max(float(self.seconds_delay), self.taker_delay_ms / 1000)

    @property
    def version(self) -> str:
        """Gamma's ``version``: "v2" for a protocol-v2 market, else "v1" (ACCOUNTS.md §11)."""
        return "v2" if self.position_ids else "v1"

    def gamma_ids(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """(clobTokenIds, positionIds) as Gamma lists them: every market lists both (as the
        samples do), and its ``version`` says which it trades by; the other names nothing the
        CLOB has a book for."""
        if self.position_ids:
            return binary_token_ids(self.collateral, self.condition_id), self.token_ids
        return self.token_ids, protocol_position_ids(self.condition_id)

    def outcome_index(self, token_id: str) -> int:
        """Index (0 or 1) of token_id in this market."""
        return self.token_ids.index(token_id)

    def settlement_price(self, index: int) -> Decimal | None:
        """1 for the winning outcome, 0 for the loser, None while unresolved."""
        if self.winner is None:
            return None
        return Decimal(1) if index == self.winner else Decimal(0)


@dataclass(frozen=True)
class MarketSeed:
    """Input for one seeded or control-API-created market."""

    category: str
    event_slug: str
    event_title: str
    question: str
    slug: str
    fair_price: Decimal
    tick_size: Decimal = Decimal("0.01")
    neg_risk: bool = False
    fee_rate: Decimal | None = None
    group_item_title: str = ""
    outcomes: tuple[str, str] = ("Yes", "No")
    days_to_end: int = 60
    min_order_size: Decimal = Decimal(5)
    # An existing on-chain condition to list (e.g. one prepared on the dev chain): its
    # question id, condition id and collateral; unset, they derive from the slug and venue.
    question_id: str | None = None
    condition_id: str | None = None
    collateral: str | None = None
    seconds_delay: int = 0  # Gamma secondsDelay (live sports: taker orders wait)
    position_ids: bool = False  # a protocol-v2 market: position ids, orders on Exchange V3


SEED_MARKETS: tuple[MarketSeed, ...] = (
    MarketSeed("politics", "house-control-2026", "Which party wins the House in 2026?",
               "Will Democrats win the House in 2026?", "will-democrats-win-the-house-2026",
               Decimal("0.62")),
    MarketSeed("politics", "sandbox-party-nominee-2028", "Sandbox Party Nominee 2028",
               "Will Alice Example win the 2028 Sandbox Party nomination?",
               "will-alice-example-win-the-2028-sandbox-party-nomination", Decimal("0.350"),
               Decimal("0.001"), True, group_item_title="Alice Example", days_to_end=900),
    MarketSeed("politics", "sandbox-party-nominee-2028", "Sandbox Party Nominee 2028",
               "Will Bob Example win the 2028 Sandbox Party nomination?",
               "will-bob-example-win-the-2028-sandbox-party-nomination", Decimal("0.250"),
               Decimal("0.001"), True, group_item_title="Bob Example", days_to_end=900),
    MarketSeed("sports", "sbx-fc-exu-match", "Sandbox FC vs. Example United",
               "Will Sandbox FC win against Example United?", "sbx-fc-exu-match-sbx",
               Decimal("0.55"), fee_rate=Decimal("0.05"), group_item_title="Sandbox FC",
               days_to_end=7),
    MarketSeed("sports", "sandbox-finals-2026", "Sandbox League Finals 2026",
               "Sandbox League Finals: Riverside vs. Hilltop", "sandbox-finals-2026-winner",
               Decimal("0.48"), fee_rate=Decimal("0.05"), outcomes=("Riverside", "Hilltop"),
               days_to_end=14),
    MarketSeed("crypto", "bitcoin-150k-2026", "Bitcoin above $150k in 2026?",
               "Will Bitcoin reach $150,000 by December 31, 2026?", "will-bitcoin-reach-150k-2026",
               Decimal("0.30"), fee_rate=Decimal("0.07")),
    MarketSeed("crypto", "ethereum-5k-2026", "Ethereum above $5k in 2026?",
               "Will Ethereum close above $5,000 in 2026?", "will-ethereum-close-above-5k-2026",
               Decimal("0.41")),
    MarketSeed("culture", "sandbox-movie-opening", "Sandbox: The Movie opening weekend",
               "Will Sandbox: The Movie gross over $100M on its opening weekend?",
               "sandbox-movie-100m-opening-weekend", Decimal("0.22")),
    MarketSeed("geopolitics", "sandbox-treaty-2026", "Sandbox Treaty signed in 2026?",
               "Will the Sandbox Treaty be signed by December 31, 2026?",
               "sandbox-treaty-signed-2026", Decimal("0.120"), Decimal("0.001")),
    MarketSeed("economy", "fed-cut-december", "Fed decision in December",
               "Will the Fed cut rates in December?", "fed-cut-rates-december",
               Decimal("0.67")),
)


@dataclass(frozen=True)
class NegRiskAdapterIds:
    """A dev chain's NegRiskAdapter: the oracle of its questions' conditions, the admin who
    prepares them, and the wrapped collateral their outcome tokens are split from."""

    adapter: str
    admin: str
    wrapped_collateral: str

    def market_id(self, request: bytes) -> str:
        """The id of the adapter market its admin prepares with ``prepareMarket(0, request)``:
        keccak256(abi.encode(admin, 0, request)), its low byte clear (questions count there)."""
        raw = keccak(encode(["address", "uint256", "bytes"], [self.admin, 0, request]))
        return "0x" + (raw[:31] + b"\x00").hex()


def question_id_for(slug: str) -> str:
    """Deterministic question id (bytes32 hex) for a market slug."""
    return "0x" + keccak(text=f"sandbox-question:{slug}").hex()


def build_market(
    seed: MarketSeed,
    *,
    market_id: str,
    event: Event,
    oracle: str,
    collateral: str,
    created_at: str,
    end_date: str,
    house_liquidity: bool,
) -> Market:
    """Derive a Market's ids (question, condition, CTF token ids) from its seed."""
    question_id = seed.question_id or question_id_for(seed.slug)
    condition = (seed.condition_id or condition_id(oracle, question_id, 2)).lower()
    fees = None
    if seed.fee_rate is not None:
        fees = FeeSchedule.for_category(seed.category, seed.fee_rate)
    return Market(
        id=market_id,
        question=seed.question,
        slug=seed.slug,
        description=f"This market will resolve to \"{seed.outcomes[0]}\" if: {seed.question} "
        f"Otherwise, it will resolve to \"{seed.outcomes[1]}\".",
        category=seed.category,
        event_id=event.id,
        question_id=question_id,
        condition_id=condition,
        token_ids=(protocol_position_ids(condition) if seed.position_ids
                   else binary_token_ids(seed.collateral or collateral, condition)),
        collateral=seed.collateral or collateral,
        position_ids=seed.position_ids,
        outcomes=seed.outcomes,
        neg_risk=seed.neg_risk,
        neg_risk_market_id=event.neg_risk_market_id if seed.neg_risk else "",
        tick_size=seed.tick_size,
        min_order_size=seed.min_order_size,
        fees=fees,
        fair_price=on_tick_grid(seed.fair_price, seed.tick_size),
        created_at=created_at,
        start_date=created_at,
        end_date=end_date,
        group_item_title=seed.group_item_title,
        house_liquidity=house_liquidity,
        image=f"https://sandbox.invalid/images/{seed.category}.png",
        seconds_delay=seed.seconds_delay,
    )


def iso(moment: datetime) -> str:
    """ISO-8601 with a Z suffix, the way Gamma writes dates."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Catalog:
    """The listed events and markets, by every key the APIs look them up with.

    Not locked here: the sandbox state's lock guards every call.
    """

    def __init__(self, oracle: str, collateral: str, started_at: datetime,
                 neg_risk_adapter: NegRiskAdapterIds | None = None) -> None:
        self.oracle = oracle
        self.collateral = collateral
        # on a dev chain, its neg-risk questions are the adapter's, as on Polygon
        self.neg_risk_adapter = neg_risk_adapter
        self.started_at = started_at
        self.markets: dict[str, Market] = {}  # by condition id
        self.markets_by_id: dict[str, Market] = {}
        self.markets_by_slug: dict[str, Market] = {}
        self.tokens: dict[str, tuple[Market, int]] = {}
        self.events: dict[str, Event] = {}
        self.events_by_slug: dict[str, Event] = {}
        self._next_market_id = 900001
        self._next_event_id = 90001

    @property
    def listed_at(self) -> datetime:
        """When every market was created: three days before the venue started."""
        return self.started_at - timedelta(days=3)

    def add(self, seed: MarketSeed, *, house_liquidity: bool) -> Market:
        """List a market (and its event if new) from a seed; returns it."""
        created = self.listed_at
        end = self.started_at + timedelta(days=seed.days_to_end)
        event = self.events_by_slug.get(seed.event_slug)
        adapter = self.neg_risk_adapter
        if not (seed.neg_risk and not seed.position_ids and seed.condition_id is None):
            adapter = None  # only the venue's own neg-risk questions become the adapter's
        request = seed.event_slug.encode()
        if event is None:
            event = Event(
                id=str(self._next_event_id),
                slug=seed.event_slug,
                title=seed.event_title,
                description=f"Markets on: {seed.event_title}",
                category=seed.category,
                neg_risk=seed.neg_risk,
                neg_risk_market_id=(
                    adapter.market_id(request) if adapter is not None
                    else "0x" + keccak(text=f"sandbox-neg-risk:{seed.event_slug}").hex()
                    if seed.neg_risk
                    else ""
                ),
                created_at=iso(created),
                start_date=iso(created),
                end_date=iso(end),
            )
            self._next_event_id += 1
            self.events[event.id] = event
            self.events_by_slug[event.slug] = event
        oracle = self.oracle
        if adapter is not None and event.neg_risk_market_id == adapter.market_id(request):
            # the event's next question: the adapter's market id plus its index
            question = event.neg_risk_market_id[:-2] + f"{len(event.market_ids):02x}"
            seed = replace(seed, question_id=question, collateral=adapter.wrapped_collateral)
            oracle = adapter.adapter
        else:
            adapter = None
        market = build_market(
            seed,
            market_id=str(self._next_market_id),
            event=event,
            oracle=oracle,
            collateral=self.collateral,
            created_at=iso(created),
            end_date=iso(end),
            house_liquidity=house_liquidity,
        )
        if adapter is not None:
            market.neg_risk_request = request
        self._next_market_id += 1
        event.market_ids.append(market.id)
        self.markets[market.condition_id] = market
        self.markets_by_id[market.id] = market
        self.markets_by_slug[market.slug] = market
        for index, token in enumerate(market.token_ids):
            self.tokens[token] = (market, index)
        return market

    def market_for_token(self, token_id: str) -> tuple[Market, int]:
        """The market and outcome index of a token id, or VenueRejection 404."""
        found = self.tokens.get(str(token_id))
        if found is None:
            raise VenueRejection("No orderbook exists for the requested token id", 404)
        return found

    def market(self, condition_id: str) -> Market:
        """A market by condition id, or VenueRejection 404."""
        market = self.markets.get(condition_id.lower()) or self.markets.get(condition_id)
        if market is None:
            raise VenueRejection("market not found", 404)
        return market

    def tradable_market(self, token_id: str) -> tuple[Market, int]:
        """The market and index of a token that takes orders now, else VenueRejection."""
        found = self.tokens.get(token_id)
        if found is None:
            raise VenueRejection("Invalid token id")
        market, index = found
        if market.closed or not market.active:
            raise VenueRejection("market is closed, orders are not accepted")
        return market, index
