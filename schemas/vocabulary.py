"""The fixed words of the API: the seven scopes and the SPEC's eighteen error codes.

A leaf module: schemas validate against these, services raise and check with them,
and neither needs the other to know them.
"""

from __future__ import annotations

# The seven scopes in canonical order (SPEC "Authentication").
SCOPES: tuple[str, ...] = ("read:account", "read:positions", "read:trades", "read:markets",
                           "trade:execute", "trade:cancel", "wallet:write")
ALL_SCOPES: frozenset[str] = frozenset(SCOPES)

# The only codes an error body may carry (SPEC "Errors"); services/platform/errors.py maps to them.
ERROR_CODES: tuple[str, ...] = (
    "unauthorized", "not_found", "bad_request", "validation_failed", "database_error",
    "cache_error", "invalid_token", "crypto_error", "wallet_error", "internal_error",
    "polymarket_unavailable", "tier_limit_exceeded", "insufficient_balance",
    "subscription_error", "payment_failed", "feature_not_enabled", "rate_limited",
    "scope_required",
)
