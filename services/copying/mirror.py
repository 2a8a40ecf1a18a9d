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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal

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

REASONS: dict[str, str] = {
    CATEGORY_BLOCKED: "The market's category is blocked by the config.",
    PRICE_DEVIATION: "The book price moved too far from the target's fill price.",
    BELOW_MIN_SIZE: "The mirrored size is under the market's minimum order size.",
    INSUFFICIENT_BALANCE: "The balance cannot pay for the mirrored order.",
    CAP_REACHED: "The position already holds max_position_usdc.",
    NO_POSITION: "The target sold, but the config holds none of this token.",
    NO_LIQUIDITY: "The book has no price on the side the order would take.",
    NOT_A_TRADE: "The activity is not a buy or sell fill.",
    MARKET_CLOSED: "The market no longer accepts orders.",
    CONFIG_INACTIVE: "The config was stopped before the order left.",
}


@dataclass(frozen=True)
class CopyRules:
    """The parts of a config that decide trades (a snapshot: the engine reloads on edits)."""

    size_multiplier: Decimal
    max_position_usdc: Decimal
    price_deviation_bps: int
    blocked_categories: frozenset[str] = frozenset()
    take_profit_bps: int | None = None
    stop_loss_bps: int | None = None


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
    return (value / step).to_integral_value(rounding=ROUND_DOWN) * step


def _round_up(value: Decimal, step: Decimal) -> Decimal:
    return (value / step).to_integral_value(rounding=ROUND_CEILING) * step


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


def decide(rules: CopyRules, fill: TargetFill, market: MarketView, holding: Holding,
           *, available_usdc: Decimal | None = None,
           target_position_after: Decimal | None = None) -> Decision:
    """What one config does about one target fill (see the module rules)."""
    try:
        side = Side.parse(fill.side)
    except ValueError:
        return _skip(fill.token_id, str(fill.side).upper() or "?", NOT_A_TRADE)
    if fill.size <= 0:
        return _skip(fill.token_id, side, NOT_A_TRADE)
    if not market.accepting_orders:
        return _skip(fill.token_id, side, MARKET_CLOSED)
    if category_blocked(rules, market):
        return _skip(fill.token_id, side, CATEGORY_BLOCKED,
                     f"Category '{market.category}' is blocked by the config.")
    book = market.best_ask if side == BUY else market.best_bid
    if book is None:
        return _skip(fill.token_id, side, NO_LIQUIDITY)
    moved = deviation_bps(book, fill.price)
    if moved > rules.price_deviation_bps:
        return _skip(fill.token_id, side, PRICE_DEVIATION,
                     f"Book {book} vs target fill {fill.price}: {moved.quantize(Decimal(1))} "
                     f"bps > {rules.price_deviation_bps} bps allowed.")
    limit = worst_price(side, fill.price, rules.price_deviation_bps, market.tick_size)
    if side == BUY:
        return _decide_buy(rules, fill, market, holding, book, limit, available_usdc)
    return _decide_sell(fill, market, holding, book, limit, target_position_after)


