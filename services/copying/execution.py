"""Executing a batch of copy intents: prepare, durable record, send, settle.

The live copies of one target fill (or one exit check) go out as a batch, through the
same ``services.trading.orders`` core as a manual order, fed with what the engine already holds;
``execute`` is the one call, and it answers with what was recorded and what it moved:

1. prepare: each copy's order is planned from the book the decision just read (no second
   read), with the market parameters from that read, checked against the copier's
   collateral estimate and signed with the copier's opened account (``copier_accounts``):
   no database, no HTTP. An order that cannot be built becomes the intent's failure (or
   an ``insufficient_balance`` skip) before anything is written. When an estimate says a
   wallet cannot pay, the venue's figure is read (``recheck``: at once or not at all) and
   the batch prepared once more before it is skipped; a copier without an estimate yet is
   not read first (the venue judges its order).
2. record: in ONE transaction, the drafts are inserted (``copy_intents.insert``: only
   those inserted now are acted on; a draft whose fencing token is older than its
   target's current one is refused, ``services.copying.fences``) and, for those, the
   orders' durable records written (``orders.record_orders``). An order leaves only once
   its record is committed.
3. send: the batch's orders go out concurrently through the injected async ``send``
   (the engine's kept-alive client), shielded: a recorded order is sent and settled even
   if the target is being dropped.
4. settle: the answers, the intents' outcomes and the positions in one more transaction
   (lost answers are reconciled by hash first, outside it, since that asks the venue).
   The writes are fenced (``copy_intents.settle_many``): an intent another engine took
   over, or already settled, is left alone and its fill is not counted again.

Paper copies go through the paper book. Blocking steps run through the injected
``run_db`` (a database thread each), so this module never blocks the caller's loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import trio

from models.base import atomic, utcnow
from models.copying import (
    INTENT_CANCELLED,
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_PENDING,
    INTENT_SENT,
    INTENT_SKIPPED,
)
from models.trading import (
    ORDER_CANCELLED,
    ORDER_FAILED,
    ORDER_MATCHED,
    ORDER_PENDING,
    ORDER_REJECTED,
    Order,
)
from services.copying import copy_notices, fences, reservations
from services.copying import intents as copy_intents
from services.copying.accounts import AccountCache
from services.copying.intents import CopyIntentDraft
from services.copying.mirror import Holding, MarketView
from services.markets import catalogue
from services.platform import errors, metrics
from services.trading import copy_positions, order_outages, orders
from services.trading.execution_quality import slippage_of
from services.trading.order_plan import MarketInfo, OrderRequest
from services.trading.orders import PostAnswer, PreparedOrder, elapsed_ms
from venue.errors import VenueRestricted
from venue.models import Market as GammaMarket
from venue.models import OrderBook, Side

log = logging.getLogger(__name__)

ZERO = Decimal(0)
BALANCE_REFUSAL = "not enough balance"  # the venue's words when the wallet cannot pay

# Sends one recorded order; answers when it left and what came back (never raises for it).
Sender = Callable[[PreparedOrder], Awaitable[tuple[datetime, PostAnswer]]]
# Runs a blocking function (and its arguments) in a database thread; its result.
DbRunner = Callable[..., Awaitable[Any]]
# Reads the venue's collateral figure of these copiers into their estimates.
BalanceRecheck = Callable[[set[UUID]], Awaitable[None]]


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
    answered: float | None = None  # monotonic clock when the venue (or paper book) answered

    def settling(self) -> dict[str, Any]:
        """The changes to write now: a final outcome gains its settlement stage (from the
        answer to this write)."""
        if self.answered is None or self.changes.get("status") in (INTENT_PENDING,
                                                                    INTENT_SENT):
            return self.changes
        return {**self.changes, "settlement_ms": elapsed_ms(self.answered)}

    def paid(self, side: Side | str) -> Decimal:
        """pUSD the fill cost (a buy) or brought (a sell), the venue's taker fee included."""
        return copy_positions.fee_inclusive(side, self.filled_value, self.changes.get("fee"))


