"""Placing a copy intent's order through the trading services (blocking; run in a thread).

Live intents go through ``services.orders.place_order`` (which writes its durable Order
and Trade before the signed order leaves, attributed to the config and the intent), paper
intents through the paper book. Either way the outcome comes back as intent changes and,
when something filled, the fill to add to the config's position.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import (
    INTENT_CANCELLED,
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_PENDING,
    INTENT_SENT,
)
from services import errors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What became of one intent's order."""

    changes: dict[str, Any]
    filled_size: Decimal = Decimal(0)
    filled_value: Decimal = Decimal(0)


def _ms(later: datetime, earlier: datetime) -> int:
    return max(0, int((later - earlier).total_seconds() * 1000))


def place(intent: dict[str, Any], *, user_id: UUID, paper: bool) -> Outcome:
    """Send (or paper-fill) the order of an intent row; never raises for a refused order."""
    sent_at = utcnow()
    base: dict[str, Any] = {"sent_at": sent_at,
                            "latency_ms": _ms(sent_at, intent["seen_at"])}
    try:
        if paper:
            return _paper(intent, user_id, base)
        return _live(intent, user_id, base)
    except errors.CopytradeError as exc:
        reason = "insufficient_balance" if isinstance(exc, errors.InsufficientBalance) else (
            "venue_unavailable" if isinstance(exc, errors.Unavailable) else "order_refused")
        return Outcome({**base, "status": INTENT_FAILED, "reason": reason,
                        "detail": exc.message, "settled_at": utcnow()})
    except Exception as exc:  # a bug or transport failure must not kill the executor
        translated = errors.from_external(exc)
        log.exception("copy intent %s: placing failed", intent["id"])
        message = translated.message if translated else f"{type(exc).__name__}: {exc}"
        return Outcome({**base, "status": INTENT_FAILED, "reason": "order_error",
                        "detail": message, "settled_at": utcnow()})


def _live(intent: dict[str, Any], user_id: UUID, base: dict[str, Any]) -> Outcome:
    from services import orders

    placed = orders.place_order(
        user_id, token_id=intent["token_id"], side=intent["side"].lower(),
        size=intent["size"], order_type="market", source="copy",
        config_id=intent["config"], target_trade_id=str(intent["id"]),
        detected_at=intent["seen_at"], time_in_force="FAK",
        floor_size=intent["side"] == "SELL")
    return _from_placed(placed, base)


def _from_placed(placed: Any, base: dict[str, Any]) -> Outcome:
    order = placed.order
    changes = {**base, "order_id": placed.order_id, "trade_id": placed.trade_id}
    filled = Decimal(order.filled_size or 0)
    value = Decimal(order.filled_value or 0)
    if placed.status == "filled":
        changes.update(status=INTENT_FILLED, filled_size=filled,
                       filled_price=(value / filled) if filled else None, fee=order.fee,
                       settled_at=utcnow())
    elif placed.status == "rejected":
        changes.update(status=INTENT_FAILED if filled == 0 else INTENT_FILLED,
                       reason="order_refused", detail=placed.reason or "", settled_at=utcnow())
    elif order.status == "pending":
        changes.update(status=INTENT_PENDING)  # left for the reconciler
    else:
        changes.update(status=INTENT_SENT)
    return Outcome(changes, filled, value)


def _paper(intent: dict[str, Any], user_id: UUID, base: dict[str, Any]) -> Outcome:
    from services import paper

    result = paper.fill(user_id, intent["token_id"], intent["side"].lower(),
                        size=intent["size"], limit_price=intent["price"],
                        config_id=intent["config"], detected_at=intent["seen_at"])
    filled = Decimal(result.filled_size or 0)
    value = Decimal(result.filled_value or 0)
    if filled > 0:
        return Outcome({**base, "status": INTENT_FILLED, "trade_id": result.id,
                        "filled_size": filled, "filled_price": value / filled,
                        "fee": result.fee, "settled_at": utcnow()}, filled, value)
    return Outcome({**base, "status": INTENT_CANCELLED, "trade_id": result.id,
                    "reason": "not_filled", "detail": result.reason or "The paper book could "
                    "not fill the order.", "settled_at": utcnow()})
