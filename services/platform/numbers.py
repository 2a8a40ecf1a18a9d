"""Numbers in words for people: the one formatter pages, notifications, emails, Telegram and
the CLI share. The API and webhook payloads stay exact; only human text rounds.

- money to the cent with thousands separators and the token (``6.30 pUSD``), signed for PnL;
  an amount a person confirms or sent to the cent at least, never rounded (``exact_money``);
- prices to the market's tick (``0.625`` at 0.001), or 2-4 decimals without trailing zeros
  when the tick is unknown (``0.45``, ``0.4525``);
- shares to the venue's 2 decimals (``1,250.00``);
- counts with their noun in the right number (``1 copy``, ``2 copies``);
- fractions as percentages (``0.25`` → ``25 %``);
- multipliers exactly as set, without trailing zeros (``0.7037``, ``2``, after a times sign).

Each returns ``UNKNOWN`` ("—") for a missing or unreadable value; a sentence that must not
show one asks ``known`` first and leaves the amount out.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

TOKEN = "pUSD"  # the collateral every amount is in
UNKNOWN = "—"
TIMES = "\u00d7"  # the multiplication sign a multiplier reads with
CENT = Decimal("0.01")
SHARE_STEP = Decimal("0.01")  # order sizes carry 2 decimals at every tick size
DEFAULT_TICK = Decimal("0.01")
_FINEST_UNTICKED = Decimal("0.0001")  # an unticked price shows at most 4 decimals
_PLURALS = {"copy": "copies", "activity": "activities", "entry": "entries"}


def decimal(value: Any) -> Decimal | None:
    """``value`` as a finite Decimal, or None when missing or not a number."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def known(value: Any) -> bool:
    """True when ``value`` is a number these functions can show."""
    return decimal(value) is not None


def _grouped(value: Decimal, step: Decimal) -> str:
    rounded = value.quantize(step, rounding=ROUND_HALF_EVEN)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.00"
    places = max(0, -int(step.as_tuple().exponent))
    return f"{rounded:,.{places}f}"


def money(value: Any, unit: str = TOKEN) -> str:
    """An amount to the cent, grouped, with its token: ``1,234.50 pUSD``."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    return f"{_grouped(amount, CENT)} {unit}".rstrip()


def exact_money(value: Any, unit: str = TOKEN) -> str:
    """An amount as typed or sent, never rounded: to the cent at least, grouped, every digit
    past it kept (``12.50 pUSD``, ``1.0000001 pUSD``). What a person confirms is what goes."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    places = max(2, -int(amount.normalize().as_tuple().exponent))
    return f"{_grouped(amount, Decimal(1).scaleb(-places))} {unit}".rstrip()


def pnl(value: Any, unit: str = TOKEN) -> str:
    """A profit or loss to the cent with its sign: ``+12.30 pUSD``, ``-0.42 pUSD``."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    text = money(amount, unit)
    return text if text.startswith("-") or amount.quantize(CENT) == 0 else f"+{text}"


def price(value: Any, tick: Any = None) -> str:
    """A price (0-1) to the market's tick (``0.63`` at 0.01, ``0.625`` at 0.001); without a
    tick, 2 to 4 decimals with no trailing zeros past the second (``0.45``, ``0.4525``)."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    step = decimal(tick)
    if step is not None and 0 < step < 1:
        return _grouped(amount, step.normalize())
    text = _grouped(amount, _FINEST_UNTICKED)
    whole, _, places = text.partition(".")
    return f"{whole}.{places.rstrip('0').ljust(2, '0')}"


def shares(value: Any) -> str:
    """A number of outcome shares to the venue's 2 decimals: ``1,250.00``."""
    amount = decimal(value)
    return UNKNOWN if amount is None else _grouped(amount, SHARE_STEP)


def plural(count: Any, noun: str, many: str | None = None) -> str:
    """``count`` with ``noun`` in the right number: ``1 copy``, ``2 copies``, ``0 fills``."""
    amount = decimal(count)
    if amount is None:
        return f"{UNKNOWN} {many or _plural(noun)}"
    number = f"{amount:,}" if amount == amount.to_integral_value() else f"{amount.normalize():,}"
    return f"{number} {noun if amount == 1 else many or _plural(noun)}"


def _plural(noun: str) -> str:
    if noun in _PLURALS:
        return _PLURALS[noun]
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def percent(value: Any, places: int = 0) -> str:
    """A fraction as a percentage: ``0.25`` → ``25 %``, ``1`` → ``100 %``."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    step = Decimal(1).scaleb(-places)
    return f"{_grouped(amount * 100, step)} %"


def bps(value: Any) -> str:
    """Basis points as a percentage: ``1500`` → ``15 %``, ``25`` → ``0.25 %``."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    return percent(amount / 10000, places=2 if amount % 100 else 0)


def duration(value: Any) -> str:
    """Seconds as people say them: ``45 s``, ``12 min``, ``3.5 h``, ``2.1 days``."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    if amount < 60:
        return f"{amount:.0f} s"
    if amount < 3600:
        return f"{amount / 60:.0f} min"
    if amount < 86400:
        return f"{amount / 3600:.1f} h"
    return f"{amount / 86400:.1f} days"


def multiplier(value: Any) -> str:
    """A size multiplier as it was set, a times sign before it: 0.7037, 0.5, 2."""
    amount = decimal(value)
    if amount is None:
        return UNKNOWN
    # Never rounded: it is a rule the person typed, and 0.7 shown for 0.7037 misstates every size.
    return f"{TIMES}{format(amount.normalize(), 'f')}"
