"""The copyability replay, pure: a target's fills through a user's exact rules, priced late.

Nothing here does I/O (``copyability_reports`` gathers the fills, markets, books and price
histories, runs this, caches the result). Every decision is ``mirror.decide``'s: this module
only supplies what the engine would have seen ``delay`` after each fill, executes the
decisions on a book, and adds up.

The slippage model (docs/user/copyability.md says the same):

- The price a copy sees is the token's price history at the fill's time plus the delay: the
  last point at or before that moment (the fill's own price when the history has none).
- The book "where known" is the token's current book (an open market's): its shape (each
  level's offset from its midpoint, with its size) is moved so its midpoint sits at that
  price. A copy walks it level by level up to the decision's limit price; the mirror rules
  see its best bid and ask (so the deviation guard and the odds band judge the late price).
- Where no book is known (a closed market, a one-sided book) the book is one level a tick
  either side of that price, deep enough for any copy.
- Fees: the venue's taker formula (``venue.fees``) per level walked, with the market's own
  fee parameters; a buy pays it on top, a sell receives its proceeds less it.

PnL is marked at the window's end (``TokenFacts.mark``: the payout of a resolved market,
else the last price): each copy's part is ``shares x mark - cost`` for a buy and
``proceeds - shares x mark`` for a sell, so the parts add up to cash plus holdings at the
mark. The target's own PnL over the same fills is counted the same way at its own prices.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from services.copying import mirror
from services.copying.mirror import CopyContext, CopyRules, Decision, MarketView, TargetFill
from services.markets import order_book
from services.trading.holdings import Holding, apply_fill
from venue.models import Level, OrderBook, Side

ZERO = Decimal(0)
BASE_UNIT = Decimal("0.000001")
DEEP = Decimal(10) ** 12  # the size of a made-up level: any copy fits
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 30
BOOTSTRAP_LEVEL = (Decimal("0.05"), Decimal("0.95"))  # a 90 % interval

# Why the target's PnL could not be copied, by the skip's reason code.
TOO_FAST = frozenset({mirror.PRICE_DEVIATION})
TOO_SMALL = frozenset({mirror.BELOW_MIN_SIZE, mirror.BELOW_MIN_TRADE,
                       mirror.BELOW_MIN_TARGET_TRADE})
TOO_ILLIQUID = frozenset({mirror.NO_LIQUIDITY})
UNCOPYABLE = {"too_fast": TOO_FAST, "too_small": TOO_SMALL, "too_illiquid": TOO_ILLIQUID}


def money(value: Decimal) -> Decimal:
    """A reported number, to the base unit (half up)."""
    return value.quantize(BASE_UNIT, ROUND_HALF_UP)


@dataclass(frozen=True)
class TokenFacts:
    """What the replay knows of one outcome token."""

    token_id: str
    market_slug: str
    view: MarketView  # category, limits, fees, question, end; its book prices are ignored
    book: OrderBook | None = None  # the current book (its shape), None when unknown
    history: tuple[tuple[int, Decimal], ...] = ()  # (unix seconds, price), oldest first
    mark: Decimal | None = None  # the price the window ends at
    other_token_id: str | None = None  # the market's other outcome (inverse copies)

    def price_at(self, at: Decimal) -> Decimal | None:
        """The last history price at or before ``at``, None before the first point."""
        index = bisect_right([t for t, _ in self.history], at)
        return self.history[index - 1][1] if index else None

    @property
    def end_price(self) -> Decimal | None:
        """The mark, else the last price."""
        if self.mark is not None:
            return self.mark
        return self.history[-1][1] if self.history else None


@dataclass(frozen=True)
class Copy:
    """One copy the replay made (or a close/exit it triggered), and its part of the PnL."""

    key: str
    token_id: str
    side: Side
    shares: Decimal
    value: Decimal  # pUSD paid (buy) or received (sell), fees excluded
    fee: Decimal
    at: Decimal
    pnl: Decimal  # its part of the PnL at the mark
    kind: str = "mirror"

    @property
    def average_price(self) -> Decimal:
        """The walk's volume-weighted price."""
        return self.value / self.shares