@dataclass(slots=True)
class Ticket:
    """One live copy on its way out: its draft, its prepared order and, later, the answer."""

    draft: CopyIntentDraft
    prepared: PreparedOrder | None = None
    order: Order | None = None
    reserved: Decimal = ZERO       # collateral held from the copier's estimate
    short: bool = False            # the estimate said the wallet cannot pay
    sent_at: datetime | None = None
    answer: PostAnswer | None = None
    answered: float | None = None   # monotonic clock when the answer came back
    outcome: Outcome | None = None
    holding: Holding | None = None  # the config's position after a fill
    opened: int = 0
    failure: dict[str, Any] = field(default_factory=dict)
    restricted: VenueRestricted | None = None  # refused for the venue's mode: to retry

    @property
    def user_id(self) -> UUID:
        """The copier whose account signs and pays."""
        return self.draft.user_id


@dataclass(frozen=True, slots=True)
class PositionMove:
    """A config's position in a token after a copy filled (what its snapshot should hold)."""

    config_id: UUID
    token_id: str
    holding: Holding
    opened: int
    side: Side | None = None  # the fill that moved it, and what it paid or brought
    paid: Decimal = ZERO


@dataclass(slots=True)
class Executed:
    """What one ``execute`` did: the drafts it recorded, positions moved, orders placed."""

    recorded: list[CopyIntentDraft]
    moves: list[PositionMove] = field(default_factory=list)
    orders: int = 0
    catalogued: bool = False  # the quote's market is in the catalogue now
    # Copies the venue refused for its mode (restart, post-only, ...): still pending,
    # to be placed again while their fill is young enough (``FillExecutor``).
    waiting: list[tuple[CopyIntentDraft, VenueRestricted]] = field(default_factory=list)
    # What became of each copy sent (its intent's changes): the failure breaker reads them.
    outcomes: list[tuple[CopyIntentDraft, dict[str, Any]]] = field(default_factory=list)


async def _recheck(recheck: BalanceRecheck, users: set[UUID],
                   accounts: AccountCache) -> set[UUID]:
    """Ask the venue for these copiers' figures; those it did not read (past the engine's
    balance-read budget, or the read failed)."""
    def read_at(user_id: UUID) -> float | None:
        slot = accounts.get(user_id)
        return None if slot is None else slot.refreshed_at

    before = {user_id: read_at(user_id) for user_id in users}
    await recheck(users)
    return {user_id for user_id, at in before.items() if read_at(user_id) == at}


async def execute(drafts: Sequence[CopyIntentDraft], quote: Quote, *, accounts: AccountCache,
                  send: Sender, run_db: DbRunner, recheck: BalanceRecheck,
                  insert: bool = True, catalogue_market: bool = True,
                  may_send: Callable[[], bool] | None = None) -> Executed:
    """Record the drafts (``insert``) and place their orders: the live ones as one batch.

    Without ``insert`` the drafts are stored intents re-placed after a restart. With
    ``catalogue_market`` the quote's market is put in the catalogue if missing. With
    ``may_send`` (the engine's lease clock), asked again just before the record is
    written, ``fences.LeaseLapsed`` is raised instead of recording once it says no.
    """
    tickets = [Ticket(draft) for draft in drafts
               if draft.status == INTENT_PENDING and not draft.paper]
    try:
        recorded, short = await run_db(ready, drafts, tickets, quote, accounts, insert=insert,
                                       final=False, catalogue_market=catalogue_market,
                                       may_send=may_send)
        if short:  # the estimate is short: ask the venue before skipping
            unread = await _recheck(recheck, {t.user_id for t in short}, accounts)
            recorded, _ = await run_db(ready, drafts, tickets, quote, accounts,
                                       insert=insert, final=True, unchecked=unread,
                                       catalogue_market=catalogue_market, may_send=may_send)
    except fences.LeaseLapsed:
        for ticket in tickets:  # nothing was recorded: give the reservations back
            if ticket.reserved:
                _release(ticket, accounts)
        raise
    assert recorded is not None
    recorded_ids = {draft.id for draft in recorded}
    going = [t for t in tickets if t.order is not None]
    paper = [d for d in recorded if d.paper and d.status == INTENT_PENDING]
    done = Executed(recorded, orders=len(going) + len(paper), catalogued=bool(tickets))

    async def send_one(ticket: Ticket) -> None:
        assert ticket.prepared is not None
        ticket.sent_at, ticket.answer = await send(ticket.prepared)
        ticket.answered = time.monotonic()

    async def place_paper(draft: CopyIntentDraft) -> None:
        move, outcome = await run_db(place_and_settle, draft, paper=True)
        done.outcomes.append((draft, outcome.changes))
        if move is not None:
            done.moves.append(move)

    # Recorded orders go out and are settled even if the caller is being cancelled.
    with trio.CancelScope(shield=True):
        async with trio.open_nursery() as nursery:
            for ticket in going:
                nursery.start_soon(send_one, ticket)
            for draft in paper:
                nursery.start_soon(place_paper, draft)
        if going:
            try:
                await run_db(settle, going)
            finally:
                _after_settle(going, accounts, done)
    for ticket in tickets:  # reserved for orders that were not recorded (duplicates)
        if ticket.order is None and ticket.reserved and ticket.draft.id not in recorded_ids:
            _release(ticket, accounts)
    return done


