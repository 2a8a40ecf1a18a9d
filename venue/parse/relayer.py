"""Parsers for the relayer's answers (ACCOUNTS.md §2.3 to §2.5): both generations of the
transaction and nonce endpoints, ``/submit`` and ``/deployed``."""

from __future__ import annotations

from typing import Any

from venue.models import RelayerTransaction
from venue.parse.values import MalformedResponse, pick, require_list, require_mapping


def _text_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def parse_submit(body: Any) -> RelayerTransaction:
    """``POST /submit`` → ``{transactionID, state}`` (no hash yet)."""
    row = require_mapping(body, "relayer submit answer")
    transaction_id = pick(row, "transactionID", "transactionId", "transaction_id")
    if not transaction_id:
        raise MalformedResponse("relayer submit answer has no transactionID")
    return RelayerTransaction(transaction_id=str(transaction_id),
                              state=str(row.get("state") or "STATE_NEW"),
                              transaction_hash=_text_or_none(
                                  pick(row, "transactionHash", "transaction_hash")))


def parse_transaction(body: Any) -> RelayerTransaction:
    """One transaction, from ``GET /transaction?id=`` (an array of camelCase objects) or
    ``GET /v1/account/transactions/<id>`` (one snake_case object)."""
    if isinstance(body, list):
        rows = require_list(body, "relayer transactions")
        if not rows:
            raise MalformedResponse("relayer answered no transaction for the id")
        body = rows[0]
    row = require_mapping(body, "relayer transaction")
    transaction_id = pick(row, "transactionID", "transaction_id", "transactionId")
    state = row.get("state")
    if not transaction_id or not state:
        raise MalformedResponse("relayer transaction lacks its id or state")
    return RelayerTransaction(
        transaction_id=str(transaction_id), state=str(state),
        transaction_hash=_text_or_none(pick(row, "transactionHash", "transaction_hash")),
        error=_text_or_none(pick(row, "errorMsg", "error_msg", "error")))


def parse_transactions(body: Any) -> list[RelayerTransaction]:
    """``GET /transactions`` → the caller's transactions (camelCase, as ``/transaction?id=``
    lists one), each with its signature, nonce, type and sender."""
    found = []
    for item in require_list(body, "relayer transactions"):
        row = require_mapping(item, "relayer transaction")
        transaction_id = pick(row, "transactionID", "transactionId", "id")
        if not transaction_id or not row.get("state"):
            raise MalformedResponse("a listed relayer transaction lacks its id or state")
        found.append(RelayerTransaction(
            transaction_id=str(transaction_id), state=str(row["state"]),
            transaction_hash=_text_or_none(pick(row, "transactionHash", "transaction_hash")),
            error=_text_or_none(pick(row, "errorMsg", "error_msg", "error")),
            signature=_text_or_none(row.get("signature")),
            nonce=_text_or_none(row.get("nonce")), kind=_text_or_none(row.get("type")),
            sender=_text_or_none(row.get("from"))))
    return found


def parse_nonce(body: Any) -> int:
    """``{"nonce": "31"}`` (legacy ``/nonce``) or ``{"address", "nonce"}`` (``/params``)."""
    nonce = require_mapping(body, "relayer nonce")["nonce"]
    value = int(str(nonce))
    if value < 0:
        raise MalformedResponse(f"relayer nonce is negative: {nonce!r}")
    return value


def parse_relay_payload(body: Any) -> tuple[str, int]:
    """``GET /relay-payload`` → ``{"address": <relay>, "nonce"}``: (relay, nonce)."""
    row = require_mapping(body, "relayer relay payload")
    relay = row.get("address")
    if not isinstance(relay, str) or not relay:
        raise MalformedResponse("relayer relay payload has no address")
    return relay, parse_nonce(row)


def parse_deployed(body: Any) -> bool:
    """``GET /deployed`` → ``{"deployed": true|false}``."""
    deployed = require_mapping(body, "relayer deployed answer")["deployed"]
    if not isinstance(deployed, bool):
        raise MalformedResponse(f"relayer deployed is not a boolean: {deployed!r}")
    return deployed


__all__ = ["parse_deployed", "parse_nonce", "parse_relay_payload", "parse_submit",
           "parse_transaction"]
