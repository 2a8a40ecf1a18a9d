"""The mirroring rules, pure: what one config does about one target trade, and when to exit.

Nothing here does I/O. The copy engine gathers the inputs (the config's rules, the
target's fill, the market's book and limits, the config's holding, the balance) and
gets back a ``Decision``: copy with an exact side, token, size and worst price, or skip
with a reason code. The same functions serve previews, the engine and the tests.

Rules:

- Same token and side as the target (the token is the fill's asset, so the outcome is
  whatever ``outcomeIndex``/asset says, never assumed YES).
- Buys: shares = target shares x ``size_multiplier``, then capped so the position's
  cost basis stays within ``max_position_usdc`` (a per-position cap) and within the
  available balance; under the market's minimum size the trade is skipped (never
  rounded up, so never past the cap).
- Sells: the config sells the same fraction of its holding as the target sold of its
  position (all of it when the target exited); nothing held means nothing to sell.
- Guards: a blocked category, or a book price (best ask for buys, best bid for sells)
  that deviates from the target's fill price by more than ``price_deviation_bps``
  (either direction) skips the trade.
- Exits: take-profit / stop-loss compare the best bid with the position's average cost.

Issue 27's rules (each off unless set; ``CopyContext`` carries what they read besides the
fill, the market and the holding):

- Sizing (``sizing_mode``): ``multiplier`` (target shares x ``size_multiplier``),
  ``fixed_usdc`` (``fixed_usdc`` pUSD per copy) or ``proportional`` (target shares x our
  balance / the target's portfolio value x ``size_multiplier``). Then ``max_trade_usdc``
  cuts a buy down; under ``min_trade_usdc`` it is skipped (``below_min_trade``) unless
  ``round_up_to_min`` (never past a cap, a budget or the balance).
- ``min_target_trade_usdc``: target trades (either side) worth less are ignored.
- The odds band ``min_price``/``max_price`` and ``skip_if_ends_within_hours`` apply to buys:
  a sell always follows, so a position can be left.
- ``copy_buys``/``copy_sells``; ``direction: inverse`` trades the market's other outcome
  (``inverse_fill``): bought when the target buys, sold when it sells.
- Budgets: ``daily_budget_usdc`` (the UTC day) and ``total_budget_usdc`` cap what buys spend
  net of what sells brought back; ``max_total_exposure_usdc`` (per user) caps the cost
  basis all its configs hold. A buy is cut to what is left, skipped when that is under the
  market's minimum (``daily_budget_exhausted``, ``total_budget_exhausted``,
  ``exposure_limit``). The context counts copies in flight as the caller read them; the
  intent write reserves against them for certain (``services.copying.reservations``).
- ``include_keywords``/``exclude_keywords``: case-insensitive, on the market's question.
- Stops (``stop_signal``): ``loss_stop_usdc`` (total PnL at or under minus this) and
  ``max_drawdown_bps`` (the fall from the PnL peak, in bps of the capital in play: the open
  cost basis plus the peak). A breaker left open skips with ``breaker_open``. The stops
  value a resolved market's position at its payout, one without a bid at its last bid (of
  bounded age); a stop that cannot value a position for a minute pauses buys
  (``stop_unverified``) until it can.
- No dust: a sell that would leave less than the market's minimum sells everything.

Issue 45's rules (``CopyContext`` carries the counts they read):

- ``entry_policy``: ``every_add``; ``first_entry_only`` copies the buy that opens a position
  and skips the adds (``entry_policy``); ``max_adds`` copies the first ``max_adds_count``
  buys into a position, the opening one included. A position counts from flat.
- ``max_open_positions``: a buy that would open one more position than this is skipped
  (``max_open_positions``); adds to held positions follow the entry policy.
- ``sell_mode``: ``mirror`` (the share of its position the target sold, as above),
  ``same_percentage`` (the target's position before and after the sale), ``sell_all`` (the
  whole holding on any target sale) or ``manual`` (sells skipped: ``sells_manual``).
- ``market_cooldown_seconds``: a copy (buy or sell) within this long of the config's last
  copy in the market is skipped (``market_cooldown``).
- ``price_deviation_bands``: the deviation allowed for a trade at the target's price is the
  first band's whose max price is at or above it; above the last band, or with none, the
  single ``price_deviation_bps``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal
from typing import Any

from schemas import rule_fields
from services.copying.rule_labels import label
from services.platform.numbers import bps, money, percent, price, shares
from services.trading.holdings import Holding
from venue import fees
from venue.models import FeeSchedule, Side

BUY, SELL = Side.BUY, Side.SELL
BPS = Decimal(10000)
SHARE_STEP = Decimal("0.01")  # order sizes carry 2 decimals at every tick size
USDC_STEP = Decimal("0.01")
DEFAULT_TICK = Decimal("0.01")
DEFAULT_MIN_SIZE = Decimal(5)
MIN_PRICE_FLOOR = Decimal("0.001")

# Skip (and failure) reason codes shown in /status and the trades list.
CATEGORY_BLOCKED = "category_blocked"
PRICE_DEVIATION = "price_deviation"
BELOW_MIN_SIZE = "below_min_size"
INSUFFICIENT_BALANCE = "insufficient_balance"
CAP_REACHED = "cap_reached"
NO_POSITION = "no_position"
NO_LIQUIDITY = "no_liquidity"
NOT_A_TRADE = "not_a_trade"
MARKET_CLOSED = "market_closed"
CONFIG_INACTIVE = "config_inactive"
BELOW_MIN_TARGET_TRADE = "below_min_target_trade"
BELOW_MIN_TRADE = "below_min_trade"
PRICE_OUT_OF_RANGE = "price_out_of_range"
BUYS_DISABLED = "buys_disabled"
SELLS_DISABLED = "sells_disabled"
DAILY_BUDGET_EXHAUSTED = "daily_budget_exhausted"
TOTAL_BUDGET_EXHAUSTED = "total_budget_exhausted"
EXPOSURE_LIMIT = "exposure_limit"
MARKET_ENDS_SOON = "market_ends_soon"
KEYWORD_EXCLUDED = "keyword_excluded"
KEYWORD_NOT_INCLUDED = "keyword_not_included"
LOSS_STOP = "loss_stop"
DRAWDOWN_STOP = "drawdown_stop"
BREAKER_OPEN = "breaker_open"
STOP_UNVERIFIED = "stop_unverified"
ENTRY_POLICY = "entry_policy"
MAX_OPEN_POSITIONS = "max_open_positions"
MARKET_COOLDOWN = "market_cooldown"
SELLS_MANUAL = "sells_manual"

SIZING_MODES = ("multiplier", "fixed_usdc", "proportional")
DIRECTIONS = ("mirror", "inverse")
START_MODES = ("new_trades_only", "copy_open_positions")
# The breaker's pauses after each trip in a row (seconds): 1 min, 5 min, then 30 min.
BREAKER_BACKOFF = (60, 300, 1800)

REASONS: dict[str, str] = {
    CATEGORY_BLOCKED: "The market's category is one the config blocks.",
    PRICE_DEVIATION: "The book price moved too far from the trader's fill price.",
    BELOW_MIN_SIZE: "The copy would be under the market's minimum order size.",
    INSUFFICIENT_BALANCE: "The trading wallet cannot pay for the copy.",
    CAP_REACHED: "The position already holds the config's max position.",
    NO_POSITION: "The trader sold, but the config holds none of this outcome.",
    NO_LIQUIDITY: "The book has no price on the side the order would take.",
    NOT_A_TRADE: "The activity is not a buy or sell fill.",
    MARKET_CLOSED: "The market no longer accepts orders.",
    CONFIG_INACTIVE: "The config was stopped before the order left.",
    BELOW_MIN_TARGET_TRADE: "The trader's trade is worth less than the config's smallest "
                            "trader's trade to copy.",
    BELOW_MIN_TRADE: "The copy would be worth less than the config's min per trade.",
    PRICE_OUT_OF_RANGE: "The price is outside the config's min-max price band.",
    BUYS_DISABLED: "Copying buys is off for this config.",
    SELLS_DISABLED: "Copying sells is off for this config.",
    DAILY_BUDGET_EXHAUSTED: "The config's daily budget is spent for this UTC day.",
    TOTAL_BUDGET_EXHAUSTED: "The config's total budget is spent.",
    EXPOSURE_LIMIT: "Your configs together hold (or have in flight) your exposure limit.",
    MARKET_ENDS_SOON: "The market ends sooner than the config's skip markets ending within.",
    KEYWORD_EXCLUDED: "The market's question contains a word the config excludes.",
    KEYWORD_NOT_INCLUDED: "The market's question contains none of the words the config "
                          "requires.",
    LOSS_STOP: "The config's total PnL fell to its loss stop: it stopped.",
    DRAWDOWN_STOP: "The config's PnL fell its max drawdown from its peak: it stopped.",
    BREAKER_OPEN: "Too many copies failed in a row; copying is paused until its retry time.",
    STOP_UNVERIFIED: "The loss or drawdown stop could not value a held position for over a "
                     "minute: buying is paused until it can.",
    ENTRY_POLICY: "The config's entry policy copies no more buys into this position.",
    MAX_OPEN_POSITIONS: "The config holds its max open positions: no new one is opened.",
    MARKET_COOLDOWN: "The config copied in this market too recently (its market cooldown).",
    SELLS_MANUAL: "The config's sell mode is manual: you exit its positions yourself.",
}


# How an exit's or a stop's decision opens: the rule that fired, by its label.
SIGNALS: dict[str, str] = {"take_profit": "Take profit", "stop_loss": "Stop loss",
                           LOSS_STOP: "Loss stop", DRAWDOWN_STOP: "Max drawdown",
                           "market_end": "Exit before the end"}


def signal_words(why: str) -> str:
    """An exit's or stop's code as a decision names it ("Take profit"); text stays as is."""
    return SIGNALS.get(why, why)


def market_end_why(rules: CopyRules) -> str:
    """Why a position is sold before its market ends, in words."""
    hours = rules.exit_hours_before_end
    within = "" if hours is None else f" {format(Decimal(hours).normalize(), 'f')} h"
    return (f"The market ends within{within} (the {label('exit_hours_before_end')})")


def _default(name: str) -> Any:
    return rule_fields.BY_NAME[name].default


@dataclass(frozen=True)
class CopyRules:
    """The parts of a config that decide trades (a snapshot: the engine reloads on edits).

    One attribute per rule of ``schemas.rule_fields`` (its default from there; a
    test holds the two together), lists as tuples, plus the user's exposure limit.
    """

    size_multiplier: Decimal
    max_position_usdc: Decimal
    price_deviation_bps: int = _default("price_deviation_bps")
    blocked_categories: frozenset[str] = frozenset()
    take_profit_bps: int | None = None
    stop_loss_bps: int | None = None
    sizing_mode: str = _default("sizing_mode")
    fixed_usdc: Decimal | None = None
    min_trade_usdc: Decimal | None = None
    max_trade_usdc: Decimal | None = None
    round_up_to_min: bool = _default("round_up_to_min")
    min_target_trade_usdc: Decimal | None = None
    min_price: Decimal | None = None
    max_price: Decimal | None = None
    copy_buys: bool = _default("copy_buys")
    copy_sells: bool = _default("copy_sells")
    direction: str = _default("direction")
    daily_budget_usdc: Decimal | None = None
    total_budget_usdc: Decimal | None = None
    loss_stop_usdc: Decimal | None = None
    max_drawdown_bps: int | None = None
    close_positions_on_stop: bool = _default("close_positions_on_stop")
    max_consecutive_failures: int = _default("max_consecutive_failures")
    start_mode: str = _default("start_mode")
    skip_if_ends_within_hours: Decimal | None = None
    exit_hours_before_end: Decimal | None = None
    include_keywords: tuple[str, ...] = ()
    exclude_keywords: tuple[str, ...] = ()
    # Copy a target's match seen pending on chain, before its block (it may still fail).
    copy_pending_matches: bool = _default("copy_pending_matches")
    entry_policy: str = _default("entry_policy")
    max_adds_count: int | None = None
    sell_mode: str = _default("sell_mode")
    max_open_positions: int | None = None
    market_cooldown_seconds: int | None = None
    # (max price, max deviation bps), ascending; none: the single price_deviation_bps.
    price_deviation_bands: tuple[tuple[Decimal, int], ...] = ()
    max_total_exposure_usdc: Decimal | None = None  # the user's, across its configs

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any], *,
                    exposure_limit: Decimal | None = None) -> CopyRules:
        """The rules of a config's fields (as ``validate_fields`` cleans them; lists as
        lists), with the user's exposure limit; a rule left out (or None where None is
        not "off") takes its default."""
        values: dict[str, Any] = {}
        for rule in rule_fields.RULES:
            value = fields.get(rule.name)
            if rule.kind == rule_fields.CATEGORIES:
                values[rule.name] = normalise_categories(value or [])
            elif rule.kind == rule_fields.BANDS:
                values[rule.name] = tuple((Decimal(str(band["max_price"])),
                                           int(band["max_deviation_bps"]))
                                          for band in value or ())
            elif rule.kind in rule_fields.LIST_KINDS:
                values[rule.name] = tuple(value or ())
            elif value is not None or (rule.nullable and rule.name in fields):
                values[rule.name] = value
        return cls(**values, max_total_exposure_usdc=exposure_limit)

    @property
    def needs_spending(self) -> bool:
        """True when a budget reads what the config spent."""
        return self.daily_budget_usdc is not None or self.total_budget_usdc is not None

    @property
    def needs_stop_check(self) -> bool:
        """True when a loss or drawdown stop watches the config's PnL."""
        return self.loss_stop_usdc is not None or self.max_drawdown_bps is not None