def _after_settle(tickets: list[Ticket], accounts: AccountCache, done: Executed) -> None:
    for ticket in tickets:
        _release(ticket, accounts)
        draft = ticket.draft
        if ticket.restricted is not None and ticket.outcome is not None:
            done.waiting.append((draft, ticket.restricted))
        if ticket.holding is not None and ticket.outcome is not None:
            done.moves.append(PositionMove(draft.config_id, draft.token_id, ticket.holding,
                                           ticket.opened, draft.side,
                                           ticket.outcome.paid(draft.side)))
        changes = ticket.outcome.changes if ticket.outcome else {}
        if ticket.outcome is not None:
            done.outcomes.append((draft, changes))
        if changes.get("reason") == "insufficient_balance":
            slot = accounts.get(ticket.user_id)
            if slot is not None:
                slot.refreshed_at = 0.0  # the venue disagreed: re-read it soon


def _release(ticket: Ticket, accounts: AccountCache) -> None:
    slot = accounts.get(ticket.user_id)
    if slot is not None and (ticket.reserved or ticket.outcome is not None):
        slot.release(ticket.reserved, spent(ticket))
        ticket.reserved = ZERO


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
            final: bool = True, unchecked: Collection[UUID] = ()) -> list[Ticket]:
    """Plan, check and sign each ticket's order from the quote (step 1); the short ones.

    A ticket whose copier's estimate cannot pay is returned (not failed) unless ``final``,
    so the caller can ask the venue for the real balance and try once more. Copiers in
    ``unchecked`` (the venue was not asked: the balance-read budget was spent), and those
    without an estimate yet, are not checked here: the venue refuses an order the wallet
    cannot pay. A copier without an opened account is served
    the slow way (account and balance read now; this needs a database connection).
    """
    short: list[Ticket] = []
    book, market = quote.book, quote.info
    for ticket in tickets:
        draft = ticket.draft
        side = draft.side
        slot = accounts.get(ticket.user_id)
        try:
            request = OrderRequest.checked(draft.token_id, side, draft.size, "market",
                                           time_in_force="FAK", floor_size=side is Side.SELL)
            origin = orders.Origin("copy", draft.config_id, str(draft.id), draft.seen_at)
            if slot is None:  # the slow way: the account and its balances read now
                acct = orders.live_account(ticket.user_id)
                ticket.prepared = orders.plan_and_sign(ticket.user_id, acct, request,
                                                       book=book, market=market, origin=origin)
                orders.check_funds(acct, ticket.prepared.plan)
                continue
            with slot.lock:
                # No figure yet (the refresh loop has not reached it): not read before the
                # fill's orders, which would wait for a venue round trip and its budget; the
                # order goes unchecked and the venue refuses what the wallet cannot pay.
                available = slot.available
                checked = available is not None and ticket.user_id not in unchecked
                ticket.prepared = orders.plan_and_sign(
                    ticket.user_id, slot.account, request, book=book, market=market,
                    origin=origin, available=available if checked else None)
                ticket.reserved = ticket.prepared.plan.max_collateral
                slot.reserve(ticket.reserved)
        except errors.InsufficientBalance as exc:
            if not final and slot is not None:
                ticket.short = True
                short.append(ticket)
                continue
            ticket.failure = _failure(exc if slot is None else orders.explained(slot.account,
                                                                                  exc))
        except Exception as exc:  # a bug must fail this intent, not the whole fill
            if not isinstance(exc, errors.CopytradeError):
                log.exception("copy intent %s: preparing the order failed", draft.id)
            ticket.failure = _failure(exc)
        ticket.short = False
        if ticket.failure:
            draft.failed(ticket.failure)
    return short