def _decide_buy(rules: CopyRules, fill: TargetFill, market: MarketView, holding: Holding,
                book: Decimal, limit: Decimal, available_usdc: Decimal | None) -> Decision:
    wanted = _round_down(fill.size * rules.size_multiplier, SHARE_STEP)
    headroom = rules.max_position_usdc - holding.cost_usdc
    if headroom <= 0:
        return _skip(fill.token_id, BUY, CAP_REACHED,
                     f"Position cost {holding.cost_usdc} already at the {rules.max_position_usdc}"
                     " pUSD cap.")
    # Size at the limit price: the most an order can cost, so the cap holds however it fills;
    # the taker fee comes on top of a buy, so each share's cost includes it.
    per_share = market.buy_cost_per_share(limit)
    capped = min(wanted, _round_down(headroom / per_share, SHARE_STEP))
    notes = []
    if capped < wanted:
        notes.append(f"capped from {wanted} to {capped} shares by max_position_usdc")
    if available_usdc is not None:
        affordable = _round_down(max(available_usdc, Decimal(0)) / per_share, SHARE_STEP)
        if affordable < capped:
            if affordable < market.min_order_size:
                return _skip(fill.token_id, BUY, INSUFFICIENT_BALANCE,
                             f"Balance {available_usdc} pUSD cannot buy the minimum "
                             f"{market.min_order_size} shares at {limit}.")
            notes.append(f"reduced to {affordable} shares by the balance")
            capped = affordable
    if capped < market.min_order_size or capped <= 0:
        return _skip(fill.token_id, BUY, BELOW_MIN_SIZE,
                     f"{capped} shares is under the market minimum of {market.min_order_size}"
                     + (f" ({'; '.join(notes)})" if notes else "") + ".")
    spend = _round_up(capped * limit, USDC_STEP)
    if spend > headroom:
        spend = _round_down(headroom, USDC_STEP)
    detail = f"Buy {capped} shares (target {fill.size} x {rules.size_multiplier})"
    return Decision(action="copy", token_id=fill.token_id, side=BUY, size=capped, price=limit,
                    usdc=spend, detail=detail + ("; " + "; ".join(notes) if notes else "") + ".")


def sell_fraction(sold: Decimal, position_after: Decimal | None) -> Decimal:
    """Share of its position the target sold: sold / (after + sold); 1 when unknown or all."""
    if position_after is None or position_after <= 0:
        return Decimal(1)
    before = position_after + sold
    return min(Decimal(1), sold / before) if before > 0 else Decimal(1)


def _decide_sell(fill: TargetFill, market: MarketView, holding: Holding, book: Decimal,
                 limit: Decimal, target_position_after: Decimal | None) -> Decision:
    if holding.shares <= 0:
        return _skip(fill.token_id, SELL, NO_POSITION)
    fraction = sell_fraction(fill.size, target_position_after)
    shares = holding.shares if fraction >= 1 else _round_down(holding.shares * fraction,
                                                              SHARE_STEP)
    if shares < market.min_order_size or shares <= 0:
        return _skip(fill.token_id, SELL, BELOW_MIN_SIZE,
                     f"Selling {shares} shares ({(fraction * 100).quantize(Decimal('0.1'))}% "
                     f"of {holding.shares}) is under the market minimum of "
                     f"{market.min_order_size}.")
    return Decision(action="copy", token_id=fill.token_id, side=SELL, size=shares, price=limit,
                    usdc=_round_down(shares * book, USDC_STEP),
                    detail=f"Sell {shares} of {holding.shares} shares: the target sold "
                           f"{(fraction * 100).quantize(Decimal('0.1'))}% of its position.")


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
                     f"{signal}: {holding.shares} shares is under the market minimum.")
    limit = max(market.tick_size, _round_up(market.best_bid * Decimal("0.98"), market.tick_size))
    return Decision(action="copy", token_id=token_id, side=SELL, size=holding.shares,
                    price=min(limit, 1 - market.tick_size),
                    usdc=_round_down(holding.shares * market.best_bid, USDC_STEP),
                    detail=f"{signal}: best bid {market.best_bid} vs average cost "
                           f"{holding.average_price:.4f}.")


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
    how = (f"A typical target trade is {typical_trade_usdc.quantize(USDC_STEP)} pUSD; "
           f"{multiplier}x makes it about {(risk_share * 100).normalize()}% of your "
           f"{balance.quantize(USDC_STEP)} pUSD balance")
    if exposure_cap < per_trade:
        how += (f", reduced so the target's typical open exposure of "
                f"{typical_exposure_usdc.quantize(USDC_STEP)} pUSD mirrors to at most half "
                "your balance")
    return multiplier, how + f" (about {trades_per_position} fills per position)."