@dataclass(frozen=True)
class CopyContext:
    """What the rules read besides the fill, the market and the holding (None: unknown)."""

    now: int | None = None  # unix seconds
    spent_today_usdc: Decimal = Decimal(0)  # buys minus sells' proceeds, this UTC day
    spent_total_usdc: Decimal = Decimal(0)
    user_exposure_usdc: Decimal | None = None  # cost basis of all the user's configs
    balance_usdc: Decimal | None = None  # ours, for proportional sizing
    target_value_usdc: Decimal | None = None  # the target's portfolio value
    breaker_retry_at: int | None = None  # the breaker is open until then (unix seconds)
    buys_paused: str | None = None  # buying paused by the engine, with this reason code
    # The entry policy's count: buys copied into this position since it was last flat (in
    # flight included); the positions the config holds or is opening; when (unix seconds)
    # the config last copied in this market.
    entries: int = 0
    open_positions: int | None = None
    last_copy_at: int | None = None


NO_CONTEXT = CopyContext()


@dataclass(frozen=True)
class TargetFill:
    """One fill of the target wallet, as detected."""

    key: str
    wallet: str
    token_id: str
    side: Side | str  # the venue's text when it names no side (not a trade: skipped)
    size: Decimal
    price: Decimal
    timestamp: int
    condition_id: str = ""
    outcome: str = ""
    outcome_index: int | None = None
    market_slug: str = ""
    tx_hash: str = ""
    usdc: Decimal | None = None  # the trade's worth, when it is not size x price (inverse)

    @property
    def value_usdc(self) -> Decimal:
        """What the target's trade was worth, in pUSD."""
        return self.usdc if self.usdc is not None else self.size * self.price


