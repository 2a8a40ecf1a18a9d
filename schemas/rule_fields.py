# ruff: noqa: RUF001  (the form's words use typographic quotes, dashes and signs)
"""Every copy rule, declared once: its field, kind, default, bounds, label, help and reasons.

The table ``RULES`` is the one place a rule's outside shape is written. Validation
(``services.copying.configs.rules``), defaults, the REST and MCP schemas
(``schemas.configs``), the labels sentences use (``rule_labels``), the dashboard's form
(``templates/dashboard/_config_fields.html``), the engine's ``CopyRules`` and the docs'
table (``docs/reference/copy-rules.md``) are derived from it; what a rule *does* is
``services.copying.mirror``'s. A test checks the model's columns against it (the migration
stays explicit).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

# Kinds of value, each with its check (``RuleField.clean``), column, schema and widget.
POSITIVE = "positive"    # a Decimal above 0, at most ``high``, 6 places (amounts, multipliers)
PRICE = "price"          # a Decimal from 0 to 1
HOURS = "hours"          # a Decimal above 0, at most ``high``
INTEGER = "integer"      # an int from ``low`` to ``high``
FLAG = "flag"            # a boolean
CHOICE = "choice"        # one of ``choices``
WORDS = "words"          # a list of keywords, folded for matching
CATEGORIES = "categories"  # a list of the venue's categories (checked against the venue)
BANDS = "bands"          # price bands: [{max_price, max_deviation_bps}], ascending price
KINDS = (POSITIVE, PRICE, HOURS, INTEGER, FLAG, CHOICE, WORDS, CATEGORIES, BANDS)
LIST_KINDS = (WORDS, CATEGORIES, BANDS)
DECIMAL_KINDS = (POSITIVE, PRICE, HOURS)

MAX_BPS = 10000
MAX_KEYWORDS = 50
MAX_KEYWORD_LENGTH = 100
MAX_BANDS = 20

# The dashboard form's sections, in order: (key, title). ``basics`` is always open.
GROUPS: tuple[tuple[str, str], ...] = (
    ("basics", ""),
    ("sizing", "Sizing, limits and direction"),
    ("stops", "Budgets, stops and the failure breaker"),
    ("filters", "Start and market filters"),
    ("entries", "Entries, exits and slippage by price"),
)


# " (a_reason_code)" in a rule's help: the API's words, not the dashboard's
_REASON_CODE = re.compile(r" \(`?[a-z]+(?:_[a-z]+)+`?\)")


@dataclass(frozen=True)
class RuleField:
    """One copy rule's field: what it holds, its default, bounds and words."""

    name: str
    kind: str
    default: Any
    label: str  # how a sentence names the rule ("the max position of ...")
    help: str  # the API's and the docs' description
    form: str  # the dashboard's label ("Max position (pUSD)")
    group: str  # the dashboard section (a key of GROUPS)
    form_help: str = ""  # the dashboard's hint (the help when empty)
    nullable: bool = False  # None turns the rule off
    low: Any = None
    high: Any = None
    choices: tuple[tuple[str, str], ...] = ()  # (value, what the form shows)
    reasons: tuple[str, ...] = ()  # the skip reasons the rule gives
    placeholder: str = "off"
    required: bool = False  # a new config must give it (the form marks it)
    sizing: str = ""  # the sizing modes' field the form shows or hides with the mode

    @property
    def values(self) -> tuple[str, ...]:
        """A choice's values."""
        return tuple(value for value, _ in self.choices)

    @property
    def widget(self) -> str:
        """The form control: ``text``, ``number``, ``check``, ``select``, ``list`` or
        ``bands``."""
        return {FLAG: "check", CHOICE: "select", WORDS: "list", CATEGORIES: "list",
                INTEGER: "number", BANDS: "bands"}.get(self.kind, "text")

    @property
    def hint(self) -> str:
        """The dashboard's hint under the control: the help without the skip reason's code
        it names for API users ("(daily_budget_exhausted)")."""
        return _REASON_CODE.sub("", self.form_help or self.help)

    def problem(self) -> str:
        """What a bad value is told: the bounds the field takes."""
        null = self.nullable
        if self.kind == POSITIVE:
            return (f"Null, or greater than 0 and at most {self.high} (6 decimal places)."
                    if null else f"Must be greater than 0 and at most {self.high}.")
        if self.kind == PRICE:
            return "Null or a price from 0 to 1." if null else "A price from 0 to 1."
        if self.kind == HOURS:
            return (("Null or a" if null else "A")
                    + f" number of hours above 0, at most {self.high}.")
        if self.kind == INTEGER:
            return (("Null or an" if null else "An")
                    + f" integer from {self.low} to {self.high}.")
        if self.kind == FLAG:
            return "Must be a boolean."
        if self.kind == CHOICE:
            return f"One of {', '.join(self.values)}."
        if self.kind == BANDS:
            return (f"A list of at most {MAX_BANDS} bands {{max_price, max_deviation_bps}} in "
                    "ascending max_price, each max_price above 0 and at most 1, each "
                    f"max_deviation_bps an integer from 0 to {MAX_BPS}.")
        return "A list of keywords." if self.kind == WORDS else "A list of category names."

    def clean(self, value: Any) -> Any:
        """The value as rules read it; ValueError with the field's message when bad."""
        if value is None:
            if self.nullable or self.kind in LIST_KINDS:
                return [] if self.kind in LIST_KINDS else None
            raise ValueError(self.problem())
        if self.kind in DECIMAL_KINDS:
            return self._decimal(value)
        if self.kind == INTEGER:
            if isinstance(value, bool) or not isinstance(value, int) \
                    or not self.low <= value <= self.high:
                raise ValueError(self.problem())
            return value
        if self.kind == FLAG:
            if not isinstance(value, bool):
                raise ValueError(self.problem())
            return value
        if self.kind == CHOICE:
            if value not in self.values:
                raise ValueError(self.problem())
            return value
        if self.kind == WORDS:
            return _keywords(value)
        if self.kind == BANDS:
            return self._bands(value)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(self.problem())
        return value  # categories: normalised and checked by the caller

    def _decimal(self, value: Any) -> Decimal:
        amount = as_decimal(value)
        if amount is None:
            raise ValueError(self.problem())
        if self.kind == PRICE:
            if not 0 <= amount <= 1:
                raise ValueError(self.problem())
            return amount
        if not 0 < amount <= self.high:
            raise ValueError(self.problem())
        if self.kind == POSITIVE and amount.as_tuple().exponent < -6:  # type: ignore[operator]
            raise ValueError(self.problem() if self.nullable else "At most 6 decimal places.")
        return amount

    def _bands(self, value: Any) -> list[dict[str, Any]]:
        """Bands as JSON holds them (max_price a decimal string), or ValueError."""
        if not isinstance(value, list) or len(value) > MAX_BANDS:
            raise ValueError(self.problem())
        bands: list[dict[str, Any]] = []
        for band in value:
            if not isinstance(band, Mapping) or set(band) != {"max_price", "max_deviation_bps"}:
                raise ValueError(self.problem())
            top, bps = as_decimal(band["max_price"]), band["max_deviation_bps"]
            if top is None or not 0 < top <= 1 or top.as_tuple().exponent < -6:  # type: ignore[operator]
                raise ValueError(f"Each max_price above 0 and at most 1 (got "
                                 f"{band['max_price']!r}).")
            if isinstance(bps, bool) or not isinstance(bps, int) or not 0 <= bps <= MAX_BPS:
                raise ValueError(f"Each max_deviation_bps an integer from 0 to {MAX_BPS}.")
            if bands and top <= Decimal(bands[-1]["max_price"]):
                raise ValueError("Bands must be in ascending max_price, each above the last.")
            bands.append({"max_price": format(top.normalize(), "f"), "max_deviation_bps": bps})
        return bands

    def decode(self, value: Any) -> Any:
        """A value read back from JSON (a preview, a report's inputs) as ``clean`` made it."""
        if value is not None and self.kind in DECIMAL_KINDS:
            return Decimal(str(value))
        return value

    def stored(self, value: Any) -> Any:
        """The value as the model's column holds it (lists as JSON text)."""
        return json.dumps(value) if self.kind in LIST_KINDS else value

    def loaded(self, value: Any) -> Any:
        """A model column's value as ``clean`` makes it (JSON text back to a list)."""
        return json.loads(value or "[]") if self.kind in LIST_KINDS else value


