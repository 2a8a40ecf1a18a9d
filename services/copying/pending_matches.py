"""Copies of a target's match seen pending that the chain did not confirm (issue 41, finding
4): the copy engine believes a pending ``matchOrders`` only from the venue's operator, and
follows it to its receipt; when the mined transaction does not show the target's fill as
seen (reverted, missing or of another size, or never mined), ``refute`` settles the copies
made from it.

What is safe for each copy: one whose order has not left (no order yet) is cancelled; one
resting at the venue is cancelled there (the venue's answer is then reconciled as any
cancel); one already filled, or in its market's taker delay (which the venue cannot cancel),
cannot be undone: the mismatch is recorded on it (``detail``) and its owner is told
(``copy.unconfirmed``). Nothing is sold to unwind a filled copy: a trade of its own would
be a decision the user did not make.
"""

from __future__ import annotations

import logging
from typing import Any

from models.base import utcnow
from models.copying import INTENT_CANCELLED, INTENT_FILLED, INTENT_OPEN, CopyConfig, CopyIntent
from services.copying import copy_notices
from services.copying import intents as copy_intents
from services.platform import errors
from services.trading import order_cancels

log = logging.getLogger(__name__)

PENDING = "pending"  # the detection source of a copy made from a pending match call
REASON = "pending_unconfirmed"  # a cancelled copy's reason


def refute(target: str, tx_hash: str, token_id: str, side: str, why: str) -> dict[str, int]:
    """Settle the copies made from the target's pending fill (tx, token, side) that its mined
    transaction did not confirm (``why``); how many were cancelled and how many marked."""
    rows = list(CopyIntent.select(CopyIntent, CopyConfig).join(CopyConfig).where(
        CopyIntent.target_address == target.lower(),
        CopyIntent.target_tx_hash == tx_hash.lower(), CopyIntent.token_id == token_id,
        CopyIntent.target_side == side, CopyIntent.detection_source == PENDING))
    done = {"cancelled": 0, "marked": 0}
    for intent in rows:
        outcome = _settle_one(intent, why)
        if outcome:
            done[outcome] += 1
    return done


def _settle_one(intent: CopyIntent, why: str) -> str | None:
    words = copy_notices.readable(why)
    note = f"The target's match was seen pending, then not confirmed: {words}."
    if intent.status in INTENT_OPEN and not intent.order_id:
        if copy_intents.settle(intent.id, {"status": INTENT_CANCELLED, "reason": REASON,
                                           "detail": note, "settled_at": utcnow()}):
            return "cancelled"
        intent = CopyIntent.get_by_id(intent.id)  # it left meanwhile: as it is now
    if intent.status in INTENT_OPEN and intent.order_id and not intent.paper:
        try:
            order_cancels.cancel_order(intent.user_id, intent.order_id)
        except errors.CopytradeError as exc:  # delayed, or no longer resting: record it
            log.info("copy intent %s: its order could not be cancelled: %s", intent.id, exc)
        else:
            _mark(intent, f"{note} Its order was cancelled at the venue.")
            copy_notices.unconfirmed(intent, why, "its order was cancelled at the venue")
            return "cancelled"
    if intent.status in (*INTENT_OPEN, INTENT_FILLED):
        what = ("it filled and stays (nothing was sold)" if intent.status == INTENT_FILLED
                else "its order could not be cancelled (in its market's taker delay)")
        _mark(intent, f"{note} The copy {what}.")
        copy_notices.unconfirmed(intent, why, what)
        return "marked"
    return None  # skipped, failed or cancelled already: nothing was copied


def _mark(intent: CopyIntent, note: str) -> None:
    detail = f"{intent.detail} {note}".strip() if note not in intent.detail else intent.detail
    fields: dict[str, Any] = {"detail": detail}
    CopyIntent.update(**fields).where(CopyIntent.id == intent.id).execute()


__all__ = ["REASON", "refute"]
