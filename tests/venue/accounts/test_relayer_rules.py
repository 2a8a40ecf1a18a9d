"""Which relayer rejections are retried, and the nonce they report: ours are the SDK's."""

from __future__ import annotations

from tests.sdk_env import sdk_result
from venue.accounts.relayer_rules import (
    MAX_POLLS,
    POLL_INTERVAL_SECONDS,
    SUBMIT_RETRY_ATTEMPTS,
    TransactionState,
    onchain_nonce,
    retryable_submit_rejection,
)

SDK_RULES = """
from polymarket._internal.actions.relayer import submit
from polymarket._internal.environment import PRODUCTION_CONFIG
from polymarket.errors import RateLimitError, RequestRejectedError
from polymarket.models.clob.relayer import RelayerTransactionState
rows = []
for status, message in payload["cases"]:
    error = (RateLimitError(message) if status == 429
             else RequestRejectedError(message, status=status))
    nonce = submit.onchain_nonce_from_submit_error(error)
    rows.append([submit.is_retryable_submit_error(error), None if nonce is None else int(nonce)])
result = {"rows": rows, "attempts": submit.GASLESS_SUBMIT_RETRY_ATTEMPTS,
          "poll_ms": PRODUCTION_CONFIG.relayer_poll_frequency_ms,
          "max_polls": PRODUCTION_CONFIG.relayer_max_polls,
          "states": sorted(s.value for s in RelayerTransactionState)}
"""

MESSAGES = [
    "batch nonce 30 does not match on-chain nonce 31",
    "Batch Nonce 31 does not match on-chain nonce 30",
    "batch nonce 7 does not match on-chain nonce 7",
    'relayer rejected: {"error":"batch nonce  2 does not match on-chain nonce  19"}',
    "wallet busy: 0xabc has an active action",
    "WALLET HAS IN-FLIGHT ACTION",
    "invalid 'to' field: must be deposit wallet factory",
    "invalid transaction request payload",
    "invalid authorization",
    "quota exceeded",
    "internal error",
    "",
]


def test_retry_rules_and_budgets_match_the_sdk() -> None:
    cases = [[status, message] for status in (400, 401, 429, 500) for message in MESSAGES]
    theirs = sdk_result(SDK_RULES, {"cases": cases})
    mine = [[retryable_submit_rejection(s, m), onchain_nonce(s, m)] for s, m in cases]
    assert mine == theirs["rows"]
    assert any(row[0] for row in mine) and any(not row[0] for row in mine)
    budgets = (SUBMIT_RETRY_ATTEMPTS, POLL_INTERVAL_SECONDS * 1000, MAX_POLLS)
    assert budgets == (theirs["attempts"], theirs["poll_ms"], theirs["max_polls"])
    assert sorted(state.value for state in TransactionState) == theirs["states"]


def test_only_confirmed_failed_and_invalid_are_final() -> None:
    assert {s for s in TransactionState if s.final} == {
        TransactionState.CONFIRMED, TransactionState.FAILED, TransactionState.INVALID}
    assert {s for s in TransactionState if s.failed} == {
        TransactionState.FAILED, TransactionState.INVALID}
    assert not TransactionState.MINED.final  # deployed is not yet registered (§2.3)
