"""What the venue did with one of our orders, read from ``/data/orders`` and ``/data/trades``.

``look_up`` asks ``GET /data/orders?id=<hash>`` (the order in any status: live, delayed,
matched, cancelled) and finds the order's trades in ``/data/trades``, which the venue
filters by market and time but never by order: the ones we already know, each read with
``GET /data/trades?id=``, then, while what they fill falls short of the listing's
``size_matched`` (or the venue does not list the order: a finished FOK), the market's
trades since the order was sent that name it as taker or among ``maker_orders``. An
order's ``associate_trades`` is a hint at most: from 2026-12-14 "an empty
associate_trades tuple does not mean an order has no fills" (ACCOUNTS.md §12), and a
match may show as several trades that appear seconds apart. ``GET /data/order/<id>`` is
not used: the venue answers finished orders with an empty body there, and never "not
found" for an order it had.

``record`` keeps one ``OrderFill`` per venue trade with its status (MATCHED → MINED →
CONFIRMED, or RETRYING → FAILED) and sums what counts: a FAILED trade is a fill that
never happened. ``settle_trade`` writes the user's view of it on the order's ``Trade``
(``settlement``, ``failed_size``, ``settled_at``; not settled while the trades found fall
short of what the order counts, so the sweep keeps looking) and, for a copy order whose
failed fill the config's position had counted, takes it back out of that position.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from models.base import atomic, utcnow
from models.copying import INTENT_CANCELLED, INTENT_FAILED, INTENT_FILLED, CopyIntent
from models.trading import Order, OrderFill, Trade
from services.markets import catalogue
from services.notifications import events
from services.platform import numbers
from services.trading import copy_positions
from venue.client import VenueClient
from venue.models import ApiCreds, FeeSchedule, OpenOrder, Side
from venue.parse.clob_trades import (
    TRADE_CONFIRMED,
    TRADE_FAILED,
    TRADE_MATCHED,
    TRADE_MINED,
    TRADE_RETRYING,
    VenueTrade,
)

log = logging.getLogger(__name__)

ZERO = Decimal(0)
FINAL_TRADE_STATUSES = (TRADE_CONFIRMED, TRADE_FAILED)
# Trade.settlement: the least advanced of the fills still moving, else the final word.
SETTLEMENT_ORDER = (TRADE_MATCHED, TRADE_RETRYING, TRADE_MINED)
UNSETTLED = tuple(status.lower() for status in SETTLEMENT_ORDER)
FIRST_SETTLEMENT = TRADE_MATCHED.lower()  # a fill's first word, from the order's answer
# Trades of a token looked through for an order the venue no longer lists (pages of 100).
SEARCH_PAGES = 5
# How far before the send the search starts (the venue's clock may differ from ours).
CLOCK_SLACK = timedelta(seconds=60)
# Pages of an account's trades the settlement sweep reads per tick (100 trades a page).
SETTLE_PAGES = 5
# How long a fill's settlement (and a closed order's late fill) is followed (Polygon
# confirms in minutes; RETRYING ends).
FOLLOW_SETTLEMENT = timedelta(hours=24)


@dataclass(frozen=True)
class Fill:
    """One venue trade's part of our order."""

    trade_id: str
    status: str
    shares: Decimal
    value: Decimal
    fee: Decimal = ZERO  # what the venue charged us for it (a taker's fee; makers pay 0)


@dataclass(frozen=True)
class VenueView:
    """The venue's word on an order: its listing (None when not listed) and its fills."""

    listed: OpenOrder | None
    fills: tuple[Fill, ...] = ()

    @property
    def found(self) -> bool:
        """True when the venue knows the order (listed, or a party to a trade)."""
        return self.listed is not None or bool(self.fills)

    @property
    def status(self) -> str | None:
        """The listing's status in plain words (``ORDER_STATUS_LIVE`` → ``LIVE``)."""
        if self.listed is None:
            return None
        return self.listed.status.upper().removeprefix("ORDER_STATUS_")


@dataclass
class Totals:
    """What an order's fills add up to, and what changed since the last look."""

    shares: Decimal = ZERO          # counted: every fill but the FAILED ones
    value: Decimal = ZERO
    fee: Decimal = ZERO             # charged on the counted fills (a FAILED fill charged none)
    failed_shares: Decimal = ZERO
    failed_value: Decimal = ZERO
    newly_failed: list[Fill] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)

    @property
    def settlement(self) -> str | None:
        """Trade.settlement: None before any fill; the slowest moving fill; the final word."""
        if not self.statuses:
            return None
        for status in SETTLEMENT_ORDER:
            if status in self.statuses:
                return status.lower()
        return "confirmed" if TRADE_CONFIRMED in self.statuses else "failed"