@dataclass(frozen=True)
class MarketView:
    """What the decision needs from the market: category, limits and the top of the book."""

    category: str = ""
    tick_size: Decimal = DEFAULT_TICK
    min_order_size: Decimal = DEFAULT_MIN_SIZE
    best_bid: Decimal | None = None
    best_ask: Decimal | None = None
    accepting_orders: bool = True
    categories: frozenset[str] = field(default_factory=frozenset)  # every label/slug, lower
    fees: FeeSchedule | None = None  # the market's taker fee, charged on top of a buy
    question: str = ""
    end_ts: int | None = None  # when the market ends (unix seconds), if known

    def buy_cost_per_share(self, price: Decimal) -> Decimal:
        """What one share bought at ``price`` takes from the wallet, taker fee included."""
        if self.fees is None:
            return price
        return price + fees.effective_rate(self.fees.rate, self.fees.exponent, price)


@dataclass(frozen=True)
class Decision:
    """Copy (side, token, shares, worst price, pUSD) or skip (reason); ``detail`` says why."""

    action: str  # "copy" or "skip"
    token_id: str
    side: Side | str  # a copy's side; a skip keeps the fill's text when it names no side
    reason: str | None = None
    size: Decimal = Decimal(0)
    price: Decimal | None = None  # worst acceptable price (the order's limit)
    usdc: Decimal = Decimal(0)  # pUSD to spend on a buy; expected proceeds of a sell
    detail: str = ""

    @property
    def copies(self) -> bool:
        """True when an order should be placed."""
        return self.action == "copy"