@dataclass
class Replay:
    """One delay's replay: its copies, its skips and the path of its equity."""

    delay_ms: int
    copies: list[Copy] = field(default_factory=list)
    skips: dict[str, str] = field(default_factory=dict)  # fill key -> reason
    max_drawdown: Decimal = ZERO
    capital_needed: Decimal = ZERO
    pnl: Decimal = ZERO

    def skips_by_reason(self) -> dict[str, int]:
        """How many fills each reason skipped."""
        counts: dict[str, int] = {}
        for reason in self.skips.values():
            counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items()))


def moved_book(facts: TokenFacts, price: Decimal) -> OrderBook:
    """The book a copy meets at ``price``: the known book's shape moved so its midpoint is
    ``price``, else one deep level a tick either side."""
    tick = facts.view.tick_size
    book = facts.book
    middle = book.midpoint if book is not None else None
    if book is None or middle is None:
        bids = (Level(price - tick, DEEP),) if price - tick >= tick else ()
        asks = (Level(price + tick, DEEP),) if price + tick <= 1 - tick else ()
        return OrderBook(market="", asset_id=facts.token_id, timestamp_ms=0, hash="",
                         bids=bids, asks=asks, min_order_size=None, tick_size=tick,
                         neg_risk=None, last_trade_price=None)
    shift = price - middle

    def moved(levels: Sequence[Level]) -> tuple[Level, ...]:
        return tuple(Level(level.price + shift, level.size) for level in levels
                     if tick <= level.price + shift <= 1 - tick)

    return replace(book, bids=moved(book.bids), asks=moved(book.asks))


@dataclass
class _Book:
    """The replay's running state for one delay."""

    holdings: dict[str, Holding] = field(default_factory=dict)
    cash: Decimal = ZERO
    peak: Decimal = ZERO
    spent_by_day: dict[str, Decimal] = field(default_factory=dict)
    spent_total: Decimal = ZERO
    stopped: str | None = None
    entries: dict[str, int] = field(default_factory=dict)  # buys into each open position
    last_copy: dict[str, int] = field(default_factory=dict)  # market -> last copy (unix s)

    def open_cost(self) -> Decimal:
        return sum((h.cost_usdc for h in self.holdings.values()), ZERO)


