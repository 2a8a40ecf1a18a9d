"""How the relayer's answers are read: transaction states, and which ``/submit`` rejections
the official SDKs retry (re-fetch the nonce, re-sign, resubmit; ACCOUNTS.md §2.4, §2.5).

The same rules as the SDK's ``is_retryable_submit_error`` and
``onchain_nonce_from_submit_error``, over a status and a message rather than its exception
types (tests compare the two over the documented rejections).
"""

from __future__ import annotations

import re
from enum import StrEnum

# The SDKs' budget: up to ten resubmissions, two seconds apart; polls every two seconds,
# at most a hundred times.
SUBMIT_RETRY_ATTEMPTS = 10
POLL_INTERVAL_SECONDS = 2
MAX_POLLS = 100

_NONCE_MISMATCH = re.compile(
    r"batch nonce\s+(\d+)\s+does not match on-chain nonce\s+(\d+)", re.IGNORECASE)
_WALLET_BUSY = re.compile(r"wallet busy.*active action", re.IGNORECASE)
_WALLET_IN_FLIGHT = re.compile(r"wallet has in-flight action", re.IGNORECASE)


class TransactionState(StrEnum):
    """A relayer transaction's state; only CONFIRMED means its effects can be relied on."""

    NEW = "STATE_NEW"
    EXECUTED = "STATE_EXECUTED"
    MINED = "STATE_MINED"
    CONFIRMED = "STATE_CONFIRMED"
    INVALID = "STATE_INVALID"
    FAILED = "STATE_FAILED"

    @property
    def final(self) -> bool:
        """Whether polling can stop (CONFIRMED, FAILED or INVALID)."""
        return self in _FINAL

    @property
    def failed(self) -> bool:
        """Whether it ended without effect (FAILED or INVALID)."""
        return self in (TransactionState.FAILED, TransactionState.INVALID)


_FINAL = frozenset({TransactionState.CONFIRMED, TransactionState.FAILED,
                    TransactionState.INVALID})


def onchain_nonce(status: int, message: str) -> int | None:
    """The wallet's on-chain nonce a 400 ``batch nonce X does not match on-chain nonce Y``
    reports (Y), else None."""
    if status != 400:
        return None
    match = _NONCE_MISMATCH.search(message)
    return None if match is None else int(match.group(2))


def wallet_busy(message: str) -> bool:
    """Whether a refused ``/submit`` says the wallet has a transaction in flight (perhaps
    ours, submitted before): the same bytes may be submitted again once it is done."""
    return bool(_WALLET_BUSY.search(message) or _WALLET_IN_FLIGHT.search(message))


def resubmittable(status: int, message: str) -> bool:
    """Whether the same signed bytes are worth submitting again after a wait: quota (429)
    or a busy wallet. Unlike the SDKs, nothing is re-signed (``retryable_submit_rejection``
    is their rule, kept to compare with them)."""
    return status == 429 or (status == 400 and wallet_busy(message))


def retryable_submit_rejection(status: int, message: str) -> bool:
    """Whether a rejected ``/submit`` is worth re-signing and resubmitting: quota (429), a
    busy wallet, or a batch nonce behind the chain's (a nonce ahead of it is not)."""
    if status == 429:
        return True
    if status != 400:
        return False
    if _WALLET_BUSY.search(message) or _WALLET_IN_FLIGHT.search(message):
        return True
    match = _NONCE_MISMATCH.search(message)
    return match is not None and int(match.group(1)) < int(match.group(2))


__all__ = [
    "MAX_POLLS",
    "POLL_INTERVAL_SECONDS",
    "SUBMIT_RETRY_ATTEMPTS",
    "TransactionState",
    "onchain_nonce",
    "resubmittable",
    "retryable_submit_rejection",
    "wallet_busy",
]
