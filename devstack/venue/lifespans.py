"""Markets that end by themselves: the sandbox's schedule of resolutions, and the successors
that keep the catalogue full.

With a lifetime set (``POST /_sandbox/lifespans``, or ``SandboxConfig.market_lifetime``; off
by default), every open market gets an end: the ones listed when the schedule starts end
one after another over one lifetime (staggered, so the world changes every few minutes rather
than all at once), a market listed later ends one lifetime after its listing. At its end a
market resolves as ``POST /_sandbox/markets/<id>/resolve`` resolves it (on the dev chain
too), its winner drawn by its price (outcome 0 wins with the probability its price says);
with replenishing on (``SandboxConfig.replenish_markets``, the default) a successor of the
same kind (category, neg-risk, protocol-v2) is listed in its place, so the whales, which
trade every open market, keep trading new ones.

``lifespan_ticker`` is the thread that ends due markets; it runs once a lifetime is set.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from random import Random

from devstack.venue.amounts import on_tick_grid
from devstack.venue.catalog import Event, Market, MarketSeed, iso
from devstack.venue.ticker import Ticker

MAX_POLL_SECONDS = 1.0  # how often the runner looks for due markets (at most)


def set_end(market: Market, at: float) -> None:
    """Make ``market`` end at epoch ``at`` (Gamma's endDate says so too)."""
    market.ends_at = at
    market.end_date = iso(datetime.fromtimestamp(at, UTC))


def stagger(markets: list[Market], now: float, lifetime: float) -> None:
    """Give each open market without an end one, spread evenly over the next ``lifetime``."""
    waiting = [m for m in markets if not m.closed and m.ends_at is None]
    for position, market in enumerate(waiting, start=1):
        set_end(market, now + lifetime * position / len(waiting))


def drawn_winner(price_of_first: Decimal, rng: Random) -> int:
    """Outcome 0 wins with the probability its price gives it, else outcome 1."""
    return 0 if Decimal(str(rng.random())) < price_of_first else 1


def successor_seed(market: Market, event: Event, round_number: int, rng: Random) -> MarketSeed:
    """A new market of the same kind as ``market`` (its next round), at a fresh price."""
    base_slug = market.slug.split("-round-")[0]
    base_event = event.slug.split("-round-")[0]
    base_title = event.title.split(" (round ")[0]
    base_question = market.question.split(" (round ")[0]
    price = on_tick_grid(Decimal(rng.randint(15, 85)) / 100, market.tick_size)
    return MarketSeed(
        category=market.category,
        event_slug=f"{base_event}-round-{round_number}",
        event_title=f"{base_title} (round {round_number})",
        question=f"{base_question} (round {round_number})",
        slug=f"{base_slug}-round-{round_number}",
        fair_price=price, tick_size=market.tick_size, neg_risk=market.neg_risk,
        fee_rate=None if market.fees is None else market.fees.rate,
        group_item_title=market.group_item_title, outcomes=market.outcomes,
        min_order_size=market.min_order_size, position_ids=market.position_ids,
    )


def lifespan_ticker(end_due: Callable[[], object], lifetime: Callable[[], float]) -> Ticker:
    """The thread ending due markets (``end_due``) while a lifetime is set, looking a
    twentieth of a lifetime apart (at most a second)."""

    def poll() -> float:
        span = lifetime()
        return min(MAX_POLL_SECONDS, max(0.05, span / 20)) if span else MAX_POLL_SECONDS

    def tick() -> None:
        if lifetime():
            end_due()

    return Ticker("sandbox-lifespans", tick, poll)
