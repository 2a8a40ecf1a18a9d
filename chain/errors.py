"""Chain exceptions; services/platform/errors.py maps them once.

    ChainError                  a transaction or call failed (.reason)
    ├── ChainUnavailable        the RPC endpoint did not answer (.retry_after)
    ├── InsufficientGas         the sender cannot pay gas in MATIC (.needed_wei, .available_wei)
    ├── TransactionRejected     the node refused a transaction or a call reverted (.reason)
    │   └── NonceConflict       the nonce was already used by a different transaction
    └── ReceiptTimeout          no receipt within the wait (.tx_hash); the tx may still land
    CryptoFailure               a sealed secret could not be opened (tampered, wrong or unknown key)
"""

from __future__ import annotations


class ChainError(Exception):
    """A chain call or transaction failed."""

    def __init__(self, message: str = "chain error") -> None:
        super().__init__(message)
        self.reason = message


class ChainUnavailable(ChainError):
    """The JSON-RPC endpoint is unreachable; safe to retry later."""

    def __init__(self, message: str = "chain RPC unavailable", *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class InsufficientGas(ChainError):
    """The sender's native balance cannot pay for the transaction's gas (and value)."""

    def __init__(self, needed_wei: int, available_wei: int) -> None:
        super().__init__(f"insufficient gas balance: need {needed_wei} wei, have {available_wei}")
        self.needed_wei = needed_wei
        self.available_wei = available_wei


class TransactionRejected(ChainError):
    """The node refused the transaction, or its execution would revert."""


class NonceConflict(TransactionRejected):
    """The nonce was consumed by another transaction; this one can never be mined."""


class ReceiptTimeout(ChainError):
    """No receipt arrived in time; the transaction may still be mined later."""

    def __init__(self, tx_hash: str, timeout: float) -> None:
        super().__init__(f"no receipt for {tx_hash} within {timeout}s")
        self.tx_hash = tx_hash


class CryptoFailure(Exception):
    """A sealed secret failed to decrypt: tampered, malformed, or under an unknown key."""
