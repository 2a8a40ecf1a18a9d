"""The venue's taker fee (ACCOUNTS.md §7.6), one formula for previews, fills and the sandbox's twin.

Per share ``rate x (p(1-p))^exponent`` in collateral; a fill of C shares pays
``C x rate x (p(1-p))^exponent`` rounded half-up to 5 decimals, at least 0.00001 when it
is not zero. Makers pay nothing. Decimal throughout.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

FEE_UNIT = Decimal("0.00001")  # the venue rounds fees to 5 dp; the smallest fee charged
ZERO = Decimal(0)


def effective_rate(rate: Decimal, exponent: Decimal, price: Decimal) -> Decimal:
    """Fee per share at ``price``: ``rate x (p(1-p))^exponent``."""
    base = price * (Decimal(1) - price)
    if base <= 0 or rate <= 0:
        return ZERO
    # Integral exponents (the only ones seen live) stay exact; others go through ln/exp.
    if exponent == exponent.to_integral_value():
        return rate * base ** int(exponent)
    return rate * (base.ln() * exponent).exp()


def round_fee(raw: Decimal) -> Decimal:
    """A raw fee as charged: half-up to 5 dp, never below the 0.00001 minimum when due."""
    if raw <= 0:
        return ZERO
    return max(FEE_UNIT, raw.quantize(FEE_UNIT, ROUND_HALF_UP))


def taker_fee(rate: Decimal, exponent: Decimal, shares: Decimal, price: Decimal) -> Decimal:
    """The fee a taker fill of ``shares`` at ``price`` is charged, rounded as the venue does."""
    return round_fee(shares * effective_rate(rate, exponent, price))


def buy_notional(budget: Decimal, rate: Decimal, exponent: Decimal, price: Decimal) -> Decimal:
    """The pre-fee notional of a market BUY whose cost, fee included, stays within ``budget``.

    The venue charges the taker fee on top of a BUY's amount (shares = amount / price).
    """
    return budget / (Decimal(1) + effective_rate(rate, exponent, price) / price)


__all__ = ["FEE_UNIT", "buy_notional", "effective_rate", "round_fee", "taker_fee"]