class _Run:
    """Replays fills for one delay (``replay`` below)."""

    def __init__(self, rules: CopyRules, facts: Mapping[str, TokenFacts], delay_ms: int,
                 balance_usdc: Decimal | None, target_value_usdc: Decimal | None) -> None:
        self.rules, self.facts = rules, facts
        self.delay = Decimal(delay_ms) / 1000
        self.balance, self.target_value = balance_usdc, target_value_usdc
        self.state = _Book()
        self.out = Replay(delay_ms=delay_ms)

    def price(self, token: str, at: Decimal, fallback: Decimal) -> Decimal:
        found = self.facts[token].price_at(at)
        return fallback if found is None else found

    def view(self, token: str, book: OrderBook) -> MarketView:
        # The market took the target's order then: it accepted orders, whatever it does now.
        return replace(self.facts[token].view, best_bid=book.best_bid, best_ask=book.best_ask,
                       accepting_orders=True)

    def context(self, at: Decimal) -> CopyContext:
        day = datetime.fromtimestamp(int(at), UTC).date().isoformat()
        state = self.state
        exposure = state.open_cost() if self.rules.max_total_exposure_usdc is not None else None
        balance = None if self.balance is None else self.balance + state.cash
        return CopyContext(now=int(at), spent_today_usdc=state.spent_by_day.get(day, ZERO),
                           spent_total_usdc=state.spent_total, user_exposure_usdc=exposure,
                           balance_usdc=balance, target_value_usdc=self.target_value)

    def fill(self, fill: TargetFill, target_after: Decimal | None) -> None:
        at = Decimal(fill.timestamp) + self.delay
        if self.state.stopped is not None:
            self.out.skips[fill.key] = self.state.stopped
            return
        self.exits(at)
        if self.state.stopped is not None:
            self.out.skips[fill.key] = self.state.stopped
            return
        own = fill
        if self.rules.direction == "inverse":
            other = self.facts[fill.token_id].other_token_id
            if other is None or other not in self.facts:
                self.out.skips[fill.key] = mirror.NO_LIQUIDITY
                return
            own = mirror.inverse_fill(fill, other)
            target_after = None  # the target holds the other outcome: sell by its fraction
        price = self.price(own.token_id, at, own.price)
        book = moved_book(self.facts[own.token_id], price)
        state, market = self.state, fill.condition_id or own.token_id
        held = {t for t, h in state.holdings.items() if h.shares > 0}
        context = replace(self.context(at), entries=state.entries.get(own.token_id, 0),
                          open_positions=len(held), last_copy_at=state.last_copy.get(market))
        decision = mirror.decide(
            self.rules, own, self.view(own.token_id, book),
            state.holdings.get(own.token_id, Holding()),
            target_position_after=target_after, context=context)
        if not decision.copies:
            self.out.skips[fill.key] = decision.reason or "skipped"
            return
        if not self.execute(fill.key, decision, book, at, "mirror"):
            self.out.skips[fill.key] = mirror.NO_LIQUIDITY
            return
        state.last_copy[market] = int(at)
        if decision.side == mirror.BUY:
            state.entries[own.token_id] = state.entries.get(own.token_id, 0) + 1
        if state.holdings.get(own.token_id, Holding()).shares <= 0:
            state.entries.pop(own.token_id, None)  # flat: the next buy opens it again

    def exits(self, at: Decimal) -> None:
        """Take-profit, stop-loss and exits before a market's end, at ``at``."""
        rules = self.rules
        watching = (rules.take_profit_bps is not None or rules.stop_loss_bps is not None
                    or rules.exit_hours_before_end is not None)
        if not watching:
            return
        for token, holding in sorted(self.state.holdings.items()):
            if holding.shares <= 0:
                continue
            facts = self.facts[token]
            price = self.price(token, at, facts.end_price or ZERO)
            book = moved_book(facts, price)
            view = self.view(token, book)
            decision = mirror.decide_exit(rules, token, holding, view)
            kind = "exit"
            if decision is None and mirror.exit_before_end(rules, view, int(at)):
                decision = mirror.closing_sell(rules, token, holding, view, "market_end")
            if decision is not None and decision.copies:
                self.execute(f"{kind}:{token}:{at}", decision, book, at, kind)

    def execute(self, key: str, decision: Decision, book: OrderBook, at: Decimal,
                kind: str) -> bool:
        """Walk the book for the decision (no worse than its limit); False when nothing fills."""
        side = Side.parse(decision.side)
        walk = order_book.walk(book, side, shares=decision.size, limit=decision.price)
        if walk.shares <= 0:
            return False
        facts = self.facts[decision.token_id]
        fee = order_book.taker_fee(facts.view.fees, walk.fills)
        value = walk.value
        mark = facts.end_price or ZERO
        state = self.state
        day = datetime.fromtimestamp(int(at), UTC).date().isoformat()
        holding = state.holdings.get(decision.token_id, Holding())
        if side is Side.BUY:
            cost = value + fee
            state.cash -= cost
            state.holdings[decision.token_id], _ = apply_fill(holding, side, walk.shares, cost)
            state.spent_total += cost
            state.spent_by_day[day] = state.spent_by_day.get(day, ZERO) + cost
            pnl = walk.shares * mark - cost
        else:
            proceeds = value - fee
            state.cash += proceeds
            state.holdings[decision.token_id], _ = apply_fill(holding, side, walk.shares,
                                                              proceeds)
            state.spent_total -= proceeds
            state.spent_by_day[day] = state.spent_by_day.get(day, ZERO) - proceeds
            pnl = proceeds - walk.shares * mark
        self.out.copies.append(Copy(key=key, token_id=decision.token_id, side=side,
                                    shares=walk.shares, value=value, fee=fee, at=at, pnl=pnl,
                                    kind=kind))
        self.after_trade(at)
        return True

    def equity(self, at: Decimal | None) -> Decimal:
        """Cash plus the holdings at their price at ``at`` (at the mark when None)."""
        total = self.state.cash
        for token, holding in self.state.holdings.items():
            facts = self.facts[token]
            price = facts.end_price if at is None else facts.price_at(at)
            total += holding.shares * (price if price is not None else facts.end_price or ZERO)
        return total

    def after_trade(self, at: Decimal) -> None:
        state, out = self.state, self.out
        out.capital_needed = max(out.capital_needed, -state.cash)
        equity = self.equity(at)
        self.track(equity)
        if state.stopped is None and self.rules.needs_stop_check:
            signal = mirror.stop_signal(self.rules, equity, state.peak, state.open_cost())
            if signal is not None:
                state.stopped = signal[0]
                if self.rules.close_positions_on_stop:
                    self.close_all(at)

    def track(self, equity: Decimal) -> None:
        self.state.peak = max(self.state.peak, equity)
        self.out.max_drawdown = max(self.out.max_drawdown, self.state.peak - equity)

    def close_all(self, at: Decimal) -> None:
        for token, holding in sorted(self.state.holdings.items()):
            if holding.shares <= 0:
                continue
            facts = self.facts[token]
            book = moved_book(facts, self.price(token, at, facts.end_price or ZERO))
            decision = mirror.closing_sell(self.rules, token, holding, self.view(token, book),
                                           self.state.stopped or "stop")
            if decision.copies:
                self.execute(f"close:{token}:{at}", decision, book, at, "close")

    def finish(self) -> Replay:
        equity = self.equity(None)
        self.track(equity)
        self.out.pnl = equity
        return self.out


