"""Live orders: place (manual, copy and position sells alike), list, cancel, reconcile.

Every order reaches the venue through the same three steps, which ``place_order`` runs
one after the other for one order and the copy engine runs for a batch:

1. ``prepare_order`` plans the order from the book (services/trading/order_plan.py; a caller that
   just read the book and the market passes them in), checks the preview and collateral
   (a caller that keeps a collateral estimate passes it in), and signs it for the
   wallet's signature type (a caller that keeps the opened account passes it in).
2. ``record_orders`` writes the durable ``Order`` records (status ``pending``, the signed
   body and its EIP-712 hash, which is the venue's order id) and their ``Trade`` rows in
   one transaction, consuming previews there. Only then is anything sent.
3. ``post`` / ``post_async`` send it (never retried) and ``settle`` records the answer.

A crash or a timeout after step 2 leaves a ``pending`` record whose hash ``reconcile``
looks up at the venue (``/data/orders`` and ``/data/trades``, services/trading/order_fills.py):
found means it was placed (its fills are applied); absent means
it never arrived (``failed``), but only once ``order_not_found_grace_seconds`` have passed
since it was sent: before that it may still be on its way (a slow POST, another process's
send), so it stays ``pending`` and is looked up again. Nothing is ever signed or sent
twice for one record.

Order status: pending -> delayed | live | matched | cancelled | rejected | failed;
delayed -> live | matched | cancelled; live -> matched | cancelled
(``models.trading.ORDER_PREDECESSORS``). Every write is a conditional
UPDATE on the statuses the new one may follow, so two processes settling one order (an
answer and a reconciliation, two engines) never replace a final status with another: the
later write changes nothing and reads back what the earlier one stored. Trade status
(SPEC): pending -> filled (any fill, once the order is done) | cancelled (done without a
fill) | failed (rejected, never reached the venue, or every fill's venue trade FAILED).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import trio
from redis.exceptions import RedisError

from chain.errors import ChainError
from models.base import atomic, utcnow
from models.bulk import IfNull, insert_rows, select_rows, update_returning, update_rows
from models.trading import (
    ORDER_CANCELLED,
    ORDER_DELAYED,
    ORDER_FAILED,
    ORDER_LIVE,
    ORDER_MATCHED,
    ORDER_OPEN,
    ORDER_PENDING,
    ORDER_PREDECESSORS,
    ORDER_REJECTED,
    TRADE_CANCELLED,
    TRADE_FAILED,
    TRADE_FILLED,
    TRADE_PENDING,
    Order,
    Trade,
)
from models.user import User
from models.wallet import TradingWallet
from services.markets import order_book
from services.platform import errors, order_versions, venues
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from services.trading import order_fills, order_outages, order_plan, previews
from services.trading.order_plan import MarketInfo, OrderPlan
from services.wallets import session_keys, trading_accounts, venue_accounts
from services.wallets.venue_accounts import VenueAccount
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueRejected, VenueRestricted
from venue.models import OpenOrder, OrderBook, PostOrderResult, Side
from venue.signing import SignedOrder

log = logging.getLogger(__name__)

SOURCES = ("manual", "copy", "sell")
RECONCILE_AFTER = timedelta(seconds=30)
RECONCILE_JOB = "orders.reconcile"
RECONCILE_PENDING_JOB = "orders.reconcile_pending"
ZERO = Decimal(0)


@dataclass(frozen=True)
class PlacedOrder:
    """What placing answered (PlaceOrderResponse) plus the records written."""

    order_id: str          # the venue's order id (the signed order's hash)
    status: str            # accepted | filled | rejected
    filled_size: Decimal
    average_price: Decimal
    reason: str | None     # the venue's reason when rejected
    trade_id: UUID
    order: Order

    def response(self) -> dict[str, Any]:
        """The PlaceOrderResponse fields."""
        return {"order_id": self.order_id, "status": self.status,
                "filled_size": self.filled_size, "average_price": self.average_price,
                "reason": self.reason, "trade_id": self.trade_id}


# ------------------------------------------------------------------ placing


@dataclass(frozen=True)
class PreparedOrder:
    """One order planned, checked and signed; nothing written or sent yet."""

    user_id: UUID
    acct: VenueAccount
    plan: OrderPlan
    signed: SignedOrder
    body: str              # the exact POST /order JSON (stored, then sent)
    source: str
    config_id: UUID | None = None
    target_trade_id: str | None = None
    detected_at: datetime | None = None
    preview: Any = None    # the OrderPreview consumed with the record (manual orders)

    @property
    def order_hash(self) -> str:
        """The venue's order id (the signed order's EIP-712 hash)."""
        return self.signed.order_hash


@dataclass(frozen=True)
class PostAnswer:
    """What one POST /order came back with: the venue's result, its refusal, or nothing."""

    result: PostOrderResult | None = None
    refused: VenueRejected | None = None
    lost: VenueError | None = None  # no readable answer: the order may or may not be there
    resent: PreparedOrder | None = None  # rebuilt for a new order version and sent instead


