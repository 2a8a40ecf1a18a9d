"""Domain errors: the one exception tree every service raises.

Each error carries one of the spec's 18 codes and the HTTP status it maps to;
the single handler in ``blueprints/errors.py`` turns them into ``{error, code}``.

    CopytradeError                       500 internal_error
    ├── BadRequest                       400 bad_request
    │   ├── ValidationFailed             400 validation_failed   (.fields)
    │   └── Conflict                     409 bad_request         (Retry-After)
    ├── Unauthorized                     401 unauthorized
    │   └── InvalidToken                 401 invalid_token
    ├── PaymentRequired                  402
    │   ├── InsufficientBalance          402 insufficient_balance
    │   ├── SubscriptionError            402 subscription_error
    │   └── PaymentFailed                402 payment_failed
    ├── AccountNotReady                  409 wallet_error        (.blockers)
    ├── Forbidden                        403 scope_required
    │   ├── ScopeRequired                403 scope_required      (.scope)
    │   └── TierLimitExceeded            403 tier_limit_exceeded
    ├── NotFound                         404 not_found
    ├── RateLimited                      429 rate_limited        (Retry-After)
    ├── InternalError                    500 internal_error
    │   ├── CryptoError                  500 crypto_error
    │   └── WalletError                  500 wallet_error
    ├── FeatureNotEnabled                501 feature_not_enabled
    └── Unavailable                      503                     (Retry-After)
        ├── VenueUnavailable             503 polymarket_unavailable
        ├── ChainUnavailable             503 wallet_error
        ├── DatabaseUnavailable          503 database_error
        └── CacheUnavailable             503 cache_error

``venue/`` and ``chain/`` keep their own transport exceptions (they import
nothing from here); ``from_external`` is the one place they are translated.
"""

from __future__ import annotations

from typing import Any

from schemas.vocabulary import ERROR_CODES


class CopytradeError(Exception):
    """Base of every domain error: a message for people and a stable code for programs."""

    status: int = 500
    code: str = "internal_error"
    default_message: str = "Internal error."

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Only the spec's codes exist (schemas/vocabulary.py): a typo fails at import.
        super().__init_subclass__(**kwargs)
        if cls.code not in ERROR_CODES:
            raise TypeError(f"{cls.__name__}.code {cls.code!r} is not one of the spec's codes")

    def __init__(self, message: str | None = None, *, retry_after: int | None = None,
                 headers: dict[str, str] | None = None, **details: Any) -> None:
        self.message = message or self.default_message
        self.retry_after = retry_after if retry_after is not None else self.default_retry_after()
        self.headers = dict(headers or {})
        self.details = details
        super().__init__(self.message)

    def default_retry_after(self) -> int | None:
        """Seconds a client should wait before retrying, when the error is transient."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """The public ``{error, code}`` body plus any safe details."""
        body: dict[str, Any] = {"error": self.message, "code": self.code}
        body.update(self.details)
        return body


class BadRequest(CopytradeError):
    status, code, default_message = 400, "bad_request", "Bad request."


class ValidationFailed(BadRequest):
    """Input failed validation; ``fields`` maps each bad field to its messages."""

    code, default_message = "validation_failed", "Validation failed."

    def __init__(self, message: str | None = None, *, fields: dict[str, Any] | None = None,
                 **kw: Any) -> None:
        if fields:
            kw["fields"] = fields
        super().__init__(message, **kw)

    @property
    def fields(self) -> dict[str, Any]:
        """The per-field messages."""
        return self.details.get("fields", {})


class Conflict(BadRequest):
    status, default_message = 409, "A request with this key is already in progress."

    def default_retry_after(self) -> int | None:
        return 1


class Unauthorized(CopytradeError):
    status, code, default_message = 401, "unauthorized", "Authentication required."


class InvalidToken(Unauthorized):
    code, default_message = "invalid_token", "The credential is invalid or expired."


class PaymentRequired(CopytradeError):
    status, code, default_message = 402, "payment_failed", "Payment required."


class InsufficientBalance(PaymentRequired):
    code, default_message = "insufficient_balance", "Insufficient balance."


class SubscriptionError(PaymentRequired):
    code, default_message = "subscription_error", "Subscription problem."


class PaymentFailed(PaymentRequired):
    code, default_message = "payment_failed", "Payment failed."


class Forbidden(CopytradeError):
    status, code, default_message = 403, "scope_required", "Not allowed."


class ScopeRequired(Forbidden):
    """The credential lacks ``scope``."""

    def __init__(self, scope: str, message: str | None = None, **kw: Any) -> None:
        self.scope = scope
        super().__init__(message or f"This action requires the '{scope}' scope.",
                         required_scope=scope, **kw)


class TierLimitExceeded(Forbidden):
    code, default_message = "tier_limit_exceeded", "Your plan's limit is reached."


class AccountNotReady(CopytradeError):
    """Live trading or copying before the trading account is set up; ``blockers`` says what
    is missing (services/wallets/readiness.py names each one).

    ``wallet_error``, not ``feature_not_enabled``: nothing is switched off by the operator;
    the user's own trading wallet is not set up yet and the user can fix it (the 409 and the
    ``blockers`` tell it from a failed chain operation's 500)."""

    status, code = 409, "wallet_error"
    default_message = "The trading account is not ready for live trading yet."