def _skip(fill_token: str, side: Side | str, reason: str, detail: str = "") -> Decision:
    return Decision(action="skip", token_id=fill_token, side=side, reason=reason,
                    detail=detail or REASONS.get(reason, ""))


def _round_down(value: Decimal, step: Decimal) -> Decimal:
    # Quantized so an exact multiple reads 10.00, not 1E+1, in a decision's detail.
    return ((value / step).to_integral_value(rounding=ROUND_DOWN) * step).quantize(step)


def _round_up(value: Decimal, step: Decimal) -> Decimal:
    return ((value / step).to_integral_value(rounding=ROUND_CEILING) * step).quantize(step)


def deviation_bps(book_price: Decimal, target_price: Decimal) -> Decimal:
    """How far the book is from the target's fill price, in basis points of the latter."""
    if target_price <= 0:
        return Decimal(0)
    return abs(book_price - target_price) / target_price * BPS


def worst_price(side: Side | str, reference: Decimal, deviation: int, tick: Decimal) -> Decimal:
    """The limit of a mirrored order: the reference price moved ``deviation`` bps against us."""
    slack = reference * Decimal(deviation) / BPS
    if side == BUY:
        price = _round_down(min(reference + slack, 1 - tick), tick)
        return max(price, tick)
    price = _round_up(max(reference - slack, tick), tick)
    return min(price, 1 - tick)


def normalise_categories(values: Iterable[str]) -> frozenset[str]:
    """Category names compared case-insensitively, with spaces and dashes alike."""
    return frozenset(v.strip().lower().replace(" ", "-") for v in values if v and v.strip())


def category_blocked(rules: CopyRules, market: MarketView) -> bool:
    """True when any of the market's categories is blocked by the config."""
    if not rules.blocked_categories:
        return False
    names = set(market.categories) | set(normalise_categories([market.category]))
    return bool(names & rules.blocked_categories)


def keyword_skip(rules: CopyRules, question: str) -> str | None:
    """``keyword_excluded`` / ``keyword_not_included`` for the market's question, else None."""
    if not rules.include_keywords and not rules.exclude_keywords:
        return None
    text = question.casefold()
    if any(word in text for word in rules.exclude_keywords):
        return KEYWORD_EXCLUDED
    if rules.include_keywords and not any(word in text for word in rules.include_keywords):
        return KEYWORD_NOT_INCLUDED
    return None


def hours_to_end(market: MarketView, now: int | None) -> Decimal | None:
    """Hours until the market ends; None when its end or the time is unknown."""
    if market.end_ts is None or now is None:
        return None
    return Decimal(market.end_ts - now) / 3600


def inverse_fill(fill: TargetFill, other_token_id: str) -> TargetFill:
    """The fill as an inverse copy sees it: the market's other outcome, at 1 - price.

    The target's buy of one outcome is a buy of the other for us, and its sell a sell of
    the other; the trade's worth (``min_target_trade_usdc``) stays the target's.
    """
    return replace(fill, token_id=other_token_id, price=Decimal(1) - fill.price,
                   usdc=fill.value_usdc,
                   outcome_index=None if fill.outcome_index is None else 1 - fill.outcome_index,
                   outcome="")


def decide(rules: CopyRules, fill: TargetFill, market: MarketView, holding: Holding,
           *, available_usdc: Decimal | None = None,
           target_position_after: Decimal | None = None,
           target_position_before: Decimal | None = None,
           context: CopyContext | None = None) -> Decision:
    """What one config does about one target fill (see the module rules).

    For ``direction: inverse`` the caller passes ``inverse_fill(fill, ...)`` with the other
    outcome's market and holding.
    """
    ctx = context or NO_CONTEXT
    try:
        side = Side.parse(fill.side)
    except ValueError:
        return _skip(fill.token_id, str(fill.side).upper() or "?", NOT_A_TRADE)
    if fill.size <= 0:
        return _skip(fill.token_id, side, NOT_A_TRADE)
    if breaker_holds(ctx.breaker_retry_at, ctx.now):
        return _skip(fill.token_id, side, BREAKER_OPEN)
    if side == BUY and ctx.buys_paused:
        return _skip(fill.token_id, side, ctx.buys_paused)
    if side == BUY and not rules.copy_buys:
        return _skip(fill.token_id, side, BUYS_DISABLED)
    if side == SELL and not rules.copy_sells:
        return _skip(fill.token_id, side, SELLS_DISABLED)
    if side == SELL and rules.sell_mode == "manual":
        return _skip(fill.token_id, side, SELLS_MANUAL)
    if rules.min_target_trade_usdc is not None and fill.value_usdc < rules.min_target_trade_usdc:
        return _skip(fill.token_id, side, BELOW_MIN_TARGET_TRADE,
                     f"The trader's trade is worth {money(fill.value_usdc)}, under the "
                     f"{label('min_target_trade_usdc')} of {money(rules.min_target_trade_usdc)}.")
    if not market.accepting_orders:
        return _skip(fill.token_id, side, MARKET_CLOSED)
    keyword = keyword_skip(rules, market.question)
    if keyword is not None:
        return _skip(fill.token_id, side, keyword,
                     f"{REASONS[keyword]} Question: {market.question[:200]!r}.")
    if category_blocked(rules, market):
        return _skip(fill.token_id, side, CATEGORY_BLOCKED,
                     f"The category “{market.category}” is blocked by the config.")
    waited = entry_skip(rules, fill.token_id, side, holding, ctx)
    if waited is not None:
        return waited
    left = hours_to_end(market, ctx.now)
    if (side == BUY and rules.skip_if_ends_within_hours is not None and left is not None
            and left < rules.skip_if_ends_within_hours):
        return _skip(fill.token_id, side, MARKET_ENDS_SOON,
                     f"The market ends in {left.quantize(Decimal('0.1'))} h, within the "
                     f"{label('skip_if_ends_within_hours')} "
                     f"{rules.skip_if_ends_within_hours.normalize():f} h.")
    book = market.best_ask if side == BUY else market.best_bid
    if book is None:
        return _skip(fill.token_id, side, NO_LIQUIDITY)
    if side == BUY and not _in_band(rules, book):
        return _skip(fill.token_id, side, PRICE_OUT_OF_RANGE,
                     f"The ask {price(book, market.tick_size)} is outside the band "
                     f"{price(rules.min_price or 0)}-{price(rules.max_price or 1)}.")
    moved = deviation_bps(book, fill.price)
    allowed, rule = deviation_limit(rules, fill.price)
    if moved > allowed:
        return _skip(fill.token_id, side, PRICE_DEVIATION,
                     f"The book's {price(book, market.tick_size)} is {bps(moved)} from the "
                     f"trader's fill at {price(fill.price, market.tick_size)}; the {rule} "
                     f"allows {bps(allowed)}.")
    limit = worst_price(side, fill.price, allowed, market.tick_size)
    if side == BUY:
        return _decide_buy(rules, fill, market, holding, limit, available_usdc, ctx)
    return _decide_sell(rules, fill, market, holding, book, limit, target_position_after,
                        target_position_before)


