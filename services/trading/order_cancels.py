"""Cancelling a user's resting orders at the venue, then reconciling their records."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from models.trading import ORDER_DELAYED, Order
from models.user import User
from services.platform import errors, venues
from services.platform.principal import user_id_of
from services.trading.order_reconcile import reconcile
from services.wallets import venue_accounts
from services.wallets.venue_accounts import VenueAccount


def _after_cancel(user_id: UUID, order_ids: list[str], acct: VenueAccount) -> None:
    for order in Order.select().where(Order.user == user_id,
                                      Order.order_hash.in_(order_ids)):
        reconcile(order.id, acct=acct)


def cancel_order(user: User | UUID | str, order_id: str) -> dict[str, Any]:
    """Cancel one of the user's resting orders; NotFound for anyone else's or unknown ids."""
    user_id = user_id_of(user)
    order = Order.get_or_none(Order.user == user_id, Order.order_hash == order_id)
    if order is None:
        raise errors.NotFound("No such order for this account.")
    if order.status == ORDER_DELAYED:
        # The venue refuses to cancel an order in its market's taker delay (ACCOUNTS.md §11).
        raise errors.BadRequest("This order is in its market's taker delay: the venue cannot "
                                "cancel it until it is matched. Its unfilled rest, if any, "
                                "can be cancelled then.")
    acct = venue_accounts.account(user_id)
    result = venues.client().clob.cancel_order(acct.creds, order_id)
    _after_cancel(user_id, list(result.canceled) or [order_id], acct)
    return {"canceled": list(result.canceled), "not_canceled": dict(result.not_canceled)}


def cancel_all(user: User | UUID | str) -> dict[str, Any]:
    """Cancel every resting order of the user's wallet, in as many requests as keep its
    signer's cancel budget from going below zero (ACCOUNTS.md §12)."""
    user_id = user_id_of(user)
    acct = venue_accounts.account(user_id)
    result = venues.client().cancel_all_orders(acct.creds)
    _after_cancel(user_id, list(result.canceled), acct)
    return {"canceled": list(result.canceled), "not_canceled": dict(result.not_canceled)}