def replay(fills: Sequence[TargetFill], facts: Mapping[str, TokenFacts], rules: CopyRules,
           delay_ms: int, *, target_after: Mapping[str, Decimal | None] | None = None,
           balance_usdc: Decimal | None = None,
           target_value_usdc: Decimal | None = None) -> Replay:
    """The fills through ``rules``, each decided and priced ``delay_ms`` late, oldest first
    (fills of the same second in the order given)."""
    run = _Run(rules, facts, delay_ms, balance_usdc, target_value_usdc)
    after = target_after or {}
    for fill in sorted(fills, key=lambda f: f.timestamp):
        run.fill(fill, after.get(fill.key))
    return run.finish()


def equity_curve(run: Replay) -> list[dict[str, object]]:
    """The replay's PnL over time: each copy's part at the mark added up in time order,
    one point per copy ({at: unix seconds, pnl_usdc})."""
    total, points = ZERO, []
    for copy in sorted(run.copies, key=lambda c: c.at):
        total += copy.pnl
        points.append({"at": int(copy.at), "pnl_usdc": money(total)})
    return points


def target_pnl(fill: TargetFill, facts: Mapping[str, TokenFacts], fee: Decimal = ZERO
               ) -> Decimal:
    """The target's PnL from one fill at its own price, marked like the copies'."""
    token = facts.get(fill.token_id)
    mark = (token.end_price if token is not None else None) or fill.price
    if fill.side == Side.BUY:
        return fill.size * mark - fill.value_usdc - fee
    return fill.value_usdc - fee - fill.size * mark