def deviation_limit(rules: CopyRules, reference: Decimal) -> tuple[int, str]:
    """The bps a trade at ``reference`` may deviate, and the rule that says so: the first
    band whose max price is at or above it, else the single price deviation."""
    floor = Decimal(0)
    for top, allowed in rules.price_deviation_bands:
        if reference <= top:
            return allowed, (f"{label('price_deviation_bands')} for prices {price(floor)}-"
                         f"{price(top)}")
        floor = top
    return rules.price_deviation_bps, label("price_deviation_bps")


def entry_skip(rules: CopyRules, token_id: str, side: Side, holding: Holding,
               ctx: CopyContext) -> Decision | None:
    """A skip for the market cooldown, the entry policy or the max open positions, else
    None."""
    cooldown = rules.market_cooldown_seconds
    if (cooldown is not None and ctx.last_copy_at is not None and ctx.now is not None
            and ctx.now - ctx.last_copy_at < cooldown):
        return _skip(token_id, side, MARKET_COOLDOWN,
                     f"The config copied in this market {ctx.now - ctx.last_copy_at} s ago; "
                     f"its {label('market_cooldown_seconds')} is {cooldown} s.")
    if side != BUY:
        return None
    # A position held from before any count (a restart, an older config) counts as one.
    entries = max(ctx.entries, 1 if holding.shares > 0 else 0)
    if entries > 0:
        if rules.entry_policy == "first_entry_only":
            return _skip(token_id, side, ENTRY_POLICY,
                         f"The position is open already; the {label('entry_policy')} copies "
                         "only the first entry.")
        if rules.entry_policy == "max_adds" and rules.max_adds_count is not None \
                and entries >= rules.max_adds_count:
            return _skip(token_id, side, ENTRY_POLICY,
                         f"{entries} buys into this position were copied; the "
                         f"{label('entry_policy')} copies up to {rules.max_adds_count}.")
        return None
    if (rules.max_open_positions is not None and ctx.open_positions is not None
            and ctx.open_positions >= rules.max_open_positions):
        return _skip(token_id, side, MAX_OPEN_POSITIONS,
                     f"The config holds {ctx.open_positions} positions, its "
                     f"{label('max_open_positions')} of {rules.max_open_positions}.")
    return None


def _in_band(rules: CopyRules, price: Decimal) -> bool:
    return ((rules.min_price is None or price >= rules.min_price)
            and (rules.max_price is None or price <= rules.max_price))


def _wanted_shares(rules: CopyRules, fill: TargetFill, per_share: Decimal,
                   ctx: CopyContext) -> tuple[Decimal | None, str]:
    """Shares the sizing mode asks for, and how; None when it cannot size (unknown value)."""
    if rules.sizing_mode == "fixed_usdc" and rules.fixed_usdc is not None:
        return (_round_down(rules.fixed_usdc / per_share, SHARE_STEP),
                f"fixed {money(rules.fixed_usdc)} per copy")
    if rules.sizing_mode == "proportional":
        if not ctx.balance_usdc or not ctx.target_value_usdc or ctx.target_value_usdc <= 0:
            return None, "the trader's portfolio value or our balance is unknown"
        ratio = ctx.balance_usdc / ctx.target_value_usdc
        return (_round_down(fill.size * ratio * rules.size_multiplier, SHARE_STEP),
                f"the trader's {shares(fill.size)} x our balance {money(ctx.balance_usdc)} / "
                f"its value {money(ctx.target_value_usdc)} x {rules.size_multiplier.normalize():f}")
    return (_round_down(fill.size * rules.size_multiplier, SHARE_STEP),
            f"the trader's {shares(fill.size)} x {rules.size_multiplier.normalize():f}")


def spending_limits(rules: CopyRules, ctx: CopyContext) -> list[tuple[str, Decimal, str]]:
    """(reason, pUSD left, rule) for each budget and the exposure limit that applies."""
    return budget_bounds(rules.daily_budget_usdc, rules.total_budget_usdc,
                         rules.max_total_exposure_usdc, spent_today=ctx.spent_today_usdc,
                         spent_total=ctx.spent_total_usdc, exposure=ctx.user_exposure_usdc)


