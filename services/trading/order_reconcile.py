"""Reconciling order records with the venue: what became of an order we sent.

A crash or a timeout after an order was recorded leaves a ``pending`` record whose hash
``reconcile`` looks up at the venue (``/data/orders`` and ``/data/trades``,
services/trading/order_fills.py): found means it was placed (its fills are applied); absent
means it never arrived (``failed``), but only once ``order_not_found_grace_seconds`` have
passed since it was sent: before that it may still be on its way (a slow POST, another
process's send), so it stays ``pending`` and is looked up again. Nothing is ever signed or
sent twice for one record. ``reconcile_pending`` sweeps the open ones and follows finished
orders' fills until the venue has settled them (late fills included); ``sync_user_orders``
refreshes one user's resting orders. Every write goes through ``order_states.finish``.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from decimal import Decimal
from uuid import UUID

from models.base import atomic, utcnow
from models.bulk import update_returning, update_rows
from models.trading import (
    ORDER_CANCELLED,
    ORDER_DELAYED,
    ORDER_FAILED,
    ORDER_LIVE,
    ORDER_MATCHED,
    ORDER_OPEN,
    ORDER_PENDING,
    Order,
    Trade,
)
from models.user import User
from services.platform import errors, venues
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from services.trading import order_fills
from services.trading.order_states import STORED_STATE, as_stored, finish, trade_changes
from services.wallets import venue_accounts
from services.wallets.venue_accounts import VenueAccount
from venue.errors import VenueError

log = logging.getLogger(__name__)

RECONCILE_AFTER = timedelta(seconds=30)
# RQ job names: stored in Redis with every queued job, so they never change.
RECONCILE_JOB = "orders.reconcile"
RECONCILE_PENDING_JOB = "orders.reconcile_pending"
ZERO = Decimal(0)


def not_found_grace() -> timedelta:
    """How long after sending an order the venue's "not found" may mean "on its way"."""
    return timedelta(seconds=runtime().settings.order_not_found_grace_seconds)


def resolve_deadline() -> timedelta:
    """How long after sending an order it may stay open (pending or delayed) at most."""
    return timedelta(seconds=runtime().settings.order_resolve_deadline_seconds)


def reconcile(order_id: UUID | str, *, acct: VenueAccount | None = None) -> Order:
    """Bring one order record in line with the venue: its listing and its trades.

    Read from ``/data/orders?id=`` and ``/data/trades`` (services/trading/order_fills.py), never
    from a 404: a pending order the venue does not know stays pending within
    ``not_found_grace`` of being sent and fails after it. Fills count as soon as they
    match; a FAILED venue trade is taken back out. An order still open past
    ``resolve_deadline`` is cancelled at the venue and closed. Raises VenueError when the
    venue cannot be asked (the caller looks again later).
    """
    order = Order.get_by_id(order_id)
    settling = order.status not in ORDER_OPEN and order.trades.where(
        Trade.settlement.in_(order_fills.UNSETTLED)).exists()
    if order.status not in ORDER_OPEN and not settling:
        return order
    acct = acct or venue_accounts.account(order.user_id)
    try:
        view = order_fills.look_up(venues.client(), acct.creds, order)
    except VenueError:
        if order.status == ORDER_PENDING and _overdue(order):
            # Unanswered to the end: closed, so its collateral is not held forever.
            log.error("order %s: no answer from the venue by the deadline; failed",
                      order.order_hash)
            return finish(order, ORDER_FAILED, error="The venue did not answer by the "
                          "deadline (ORDER_RESOLVE_DEADLINE_SECONDS).", deadline=True)
        raise
    order = _apply_view(order, view)
    if order.status in ORDER_OPEN and order.status != ORDER_LIVE and _overdue(order):
        order = _close_overdue(order, acct)
    return order


