"""Markets, events and tags the sandbox lists, and the seeded starting catalog."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from eth_utils import keccak

from devstack.ctf import binary_token_ids, condition_id

TAGS: dict[str, dict[str, str]] = {
    "politics": {"id": "2", "label": "Politics"},
    "sports": {"id": "1", "label": "Sports"},
    "crypto": {"id": "21", "label": "Crypto"},
    "culture": {"id": "596", "label": "Culture"},
    "geopolitics": {"id": "100265", "label": "Geopolitics"},
    "economy": {"id": "100328", "label": "Economy"},
}


@dataclass
class FeeSchedule:
    """Gamma feeSchedule: taker fee = shares x rate x (p(1-p))^exponent, in pUSD."""

    rate: Decimal
    exponent: int = 1
    taker_only: bool = True
    rebate_rate: Decimal = Decimal("0.15")
    fee_type: str = "standard_fees_v1"

    def taker_fee(self, shares: Decimal, price: Decimal) -> Decimal:
        """Fee in pUSD for a taker fill of `shares` at `price`."""
        return shares * self.rate * (price * (1 - price)) ** self.exponent


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
    active: bool = True
    closed: bool = False
    winner: int | None = None  # outcome index that won, once resolved
    closed_time: str = ""
    house_liquidity: bool = True
    volume: Decimal = Decimal(0)
    last_trade_price: Decimal | None = None
    image: str = ""

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
    question_id = question_id_for(seed.slug)
    condition = condition_id(oracle, question_id, 2)
    fees = None
    if seed.fee_rate is not None:
        fees = FeeSchedule(
            rate=seed.fee_rate,
            fee_type="sports_fees_v3" if seed.category == "sports" else "crypto_fees_v1",
        )
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
        token_ids=binary_token_ids(collateral, condition),
        outcomes=seed.outcomes,
        neg_risk=seed.neg_risk,
        neg_risk_market_id=event.neg_risk_market_id if seed.neg_risk else "",
        tick_size=seed.tick_size,
        min_order_size=seed.min_order_size,
        fees=fees,
        fair_price=seed.fair_price,
        created_at=created_at,
        start_date=created_at,
        end_date=end_date,
        group_item_title=seed.group_item_title,
        house_liquidity=house_liquidity,
        image=f"https://sandbox.invalid/images/{seed.category}.png",
    )