def budget_bounds(daily_budget: Decimal | None, total_budget: Decimal | None,
                  exposure_cap: Decimal | None, *, spent_today: Decimal, spent_total: Decimal,
                  exposure: Decimal | None) -> list[tuple[str, Decimal, str]]:
    """(reason, pUSD left, rule) for each budget set, and the exposure cap when both it and
    the exposure are known (amounts as the caller counts them: in flight or not)."""
    limits = []
    if daily_budget is not None:
        limits.append((DAILY_BUDGET_EXHAUSTED, daily_budget - spent_today,
                       label("daily_budget_usdc")))
    if total_budget is not None:
        limits.append((TOTAL_BUDGET_EXHAUSTED, total_budget - spent_total,
                       label("total_budget_usdc")))
    if exposure_cap is not None and exposure is not None:
        limits.append((EXPOSURE_LIMIT, exposure_cap - exposure, label("max_total_exposure_usdc")))
    return limits


@dataclass(frozen=True)
class Fit:
    """What spending bounds leave of a buy: its shares and why they were cut, or a skip."""

    shares: Decimal
    ceiling: Decimal  # the most shares every bound allows
    notes: tuple[str, ...] = ()
    reason: str | None = None  # a skip's reason (the bound under the market minimum)
    detail: str = ""

    @property
    def skips(self) -> bool:
        """True when the buy cannot be made."""
        return self.reason is not None


def fit_spending(size: Decimal, per_share: Decimal, limit: Decimal,
                 bounds: Iterable[tuple[str, Decimal, str]], min_order_size: Decimal,
                 ceiling: Decimal, tick: Decimal | None = None) -> Fit:
    """Cut a buy of ``size`` shares (costing ``per_share`` each at ``limit``) to what every
    (reason, pUSD left, rule) bound can pay; a skip with the bound's reason when that is
    under the market's minimum."""
    notes: list[str] = []
    for reason, left, name in bounds:
        affordable = _round_down(max(left, Decimal(0)) / per_share, SHARE_STEP)
        ceiling = min(ceiling, affordable)
        if affordable < size:
            if affordable < min_order_size:
                return Fit(Decimal(0), ceiling, tuple(notes), reason,
                           f"The {money(max(left, Decimal(0)))} left of the {name} cannot buy "
                           f"the minimum {shares(min_order_size)} shares at {price(limit, tick)}.")
            notes.append(f"reduced to {shares(affordable)} shares by the {name}")
            size = affordable
    return Fit(size, ceiling, tuple(notes))


def _decide_buy(rules: CopyRules, fill: TargetFill, market: MarketView, holding: Holding,
                limit: Decimal, available_usdc: Decimal | None, ctx: CopyContext
                ) -> Decision:
    # Size at the limit price: the most an order can cost, so the caps hold however it
    # fills; the taker fee comes on top of a buy, so each share's cost includes it.
    per_share = market.buy_cost_per_share(limit)
    wanted, how = _wanted_shares(rules, fill, per_share, ctx)
    if wanted is None:
        return _skip(fill.token_id, BUY, BELOW_MIN_SIZE, f"Cannot size the copy: {how}.")
    headroom = rules.max_position_usdc - holding.cost_usdc
    if headroom <= 0:
        return _skip(fill.token_id, BUY, CAP_REACHED,
                     f"The position's cost of {money(holding.cost_usdc)} is already at the "
                     f"{label('max_position_usdc')} of {money(rules.max_position_usdc)}.")
    notes: list[str] = []
    capped = wanted
    # Every bound, in shares: the most the copy may buy (what round_up_to_min may reach).
    ceiling = _round_down(headroom / per_share, SHARE_STEP)
    if rules.max_trade_usdc is not None:
        most = _round_down(rules.max_trade_usdc / per_share, SHARE_STEP)
        ceiling = min(ceiling, most)
        if most < capped:
            notes.append(f"cut from {shares(capped)} to {shares(most)} shares by the "
                         f"{label('max_trade_usdc')} of {money(rules.max_trade_usdc)}")
            capped = most
    if ceiling < capped:
        notes.append(f"capped from {shares(capped)} to {shares(ceiling)} shares by the "
                     f"{label('max_position_usdc')} of {money(rules.max_position_usdc)}")
        capped = ceiling
    bounds = spending_limits(rules, ctx)
    if available_usdc is not None:
        bounds.append((INSUFFICIENT_BALANCE, available_usdc, "balance"))
    fit = fit_spending(capped, per_share, limit, bounds, market.min_order_size, ceiling,
                       market.tick_size)
    if fit.reason is not None:
        return _skip(fill.token_id, BUY, fit.reason, fit.detail)
    capped, ceiling = fit.shares, fit.ceiling
    notes.extend(fit.notes)
    if rules.min_trade_usdc is not None and capped * per_share < rules.min_trade_usdc:
        needed = _round_up(rules.min_trade_usdc / per_share, SHARE_STEP)
        if not rules.round_up_to_min or needed > ceiling:
            why = (f"; rounding up to {shares(needed)} shares would pass a cap, budget or the "
                   "balance" if rules.round_up_to_min else "")
            return _skip(fill.token_id, BUY, BELOW_MIN_TRADE,
                         f"{shares(capped)} shares at {price(limit, market.tick_size)} is "
                         f"under the "
                         f"{label('min_trade_usdc')} of {money(rules.min_trade_usdc)}{why}.")
        notes.append(f"rounded up from {shares(capped)} to {shares(needed)} shares to the "
                     f"{label('min_trade_usdc')}")
        capped = needed
    if capped < market.min_order_size or capped <= 0:
        return _skip(fill.token_id, BUY, BELOW_MIN_SIZE,
                     f"{shares(capped)} shares is under the market minimum of "
                     f"{shares(market.min_order_size)}"
                     + (f" ({'; '.join(notes)})" if notes else "") + ".")
    spend = _round_up(capped * limit, USDC_STEP)
    if spend > headroom:
        spend = _round_down(headroom, USDC_STEP)
    if rules.sizing_mode == "fixed_usdc" and rules.fixed_usdc is not None:
        notes.append(fixed_spend_note(rules.fixed_usdc, capped, limit, per_share, spend,
                                      market.tick_size))
    detail = f"Buy {shares(capped)} shares ({how})"
    return Decision(action="copy", token_id=fill.token_id, side=BUY, size=capped, price=limit,
                    usdc=spend, detail=detail + ("; " + "; ".join(notes) if notes else "") + ".")