def ready(drafts: Sequence[CopyIntentDraft], tickets: list[Ticket], quote: Quote,
          accounts: AccountCache, *, insert: bool = True, final: bool = True,
          unchecked: Collection[UUID] = (), catalogue_market: bool = True,
          may_send: Callable[[], bool] | None = None
          ) -> tuple[list[CopyIntentDraft] | None, list[Ticket]]:
    """Steps 1 and 2 in one database thread: (drafts recorded, []), or (None, the short ones).

    Tickets already prepared by an earlier call are not prepared again. When some copier's
    estimate is short and not ``final``, nothing is written: the caller asks the venue for
    the real balance and calls again with ``final``.
    """
    short = prepare([t for t in tickets if t.prepared is None and not t.failure], quote,
                    accounts, final=final, unchecked=unchecked)
    if short:
        return None, short
    if may_send is not None and not may_send():
        raise fences.LeaseLapsed("the lease clock ran out before the copy was recorded")
    return record(drafts, tickets, quote, insert=insert, accounts=accounts,
                  catalogue_market=catalogue_market), []


def record(drafts: Sequence[CopyIntentDraft], tickets: list[Ticket],
           quote: Quote | None = None, *, insert: bool = True,
           accounts: AccountCache | None = None, catalogue_market: bool = True
           ) -> list[CopyIntentDraft]:
    """Write the intents and their orders' durable records in one transaction (step 2).

    With ``insert`` the drafts are new intents (only those inserted now get an order; the
    inserted drafts are returned), their buys' reservations taken in the same transaction
    (``services.copying.reservations``: cut or skipped past a cap or budget); without, they
    are stored intents being re-placed after a restart, whose failures are written as their
    outcome. With ``catalogue_market`` the quote's market is put in the catalogue if
    missing. ``accounts`` holds the collateral estimates a re-signed or skipped copy gives
    back. Run in a database thread.
    """
    if quote is not None and catalogue_market and tickets \
            and catalogue.token(quote.info.token_id) is None:
        catalogue.upsert_markets([quote.market])  # trade lists show the market's title
    with atomic():
        if insert:
            _reserve(drafts, tickets, quote, accounts)
            inserted = copy_intents.insert(drafts)
        elif drafts and drafts[0].fence is not None and not fences.holds(
                drafts[0].target_address, drafts[0].fence):
            inserted = []  # this engine's lease on the target was taken over: not its to send
        else:
            inserted = list(drafts)
            for ticket in tickets:
                if ticket.failure:
                    copy_intents.settle(ticket.draft.id, ticket.failure,
                                        worker=ticket.draft.worker)
        ids = {draft.id for draft in inserted}
        going = [t for t in tickets if t.prepared is not None and t.draft.id in ids]
        for ticket, order in zip(going, orders.record_orders([t.prepared for t in going]),
                                 strict=True):
            ticket.order = order
    copy_notices.enqueue([d.id for d in inserted if d.status == INTENT_SKIPPED]
                         + [t.draft.id for t in tickets if t.failure
                            and t.failure.get("status") == INTENT_SKIPPED])
    return inserted