# Sources whose caller is waiting for the answer: a mode refusal or lost answer is a 503.
ANSWERED_503 = frozenset({"manual", "sell"})


def place_order(user: User | UUID | str, *, token_id: Any, side: Any, size: Any,
                order_type: Any, price: Any = None, preview_id: Any = None,
                source: str = "manual", config_id: UUID | str | None = None,
                target_trade_id: str | None = None, detected_at: datetime | None = None,
                time_in_force: str | None = None, floor_size: bool = False,
                post_only: bool = False) -> PlacedOrder:
    """Place one live order; manual orders need the matching unexpired ``preview_id``.

    Copy trades pass ``source="copy"``, ``config_id``, ``target_trade_id`` and
    ``detected_at`` (when the target's trade was seen; the trade's ``latency_ms`` runs
    from there to the venue's acknowledgement) and may ask ``time_in_force="FAK"``.
    Raises ValidationFailed/BadRequest (400), NotFound (404), InsufficientBalance (402);
    a venue refusal is not an exception: it answers status ``rejected`` with the reason.
    """
    if source == "manual":
        earlier = _earlier_attempt(user, preview_id)
        if earlier is not None:
            return earlier
    prepared = prepare_order(
        user, token_id=token_id, side=side, size=size, order_type=order_type, price=price,
        preview_id=preview_id, source=source, config_id=config_id,
        target_trade_id=target_trade_id, detected_at=detected_at,
        time_in_force=time_in_force, floor_size=floor_size, post_only=post_only)
    [order] = record_orders([prepared])
    answer = post(prepared)
    placed = settle(order, prepared, answer)
    if source in ANSWERED_503:
        # Orders a person places the venue could not take answer 503 (order_outages),
        # never 200 ``rejected``: the client retries with the same Idempotency-Key.
        if isinstance(answer.lost, VenueRestricted):
            raise order_outages.restricted(placed.order, answer.lost)
        if placed.order.status == ORDER_PENDING:
            raise order_outages.unknown_outcome(placed.order, answer.lost)
    return placed


def _earlier_attempt(user: User | UUID | str, preview_id: Any) -> PlacedOrder | None:
    """A retry of a manual order whose answer was lost: that order's outcome, once known.

    None (place it now) when no attempt holds the preview, or its order never reached the
    venue (its preview is handed back); 503 while the venue still cannot say.
    """
    order = order_outages.earlier_order(user_id_of(user), preview_id)
    if order is None or order.status not in (ORDER_PENDING, ORDER_FAILED):
        return None  # none, or a known outcome: previews.check answers "already used"
    if order.status == ORDER_PENDING:
        order = reconcile(order.id)
        if order.status == ORDER_PENDING:
            raise order_outages.unknown_outcome(order, None)
    if order.status == ORDER_FAILED:
        order_outages.hand_back(order)  # never reached the venue: place it anew
        return None
    return _placed(order, order.id)