def fixed_spend_note(fixed: Decimal, size: Decimal, limit: Decimal, per_share: Decimal,
                     spend: Decimal, tick: Decimal | None = None) -> str:
    """Why a fixed-size copy spends less than its amount: whole hundredths of a share at up
    to the limit price, the taker fee on top, a better fill costing less."""
    fee = _round_up(size * (per_share - limit), USDC_STEP)
    why = [f"shares are bought in steps of {SHARE_STEP} at up to {price(limit, tick)} each"]
    if fee > 0:
        why.append(f"the taker fee takes about {money(fee)}")
    return (f"spends at most {money(spend)} of the {money(fixed)}: " + ", ".join(why)
            + ", and a fill at a better price costs less")


def sell_fraction(sold: Decimal, position_after: Decimal | None) -> Decimal:
    """Share of its position the target sold: sold / (after + sold); 1 when unknown or all."""
    if position_after is None or position_after <= 0:
        return Decimal(1)
    before = position_after + sold
    return min(Decimal(1), sold / before) if before > 0 else Decimal(1)


def sold_share(rules: CopyRules, sold: Decimal, after: Decimal | None,
               before: Decimal | None) -> tuple[Decimal, str]:
    """The share of our holding a target's sale sells, by the sell mode, and why."""
    if rules.sell_mode == "sell_all":
        return Decimal(1), "the sell mode sells the whole position on any sale"
    if rules.sell_mode == "same_percentage" and before is not None and before > 0 \
            and after is not None:
        share = min(Decimal(1), max(Decimal(0), before - after) / before)
        return share, (f"the trader's position went from {shares(before)} to "
                       f"{shares(after)} shares ({percent(share, 1)} sold)")
    fraction = sell_fraction(sold, after)
    return fraction, f"the trader sold {percent(fraction, 1)} of its position"


def _decide_sell(rules: CopyRules, fill: TargetFill, market: MarketView, holding: Holding,
                 book: Decimal, limit: Decimal, target_position_after: Decimal | None,
                 target_position_before: Decimal | None) -> Decision:
    if holding.shares <= 0:
        return _skip(fill.token_id, SELL, NO_POSITION)
    fraction, why = sold_share(rules, fill.size, target_position_after, target_position_before)
    size = holding.shares if fraction >= 1 else _round_down(holding.shares * fraction,
                                                            SHARE_STEP)
    if size < market.min_order_size or size <= 0:
        return _skip(fill.token_id, SELL, BELOW_MIN_SIZE,
                     f"Selling {shares(size)} shares ({percent(fraction, 1)} of "
                     f"{shares(holding.shares)}) is under the market minimum of "
                     f"{shares(market.min_order_size)}.")
    detail = f"Sell {shares(size)} of {shares(holding.shares)} shares: {why}."
    remainder = holding.shares - size
    if 0 < remainder < market.min_order_size:
        # What would be left could never be sold on its own: sell it with this order.
        detail = (f"Sell the whole holding of {shares(holding.shares)} shares: {why}, and the "
                  f"{shares(remainder)} shares left would be under the market minimum of "
                  f"{shares(market.min_order_size)} (unsellable dust).")
        size = holding.shares
    return Decision(action="copy", token_id=fill.token_id, side=SELL, size=size, price=limit,
                    usdc=_round_down(size * book, USDC_STEP), detail=detail)


def stop_signal(rules: CopyRules, total_pnl: Decimal, peak_pnl: Decimal,
                open_cost_usdc: Decimal) -> tuple[str, str] | None:
    """(``loss_stop`` or ``drawdown_stop``, why) when the config's PnL hits a stop, else None.

    The drawdown is the fall from the PnL peak in bps of the capital in play: the open
    positions' cost basis plus the peak profit (a config that never made money measures
    its fall against what it holds).
    """
    if rules.loss_stop_usdc is not None and total_pnl <= -rules.loss_stop_usdc:
        return LOSS_STOP, (f"Total PnL {money(total_pnl)} reached the loss stop of "
                           f"{money(-rules.loss_stop_usdc)}.")
    if rules.max_drawdown_bps is not None:
        peak = max(peak_pnl, total_pnl, Decimal(0))
        capital = open_cost_usdc + peak
        fall = peak - total_pnl
        if capital > 0 and fall > 0:
            drawdown = fall / capital * BPS
            if drawdown >= rules.max_drawdown_bps:
                return DRAWDOWN_STOP, (
                    f"PnL {money(total_pnl)} is {bps(drawdown)} below its peak of "
                    f"{money(peak)} (the {label('max_drawdown_bps')} is "
                    f"{bps(rules.max_drawdown_bps)}).")
    return None