def _reserve(drafts: Sequence[CopyIntentDraft], tickets: list[Ticket], quote: Quote | None,
             accounts: AccountCache | None) -> None:
    """Give each buy its reservation (the most it may cost) and hold the guarded ones
    against their caps and budgets, inside the record's transaction: a live copy cut down is
    signed again for its new size; one skipped sends nothing."""
    by_id = {ticket.draft.id: ticket for ticket in tickets}
    view = quote.view if quote is not None else MarketView()

    def cost(draft: CopyIntentDraft) -> Decimal:
        worst = reservations.worst_cost(draft, view)
        ticket = by_id.get(draft.id)
        if ticket is not None and ticket.prepared is not None:
            return max(worst, ticket.prepared.plan.max_collateral)
        return worst

    def unsign(draft: CopyIntentDraft) -> Ticket | None:
        ticket = by_id.get(draft.id)
        if ticket is not None and ticket.prepared is not None:
            if accounts is not None:  # its collateral estimate was held for the old size
                _release(ticket, accounts)
            ticket.prepared = None
        return ticket

    def resized(draft: CopyIntentDraft) -> None:
        ticket = unsign(draft)
        if ticket is not None and quote is not None:
            prepare([ticket], quote, accounts if accounts is not None else AccountCache())

    def skipped(draft: CopyIntentDraft) -> None:
        ticket = unsign(draft)
        if ticket is not None:
            ticket.failure = {"status": draft.status, "reason": draft.reason,
                              "detail": draft.detail, "settled_at": draft.settled_at}

    guarded = {draft.id for draft in reservations.guarded_buys(drafts)}
    for draft in drafts:
        if draft.status == INTENT_PENDING and draft.side is Side.BUY \
                and draft.id not in guarded:
            draft.reserved_usdc = cost(draft)  # counted should the user set a cap meanwhile
    reservations.reserve(drafts, view, cost=cost, resized=resized, skipped=skipped)


def settle(tickets: list[Ticket]) -> None:
    """Record the venue's answers, the intents' outcomes and positions (step 4's writes).

    Answers lost in transit are reconciled by hash first (that asks the venue, so outside
    the transaction); the rest is one transaction. Run in a database thread.
    """
    answered = [t for t in tickets
                if t.order is not None and t.prepared is not None and t.answer is not None]
    lost = [t for t in answered
            if t.answer is not None and t.answer.result is None and t.answer.refused is None]
    settled_by_id = dict(zip((t.draft.id for t in lost), _settle_orders(lost), strict=True))
    settled: list[tuple[Ticket, Outcome]] = []
    with atomic():
        # The batch's answers in a few statements (one per shape of change and table).
        rest = [t for t in answered if t.draft.id not in settled_by_id]
        settled_by_id.update(zip((t.draft.id for t in rest), _settle_orders(rest),
                                 strict=True))
        for ticket in answered:
            assert ticket.answer is not None
            draft = ticket.draft
            order = settled_by_id[draft.id]
            assert ticket.sent_at is not None
            base = {"sent_at": ticket.sent_at,
                    "latency_ms": _ms(ticket.sent_at, draft.seen_at),
                    **_stages(draft, ticket.answer.sent, ticket.answer.ack_ms, order)}
            ticket.outcome = _from_order(order, base, draft, ticket.answered)
            if ticket.answer.withheld is not None:
                # Never sent (its engine's lease clock ran out first; the order is closed and
                # detached): handed back pending, for whichever engine runs the config next.
                ticket.outcome = Outcome({"status": INTENT_PENDING,
                                          "worker": copy_intents.UNOWNED})
            elif isinstance(ticket.answer.lost, VenueRestricted):
                # Refused for the venue's mode: nothing placed; the intent waits for a retry.
                ticket.restricted = ticket.answer.lost
                # No sent_at/latency: the copy has not left yet as far as the user is concerned.
                ticket.outcome = Outcome({"status": INTENT_PENDING,
                                          "reason": order_outages.reason_for(ticket.restricted),
                                          "detail": orders.reason_of(order) or ""})
            settled.append((ticket, ticket.outcome))
        # The intents and positions of the whole batch in a few statements, not a few per
        # ticket: this transaction holds SQLite's write lock (PostgreSQL's row locks).
        # Fenced: an intent another engine took over (this one lost the target's lease
        # while sending) or settled meanwhile is not written, and its fill not counted.
        # One engine's batch: its drafts carry its name (its fencing token).
        written = copy_intents.settle_many(
            [(t.draft.id, outcome.settling()) for t, outcome in settled],
            worker=settled[0][0].draft.worker if settled else None)
        for ticket, _ in settled:
            if ticket.draft.id not in written:
                ticket.restricted = None  # another engine's now: not retried here
        settled = [(t, outcome) for t, outcome in settled if t.draft.id in written]
        filled = [(t, outcome) for t, outcome in settled if outcome.filled_size > 0]
        moves = copy_positions.apply_positions([copy_positions.PositionFill(
            t.draft.config_id, t.draft.paper, t.draft.token_id, t.draft.side,
            outcome.filled_size, outcome.paid(t.draft.side), condition_id=t.draft.condition_id,
            market_slug=t.draft.market_slug, outcome=t.draft.outcome, intent_id=t.draft.id)
            for t, outcome in filled])
        for (ticket, _), (holding, opened) in zip(filled, moves, strict=True):
            ticket.holding, ticket.opened = holding, opened
    for _, outcome in settled:  # counted once committed, and not while holding the lock
        metrics.copy_settled(outcome.changes)
    copy_notices.enqueue([t.draft.id for t, outcome in settled
                          if outcome.changes.get("status") in (INTENT_FILLED, INTENT_SKIPPED)])


