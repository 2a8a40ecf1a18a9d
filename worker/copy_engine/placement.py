"""Placing copy intents' orders through the order service's three steps (blocking parts).

Live intents of one target fill (or one exit check) go out as a batch, through the same
``services.orders`` core as a manual order, fed with what the engine already holds:

1. ``prepare``: each intent's order is planned from the book the decision just read (no
   second read), with the market parameters from that read, checked against the copier's
   collateral estimate and signed with the copier's opened key (``accounts.py``): no
   database, no HTTP. An order that cannot be built becomes the intent's failure (or a
   ``insufficient_balance`` skip) before anything is written.
2. ``record``: in ONE transaction, the fill's intents are inserted under the (config,
   target trade) unique constraint and, for the intents this call inserted, the orders'
   durable records are written (``orders.record_orders``). An intent that another engine,
   a retry or a restart already recorded inserts nothing and gets no order, so a target
   trade is never mirrored twice; an order leaves only once its record is committed.
3. The engine sends the batch concurrently on its async client; ``settle`` then records
   the answers, the intents' outcomes and the position changes in one transaction (lost
   answers are reconciled by hash outside it, since that asks the venue).

Paper intents go through the paper book (``place``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
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
    INTENT_SKIPPED,
)
from models.trading import Order
from services import catalogue, errors, metrics, orders
from services.copying import Holding, MarketView
from services.order_plan import MarketInfo
from services.orders import PostAnswer, PreparedOrder
from venue.models import Market as GammaMarket
from venue.models import OrderBook
from worker.copy_engine import store
from worker.copy_engine.accounts import AccountCache

log = logging.getLogger(__name__)

ZERO = Decimal(0)
BALANCE_REFUSAL = "not enough balance"  # the venue's words when the wallet cannot pay


@dataclass(frozen=True)
class Quote:
    """What the decision read about a token: its view, the book and the market behind it."""

    view: MarketView
    book: OrderBook
    info: MarketInfo
    market: GammaMarket


@dataclass(frozen=True)
class Outcome:
    """What became of one intent's order."""

    changes: dict[str, Any]
    filled_size: Decimal = Decimal(0)
    filled_value: Decimal = Decimal(0)


@dataclass
class Ticket:
    """One live intent on its way out: its row, its prepared order and, later, the answer."""

    row: dict[str, Any]
    user_id: UUID
    prepared: PreparedOrder | None = None
    order: Order | None = None
    reserved: Decimal = ZERO       # collateral held from the copier's estimate
    short: bool = False            # the estimate said the wallet cannot pay
    sent_at: datetime | None = None
    answer: PostAnswer | None = None
    outcome: Outcome | None = None
    holding: Holding | None = None  # the config's position after a fill
    opened: int = 0
    failure: dict[str, Any] = field(default_factory=dict)


def _ms(later: datetime, earlier: datetime) -> int:
    return max(0, int((later - earlier).total_seconds() * 1000))


def _failure(exc: Exception) -> dict[str, Any]:
    """Intent changes for an order refused before it was sent."""
    if isinstance(exc, errors.InsufficientBalance):
        # Nothing was signed for the venue to see: the copy is skipped, as a rule would.
        return {"status": INTENT_SKIPPED, "reason": "insufficient_balance",
                "detail": exc.message, "settled_at": utcnow()}
    if isinstance(exc, errors.CopytradeError):
        reason = "venue_unavailable" if isinstance(exc, errors.Unavailable) else "order_refused"
        return {"status": INTENT_FAILED, "reason": reason, "detail": exc.message,
                "settled_at": utcnow()}
    translated = errors.from_external(exc)
    message = translated.message if translated else f"{type(exc).__name__}: {exc}"
    return {"status": INTENT_FAILED, "reason": "order_error", "detail": message,
            "settled_at": utcnow()}


def prepare(tickets: list[Ticket], quote: Quote, accounts: AccountCache, *,
            final: bool = True) -> list[Ticket]:
    """Plan, check and sign each ticket's order from the quote (step 1); the short ones.

    A ticket whose copier's estimate cannot pay is returned (not failed) unless ``final``,
    so the engine can ask the venue for the real balance and try once more. A copier
    without an opened account is served the slow way (account and balance read now; this
    needs a database connection).
    """
    short: list[Ticket] = []
    for ticket in tickets:
        row = ticket.row
        request = {"token_id": row["token_id"], "side": row["side"].lower(),
                   "size": row["size"], "order_type": "market", "source": "copy",
                   "config_id": row["config"], "target_trade_id": str(row["id"]),
                   "detected_at": row["seen_at"], "time_in_force": "FAK",
                   "floor_size": row["side"] == "SELL", "book": quote.book,
                   "market": quote.info}
        slot = accounts.get(ticket.user_id)
        try:
            if slot is None:
                ticket.prepared = orders.prepare_order(ticket.user_id, **request)
                continue
            with slot.lock:
                ticket.prepared = orders.prepare_order(
                    ticket.user_id, account=slot.account, collateral=slot.available,
                    **request)
                ticket.reserved = ticket.prepared.plan.max_collateral
                slot.reserve(ticket.reserved)
        except errors.InsufficientBalance as exc:
            if not final and slot is not None:
                ticket.short = True
                short.append(ticket)
                continue
            ticket.failure = _failure(exc)
        except Exception as exc:  # a bug must fail this intent, not the whole fill
            if not isinstance(exc, errors.CopytradeError):
                log.exception("copy intent %s: preparing the order failed", row["id"])
            ticket.failure = _failure(exc)
        ticket.short = False
        if ticket.failure:
            row.update(ticket.failure)
    return short