def prepare_order(user: User | UUID | str, *, token_id: Any, side: Any, size: Any,
                  order_type: Any, price: Any = None, preview_id: Any = None,
                  source: str = "manual", config_id: UUID | str | None = None,
                  target_trade_id: str | None = None, detected_at: datetime | None = None,
                  time_in_force: str | None = None, floor_size: bool = False,
                  account: VenueAccount | None = None, book: OrderBook | None = None,
                  market: MarketInfo | None = None,
                  collateral: Decimal | None = None, post_only: bool = False) -> PreparedOrder:
    """Plan, check and sign one order (step 1); nothing is written or sent.

    ``account``, ``book``, ``market`` and ``collateral`` (pUSD available) let a caller that
    already holds them (the copy engine) skip reading them again; without them they are
    read now. Raises like ``place_order``.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    # The copy engine passes UUIDs already: skip their round trip through text.
    user_id = user if type(user) is UUID else user_id_of(user)
    token, parsed_side, amount, kind, limit = order_plan.normalize_request(
        token_id, side, size, order_type, price)
    # The order's own rules first (tick, minimum, depth), then the preview it must match.
    plan = order_plan.plan_normalized(token, parsed_side, amount, kind, limit,
                                      time_in_force=time_in_force, floor_size=floor_size,
                                      book=book, market=market, post_only=post_only)
    preview = None
    if source == "manual":
        preview = previews.check(user_id, preview_id, token, parsed_side, amount, kind, limit,
                                 post_only=post_only)
    if account is None:
        # The copy engine's accounts passed this gate when their config started.
        trading_accounts.require_live(user_id)
    acct = account or venue_accounts.account(user_id)
    _check_collateral(acct, plan, collateral)
    signed = _sign(acct, plan)
    return PreparedOrder(
        user_id=user_id, acct=acct, plan=plan, signed=signed,
        body=_body(acct, plan, signed), source=source,
        config_id=(config_id if type(config_id) is UUID
                   else UUID(str(config_id)) if config_id else None),
        target_trade_id=target_trade_id, detected_at=detected_at, preview=preview)


def record_orders(prepared: Sequence[PreparedOrder]) -> list[Order]:
    """Write the durable Order and Trade records of prepared orders in one transaction (step 2).

    Consumes their previews in the same transaction; the orders may be sent once it commits
    (inside a caller's transaction: once that commits). ``submitted_at`` is now. Each Trade
    gets its Order's id, so one id names both (``settle`` relies on it).
    """
    if not prepared:
        return []
    now = utcnow()
    orders: list[Order] = []
    trades: list[dict[str, Any]] = []
    for item in prepared:
        plan = item.plan
        side = plan.side.lower()  # the API's word, as the records keep it
        order = Order(
            id=uuid4(), user=item.user_id, maker_address=item.acct.maker,
            token_id=plan.market.token_id, market_slug=plan.market.market_slug,
            side=side, order_type=plan.order_type, time_in_force=plan.time_in_force,
            size=plan.size, price=plan.limit_price, budget=plan.budget,
            order_hash=item.order_hash, signed_body=item.body, status=ORDER_PENDING,
            filled_size=ZERO, filled_value=ZERO, fee=ZERO, source=item.source,
            config_id=item.config_id, target_trade_id=item.target_trade_id,
            detected_at=item.detected_at,
            preview=item.preview.id if item.preview is not None else None,
            created_at=now, submitted_at=now, updated_at=now)
        orders.append(order)
        trades.append({
            "id": order.id, "user": item.user_id, "order": order.id,
            "token_id": plan.market.token_id, "market_slug": plan.market.market_slug,
            "side": side, "requested_size": plan.size, "price": plan.limit_price,
            "filled_size": ZERO, "filled_value": ZERO, "fee": ZERO,
            "status": TRADE_PENDING, "config_id": item.config_id, "created_at": now})
    with atomic():
        for item in prepared:
            if item.preview is not None:
                previews.consume(item.preview)
        insert_rows(Order, [order.__data__ for order in orders])
        insert_rows(Trade, trades)
    return orders


def post(prepared: PreparedOrder) -> PostAnswer:
    """Send a recorded order (step 3, blocking); never raises for the venue.

    Retried once only when refused for a stale order version: rebuilt for the version the
    venue now announces, re-recorded, sent again (services/platform/order_versions.py).
    """
    answer = _post_once(prepared)
    if not order_versions.is_stale(answer.refused):
        return answer
    try:
        order_versions.refresh(venues.client())
        rebuilt = _rebuilt(prepared)
    except (VenueError, errors.CopytradeError) as exc:
        log.warning("order %s: no rebuild for the new version (%s)", prepared.order_hash, exc)
        return answer
    order_versions.restamp(prepared.order_hash, rebuilt.signed, rebuilt.body)
    return replace(_post_once(rebuilt), resent=rebuilt)


def _post_once(prepared: PreparedOrder) -> PostAnswer:
    try:
        # The body recorded with the order is the one sent (and signed): not encoded again.
        return PostAnswer(result=venues.client().clob.post_order(
            prepared.acct.creds, prepared.signed, body=prepared.body))
    except VenueRejected as exc:
        return PostAnswer(refused=exc)
    except VenueError as exc:
        return PostAnswer(lost=exc)


async def post_async(client: AsyncVenueClient, prepared: PreparedOrder) -> PostAnswer:
    """``post`` on an async client (the worker's Trio loop, pooled connections)."""
    answer = await _post_once_async(client, prepared)
    if not order_versions.is_stale(answer.refused):
        return answer
    try:
        await order_versions.refresh_async(client)
        rebuilt = _rebuilt(prepared)
    except (VenueError, errors.CopytradeError) as exc:
        log.warning("order %s: no rebuild for the new version (%s)", prepared.order_hash, exc)
        return answer
    await trio.to_thread.run_sync(order_versions.restamp, prepared.order_hash,
                                  rebuilt.signed, rebuilt.body)
    return replace(await _post_once_async(client, rebuilt), resent=rebuilt)


async def _post_once_async(client: AsyncVenueClient, prepared: PreparedOrder) -> PostAnswer:
    try:
        # The body recorded with the order is the one sent (and signed): not encoded again.
        return PostAnswer(result=await client.clob.post_order(
            prepared.acct.creds, prepared.signed, body=prepared.body))
    except VenueRejected as exc:
        return PostAnswer(refused=exc)
    except VenueError as exc:
        return PostAnswer(lost=exc)


def _rebuilt(prepared: PreparedOrder) -> PreparedOrder:
    """The same order signed again (for the order version now in force)."""
    signed = _sign(prepared.acct, prepared.plan)
    return replace(prepared, signed=signed, body=_body(prepared.acct, prepared.plan, signed))


def settle(order: Order, prepared: PreparedOrder, answer: PostAnswer) -> PlacedOrder:
    """Record the venue's answer to a sent order, or reconcile a lost one; what placing answered.

    A lost answer is looked up at the venue by the order's hash now (blocking HTTP: call it
    outside any open transaction), or queued for reconciliation when the venue is down.
    """
    if answer.resent is not None:  # rebuilt for a new order version: its record was re-stamped
        order, prepared = Order.get_by_id(order.id), answer.resent
    if answer.refused is not None:
        order = _finish(order, ORDER_REJECTED, error=_refusal(answer.refused,
                                                              prepared.acct.wallet),
                        acknowledged=True)
    elif isinstance(answer.lost, VenueRestricted):
        # Refused for the venue's mode (restart, post-only, ...): certainly not placed.
        order = _finish(order, ORDER_REJECTED, error=order_outages.describe(answer.lost),
                        acknowledged=True)
        order_outages.hand_back(order)
    elif answer.lost is not None or answer.result is None:
        # The order may or may not have arrived: look it up by its hash.
        log.warning("order %s: POST failed (%s); reconciling", order.order_hash, answer.lost)
        try:
            order = reconcile(order.id, acct=prepared.acct)
        except VenueError:
            log.warning("order %s left pending; queueing its reconciliation", order.order_hash)
            _queue_reconcile(order)
            order = Order.get_by_id(order.id)
    else:
        order = _apply_post_result(order, answer.result, prepared.plan)
    return _placed(order, order.id)  # record_orders gave the Trade its Order's id


# The venue's refusal of a post-only order that would match at once (ACCOUNTS.md §7.2).
POST_ONLY_CROSSES = "invalid post-only order"
# Its answer to a signature the wallet does not accept (a session key revoked or expired).
INVALID_SIGNATURE = "invalid signature"


def _refusal(exc: VenueRejected, wallet: TradingWallet) -> str:
    """The rejection reason people read: the venue's words, explained where they are terse."""
    text = str(exc)
    if POST_ONLY_CROSSES in text.lower():
        return ("Post-only order refused: at its price it would have matched at once (the "
                "book moved since it was priced), so nothing was placed. Choose a price that "
                f"rests on the book, or drop post_only. The venue: {text}")
    if INVALID_SIGNATURE in text.lower():
        lapsed = _session_key_lapsed(wallet)
        if lapsed:
            return f"{lapsed} The venue: {text}"
    return text


def _session_key_lapsed(wallet: TradingWallet) -> str | None:
    """Why a session-key account's key no longer counts (asked on chain, only once the venue
    or its balance view has refused: never per order); None when it does or cannot tell."""
    try:
        return session_keys.lapsed(wallet)
    except (errors.CopytradeError, ChainError) as exc:
        log.warning("could not ask the wallet about its session key: %s", exc)
        return None


def _check_collateral(acct: VenueAccount, plan: OrderPlan,
                      available: Decimal | None = None) -> None:
    if plan.side is not Side.BUY:
        return
    need = plan.max_collateral
    have = venue_accounts.collateral_balance(acct) if available is None else available
    if have < need and available is None:
        # The CLOB caches balances: a recent deposit shows only after an update (py-sdk
        # refreshes once on `not enough balance / allowance`, then retries).
        venue_accounts.refresh_balance(acct)
        have = venue_accounts.collateral_balance(acct)
    if have < need:
        # The venue stops crediting a session key's wallet to a key that lapsed: say so.
        lapsed = _session_key_lapsed(acct.wallet) if acct.wallet.session_signer else None
        if lapsed:
            raise errors.AccountNotReady(lapsed, blockers=[
                {"code": "session_key_not_authorized", "message": lapsed}])
        raise errors.InsufficientBalance(
            f"Insufficient balance: this order needs up to {order_plan._plain(need)} pUSD "
            f"(fees included); the wallet holds {order_plan._plain(have)} pUSD.")


def _sign(acct: VenueAccount, plan: OrderPlan) -> SignedOrder:
    """Sign the plan with the account's pure signer (no venue client, no request)."""
    signer, market = acct.signer, plan.market
    try:
        if plan.order_type == "limit":
            return signer.limit(market.token_id, plan.side, plan.limit_price, plan.size,
                                tick_size=market.tick_size, neg_risk=market.neg_risk)
        amount = plan.budget if plan.side is Side.BUY else plan.size
        assert amount is not None
        return signer.market(market.token_id, plan.side, amount, plan.limit_price,
                             tick_size=market.tick_size, neg_risk=market.neg_risk,
                             order_type=plan.time_in_force)
    except ValueError as exc:
        raise errors.BadRequest(f"The order cannot be built: {exc}") from exc


def _body(acct: VenueAccount, plan: OrderPlan, signed: SignedOrder) -> str:
    """The POST /order JSON: the signed order, its owner and, when asked, ``postOnly``."""
    return signed.body(acct.creds.api_key, post_only=plan.post_only)


def _queue_reconcile(order: Order) -> None:
    """Ask the worker to settle the record later; a sweep catches it if Redis is down too."""
    from services.platform import jobs

    try:
        jobs.enqueue(RECONCILE_JOB, str(order.id), job_id=f"reconcile-{order.id}",
                     queue="high")
    except (RedisError, errors.CopytradeError) as exc:  # reconcile_pending sweeps later
        log.warning("could not queue reconciliation of %s: %s", order.order_hash, exc)


def _apply_post_result(order: Order, result: PostOrderResult, plan: OrderPlan) -> Order:
    if not result.success:
        return _finish(order, ORDER_REJECTED, error=result.error_msg or "refused",
                       acknowledged=True)
    making, taking = result.making_amount or ZERO, result.taking_amount or ZERO
    shares, value = (taking, making) if order.side == "buy" else (making, taking)
    fee = ZERO
    if shares > 0:
        # The taker fee of what matched now, per level of the book we walked.
        fills = order_book.walk(plan.book, plan.side, shares=shares).fills
        fee = order_book.taker_fee(plan.market.fee_schedule, fills)
    if result.status == "delayed":
        # Queued behind the market's matching delay: fills (or none) come later, read by
        # reconcile from /data/orders and /data/trades. Not final, whatever the order type.
        status = ORDER_DELAYED
    elif result.status in ("live", "unmatched") and order.time_in_force == "GTC":
        status = ORDER_LIVE
    elif shares > 0:
        status = ORDER_MATCHED
    else:
        status = ORDER_CANCELLED
    return _finish(order, status, filled_size=shares, filled_value=value, fee=fee,
                   acknowledged=True)


def _trade_status(order_status: str, filled: Decimal) -> str:
    if order_status in ORDER_OPEN:
        return TRADE_PENDING
    if order_status in (ORDER_REJECTED, ORDER_FAILED):
        return TRADE_FAILED
    return TRADE_FILLED if filled > 0 else TRADE_CANCELLED


# Every column written after the record: here (also by a reconciliation) or, for the
# preview, by the database when it purges the preview.
_STORED_STATE = ("status", "filled_size", "filled_value", "fee", "error", "acknowledged_at",
                 "updated_at", "preview")


def _finish(order: Order, status: str, *, filled_size: Decimal | None = None,
            filled_value: Decimal | None = None, fee: Decimal | None = None,
            error: str | None = None, acknowledged: bool = False,
            deadline: bool = False) -> Order:
    """Write the order's new state and mirror it onto its trade; the order as now stored."""
    now = utcnow()
    changes: dict[str, Any] = {"status": status, "updated_at": now}
    if filled_size is not None:
        changes["filled_size"] = filled_size
        changes["filled_value"] = filled_value if filled_value is not None else ZERO
    if fee is not None:
        changes["fee"] = fee
    if error is not None:
        changes["error"] = error
    if deadline:  # closed unanswered: the late-fill sweep follows it (closed_at_deadline)
        changes["deadline_closed_at"] = now
    if acknowledged:  # the first acknowledgement stays (a reconciliation may have made it)
        changes["acknowledged_at"] = IfNull(now)
    with atomic():
        # Written and read back in one statement (plain SQL: peewee's compiler cost more
        # than the database): the fills, fee and error a reconciliation stored and this
        # answer does not replace are what the trade mirrors and the caller gets. Only
        # over a status this one may follow: a final status is never replaced.
        state = update_returning(Order, order.id, changes, _STORED_STATE,
                                 guard={"status": ORDER_PREDECESSORS[status]})
        if state is None:
            # Lost the race (or no such record): what the winner stored stands.
            state = _lost_race(order, status)
        stored = _stored(order, state)
        update_rows(Trade, [(order.id, _trade_changes(stored, now))], key="order")
    return stored


def _stored(order: Order, state: dict[str, Any]) -> Order:
    """The order record with its stored state read back (the rest never changes)."""
    stored = Order(__no_default__=True)
    stored.__data__.update(order.__data__)
    stored.__data__.update(state)
    return stored


def _lost_race(order: Order, status: str) -> dict[str, Any]:
    """The order's stored state after a write of ``status`` found its predecessor gone."""
    found = select_rows(Order, _STORED_STATE, {"id": [order.id]})  # plain SQL, as above
    if not found:
        raise Order.DoesNotExist(f"order {order.id} is not stored")
    [state] = found
    if state["status"] == ORDER_FAILED and status in (ORDER_LIVE, ORDER_MATCHED):
        # The venue has an order we failed after the grace: tell the operator.
        log.error("order %s was failed as never sent, but the venue answers %s; the grace "
                  "(ORDER_NOT_FOUND_GRACE_SECONDS) is too short", order.order_hash, status)
    else:
        log.info("order %s is %s already; %s not written", order.order_hash,
                 state["status"], status)
    return state


def _trade_changes(order: Order, now: datetime) -> dict[str, Any]:
    """What the order's trade mirrors of its stored state (``now``: a first fill's time)."""
    trade_status = _trade_status(order.status, order.filled_size)
    changes: dict[str, Any] = {"status": trade_status, "filled_size": order.filled_size,
                               "filled_value": order.filled_value, "fee": order.fee}
    if trade_status == TRADE_FILLED:  # the first time it counts as filled
        changes["filled_at"] = IfNull(now)
    if order.filled_size > 0:  # matched: the venue settles it on chain from now on
        changes["settlement"] = IfNull(order_fills.FIRST_SETTLEMENT)
    if order.detected_at is not None and order.acknowledged_at is not None:
        elapsed = order.acknowledged_at - order.detected_at
        changes["latency_ms"] = max(0, int(elapsed.total_seconds() * 1000))
    return changes


def _placed(order: Order, trade_id: UUID) -> PlacedOrder:
    filled = order.filled_size
    if order.status in (ORDER_REJECTED, ORDER_FAILED):
        status = "rejected"
    elif order.status == ORDER_CANCELLED:
        status = "filled" if filled > 0 else "rejected"
    elif order.status == ORDER_MATCHED:
        status = "filled"
    else:
        status = "accepted"
    average = (order.filled_value / filled).quantize(Decimal("0.000001")) if filled else ZERO
    reason = order.error
    if status == "rejected" and not reason:
        reason = "The order was not filled."
    return PlacedOrder(order_id=order.order_hash, status=status, filled_size=filled,
                       average_price=average, reason=reason, trade_id=trade_id, order=order)


# ------------------------------------------------------------ reconciliation


def _venue_status(remote: OpenOrder) -> str:
    return remote.status.upper().removeprefix("ORDER_STATUS_")


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
            return _finish(order, ORDER_FAILED, error="The venue did not answer by the "
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
            return _finish(order, ORDER_FAILED, error="The order never reached the venue.")
        if order.status in ORDER_OPEN:  # it was there: gone without a trade
            return _finish(order, ORDER_CANCELLED, acknowledged=True)
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
        # The listing counts more than the trades we could read: resting (maker) fills
        # happen at the order's own price, and makers pay no fee.
        filled, fee = listed, totals.fee if totals.statuses else None
        value = order.filled_value + (listed - order.filled_size) * view.listed.price
    else:  # the answer counted more than the venue lists yet: keep it
        filled, value, fee = order.filled_size, order.filled_value, None
    if new_status == ORDER_CANCELLED and (status in (None, "MATCHED") and filled > 0):
        new_status = ORDER_MATCHED  # done with fills (a finished FOK/FAK, maybe unlisted)
    if order.status not in ORDER_OPEN:
        new_status = order.status  # settling a final order's fills: its status stays
    order = _finish(order, new_status, filled_size=filled, filled_value=value, fee=fee,
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
        venues.client().clob.cancel_order(acct.creds, order.order_hash)
        order = _apply_view(order, order_fills.look_up(venues.client(), acct.creds, order))
        if order.status not in ORDER_OPEN:
            return order
        return _finish(order, ORDER_CANCELLED, error="Still delayed at the deadline "
                       "(ORDER_RESOLVE_DEADLINE_SECONDS); cancelled.", deadline=True)
    return _finish(order, ORDER_FAILED, error="The venue did not know the order by the "
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
            _STORED_STATE, guard={"status": (order.status,)})
        if state is None:
            return  # another sweep booked it
        stored = _stored(order, state)
        update_rows(Trade, [(order.id, _trade_changes(stored, now))], key="order")
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


# ----------------------------------------------------- open orders, cancels


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
    acct = venue_accounts.account(user_id)
    result = venues.client().clob.cancel_order(acct.creds, order_id)
    _after_cancel(user_id, list(result.canceled) or [order_id], acct)
    return {"canceled": list(result.canceled), "not_canceled": dict(result.not_canceled)}


def cancel_all(user: User | UUID | str) -> dict[str, Any]:
    """Cancel every resting order of the user's wallet."""
    user_id = user_id_of(user)
    acct = venue_accounts.account(user_id)
    result = venues.client().clob.cancel_all(acct.creds)
    _after_cancel(user_id, list(result.canceled), acct)
    return {"canceled": list(result.canceled), "not_canceled": dict(result.not_canceled)}


def get_order(user: User | UUID | str, order_id: str) -> Order:
    """The user's order record by venue order id; NotFound otherwise."""
    order = Order.get_or_none(Order.user == user_id_of(user), Order.order_hash == order_id)
    if order is None:
        raise errors.NotFound("No such order for this account.")
    return order