def _apply_view(order: Order, view: order_fills.VenueView) -> Order:
    """Write what the venue says of the order (a final status is never replaced)."""
    sent = order.submitted_at or order.created_at
    if not view.found:
        if order.status == ORDER_PENDING:
            if utcnow() - sent < not_found_grace():
                return order  # may still be on its way: looked up again later
            return finish(order, ORDER_FAILED, error="The order never reached the venue.")
        if order.status in ORDER_OPEN:  # it was there: gone without a trade
            return finish(order, ORDER_CANCELLED, acknowledged=True)
        return order
    totals = order_fills.record(order, view.fills)
    status = view.status
    if status == "LIVE":
        new_status = ORDER_LIVE
    elif status == "DELAYED":
        new_status = ORDER_DELAYED
    else:  # MATCHED, CANCELED(_MARKET_RESOLVED), INVALID, EXPIRED, UNMATCHED, unlisted
        new_status = ORDER_CANCELLED
    listed = view.listed.size_matched if view.listed is not None else ZERO
    if totals.failed_shares > 0:
        # The venue's trades are the truth once one failed: only what settles counts.
        filled, value, fee = totals.shares, totals.value, totals.fee
    elif totals.shares >= max(order.filled_size, listed):
        # The fee too is what the venue's trades charged, not the estimate at the POST.
        filled, value, fee = totals.shares, totals.value, totals.fee
    elif view.listed is not None and listed > order.filled_size:
        if status not in ("LIVE", "DELAYED") and order.status in ORDER_OPEN \
                and not _overdue(order):
            # Done at the venue, but some of its trades are not found yet (a match shows
            # as several trades, seconds apart: ACCOUNTS.md §12): stays open, so nothing
            # (a copy's intent, its position, budgets) books a guess; looked up again.
            log.info("order %s: the venue matched %s, its trades found fill %s; looking "
                     "again", order.order_hash, listed, totals.shares)
            return order
        # The listing counts more than the trades we could read: resting (maker) fills
        # happen at the order's own price, and makers pay no fee.
        size, value = max((order.filled_size, order.filled_value),
                          (totals.shares, totals.value))
        filled, fee = listed, totals.fee if totals.statuses else None
        value += (listed - size) * view.listed.price
    else:  # the answer counted more than the venue lists yet: keep it
        filled, value, fee = order.filled_size, order.filled_value, None
    if new_status == ORDER_CANCELLED and (status in (None, "MATCHED") and filled > 0):
        new_status = ORDER_MATCHED  # done with fills (a finished FOK/FAK, maybe unlisted)
    if order.status not in ORDER_OPEN:
        new_status = order.status  # settling a final order's fills: its status stays
    order = finish(order, new_status, filled_size=filled, filled_value=value, fee=fee,
                   acknowledged=True)
    order_fills.settle_trade(order, totals)
    return order


def _overdue(order: Order) -> bool:
    return utcnow() - (order.submitted_at or order.created_at) >= resolve_deadline()


def _close_overdue(order: Order, acct: VenueAccount) -> Order:
    """Past the deadline: cancel at the venue (a delayed order), then close the record."""
    log.warning("order %s still %s after %s; closing it", order.order_hash, order.status,
                resolve_deadline())
    if order.status == ORDER_DELAYED:
        refused = venues.client().clob.cancel_order(acct.creds, order.order_hash).not_canceled
        order = _apply_view(order, order_fills.look_up(venues.client(), acct.creds, order))
        if order.status not in ORDER_OPEN:
            return order
        if order.order_hash in refused:
            # Still in its market's taker delay: the venue cannot cancel it and may yet fill
            # it (ACCOUNTS.md §11), so it stays open and is reconciled again, never closed
            # as cancelled while it can still trade.
            log.warning("order %s is in its taker delay and not cancellable (%s); kept open",
                        order.order_hash, refused[order.order_hash])
            return order
        return finish(order, ORDER_CANCELLED, error="Still delayed at the deadline "
                      "(ORDER_RESOLVE_DEADLINE_SECONDS); cancelled.", deadline=True)
    return finish(order, ORDER_FAILED, error="The venue did not know the order by the "
                  "deadline (ORDER_RESOLVE_DEADLINE_SECONDS).", deadline=True)


