"""Numbers that read like money: the one place the dashboard formats amounts, prices, shares
and moments. The API stays exact; pages round for people.

- pUSD to 2 decimals with thousands separators (``money``), signed for PnL (``pnl``);
- prices to the market's tick (``price``; a row that knows only its token asks ``tick_of``),
  shares to the venue's 2 decimals (``shares``);
- moments as ``<time>`` elements in UTC, which the page's script shows in the browser's
  time zone with the zone named (``moment``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from flask import g
from markupsafe import Markup, escape

from blueprints.dashboard.base import bp
from services.markets import markets

CENT = Decimal("0.01")
SHARE_STEP = Decimal("0.01")  # order sizes carry 2 decimals at every tick size
DEFAULT_TICK = Decimal("0.01")


def _decimal(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _grouped(value: Decimal, step: Decimal) -> str:
    rounded = value.quantize(step, rounding=ROUND_HALF_EVEN)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.00"
    places = max(0, -step.as_tuple().exponent)
    return f"{rounded:,.{places}f}"


@bp.app_template_filter("money")
def money(value: Any, unit: str = "pUSD") -> str:
    """An amount of pUSD to the cent, grouped: ``1,234.50 pUSD`` ("—" when unknown)."""
    amount = _decimal(value)
    if amount is None:
        return "—"
    return f"{_grouped(amount, CENT)} {unit}".rstrip()


@bp.app_template_filter("pnl")
def pnl(value: Any) -> str:
    """A profit or loss to the cent with its sign: ``+12.30 pUSD``, ``-0.42 pUSD``."""
    amount = _decimal(value)
    if amount is None:
        return "—"
    text = money(amount)
    return text if text.startswith("-") or amount.quantize(CENT) == 0 else f"+{text}"


@bp.app_template_filter("price")
def price(value: Any, tick: Any = None) -> str:
    """A price (0-1) to the market's tick: ``0.63`` at 0.01, ``0.625`` at 0.001."""
    amount = _decimal(value)
    if amount is None:
        return "—"
    step = _decimal(tick) or DEFAULT_TICK
    return _grouped(amount, step.normalize() if step < 1 else DEFAULT_TICK)


@bp.app_template_global("tick_of")
def tick_of(token_id: str | None) -> Decimal | None:
    """The tick of the market an outcome token trades in (asked once per page and token)."""
    if not token_id:
        return None
    known = g.setdefault("dashboard_ticks", {})
    if token_id not in known:
        known[token_id] = markets.tick_size(token_id)
    return known[token_id]


@bp.app_template_filter("shares")
def shares(value: Any) -> str:
    """A number of outcome shares to the venue's 2 decimals: ``1,250.00``."""
    amount = _decimal(value)
    return "—" if amount is None else _grouped(amount, SHARE_STEP)


@bp.app_template_filter("pnl_class")
def pnl_class(value: Any) -> str:
    """``pos``, ``neg`` or "" for a signed amount, to colour it."""
    amount = _decimal(value)
    if amount is None or amount.quantize(CENT) == 0:
        return ""
    return "pos" if amount > 0 else "neg"


def _instant(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@bp.app_template_filter("when")
@bp.app_template_filter("moment")
def moment(value: Any) -> Markup:
    """A ``<time>`` in UTC; the page's script rewrites it in the reader's zone, zone named."""
    instant = _instant(value)
    if instant is None:
        return Markup("—")
    text = instant.strftime("%Y-%m-%d %H:%M UTC")
    return Markup('<time class="local" datetime="{}">{}</time>').format(
        escape(instant.isoformat()), text)