def bootstrap(parts: Sequence[Decimal], *, seed: int = BOOTSTRAP_SEED,
              resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[Decimal, Decimal] | None:
    """A 90 % interval of the total of ``parts`` (each copy's PnL), by resampling the copies
    with replacement ``resamples`` times from ``random.Random(seed)``; the bounds are the
    nearest-rank 5th and 95th percentiles of the resampled totals. None with no parts."""
    if not parts:
        return None
    rng = random.Random(seed)
    n = len(parts)
    totals = sorted(sum((parts[rng.randrange(n)] for _ in range(n)), ZERO)
                    for _ in range(resamples))
    low, high = (_rank(totals, q) for q in BOOTSTRAP_LEVEL)
    return low, high


def _rank(ordered: Sequence[Decimal], q: Decimal) -> Decimal:
    """The nearest-rank percentile: the ceil(q x n)-th smallest (1-based)."""
    k = int((q * len(ordered)).to_integral_value(rounding=ROUND_CEILING))
    return ordered[max(k, 1) - 1]


def percentile(values: Sequence[int], q: Decimal) -> int:
    """Nearest-rank percentile of integer samples (the delays)."""
    return int(_rank(sorted(values), q))  # type: ignore[arg-type]


def _scenario(run: Replay, target_total: Decimal) -> dict[str, object]:
    skips = run.skips_by_reason()
    return {
        "delay_ms": run.delay_ms,
        "copies": sum(1 for c in run.copies if c.kind == "mirror"),
        "exits": sum(1 for c in run.copies if c.kind != "mirror"),
        "skips": sum(skips.values()),
        "skips_by_reason": skips,
        "expected_pnl_usdc": money(run.pnl),
        "versus_target_usdc": money(run.pnl - target_total),
        "fees_usdc": money(sum((c.fee for c in run.copies), ZERO)),
        "volume_usdc": money(sum((c.value for c in run.copies), ZERO)),
        "max_drawdown_usdc": money(run.max_drawdown),
        "capital_needed_usdc": money(run.capital_needed),
    }


def _share(part: Decimal, whole: Decimal) -> Decimal | None:
    return money(part / whole) if whole else None


def build_report(fills: Sequence[TargetFill], facts: Mapping[str, TokenFacts],
                 rules: CopyRules, delays: tuple[int, int], *,
                 target_fees: Mapping[str, Decimal] | None = None,
                 target_after: Mapping[str, Decimal | None] | None = None,
                 balance_usdc: Decimal | None = None,
                 target_value_usdc: Decimal | None = None) -> dict[str, object]:
    """The report's numbers: a replay at each delay (p50, p95) against the target's own PnL
    over the same fills, what could not be copied and why, and how reliable it all is."""
    fees = target_fees or {}
    runs = [replay(fills, facts, rules, delay, target_after=target_after,
                   balance_usdc=balance_usdc, target_value_usdc=target_value_usdc)
            for delay in delays]
    own = {f.key: target_pnl(f, facts, fees.get(f.key, ZERO)) for f in fills}
    target_total = sum(own.values(), ZERO)
    typical = runs[0]
    uncopyable: dict[str, object] = {}
    missed_total = ZERO
    for name, reasons in UNCOPYABLE.items():
        keys = [k for k, reason in typical.skips.items() if reason in reasons]
        missed = sum((own[k] for k in keys), ZERO)
        missed_total += missed
        uncopyable[name] = {"fills": len(keys), "target_pnl_usdc": money(missed)}
    uncopyable["target_pnl_usdc"] = money(missed_total)
    uncopyable["share"] = _share(missed_total, target_total)
    slugs = {f.key: facts[f.token_id].market_slug if f.token_id in facts else f.market_slug
             for f in fills}
    counts: dict[str, int] = {}
    pnls: dict[str, Decimal] = {}
    for copy in typical.copies:
        slug = facts[copy.token_id].market_slug
        counts[slug] = counts.get(slug, 0) + 1
        pnls[slug] = pnls.get(slug, ZERO) + copy.pnl
    weight = sum((abs(p) for p in pnls.values()), ZERO)
    markets = sorted(({"market_slug": slug, "copies": counts[slug],
                       "pnl_usdc": money(pnl), "share": _share(abs(pnl), weight)}
                      for slug, pnl in pnls.items()),
                     key=lambda m: (-(m["share"] or ZERO), m["market_slug"]))
    interval = bootstrap([c.pnl for c in typical.copies])
    return {
        "fills": len(fills),
        "target": {
            "pnl_usdc": money(target_total),
            "fees_usdc": money(sum(fees.values(), ZERO)),
            "volume_usdc": money(sum((f.value_usdc for f in fills), ZERO)),
            "markets": len(set(slugs.values())),
        },
        "p50": _scenario(runs[0], target_total),
        "p95": _scenario(runs[1], target_total),
        "uncopyable": uncopyable,
        "reliability": {
            "fills": len(fills),
            "copies": len(typical.copies),
            "markets": markets,
            "top_market_share": markets[0]["share"] if markets else None,
            "bootstrap": None if interval is None else {
                "level": "90%", "seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES,
                "low_usdc": money(interval[0]), "high_usdc": money(interval[1])},
        },
    }


__all__ = ["TOO_FAST", "TOO_ILLIQUID", "TOO_SMALL", "UNCOPYABLE", "Copy", "Replay",
           "TokenFacts", "bootstrap", "build_report", "equity_curve", "money", "moved_book",
           "percentile", "replay", "target_pnl"]
