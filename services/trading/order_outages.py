"""Orders meeting a venue that is restarting, restricted or down: what is kept, what is answered.

- Refused for its mode (425 restart, 503 post-only / cancel-only / disabled, 429;
  ``venue.errors.VenueRestricted``): the order never reached the book. Its record is kept
  as ``rejected`` with the reason, its trade row (never a fill) is dropped, and it lets
  go of its preview and copy intent (``hand_back``), so a retry (the same
  Idempotency-Key, or the copy engine once the venue reopens) places one new order.
- Lost (5xx, connection error, timeout): the order may have reached the venue. Its record
  stays ``pending`` and reconcilable; a manual order answers 503 ``polymarket_unavailable``
  naming it, and a retry with the same preview answers that order's outcome once known
  (``earlier_order``) instead of placing another.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from models.base import atomic
from models.trading import Order, OrderPreview, Trade
from services.platform import errors
from venue.errors import VenueError, VenueRestricted
from venue.restrictions import CANCEL_ONLY, DISABLED, POST_ONLY, RATE_LIMITED, RESTARTING

# The reason a copy skipped (or a manual order's 503 names) for each venue mode.
REASONS = {
    RESTARTING: "venue_restarting",
    POST_ONLY: "venue_post_only",
    CANCEL_ONLY: "venue_cancel_only",
    DISABLED: "venue_disabled",
    RATE_LIMITED: "venue_rate_limited",
}
WAITING_REASONS = frozenset(REASONS.values())
_WORDS = {
    RESTARTING: "the venue's matching engine is restarting",
    POST_ONLY: "the venue accepts only post-only orders after a restart",
    CANCEL_ONLY: "the venue is in cancel-only mode",
    DISABLED: "trading is disabled at the venue",
    RATE_LIMITED: "the venue is throttling requests (429 Too Many Requests)",
}


def reason_for(exc: VenueRestricted) -> str:
    """The reason code of a mode refusal (``venue_restarting``, ``venue_post_only``, ...)."""
    return REASONS.get(exc.mode, "venue_unavailable")


def describe(exc: VenueRestricted) -> str:
    """A sentence for people: why the venue refused, and that nothing was placed."""
    words = _WORDS.get(exc.mode, "the venue refused new orders")
    return (f"The order was not placed: {words} ({reason_for(exc)}); retry in "
            f"{exc.retry_after} s.")


def hand_back(order: Order) -> None:
    """Detach an order that never reached the venue (refused for its mode, or withheld by
    its sender) from its preview, intent and trade."""
    with atomic():
        if order.preview_id is not None:
            (OrderPreview.update(used_at=None)
             .where(OrderPreview.id == order.preview_id).execute())
        Order.update(preview=None, target_trade_id=None).where(Order.id == order.id).execute()
        Trade.delete().where(Trade.order == order.id).execute()


def restricted(order: Order, exc: VenueRestricted) -> errors.VenueUnavailable:
    """The 503 a manual order refused for the venue's mode answers (Retry-After the venue's)."""
    return errors.VenueUnavailable(describe(exc), retry_after=max(1, exc.retry_after),
                                   reason=reason_for(exc), order_id=order.order_hash)


def unknown_outcome(order: Order, exc: VenueError | None) -> errors.VenueUnavailable:
    """The 503 a manual order whose answer was lost answers: retry to read its outcome."""
    retry = getattr(exc, "retry_after", None) or 5
    return errors.VenueUnavailable(
        "The venue did not answer; the order may have reached it and is being reconciled. "
        "Retry with the same Idempotency-Key (or preview_id) to get its outcome; it will "
        "not be placed twice.", retry_after=max(1, int(retry)), order_id=order.order_hash)


def earlier_order(user_id: UUID, preview_id: Any) -> Order | None:
    """The order an earlier attempt placed with this preview, if one still holds it."""
    if preview_id in (None, ""):
        return None
    try:
        pid = preview_id if isinstance(preview_id, UUID) else UUID(str(preview_id))
    except ValueError:
        return None  # previews.check says why
    return Order.get_or_none(Order.user == user_id, Order.preview == pid)


__all__ = ["REASONS", "WAITING_REASONS", "describe", "earlier_order", "hand_back",
           "reason_for", "restricted", "unknown_outcome"]