def _settle_orders(tickets: list[Ticket]) -> list[Order]:
    """The tickets' orders with their answers recorded (``orders.settle_many``)."""
    sent = []
    for ticket in tickets:
        assert ticket.order is not None and ticket.prepared is not None \
            and ticket.answer is not None
        sent.append((ticket.order, ticket.prepared, ticket.answer))
    return orders.settle_many(sent)


def spent(ticket: Ticket) -> Decimal:
    """pUSD the ticket's order took from the wallet (negative: a sale's proceeds)."""
    if ticket.outcome is None:
        return ticket.reserved if ticket.order is not None else ZERO  # unknown: assume all
    changes = ticket.outcome.changes
    if changes.get("status") == INTENT_SENT and ticket.order is not None:
        # Open at the venue (a delayed order): it may spend all it reserved yet.
        return ticket.reserved if ticket.draft.side is Side.BUY else ZERO
    paid = ticket.outcome.paid(ticket.draft.side)
    return paid if ticket.draft.side is Side.BUY else -paid


def place_and_settle(draft: CopyIntentDraft, *, paper: bool
                     ) -> tuple[PositionMove | None, Outcome]:
    """Place one stored or paper intent the plain way and record it; its position move
    (None when nothing moved) and what became of it.

    Blocking (a database thread). Live intents normally go through ``execute``; this serves
    paper copies and an intent whose config changed from paper to live meanwhile.
    """
    outcome = place(draft, paper=paper)
    move = None
    # One transaction: the intent's reservation ends as its fill enters the position, so
    # an exposure read sees the copy in flight or held, never in neither
    # (services/copying/reservations.py).
    with atomic():
        written = copy_intents.settle(draft.id, outcome.settling(), worker=draft.worker)
        if written and outcome.filled_size > 0:
            side = draft.side or Side.BUY
            paid = outcome.paid(side)
            holding, opened = copy_positions.apply_position(
                draft.config_id, paper, draft.token_id, side, outcome.filled_size,
                paid, condition_id=draft.condition_id,
                market_slug=draft.market_slug, outcome=draft.outcome,
                intent_id=None if paper else draft.id)
            move = PositionMove(draft.config_id, draft.token_id, holding, opened, side, paid)
    if written:
        copy_notices.enqueue([draft.id])
    return move, outcome


def place(draft: CopyIntentDraft, *, paper: bool) -> Outcome:
    """Send (or paper-fill) one intent's order the plain way; never raises for a refusal."""
    sent_at = utcnow()
    base: dict[str, Any] = {"sent_at": sent_at, "latency_ms": _ms(sent_at, draft.seen_at)}
    try:
        if paper:
            return _paper(draft, base)
        return _live(draft, base)
    except Exception as exc:
        if not isinstance(exc, errors.CopytradeError):
            log.exception("copy intent %s: placing failed", draft.id)
        return Outcome({**base, **_failure(exc)})