def look_up(client: VenueClient, creds: ApiCreds, order: Order) -> VenueView:
    """The venue's listing of the order and its fills; raises VenueError when it cannot say."""
    page = client.clob.open_orders(creds, order_id=order.order_hash)
    listed = next((o for o in page.orders if o.id.lower() == order.order_hash.lower()), None)
    hinted = list(listed.associate_trades) if listed is not None else []
    known = [row.venue_trade_id for row in OrderFill.select(OrderFill.venue_trade_id)
             .where(OrderFill.order == order.id)]
    trades: dict[str, VenueTrade] = {}
    for trade_id in dict.fromkeys([*hinted, *known]):
        found, _ = client.clob.trades(creds, trade_id=trade_id)
        trades.update((t.id, t) for t in found if t.id == trade_id)
    # What the venue matched: the listing's word; unlisted, what we counted (all there is
    # to find when nothing is counted yet: a lost answer).
    matched = listed.size_matched if listed is not None else order.filled_size
    if _matched(order, trades.values()) < matched or (listed is None and not matched):
        _search(client, creds, order, listed, matched, trades)
    return VenueView(listed=listed, fills=_fills_of(client, order, trades.values()))


def _matched(order: Order, trades: Iterable[VenueTrade]) -> Decimal:
    """Shares these trades matched for the order, FAILED ones included (``size_matched``
    counts a match whatever became of its settlement)."""
    parts = (trade.fill_of(order.order_hash) for trade in trades)
    return sum((part[0] for part in parts if part is not None), ZERO)


def _fills_of(client: VenueClient, order: Order, trades: Iterable[VenueTrade]
              ) -> tuple[Fill, ...]:
    """The order's parts of these venue trades, each with the fee the venue charged."""
    fills = []
    for trade in trades:
        part = trade.fill_of(order.order_hash)
        if part is not None:
            fee = trade.fee_of(order.order_hash, _market_fees(client, trade))
            fills.append(Fill(trade.id, trade.status, *part, fee=fee))
    return tuple(fills)


def _market_fees(client: VenueClient, trade: VenueTrade) -> FeeSchedule | None:
    """The fee model of the trade's market (its exponent; its rate if the trade has none)."""
    if trade.fee_rate_bps == 0 or not trade.market:
        return None  # fee-free by the trade's own word, or no market to ask
    return client.clob.market_parameters(trade.market).fees


def _search(client: VenueClient, creds: ApiCreds, order: Order, listed: OpenOrder | None,
            matched: Decimal, trades: dict[str, VenueTrade]) -> None:
    """Add the market's trades since the order was sent that name it to ``trades``, page
    by page until they cover ``matched`` (all pages when it is 0), ``SEARCH_PAGES`` at
    most: what is still missing is looked for again by the next look and the sweep.

    By market (condition id), not token: a maker that minted or merged against the taker
    is named in a trade of the other outcome's token.
    """
    market = listed.market if listed is not None and listed.market else _condition_of(order)
    since = (order.submitted_at or order.created_at) - CLOCK_SLACK
    cursor = "MA=="
    for _ in range(SEARCH_PAGES):
        page, cursor = client.clob.trades(
            creds, market=market, asset_id=None if market else order.token_id,
            after=int(since.timestamp()), next_cursor=cursor)
        trades.update((t.id, t) for t in page if t.fill_of(order.order_hash) is not None)
        if cursor in ("", "LTE=") or (matched and _matched(order, trades.values()) >= matched):
            return


def _condition_of(order: Order) -> str | None:
    """The condition id of the order's token, from the catalogue (None when not synced)."""
    row = catalogue.token(order.token_id)
    return row.market.condition_id if row is not None else None


def settled_views(client: VenueClient, creds: ApiCreds, orders: list[Order]
                  ) -> dict[object, VenueView]:
    """Views of one account's settling orders from one walk through its recent trades.

    ``GET /data/trades?after=`` (the account's trades of every token since the oldest
    order was sent, ``SETTLE_PAGES`` pages at most) instead of two calls per order: the
    settlement sweep's load on the ``/data/*`` budget grows with the accounts, not with
    their orders. An order missing from the answer (a trade it had not found, or the
    walk cut short before finding any) is left out: the caller looks it up alone.
    """
    if not orders:
        return {}
    since = min(o.submitted_at or o.created_at for o in orders) - CLOCK_SLACK
    trades: dict[str, VenueTrade] = {}
    cursor, complete = "MA==", False
    for _ in range(SETTLE_PAGES):
        page, cursor = client.clob.trades(creds, after=int(since.timestamp()),
                                          next_cursor=cursor)
        trades.update((t.id, t) for t in page)
        if cursor in ("", "LTE="):
            complete = True
            break
    known: dict[object, set[str]] = {}
    for row in OrderFill.select(OrderFill.order, OrderFill.venue_trade_id).where(
            OrderFill.order.in_([o.id for o in orders])):
        known.setdefault(row.order_id, set()).add(row.venue_trade_id)
    views = {}
    for order in orders:
        fills = _fills_of(client, order, trades.values())
        if not known.get(order.id, set()) <= {f.trade_id for f in fills}:
            continue
        if fills or complete:
            views[order.id] = VenueView(listed=None, fills=fills)
    return views


