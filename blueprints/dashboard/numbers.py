"""Numbers that read like money, as template filters: the formatters of
services/platform/numbers.py (money, exact_money, pnl, price, shares, plural, percent, bps,
multiplier) and the page-only parts. The API stays exact; pages round for people.

- prices to the market's tick (``price``; a row that knows only its token asks ``tick_of``);
- moments as ``<time>`` elements in UTC, which the page's script shows in the browser's
  time zone with the zone named (``moment``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from flask import g
from markupsafe import Markup, escape

from blueprints.dashboard.base import bp
from services.markets import markets
from services.platform import addresses, numbers

# The pure formatters live in services/platform/numbers.py (notifications, Telegram and the
# CLI use the same); these register them for templates.
money = bp.app_template_filter("money")(numbers.money)
exact_money = bp.app_template_filter("exact_money")(numbers.exact_money)
pnl = bp.app_template_filter("pnl")(numbers.pnl)
price = bp.app_template_filter("price")(numbers.price)
shares = bp.app_template_filter("shares")(numbers.shares)
plural = bp.app_template_filter("plural")(numbers.plural)
percent = bp.app_template_filter("percent")(numbers.percent)
bps = bp.app_template_filter("bps")(numbers.bps)
duration = bp.app_template_filter("duration")(numbers.duration)
multiplier = bp.app_template_filter("multiplier")(numbers.multiplier)
short_address = bp.app_template_filter("short_address")(addresses.short_address)


@bp.app_template_global("tick_of")
def tick_of(token_id: str | None) -> Decimal | None:
    """The tick of the market an outcome token trades in (asked once per page and token)."""
    if not token_id:
        return None
    known = g.setdefault("dashboard_ticks", {})
    if token_id not in known:
        known[token_id] = markets.tick_size(token_id)
    return known[token_id]


@bp.app_template_filter("pnl_class")
def pnl_class(value: Any) -> str:
    """``pos``, ``neg`` or "" for a signed amount, to colour it."""
    amount = numbers.decimal(value)
    if amount is None or amount.quantize(numbers.CENT) == 0:
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
