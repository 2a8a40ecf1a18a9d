"""The venue's per-signer rate-limit tiers (ACCOUNTS.md §12): token buckets per signer, one
for orders and one for cancels, sized by the signer's tier.

From docs.polymarket.com/api-reference/trading-rate-limits (the table as transcribed on
2026-08-05 in dilettante-trading/polyoxide ``docs/specs/clob/trading-rate-limits.md``):
tiers follow the maker wallet's 30-day volume and refresh every 3 hours; tokens refill
continuously at the tier's rate up to its burst; a batch is admitted whole or not at all;
``DELETE /cancel-all`` and ``/cancel-market-orders`` cost 1 plus one token per order they
cancel, charged after the fact, so the balance can go negative (tiers up to Gold; from
Platinum up it cannot). ``GET /v1/user/rate-limit-tier`` names the signer's tier
(docs: api-reference/account/get-rate-limit-tier; its answer's schema is not in the pages we
could read: ``parse_tier`` takes ``{"tier": name}`` and the other spellings below).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The venue refreshes a signer's tier every three hours (docs: get-rate-limit-tier).
TIER_REFRESH_SECONDS = 3 * 3600


@dataclass(frozen=True, slots=True)
class Tier:
    """One tier: per bucket, tokens per second and burst (the bucket's capacity)."""

    name: str
    order_rate: int
    order_burst: int
    cancel_rate: int
    cancel_burst: int
    negative_balance: bool  # a cancel-all may leave the cancel bucket below zero

    def bucket(self, kind: str) -> tuple[int, int]:
        """(rate per second, burst) of the ``orders`` or ``cancels`` bucket."""
        if kind == "orders":
            return self.order_rate, self.order_burst
        return self.cancel_rate, self.cancel_burst


TIERS: dict[str, Tier] = {tier.name: tier for tier in (
    Tier("standard", 40, 60, 80, 120, True),
    Tier("copper", 60, 90, 120, 180, True),       # $30,000+ in 30 days
    Tier("bronze", 80, 120, 160, 240, True),      # $50,000+
    Tier("silver", 200, 300, 400, 600, True),     # $100,000+
    Tier("gold", 400, 600, 800, 1200, True),      # $500,000+
    Tier("platinum", 450, 675, 900, 1350, False),  # $2.5M+
    Tier("diamond", 525, 787, 1050, 1575, False),  # $5M+
    Tier("elite", 600, 900, 1200, 1800, False),   # $10M+
)}
# Until the venue names a signer's tier it is taken as the tightest (every new signer's).
DEFAULT_TIER = TIERS["standard"]


def tier_named(name: str) -> Tier | None:
    """The tier called ``name`` (any case, ``Standard`` or ``STANDARD``), else None."""
    return TIERS.get(str(name).strip().lower())


def parse_tier(body: Any) -> Tier:
    """The tier ``GET /v1/user/rate-limit-tier`` names; ValueError for one we do not know."""
    if isinstance(body, Mapping):
        for key in ("tier", "rate_limit_tier", "rateLimitTier", "name"):
            if isinstance(body.get(key), str):
                body = body[key]
                break
    tier = tier_named(body) if isinstance(body, str) else None
    if tier is None:
        raise ValueError(f"unknown rate-limit tier: {body!r}")
    return tier


def cancel_all_cost(cancelled: int) -> int:
    """Tokens a cancel-all that cancelled ``cancelled`` orders costs: 1 plus one per order."""
    return 1 + cancelled


__all__ = ["DEFAULT_TIER", "TIERS", "TIER_REFRESH_SECONDS", "Tier", "cancel_all_cost",
           "parse_tier", "tier_named"]