def record(order: Order, fills: Iterable[Fill]) -> Totals:
    """Store the fills' statuses (a FAILED one is never revived); what they add up to.

    ``newly_failed``: fills whose FAILED status this call wrote first (one caller only),
    so a reversal that follows happens once.
    """
    totals = Totals()
    now = utcnow()
    with atomic():
        stored = {row.venue_trade_id: row for row in
                  OrderFill.select().where(OrderFill.order == order.id)}
        for fill in fills:
            row = stored.get(fill.trade_id)
            if row is None:
                OrderFill.insert(order=order.id, venue_trade_id=fill.trade_id,
                                 status=fill.status, shares=fill.shares, value=fill.value,
                                 fee=fill.fee, created_at=now,
                                 updated_at=now).on_conflict_ignore().execute()
                if fill.status == TRADE_FAILED:
                    totals.newly_failed.append(fill)
            elif row.status != fill.status and row.status not in FINAL_TRADE_STATUSES:
                written = OrderFill.update(status=fill.status, updated_at=now).where(
                    OrderFill.id == row.id, OrderFill.status == row.status).execute()
                if written and fill.status == TRADE_FAILED:
                    totals.newly_failed.append(fill)
        for row in OrderFill.select().where(OrderFill.order == order.id):
            totals.statuses.append(row.status)
            if row.status == TRADE_FAILED:
                totals.failed_shares += row.shares
                totals.failed_value += row.value
            else:
                totals.shares += row.shares
                totals.value += row.value
                totals.fee += row.fee
    return totals


def settle_trade(order: Order, totals: Totals) -> None:
    """Write the fills' settlement on the order's Trade; take failed fills out of a copy."""
    if not totals.statuses:
        return
    settlement = totals.settlement
    if totals.shares + totals.failed_shares < order.filled_size:
        # The order counts fills we have not found yet: unsettled until they are found.
        settlement = FIRST_SETTLEMENT
    changes: dict[str, object] = {"settlement": settlement, "failed_size": totals.failed_shares}
    # A fill found after the others settled opens the settlement again.
    changes["settled_at"] = utcnow() if settlement in ("confirmed", "failed") else None
    if totals.failed_shares > 0 and totals.shares == 0 and order.status not in (
            "pending", "live", "delayed"):
        changes["status"] = "failed"  # every fill failed: nothing happened after all
    Trade.update(changes).where(Trade.order == order.id).execute()
    if totals.newly_failed:
        log.warning("order %s: %d venue trade(s) FAILED; their fills are reversed",
                    order.order_hash, len(totals.newly_failed))
        _reverse_copy(order, totals.newly_failed)
        _notify_failed(order, totals.newly_failed)
    _true_up_copy_fee(order)


def _notify_failed(order: Order, failed: list[Fill]) -> None:
    """order.failed for fills whose venue trade FAILED at settlement: the order's status
    stays (it was matched), but the shares never changed hands. Once per batch of failed
    fills (``newly_failed`` has one writer), a copy's order too."""
    shares = sum((f.shares for f in failed), ZERO)
    events.emit(order.user_id, "order.failed",
                f"order.failed:{order.id}:settled:{failed[0].trade_id}"[:200],
                link="/dashboard/positions", order_id=order.id,
                market=order.market_slug or order.token_id, side=order.side, size=shares,
                amount=sum((f.value for f in failed), ZERO),
                reason=f"its trade failed at settlement, so {numbers.shares(shares)} "
                       "shares never changed hands and the fill was taken back",
                **catalogue.named(order.market_slug, order.token_id))


def _counted_copy(order: Order) -> CopyIntent | None:
    """The filled copy intent whose fill the config's position counted, if any."""
    if order.source != "copy" or order.config_id is None or not order.target_trade_id:
        return None
    intent = CopyIntent.get_or_none(CopyIntent.id == order.target_trade_id)
    return intent if intent is not None and intent.status == INTENT_FILLED else None


def _true_up_copy_fee(order: Order) -> None:
    """Bring a counted copy's fee to what the venue's trades charged (once per change)."""
    intent = _counted_copy(order)
    if intent is None or intent.fee is None or intent.fee == order.fee:
        return
    written = CopyIntent.update(fee=order.fee).where(
        CopyIntent.id == intent.id, CopyIntent.fee == intent.fee).execute()
    if written:
        copy_positions.true_up_fee(order.config_id, order.token_id, order.side,
                                   order.fee - intent.fee)


