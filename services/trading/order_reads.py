"""Reading a user's orders: those resting on the book as the venue lists them, and one record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from models.trading import Order
from models.user import User
from services.platform import errors, venues
from services.platform.principal import user_id_of
from services.wallets import venue_accounts
from venue.models import OpenOrder


def _venue_status(remote: OpenOrder) -> str:
    return remote.status.upper().removeprefix("ORDER_STATUS_")


def _from_ms_or_s(value: int) -> datetime:
    seconds = value / 1000 if value > 10**11 else value
    return datetime.fromtimestamp(seconds, UTC)


def open_orders(user: User | UUID | str) -> list[dict[str, Any]]:
    """The user's orders resting on the book, as the venue lists them (SPEC Order)."""
    acct = venue_accounts.account(user)
    remote = venues.client().all_open_orders(acct.creds)
    rows = []
    for item in remote:
        rows.append({
            "order_id": item.id,
            "token_id": item.asset_id,
            "side": item.side.lower(),
            "price": item.price,
            "size": item.original_size,
            "filled_size": item.size_matched,
            "status": _venue_status(item).lower(),
            "order_type": "market" if item.order_type.upper() in ("FOK", "FAK") else "limit",
            "created_at": _from_ms_or_s(int(item.created_at)),
        })
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows


def get_order(user: User | UUID | str, order_id: str) -> Order:
    """The user's order record by venue order id; NotFound otherwise."""
    order = Order.get_or_none(Order.user == user_id_of(user), Order.order_hash == order_id)
    if order is None:
        raise errors.NotFound("No such order for this account.")
    return order