def _live(draft: CopyIntentDraft, base: dict[str, Any]) -> Outcome:
    order = orders.place_order(
        draft.user_id, token_id=draft.token_id, side=draft.side, size=draft.size,
        order_type="market", source="copy", config_id=draft.config_id,
        target_trade_id=str(draft.id), detected_at=draft.seen_at, time_in_force="FAK",
        floor_size=draft.side is Side.SELL)
    answered = time.monotonic()
    # Placed the plain way: the order measured its own acknowledgement; placing is the
    # rest of the time since the decision.
    sent = answered - order.ack_ms / 1000 if order.ack_ms is not None else None
    return _from_order(order, {**base, **_stages(draft, sent, order.ack_ms, order)}, draft,
                       answered)


def _stages(draft: CopyIntentDraft, sent: float | None, ack_ms: int | None,
            order: Order | None) -> dict[str, Any]:
    """The placement, acknowledgement and taker-delay stages of a copy's order."""
    stages: dict[str, Any] = {"ack_ms": ack_ms}
    if sent is not None and draft.decided_clock is not None:
        stages["placement_ms"] = elapsed_ms(draft.decided_clock, sent)
    if order is not None and order.taker_delay_ms is not None:
        stages["taker_delay_ms"] = order.taker_delay_ms
    return stages


def _from_order(order: Order, base: dict[str, Any], draft: CopyIntentDraft,
                answered: float | None) -> Outcome:
    """The intent's outcome from its order as stored (its Trade shares the order's id)."""
    changes = {**base, "order_id": order.order_hash, "trade_id": order.id}
    filled = Decimal(order.filled_size or 0)
    value = Decimal(order.filled_value or 0)
    status = order.status
    if status == ORDER_MATCHED or (status == ORDER_CANCELLED and filled > 0):
        price = (value / filled) if filled else None
        changes.update(status=INTENT_FILLED, filled_size=filled, filled_price=price,
                       fee=order.fee, slippage_bps=slippage_of(draft, price),
                       settled_at=utcnow())
    elif status in (ORDER_REJECTED, ORDER_FAILED, ORDER_CANCELLED):
        reason = orders.reason_of(order) or ""
        refused_for_balance = BALANCE_REFUSAL in reason.lower()
        changes.update(status=INTENT_FAILED if filled == 0 else INTENT_FILLED,
                       reason="insufficient_balance" if refused_for_balance
                       else "order_refused", detail=reason, settled_at=utcnow())
    elif status == ORDER_PENDING:
        changes.update(status=INTENT_PENDING)  # left for the reconciler
    else:  # resting on the book, or waiting out the market's matching delay
        changes.update(status=INTENT_SENT)
    return Outcome(changes, filled, value, answered)


def _paper(draft: CopyIntentDraft, base: dict[str, Any]) -> Outcome:
    from services.trading import paper

    assert draft.side is not None
    sent = time.monotonic()
    result = paper.fill(draft.user_id, draft.token_id, draft.side, size=draft.size,
                        limit_price=draft.price, config_id=draft.config_id,
                        detected_at=draft.seen_at)
    # The paper book stands for the venue: its fill is the acknowledgement stage.
    answered = time.monotonic()
    base = {**base, **_stages(draft, sent, elapsed_ms(sent, answered), None)}
    filled = Decimal(result.filled_size or 0)
    value = Decimal(result.filled_value or 0)
    if filled > 0:
        return Outcome({**base, "status": INTENT_FILLED, "trade_id": result.id,
                        "filled_size": filled, "filled_price": value / filled,
                        "slippage_bps": slippage_of(draft, value / filled),
                        "fee": result.fee, "settled_at": utcnow()}, filled, value, answered)
    return Outcome({**base, "status": INTENT_CANCELLED, "trade_id": result.id,
                    "reason": "not_filled", "detail": result.reason or "The paper book could "
                    "not fill the order.", "settled_at": utcnow()}, answered=answered)


__all__ = ["Executed", "PositionMove", "Quote", "Ticket", "execute", "place_and_settle"]