def as_decimal(value: Any) -> Decimal | None:
    """An exact Decimal of a string, int or Decimal (never a float or a bool); else None."""
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        amount = Decimal(str(value))
    except (ArithmeticError, InvalidOperation):
        return None
    return amount if amount.is_finite() else None


def _keywords(value: Any) -> list[str]:
    """Keywords folded for matching; ValueError saying what is wrong with them."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("A list of keywords.")
    if len(value) > MAX_KEYWORDS:
        raise ValueError(f"At most {MAX_KEYWORDS} keywords.")
    if any(len(v.strip()) > MAX_KEYWORD_LENGTH for v in value):
        raise ValueError(f"Each keyword at most {MAX_KEYWORD_LENGTH} characters.")
    return list(dict.fromkeys(v.strip().casefold() for v in value if v.strip()))


MAX_POSITION_USDC = Decimal(1_000_000)
MAX_HOURS = Decimal(24 * 365)
MAX_DAY_SECONDS = 7 * 24 * 3600

# The default slippage bands: about two ticks (0.01) around the coin flips, where one tick
# is 200 bps of a 0.50 price and a single 200 bps limit skips a book that moved one tick,
# tighter toward the favourites (one tick of 0.90 is 111 bps), wider toward the long shots.
# Above the last band (none here: it ends at 1) the single price_deviation_bps applies.
DEFAULT_BANDS: list[dict[str, Any]] = [
    {"max_price": "0.2", "max_deviation_bps": 1000},
    {"max_price": "0.4", "max_deviation_bps": 600},
    {"max_price": "0.6", "max_deviation_bps": 450},
    {"max_price": "0.8", "max_deviation_bps": 300},
    {"max_price": "1", "max_deviation_bps": 200},
]

RULES: tuple[RuleField, ...] = (
    # The basics: sizing and the guards every config has.
    RuleField("size_multiplier", POSITIVE, None, "size multiplier",
              "Target shares are multiplied by this (greater than 0, at most 100, 6 decimal "
              "places).", "Size multiplier", "basics",
              "The trader's shares × this (with the multiplier and proportional sizing modes "
              "below).", high=Decimal(100), placeholder="0.5", sizing="multiplier"),
    RuleField("max_position_usdc", POSITIVE, None, "max position",
              "Cap on the cost basis of each position the config holds (one outcome token), "
              "in pUSD; buys are cut down to fit (greater than 0).", "Max position (pUSD)",
              "basics", "Cap on each position's cost.", high=MAX_POSITION_USDC,
              reasons=("cap_reached",), placeholder="100", required=True),
    RuleField("price_deviation_bps", INTEGER, 200, "price deviation",
              "Skip a trade when the book price (best ask to buy, best bid to sell) differs "
              "from the target's fill price by more than this many basis points (0-10000); "
              "also the worst price a mirrored order accepts.", "Price deviation (bps)",
              "basics", "Skip when the book is further than this from the target's price.",
              low=0, high=MAX_BPS, reasons=("price_deviation",), placeholder="200"),
    RuleField("blocked_categories", CATEGORIES, [], "blocked categories",
              "Categories never copied, from the venue's categories (e.g. `sports`).",
              "Blocked categories", "basics", "Comma-separated; never copied.",
              reasons=("category_blocked",), placeholder="sports, crypto"),
    RuleField("take_profit_bps", INTEGER, None, "take profit",
              "Sell the whole position when the best bid is this many bps above its average "
              "cost.", "Take profit (bps)", "basics", nullable=True, low=1,
              high=1_000_000),
    RuleField("stop_loss_bps", INTEGER, None, "stop loss",
              "Sell the whole position when the best bid is this many bps below its average "
              "cost.", "Stop loss (bps)", "basics", nullable=True, low=1, high=MAX_BPS),
    # Sizing, limits and direction.
    RuleField("sizing_mode", CHOICE, "multiplier", "sizing mode",
              "How a buy is sized: `multiplier` (target shares x size_multiplier, the "
              "default), `fixed_usdc` (fixed_usdc pUSD per copy) or `proportional` (target "
              "shares x our balance / the target's portfolio value from the Data API x "
              "size_multiplier).", "Sizing mode", "sizing", "How each copied buy is sized.",
              choices=(("multiplier", "Multiplier: target shares × size multiplier"),
                       ("fixed_usdc", "Fixed pUSD per copy"),
                       ("proportional",
                        "Proportional: our balance ÷ the target’s value × multiplier"))),
    RuleField("fixed_usdc", POSITIVE, None, "fixed amount per copy",
              "pUSD spent per copied buy; required with, and only with, sizing_mode "
              "fixed_usdc.", "Fixed amount (pUSD)", "sizing",
              "Spent at most per copied buy (rounded down to whole hundredths of a share, the "
              "taker fee included); only with the fixed mode.", nullable=True,
              high=MAX_POSITION_USDC, sizing="fixed_usdc"),
    RuleField("min_trade_usdc", POSITIVE, None, "min per trade",
              "A buy worth less is skipped (`below_min_trade`) unless round_up_to_min.",
              "Min per trade (pUSD)", "sizing", "Smaller copies are skipped (below_min_trade).",
              nullable=True, high=MAX_POSITION_USDC, reasons=("below_min_trade",)),
    RuleField("max_trade_usdc", POSITIVE, None, "max per trade",
              "A buy worth more is cut down to this.", "Max per trade (pUSD)", "sizing",
              "Bigger copies are cut down to this.", nullable=True, high=MAX_POSITION_USDC),
    RuleField("min_target_trade_usdc", POSITIVE, None, "smallest trader's trade to copy",
              "Ignore target trades (buys and sells) worth less (`below_min_target_trade`).",
              "Ignore target trades under (pUSD)", "sizing",
              "Small target trades are not copied (below_min_target_trade).", nullable=True,
              high=MAX_POSITION_USDC, reasons=("below_min_target_trade",)),
    RuleField("min_price", PRICE, None, "min price",
              "The odds band's floor (0-1): buys at a lower ask are skipped "
              "(`price_out_of_range`); sells always follow.", "Min price (0–1)", "sizing",
              "The odds band: buys at a lower price are skipped (price_out_of_range).",
              nullable=True, reasons=("price_out_of_range",)),
    RuleField("max_price", PRICE, None, "max price",
              "The odds band's ceiling (0-1), above min_price.", "Max price (0–1)", "sizing",
              "Buys at a higher price are skipped; sells always follow.", nullable=True,
              reasons=("price_out_of_range",)),
    RuleField("direction", CHOICE, "mirror", "direction",
              "`mirror` (default) or `inverse`: buy the market's other outcome when the "
              "target buys, sell it when the target sells.", "Direction", "sizing",
              "Inverse buys the opposite outcome when the target buys, and sells it when the "
              "target sells.", choices=(("mirror", "Mirror: the same outcome"),
                                        ("inverse", "Inverse: the other outcome"))),
    RuleField("round_up_to_min", FLAG, False, "round up to the minimum",
              "Round a buy under min_trade_usdc up to it (never past a cap, budget or the "
              "balance) instead of skipping it. Needs min_trade_usdc.",
              "Round up to the minimum", "sizing",
              "a copy under the min per trade is rounded up to it, never past a cap, budget "
              "or the balance"),
    RuleField("copy_buys", FLAG, True, "copy buys",
              "Copy the target's buys (default true; `buys_disabled` otherwise).",
              "Copy buys", "sizing", "untick to follow only the target’s exits",
              reasons=("buys_disabled",)),
    RuleField("copy_sells", FLAG, True, "copy sells",
              "Copy the target's sells (default true; `sells_disabled` otherwise).",
              "Copy sells", "sizing", "untick to hold what you bought",
              reasons=("sells_disabled",)),
    RuleField("copy_pending_matches", FLAG, False, "copy pending matches",
              "Copy the target's match as soon as its transaction is seen pending on chain, "
              "before its block (faster, but the match can still fail, leaving the copy "
              "without the target's trade). Default false: copies wait for the fill to be "
              "confirmed.", "Copy pending matches", "sizing",
              "copy as soon as the target’s match is seen pending on chain, before its "
              "block: faster, but the match can still fail and leave your copy without the "
              "target’s trade"),
    # Budgets, stops and the failure breaker.
    RuleField("daily_budget_usdc", POSITIVE, None, "daily budget",
              "pUSD copies may spend per UTC day, net of what sells bring back "
              "(`daily_budget_exhausted`).", "Daily budget (pUSD)", "stops",
              "Spent per UTC day by copies, sells giving back (daily_budget_exhausted).",
              nullable=True, high=MAX_POSITION_USDC, reasons=("daily_budget_exhausted",)),
    RuleField("total_budget_usdc", POSITIVE, None, "total budget",
              "pUSD copies may spend in all, net of sells (`total_budget_exhausted`).",
              "Total budget (pUSD)", "stops",
              "Spent in all, sells giving back (total_budget_exhausted).", nullable=True,
              high=MAX_POSITION_USDC, reasons=("total_budget_exhausted",)),
    RuleField("loss_stop_usdc", POSITIVE, None, "loss stop",
              "Stop the config when its total PnL reaches minus this (a positive amount of "
              "loss); stopped_reason `loss_stop`.", "Loss stop (pUSD)", "stops",
              "Stop the config when its total PnL reaches minus this.", nullable=True,
              high=MAX_POSITION_USDC, reasons=("loss_stop",)),
    RuleField("max_drawdown_bps", INTEGER, None, "max drawdown",
              "Stop the config when its PnL falls this many bps (of the open cost basis plus "
              "the peak profit) below its peak; stopped_reason `drawdown_stop`.",
              "Max drawdown (bps)", "stops",
              "Stop when PnL falls this far from its peak (of the capital in play).",
              nullable=True, low=1, high=MAX_BPS, reasons=("drawdown_stop",)),
    RuleField("max_consecutive_failures", INTEGER, 5, "failures before pausing",
              "Failed copies in a row (running out of funds counts) that open the breaker "
              "(default 5, at least 1); it retries after 1 min, then 5 min, then 30 min "
              "(`breaker_open`).", "Failures before pausing", "stops",
              "Failed copies in a row (out of funds counts) that pause copying; retries "
              "after 1, 5, then 30 min.", low=1, high=1000, reasons=("breaker_open",),
              placeholder="5"),
    RuleField("close_positions_on_stop", FLAG, False, "close positions on stop",
              "When a loss or drawdown stop hits, sell the config's positions at market, no "
              "lower than price_deviation_bps below the best bid; each sale is in the "
              "config's decisions.", "Close positions on stop", "stops",
              "sell them at market, no lower than the price deviation below the best bid"),
    # Start and market filters.
    RuleField("start_mode", CHOICE, "new_trades_only", "start mode",
              "`new_trades_only` (default) or `copy_open_positions`: on start, mirror the "
              "target's current positions, sized and guarded like any copy.", "On start",
              "filters", "Open positions are sized and guarded like any copy.",
              choices=(("new_trades_only", "Copy new trades only"),
                       ("copy_open_positions", "Also copy the target’s open positions"))),
    RuleField("skip_if_ends_within_hours", HOURS, None, "skip markets ending within",
              "Skip buys in markets ending sooner (`market_ends_soon`).",
              "Skip markets ending within (h)", "filters",
              "No buys in markets ending sooner (market_ends_soon).", nullable=True,
              high=MAX_HOURS, reasons=("market_ends_soon",)),
    RuleField("exit_hours_before_end", HOURS, None, "exit hours before the end",
              "Sell the config's position this many hours before its market ends.",
              "Exit hours before the end", "filters",
              "Sell the position this many hours before its market ends.", nullable=True,
              high=MAX_HOURS),
    RuleField("include_keywords", WORDS, [], "only questions containing",
              "Copy only markets whose question contains one of these (case-insensitive; at "
              "most 50, each at most 100 characters; `keyword_not_included`).",
              "Only questions containing", "filters",
              "Comma-separated, case-insensitive (keyword_not_included).",
              reasons=("keyword_not_included",), placeholder="any"),
    RuleField("exclude_keywords", WORDS, [], "never questions containing",
              "Never copy markets whose question contains one of these (`keyword_excluded`).",
              "Never questions containing", "filters",
              "Comma-separated, case-insensitive (keyword_excluded).",
              reasons=("keyword_excluded",), placeholder="none"),
    # Entries, exits and slippage by price (issue 45).
    RuleField("entry_policy", CHOICE, "every_add", "entry policy",
              "Which of the target's buys into one position are copied: `every_add` (the "
              "default), `first_entry_only` (the buy that opens it) or `max_adds` (the "
              "first max_adds_count buys, the opening one included); others are skipped "
              "(`entry_policy`).", "Entry policy", "entries",
              "Which buys into one position are copied (entry_policy).",
              choices=(("every_add", "Every add to a position"),
                       ("first_entry_only", "Only the first entry"),
                       ("max_adds", "Up to a number of buys per position")),
              reasons=("entry_policy",)),
    RuleField("max_adds_count", INTEGER, None, "max adds",
              "With entry_policy `max_adds`: how many buys into one position are copied, "
              "the opening one included (at least 1).", "Max buys per position", "entries",
              "With “up to a number of buys”: the opening buy counts as one.", nullable=True,
              low=1, high=1000),
    RuleField("sell_mode", CHOICE, "mirror", "sell mode",
              "How the target's sells are copied: `mirror` (the default: the share of its "
              "position the target sold, read after the sale), `same_percentage` (the "
              "percentage of its position the target sold, from its position read before and "
              "after the sale), `sell_all` (the whole position on any sell) or `manual` "
              "(never: `sells_manual`).", "Sell mode", "entries",
              "How the trader's sells are followed; with Never, they are skipped "
              "(sells_manual) and you exit by hand.",
              choices=(("mirror", "Mirror the share of its position the trader sold"),
                       ("same_percentage", "The same percentage, read before and after"),
                       ("sell_all", "Sell everything when the trader sells any"),
                       ("manual", "Never: I exit by hand")),
              reasons=("sells_manual",)),
    RuleField("max_open_positions", INTEGER, None, "max open positions",
              "At most this many positions held at once: a buy into a new one is skipped "
              "(`max_open_positions`); adds to positions held still follow the entry policy.",
              "Max open positions", "entries",
              "Buys into new positions are skipped beyond this (max_open_positions).",
              nullable=True, low=1, high=10000, reasons=("max_open_positions",)),
    RuleField("market_cooldown_seconds", INTEGER, None, "market cooldown",
              "A copy in a market (a buy or a sell) waits this many seconds after the "
              "config's last copy there (`market_cooldown`).", "Market cooldown (s)",
              "entries", "Seconds between two copies in one market (market_cooldown).",
              nullable=True, low=1, high=MAX_DAY_SECONDS, reasons=("market_cooldown",)),
    RuleField("price_deviation_bands", BANDS, DEFAULT_BANDS, "price deviation bands",
              "The price deviation by price band: a list of {max_price, max_deviation_bps} in "
              "ascending max_price; a trade at a price up to a band's max_price (and above "
              "the band before) uses its max_deviation_bps instead of price_deviation_bps. "
              "An empty list, or a price above the last band, uses price_deviation_bps. A new "
              "config given neither starts with about two ticks around 0.50 "
              "(0.2: 1000, 0.4: 600, 0.6: 450, 0.8: 300, 1: 200); one given only "
              "price_deviation_bps keeps that single limit.",
              "Price deviation by price (max price: bps)", "entries",
              "Comma-separated max price: bps pairs, ascending; blank uses the single price "
              "deviation (price_deviation).", reasons=("price_deviation",),
              placeholder="0.4: 600, 0.6: 450, 1: 200"),
)

BY_NAME: dict[str, RuleField] = {rule.name: rule for rule in RULES}
NAMES: tuple[str, ...] = tuple(BY_NAME)
DEFAULTS: dict[str, Any] = {rule.name: rule.default for rule in RULES
                            if rule.default is not None or rule.nullable}
"""Each rule's default (the required ones, without a default, are left out)."""


def in_group(group: str) -> Iterator[RuleField]:
    """The rules of one form section, in the table's order."""
    return (rule for rule in RULES if rule.group == group)


def default(name: str) -> Any:
    """Rule ``name``'s default (a fresh list for a list rule)."""
    return copy.deepcopy(BY_NAME[name].default)


def rules_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A config's rules as a dict (every declared field, its default when left out)."""
    return {rule.name: fields.get(rule.name, default(rule.name)) for rule in RULES}