def reconcile_pending(older_than: timedelta = RECONCILE_AFTER) -> int:
    """Reconcile open orders not resting on the book (pending after ``older_than``, delayed)
    and final ones whose fills the venue is still settling; how many were looked at."""
    cutoff = utcnow() - older_than
    waiting = list(Order.select().where(
        ((Order.status == ORDER_PENDING) & (Order.created_at <= cutoff))
        | (Order.status == ORDER_DELAYED)))
    count = 0
    _follow_settlements(order_fills.closed_at_deadline(), late=True)
    for order in [*waiting, *_follow_settlements(order_fills.unsettled_orders())]:
        try:
            reconcile(order.id)
            count += 1
        except (VenueError, errors.CopytradeError) as exc:
            log.warning("reconcile %s failed: %s", order.order_hash, exc)
    return count


def _follow_settlements(settling: list[Order], *, late: bool = False) -> list[Order]:
    """Bring settling fills up to date, one trades walk per account; the orders left over.

    Finished orders only move through their trades' statuses, which one
    ``/data/trades?after=`` walk per account answers for all of them at once
    (order_fills.settled_views); an order that walk could not account for is returned
    to be looked up alone. ``late``: orders closed unfilled at the deadline, whose fills
    the walk finds are booked (``_book_late``); the others are only looked for again.
    """
    by_user: dict[UUID, list[Order]] = {}
    for order in settling:
        by_user.setdefault(order.user_id, []).append(order)
    alone: list[Order] = []
    for user_id, group in by_user.items():
        try:
            acct = venue_accounts.account(user_id)
            views = order_fills.settled_views(venues.client(), acct.creds, group)
        except (VenueError, errors.CopytradeError) as exc:
            log.warning("settlement walk for user %s failed: %s", user_id, exc)
            continue  # the venue cannot say now: next tick
        for order in group:
            view = views.get(order.id)
            if late:
                if view is not None and view.fills:
                    _book_late(order, view)
                continue
            if view is None or order.status in ORDER_OPEN:  # a resting order's listing too
                alone.append(order)
            else:
                _apply_view(order, view)
    return alone


def _book_late(order: Order, view: order_fills.VenueView) -> None:
    """An order closed unfilled at the deadline that the venue filled after all: real money,
    booked into the order (``matched``), its trade, the positions and the copy's holding."""
    totals = order_fills.record(order, view.fills)
    if totals.shares <= 0:
        return  # every fill it had FAILED: nothing happened after all
    log.error("order %s was closed at the deadline but the venue filled %s shares; booking "
              "the fill", order.order_hash, totals.shares)
    now = utcnow()
    with atomic():
        state = update_returning(
            Order, order.id,
            {"status": ORDER_MATCHED, "filled_size": totals.shares,
             "filled_value": totals.value, "fee": totals.fee, "updated_at": now,
             "error": f"{order.error} The venue filled it afterwards: booked late."},
            STORED_STATE, guard={"status": (order.status,)})
        if state is None:
            return  # another sweep booked it
        stored = as_stored(order, state)
        update_rows(Trade, [(order.id, trade_changes(stored, now))], key="order")
        order_fills.settle_trade(stored, totals)
        order_fills.book_late_copy(stored, totals.shares, totals.value, totals.fee)


def sync_user_orders(user: User | UUID | str) -> int:
    """Refresh the user's open order records (resting fills, cancels by resolution)."""
    user_id = user_id_of(user)
    open_orders = list(Order.select().where(Order.user == user_id,
                                            Order.status.in_(ORDER_OPEN)))
    if not open_orders:
        return 0
    acct = venue_accounts.account(user_id)
    for order in open_orders:
        reconcile(order.id, acct=acct)
    return len(open_orders)

