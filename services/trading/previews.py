"""Order previews: the exact order that would be sent, quoted from the live book, redeemable once.

A preview is stored in the database (any web worker or the MCP server can redeem it),
bound to its user and to the order's parameters (token, side, type, size or the amount a
market buy spends, price, post-only), and
expires ``PREVIEW_TTL`` after it was made (3 minutes: long enough to read and confirm,
short enough that the book has not moved far). A live order names it by ``preview_id``;
it is consumed in the same transaction that writes the order record, so it can place at
most one order.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.trading import OrderPreview
from models.user import User
from services.platform import errors
from services.platform.principal import user_id_of
from services.trading import order_plan
from venue.models import Side

PREVIEW_TTL = timedelta(minutes=3)


def create(user: User | UUID | str, token_id: Any, side: Any, size: Any, order_type: Any,
           price: Any = None, post_only: bool = False, amount: Any = None) -> dict[str, Any]:
    """Quote the order against the live book and store the preview; returns its summary."""
    plan = order_plan.plan_order(token_id, side, size, order_type, price, post_only=post_only,
                                 amount=amount)
    summary = plan.summary()
    now = utcnow()
    preview = OrderPreview.create(
        user=user_id_of(user), token_id=plan.market.token_id, side=plan.side.lower(),
        order_type=plan.order_type, size=plan.size,
        price=price if plan.order_type == "limit" else None,
        summary=order_plan.summary_json(summary), created_at=now, expires_at=now + PREVIEW_TTL)
    return {"preview_id": preview.id, "expires_at": preview.expires_at, **summary}


def _describe(value: Decimal | str | None) -> str:
    if value is None:
        return "none"
    return order_plan._plain(value) if isinstance(value, Decimal) else str(value)


def check(user: User | UUID | str, preview_id: Any, token_id: str, side: Side,
          size: Decimal | None, order_type: str, price: Decimal | None, *,
          post_only: bool = False, amount: Decimal | None = None,
          now: datetime | None = None) -> OrderPreview:
    """The user's unexpired, unused preview for exactly these parameters; BadRequest otherwise.

    An order sized by ``amount`` matches its preview's amount, not its size (the shares the
    amount buys are planned again from the book)."""
    if preview_id in (None, ""):
        raise errors.BadRequest(
            "A live order needs a preview_id: call POST /api/markets/order/preview with the "
            "same order first.")
    try:
        pid = preview_id if isinstance(preview_id, UUID) else UUID(str(preview_id))
    except ValueError:
        raise errors.BadRequest("preview_id is not a valid preview id.") from None
    preview = OrderPreview.get_or_none(OrderPreview.id == pid,
                                       OrderPreview.user == user_id_of(user))
    if preview is None:
        raise errors.BadRequest("Unknown preview_id: no such preview for this account.")
    if preview.used_at is not None:
        raise errors.BadRequest("This preview was already used to place an order; previews "
                                "are single use. Request a new preview.")
    now = now or utcnow()
    if preview.expires_at <= now:
        raise errors.BadRequest(
            f"This preview expired at {preview.expires_at.isoformat()}; previews last "
            f"{int(PREVIEW_TTL.total_seconds())} seconds. Request a new preview.")
    quote = summary_of(preview)
    held_amount = quote.get("amount")
    wanted = {"token_id": token_id, "side": side.lower(), "order_type": order_type, "size": size,
              "amount": amount, "price": price if order_type == "limit" else None,
              "post_only": post_only}
    held = {"token_id": preview.token_id, "side": preview.side,
            "order_type": preview.order_type, "size": preview.size,
            "amount": Decimal(held_amount) if held_amount is not None else None,
            "price": preview.price, "post_only": bool(quote.get("post_only", False))}
    if amount is not None:
        del wanted["size"], held["size"]
    diffs = [f"{name} {_describe(wanted[name])} (preview: {_describe(held[name])})"
             for name in wanted if wanted[name] != held[name]]
    if diffs:
        raise errors.BadRequest("This preview was made for a different order: "
                                + "; ".join(diffs) + ". Request a new preview.")
    return preview


def consume(preview: OrderPreview, *, now: datetime | None = None) -> None:
    """Mark the preview used, atomically; BadRequest if another request used it first."""
    now = now or utcnow()
    updated = (OrderPreview.update(used_at=now)
               .where(OrderPreview.id == preview.id, OrderPreview.used_at.is_null(),
                      OrderPreview.expires_at > now)
               .execute())
    if updated != 1:
        raise errors.BadRequest("This preview was already used (or just expired); previews "
                                "are single use. Request a new preview.")


def summary_of(preview: OrderPreview) -> dict[str, Any]:
    """The stored quote of a preview."""
    return json.loads(preview.summary)


def purge_expired(before: datetime | None = None) -> int:
    """Delete previews that expired more than a day ago and were never used."""
    cutoff = (before or utcnow()) - timedelta(days=1)
    return (OrderPreview.delete()
            .where(OrderPreview.expires_at < cutoff, OrderPreview.used_at.is_null())
            .execute())