def ready(rows: list[dict[str, Any]], tickets: list[Ticket], quote: Quote,
          accounts: AccountCache, *, insert: bool = True, final: bool = True,
          catalogue_market: bool = True
          ) -> tuple[list[dict[str, Any]] | None, list[Ticket]]:
    """Steps 1 and 2 in one database thread: (rows recorded, []), or (None, the short ones).

    Tickets already prepared by an earlier call are not prepared again. When some copier's
    estimate is short and not ``final``, nothing is written: the engine asks the venue for
    the real balance and calls again with ``final``.
    """
    short = prepare([t for t in tickets if t.prepared is None and not t.failure], quote,
                    accounts, final=final)
    if short:
        return None, short
    return record(rows, tickets, quote if catalogue_market else None, insert=insert), []


def record(rows: list[dict[str, Any]], tickets: list[Ticket], quote: Quote | None = None,
           *, insert: bool = True) -> list[dict[str, Any]]:
    """Write the intents and their orders' durable records in one transaction (step 2).

    With ``insert`` the rows are new intents (only those inserted now get an order; the
    inserted rows are returned); without, they are stored intents being re-placed after a
    restart, whose failures are written as their outcome. With ``quote`` its market is
    put in the catalogue if missing. Run in a database thread.
    """
    if quote is not None and tickets and catalogue.token(quote.info.token_id) is None:
        catalogue.upsert_markets([quote.market])  # trade lists show the market's title
    with store.write_transaction():
        if insert:
            inserted = store.insert_intents(rows)
        else:
            inserted = rows
            for ticket in tickets:
                if ticket.failure:
                    store.settle_intent(ticket.row["id"], ticket.failure)
        ids = {row["id"] for row in inserted}
        going = [t for t in tickets if t.prepared is not None and t.row["id"] in ids]
        for ticket, order in zip(going, orders.record_orders([t.prepared for t in going]),
                                 strict=True):
            ticket.order = order
    return inserted


def settle(tickets: list[Ticket], paper: dict[UUID, bool]) -> None:
    """Record the venue's answers, the intents' outcomes and positions (step 3's writes).

    Answers lost in transit are reconciled by hash first (that asks the venue, so outside
    the transaction); the rest is one transaction. Run in a database thread.
    """
    placed_by_id: dict[UUID, Any] = {}
    for ticket in tickets:
        if ticket.answer is not None and ticket.answer.result is None \
                and ticket.answer.refused is None:
            assert ticket.order is not None and ticket.prepared is not None
            placed_by_id[ticket.row["id"]] = orders.settle(ticket.order, ticket.prepared,
                                                           ticket.answer)
    settled: list[tuple[Ticket, Outcome]] = []
    with store.write_transaction():
        for ticket in tickets:
            if ticket.order is None or ticket.prepared is None or ticket.answer is None:
                continue
            row = ticket.row
            placed = placed_by_id.get(row["id"]) or orders.settle(
                ticket.order, ticket.prepared, ticket.answer)
            assert ticket.sent_at is not None
            base = {"sent_at": ticket.sent_at, "latency_ms": _ms(ticket.sent_at,
                                                                  row["seen_at"])}
            ticket.outcome = _from_placed(placed, base)
            settled.append((ticket, ticket.outcome))
        # The intents and positions of the whole batch in a few statements, not a few per
        # ticket: this transaction holds SQLite's write lock (PostgreSQL's row locks).
        store.settle_intents([(t.row["id"], outcome.changes) for t, outcome in settled])
        filled = [(t, outcome) for t, outcome in settled if outcome.filled_size > 0]
        moves = store.apply_positions([store.PositionFill(
            t.row["config"], paper.get(t.row["config"], False), t.row["token_id"],
            t.row["side"], outcome.filled_size, outcome.filled_value,
            condition_id=t.row.get("condition_id", ""),
            market_slug=t.row.get("market_slug", ""), outcome=t.row.get("outcome", ""))
            for t, outcome in filled])
        for (ticket, _), (holding, opened) in zip(filled, moves, strict=True):
            ticket.holding, ticket.opened = holding, opened
    for _, outcome in settled:  # counted once committed, and not while holding the lock
        metrics.copy_settled(outcome.changes)


def spent(ticket: Ticket) -> Decimal:
    """pUSD the ticket's order took from the wallet (negative: a sale's proceeds)."""
    if ticket.outcome is None:
        return ticket.reserved if ticket.order is not None else ZERO  # unknown: assume all
    changes = ticket.outcome.changes
    fee = Decimal(changes.get("fee") or 0)
    if ticket.row["side"] == "BUY":
        return ticket.outcome.filled_value + fee
    return -(ticket.outcome.filled_value - fee)


def place(intent: dict[str, Any], *, user_id: UUID, paper: bool) -> Outcome:
    """Send (or paper-fill) one intent's order the plain way; never raises for a refusal."""
    sent_at = utcnow()
    base: dict[str, Any] = {"sent_at": sent_at,
                            "latency_ms": _ms(sent_at, intent["seen_at"])}
    try:
        if paper:
            return _paper(intent, user_id, base)
        return _live(intent, user_id, base)
    except Exception as exc:
        if not isinstance(exc, errors.CopytradeError):
            log.exception("copy intent %s: placing failed", intent["id"])
        return Outcome({**base, **_failure(exc)})


def _live(intent: dict[str, Any], user_id: UUID, base: dict[str, Any]) -> Outcome:
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
        refused_for_balance = BALANCE_REFUSAL in (placed.reason or "").lower()
        changes.update(status=INTENT_FAILED if filled == 0 else INTENT_FILLED,
                       reason="insufficient_balance" if refused_for_balance
                       else "order_refused", detail=placed.reason or "", settled_at=utcnow())
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