def closing_sell(rules: CopyRules, token_id: str, holding: Holding, market: MarketView,
                 why: str) -> Decision:
    """Sell a whole position at market, no lower than the deviation rule allows below the
    best bid (a stop's close, an exit before the market ends); a skip when it cannot.
    ``why`` is an exit's or stop's code (``loss_stop``, ``market_end``) or a phrase."""
    why = market_end_why(rules) if why == "market_end" else signal_words(why)
    if not market.accepting_orders:
        return _skip(token_id, SELL, MARKET_CLOSED, f"{why}: {REASONS[MARKET_CLOSED]}")
    if market.best_bid is None:
        return _skip(token_id, SELL, NO_LIQUIDITY, f"{why}: {REASONS[NO_LIQUIDITY]}")
    if holding.shares < market.min_order_size:
        return _skip(token_id, SELL, BELOW_MIN_SIZE,
                     f"{why}: {shares(holding.shares)} shares is under the market minimum.")
    limit = worst_price(SELL, market.best_bid, rules.price_deviation_bps, market.tick_size)
    return Decision(action="copy", token_id=token_id, side=SELL, size=holding.shares,
                    price=limit, usdc=_round_down(holding.shares * market.best_bid, USDC_STEP),
                    detail=f"{why}: sell all {shares(holding.shares)} shares at market, no "
                           f"lower than {price(limit, market.tick_size)} (best bid "
                           f"{price(market.best_bid, market.tick_size)}).")


def exit_before_end(rules: CopyRules, market: MarketView, now: int) -> bool:
    """True when ``exit_hours_before_end`` says to sell the position now."""
    left = hours_to_end(market, now)
    return (rules.exit_hours_before_end is not None and left is not None
            and left <= rules.exit_hours_before_end)


def breaker_holds(retry_at: int | None, now: int | None) -> bool:
    """True while the failure breaker holds a fill's copy back (open until ``retry_at``)."""
    return retry_at is not None and (now is None or now < retry_at)


def breaker_after(failures: int, trips: int, limit: int, *, failed: bool
                  ) -> tuple[int, int, int | None]:
    """The breaker after one copy's outcome: (failures in a row, trips, pause seconds).

    A success closes it (both counts back to 0). The ``limit``-th failure in a row trips
    it: it pauses 1 min, then 5 min, then 30 min on each trip in a row; a failed retry
    after a pause trips it again at once.
    """
    if not failed:
        return 0, 0, None
    failures += 1
    if failures >= limit or trips > 0:
        pause = BREAKER_BACKOFF[min(trips, len(BREAKER_BACKOFF) - 1)]
        return failures, trips + 1, pause
    return failures, trips, None


def exit_signal(rules: CopyRules, holding: Holding, best_bid: Decimal | None) -> str | None:
    """``take_profit`` / ``stop_loss`` when the bid crosses the config's threshold, else None."""
    average = holding.average_price
    if average is None or average <= 0 or best_bid is None:
        return None
    change = (best_bid - average) / average * BPS
    if rules.take_profit_bps is not None and change >= rules.take_profit_bps:
        return "take_profit"
    if rules.stop_loss_bps is not None and change <= -rules.stop_loss_bps:
        return "stop_loss"
    return None


def decide_exit(rules: CopyRules, token_id: str, holding: Holding, market: MarketView
                ) -> Decision | None:
    """A sell-everything decision when TP/SL triggers, None otherwise."""
    signal = exit_signal(rules, holding, market.best_bid)
    if signal is None or market.best_bid is None:
        return None
    if holding.shares < market.min_order_size:
        return _skip(token_id, SELL, BELOW_MIN_SIZE,
                     f"{signal_words(signal)}: {shares(holding.shares)} shares is under the "
                     "market minimum.")
    limit = max(market.tick_size, _round_up(market.best_bid * Decimal("0.98"), market.tick_size))
    return Decision(action="copy", token_id=token_id, side=SELL, size=holding.shares,
                    price=min(limit, 1 - market.tick_size),
                    usdc=_round_down(holding.shares * market.best_bid, USDC_STEP),
                    detail=f"{signal_words(signal)}: best bid "
                           f"{price(market.best_bid, market.tick_size)} vs "
                           f"average cost {price(holding.average_price, market.tick_size)}.")


def suggest_multiplier(balance: Decimal, typical_trade_usdc: Decimal,
                       typical_exposure_usdc: Decimal, *, trades_per_position: int = 3,
                       risk_share: Decimal = Decimal("0.05")) -> tuple[Decimal, str]:
    """A size_multiplier so a typical mirrored trade risks ``risk_share`` of the balance.

    Bounded so the target's typical total exposure, mirrored, stays within half the
    balance; returns the multiplier (4 decimals, at least 0.0001) and an explanation.
    """
    if balance <= 0 or typical_trade_usdc <= 0:
        return Decimal("0.0001") if balance <= 0 else Decimal(1), (
            "No balance to size against." if balance <= 0
            else "The target has no recent trades; 1x is a neutral start.")
    per_trade = balance * risk_share / typical_trade_usdc
    exposure_cap = (balance / 2 / typical_exposure_usdc) if typical_exposure_usdc > 0 else per_trade
    multiplier = min(per_trade, exposure_cap)
    multiplier = max(Decimal("0.0001"), multiplier.quantize(Decimal("0.0001"), ROUND_DOWN))
    how = (f"A typical trade of the trader is {money(typical_trade_usdc)}; "
           f"{multiplier.normalize():f}x makes it about {percent(risk_share)} of your "
           f"{money(balance)} balance")
    if exposure_cap < per_trade:
        how += (f", reduced so the trader's typical open exposure of "
                f"{money(typical_exposure_usdc)} mirrors to at most half your balance")
    return multiplier, how + f" (about {trades_per_position} fills per position)."