def _reverse_copy(order: Order, failed: list[Fill]) -> None:
    """Take failed fills back out of the copy config's position, if it had counted them."""
    intent = _counted_copy(order)
    if intent is None:
        return  # not counted yet: its settlement reads the order's reduced fills
    shares = sum((f.shares for f in failed), ZERO)
    failed_fee = sum((f.fee for f in failed), ZERO)
    side = Side.parse(order.side)
    # As the position counted it: fee included (a failed fill's fee is given back too).
    value = copy_positions.fee_inclusive(side, sum((f.value for f in failed), ZERO), failed_fee)
    changes: dict[str, Decimal] = {}
    if side is Side.BUY:
        # A failed buy never brought the shares: out they go with their cost.
        copy_positions.apply_position(order.config_id, False, order.token_id, Side.BUY,
                                      -shares, -value, condition_id=intent.condition_id,
                                      market_slug=intent.market_slug, outcome=intent.outcome)
    else:
        # A failed sell never parted with them: back they come with the cost basis the
        # sale took out, and the realized PnL it booked (net proceeds - cost) goes.
        cost = _sold_cost(intent, shares, value)
        copy_positions.unsell(order.config_id, order.token_id, shares, cost, value - cost)
        if intent.sold_cost is not None:
            changes["sold_cost"] = intent.sold_cost - cost
    CopyIntent.update(filled_size=max(ZERO, (intent.filled_size or ZERO) - shares),
                      fee=max(ZERO, (intent.fee or ZERO) - failed_fee),
                      **changes, detail=(intent.detail + " " if intent.detail else "")
                      + "A venue trade of this copy FAILED; its fill was reversed.").where(
        CopyIntent.id == intent.id).execute()


def _sold_cost(intent: CopyIntent, shares: Decimal, value: Decimal) -> Decimal:
    """The cost basis ``shares`` of the intent's sale took out of the position."""
    filled = intent.filled_size or ZERO
    if intent.sold_cost is None or filled <= 0:
        return value  # a sale from before sold_cost was kept: back at its sale price
    if shares >= filled:
        return intent.sold_cost
    return intent.sold_cost * shares / filled  # one sale, one average cost: pro rata


def closed_at_deadline(limit: int = 500) -> list[Order]:
    """Orders closed unfilled at ORDER_RESOLVE_DEADLINE_SECONDS in the last
    ``FOLLOW_SETTLEMENT``: the venue may have filled them after all (oldest first)."""
    since = utcnow() - FOLLOW_SETTLEMENT
    found = (Order.select()
             .where(Order.status.in_(("failed", "cancelled")),
                    Order.deadline_closed_at >= since)
             .order_by(Order.created_at).limit(limit))
    return [order for order in found if not order.filled_size]


def book_late_copy(order: Order, shares: Decimal, value: Decimal, fee: Decimal) -> None:
    """Count a copy order's late fill in its intent and the config's position (its fee
    included, as every fill is), once."""
    if order.source != "copy" or order.config_id is None or not order.target_trade_id:
        return
    intent = CopyIntent.get_or_none(CopyIntent.id == order.target_trade_id)
    if intent is None or intent.status not in (INTENT_FAILED, INTENT_CANCELLED):
        return
    written = CopyIntent.update(
        status=INTENT_FILLED, reason=None, filled_size=shares, filled_price=value / shares,
        fee=fee, settled_at=utcnow(), detail=(intent.detail + " " if intent.detail else "")
        + "The venue filled it after it was closed at the deadline; booked late.").where(
        CopyIntent.id == intent.id, CopyIntent.status == intent.status).execute()
    if written:  # one writer counts the fill
        paid = copy_positions.fee_inclusive(intent.side, value, fee)
        copy_positions.apply_position(order.config_id, False, order.token_id, intent.side,
                                      shares, paid, condition_id=intent.condition_id,
                                      market_slug=intent.market_slug, outcome=intent.outcome,
                                      intent_id=intent.id)


def unsettled_orders(limit: int = 500) -> list[Order]:
    """Orders whose fills the venue is still settling (oldest first; the sweep follows
    them for ``FOLLOW_SETTLEMENT`` after they filled, then leaves them as they are)."""
    since = utcnow() - FOLLOW_SETTLEMENT
    return list(Order.select().join(Trade, on=(Trade.order == Order.id))
                .where(Trade.settlement.in_(UNSETTLED), Trade.filled_at >= since)
                .order_by(Order.created_at).limit(limit))


__all__ = ["Fill", "Totals", "VenueView", "book_late_copy",
           "closed_at_deadline", "look_up", "record", "settle_trade", "settled_views",
           "unsettled_orders"]