class NotFound(CopytradeError):
    status, code, default_message = 404, "not_found", "Not found."


class RateLimited(CopytradeError):
    status, code, default_message = 429, "rate_limited", "Too many requests."

    def default_retry_after(self) -> int | None:
        return 1


class InternalError(CopytradeError):
    status, code, default_message = 500, "internal_error", "Internal error."


class CryptoError(InternalError):
    code, default_message = "crypto_error", "A stored secret could not be decrypted."


class WalletError(InternalError):
    code, default_message = "wallet_error", "The wallet operation failed."


class FeatureNotEnabled(CopytradeError):
    status, code, default_message = 501, "feature_not_enabled", "This feature is not enabled."


class Unavailable(CopytradeError):
    status, code, default_message = 503, "internal_error", "Temporarily unavailable."

    def default_retry_after(self) -> int | None:
        return 5


class VenueUnavailable(Unavailable):
    code, default_message = "polymarket_unavailable", "The venue is unavailable."


class ChainUnavailable(Unavailable):
    code, default_message = "wallet_error", "The chain RPC is unavailable; nothing was sent."


class DatabaseUnavailable(Unavailable):
    code, default_message = "database_error", "The database is unavailable."


class CacheUnavailable(Unavailable):
    code, default_message = "cache_error", "The cache is unavailable."


def from_external(exc: BaseException) -> CopytradeError | None:
    """Translate a transport exception from venue/, chain/, peewee or redis; None if unknown."""
    # Imported here so this module stays a leaf that anything can import.
    import peewee
    import redis

    from chain import errors as chain_errors
    from venue import errors as venue_errors

    if isinstance(exc, CopytradeError):
        return exc
    if isinstance(exc, venue_errors.VenueNotFound):
        return NotFound(str(exc) or None)
    if isinstance(exc, venue_errors.VenueUnavailable):
        return VenueUnavailable(retry_after=exc.retry_after)
    if isinstance(exc, venue_errors.VenueRejected):
        return BadRequest(f"The venue refused the request: {exc}")
    if isinstance(exc, chain_errors.ChainUnavailable):
        return ChainUnavailable(retry_after=exc.retry_after)
    if isinstance(exc, chain_errors.CryptoFailure):
        return CryptoError()
    if isinstance(exc, chain_errors.InsufficientGas):
        return InsufficientBalance(
            "The trading wallet has too little MATIC to pay gas; deposit MATIC and retry.")
    if isinstance(exc, chain_errors.ChainError):
        return WalletError(str(exc) or None)
    if isinstance(exc, peewee.OperationalError | peewee.InterfaceError):
        return DatabaseUnavailable()
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return CacheUnavailable()
    return None
