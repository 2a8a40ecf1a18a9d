"""Placing live orders (manual, copy and position sells alike): prepare, record, send, settle.

Every order reaches the venue through the same three steps, which ``place_order`` runs
one after the other for one order and the copy engine runs for a batch:

1. ``plan_and_sign`` plans the order from a book and market (services/trading/order_plan.py),
   checks it against a collateral figure when given one and signs it with the wallet's
   account: pure, no database, no network (the copy engine's path, fed with what its
   decision read). ``prepare_order`` reads the book, the market, the account and the
   balances first, checks the preview, and plans and signs the same way.
2. ``record_orders`` writes the durable ``Order`` records (status ``pending``, the signed
   body and its EIP-712 hash, which is the venue's order id) and their ``Trade`` rows in
   one transaction, consuming previews there. Only then is anything sent.
3. ``post`` sends it (never retried; venue steps, run by a blocking or an async client) and
   ``settle`` records the answer: the ``Order`` as stored (``settle_many``: a batch's
   answers in a few statements).

A crash or a timeout after step 2 leaves a ``pending`` record that
services/trading/order_reconcile.py looks up at the venue by its hash; nothing is ever
signed or sent twice for one record. Status changes are written through
services/trading/order_states.py (the status machine), in the stored vocabulary
(``models.trading``); the surfaces alone put it in the API's words
(``schemas.trading.placed_status``). Listing is in order_reads.py, cancelling in
order_cancels.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any
from uuid import UUID, uuid4

from redis.exceptions import RedisError

from chain.errors import ChainError
from models.base import atomic, utcnow
from models.bulk import insert_rows
from models.trading import (
    ORDER_CANCELLED,
    ORDER_DELAYED,
    ORDER_FAILED,
    ORDER_LIVE,
    ORDER_MATCHED,
    ORDER_PENDING,
    ORDER_REJECTED,
    TRADE_PENDING,
    Order,
    Trade,
)
from models.user import User
from models.wallet import TradingWallet
from services.markets import order_book
from services.platform import errors, order_versions, venues
from services.platform.principal import user_id_of
from services.trading import order_outages, order_plan, order_states, previews
from services.trading.execution_quality import order_execution_view
from services.trading.order_plan import MarketInfo, OrderPlan, OrderRequest
from services.trading.order_reconcile import RECONCILE_JOB, reconcile
from services.wallets import session_keys, trading_accounts, venue_accounts
from services.wallets.venue_accounts import VenueAccount
from venue.client import AsyncVenueClient, VenueClient
from venue.clob import ClobApi
from venue.errors import VenueError, VenueRejected, VenueRestricted
from venue.gamma import Returns
from venue.models import OrderBook, PostOrderResult, Side
from venue.relayer import Blocking, Steps
from venue.signing import SignedOrder

log = logging.getLogger(__name__)

SOURCES = ("manual", "copy", "sell")
ZERO = Decimal(0)


@dataclass(frozen=True)
class Origin:
    """Who an order is for: its source and, for a copy, its config and the target's trade
    (``detected_at``: when that trade was seen; the trade's latency runs from there)."""

    source: str = "manual"
    config_id: UUID | None = None
    target_trade_id: str | None = None
    detected_at: datetime | None = None


MANUAL = Origin()


@dataclass(frozen=True)
class PreparedOrder:
    """One order planned, checked and signed; nothing written or sent yet."""

    user_id: UUID
    acct: VenueAccount
    plan: OrderPlan
    signed: SignedOrder
    body: str              # the exact POST /order JSON (stored, then sent)
    origin: Origin = MANUAL
    preview: Any = None    # the OrderPreview consumed with the record (manual orders)
    started: float = 0.0   # monotonic clock when preparing began (the placement stage)

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
    # Never sent: the sender held the recorded order back itself (why, in words).
    withheld: str | None = None
    resent: PreparedOrder | None = None  # rebuilt for a new order version and sent instead
    sent: float | None = None  # monotonic clock when the request left
    ack_ms: int | None = None  # from sending to the venue's answer

    def timings(self, prepared: PreparedOrder) -> dict[str, int]:
        """The order's placement and acknowledgement stages (what was measured of them)."""
        found: dict[str, int] = {}
        if self.sent is not None and prepared.started:
            found["placement_ms"] = elapsed_ms(prepared.started, self.sent)
        if self.ack_ms is not None:
            found["ack_ms"] = self.ack_ms
        return found


def elapsed_ms(start: float, end: float | None = None) -> int:
    """Whole milliseconds between two monotonic clock readings (``end``: now)."""
    return max(0, int(((time.monotonic() if end is None else end) - start) * 1000))


# Sources whose caller is waiting for the answer: a mode refusal or lost answer is a 503.
ANSWERED_503 = frozenset({"manual", "sell"})


def place_order(user: User | UUID | str, *, token_id: Any, side: Any, size: Any,
                order_type: Any, price: Any = None, preview_id: Any = None,
                source: str = "manual", config_id: UUID | str | None = None,
                target_trade_id: str | None = None, detected_at: datetime | None = None,
                time_in_force: str | None = None, floor_size: bool = False,
                post_only: bool = False, amount: Any = None) -> Order:
    """Place one live order; manual orders need the matching unexpired ``preview_id``.

    A market buy may give ``amount`` (pUSD to spend, fee included) instead of ``size``.
    Copy trades pass ``source="copy"``, ``config_id``, ``target_trade_id`` and
    ``detected_at`` (when the target's trade was seen; the trade's ``latency_ms`` runs
    from there to the venue's acknowledgement) and may ask ``time_in_force="FAK"``.
    Raises ValidationFailed/BadRequest (400), NotFound (404), InsufficientBalance (402);
    a venue refusal is not an exception: the order as stored is ``rejected`` with the reason.
    Its Trade shares its id.
    """
    if source == "manual":
        earlier = _earlier_attempt(user, preview_id)
        if earlier is not None:
            return earlier
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    request = OrderRequest.checked(token_id, side, size, order_type, price, amount,
                                   time_in_force=time_in_force, floor_size=floor_size,
                                   post_only=post_only)
    origin = Origin(source, UUID(str(config_id)) if config_id else None, target_trade_id,
                    detected_at)
    prepared = prepare_order(user, request, origin, preview_id=preview_id)
    [order] = record_orders([prepared])
    answer = post(prepared)
    order = settle(order, prepared, answer)
    if source in ANSWERED_503:
        # Orders a person places the venue could not take answer 503 (order_outages),
        # never 200 ``rejected``: the client retries with the same Idempotency-Key.
        if isinstance(answer.lost, VenueRestricted):
            raise order_outages.restricted(order, answer.lost)
        if order.status == ORDER_PENDING:
            raise order_outages.unknown_outcome(order, answer.lost)
    return order


def _earlier_attempt(user: User | UUID | str, preview_id: Any) -> Order | None:
    """A retry of a manual order whose answer was lost: that order, once its outcome is known.

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
    return order


def prepare_order(user: User | UUID | str, request: OrderRequest, origin: Origin = MANUAL,
                  *, preview_id: Any = None) -> PreparedOrder:
    """Read, plan, check and sign one order (step 1); nothing is written or sent.

    Reads the book and the market's live parameters now (a manual order may come a while
    after its preview: planned again under them, refused only if it breaks them now), then
    checks the preview (manual orders), the account and its balances, and signs. The order's
    own rules are checked before anything about the user is read. Raises like ``place_order``.
    """
    started = time.monotonic()
    user_id = user_id_of(user)
    book, market = order_plan.read_market(request.token_id, fresh=True)
    plan = order_plan.plan_request(request, book, market)
    preview = None
    if origin.source == "manual":
        preview = previews.check(user_id, preview_id, request.token_id, request.side,
                                 request.size, request.order_type, request.price,
                                 post_only=request.post_only, amount=request.amount)
    acct = live_account(user_id)
    check_funds(acct, plan)
    return _prepared(user_id, acct, plan, origin, started, preview)


def plan_and_sign(user_id: UUID, acct: VenueAccount, request: OrderRequest, *,
                  book: OrderBook, market: MarketInfo, origin: Origin = MANUAL,
                  available: Decimal | None = None) -> PreparedOrder:
    """Plan the order on ``book`` under ``market`` and sign it with ``acct``: pure, no
    database and no network (the copy engine's path, fed with what its decision read).

    ``available`` (pUSD the wallet can spend, when known) refuses a buy it cannot pay
    (InsufficientBalance: ``explained`` tells a lapsed session key apart); None leaves
    that to the venue. Raises like ``place_order`` for the order's own rules.
    """
    started = time.monotonic()
    plan = order_plan.plan_request(request, book, market)
    if available is not None and plan.max_collateral > available:
        raise _short(plan.max_collateral, available)
    return _prepared(user_id, acct, plan, origin, started)


def live_account(user_id: UUID) -> VenueAccount:
    """The user's opened venue account, once it may trade live (AccountNotReady otherwise)."""
    trading_accounts.require_live(user_id)
    return venue_accounts.account(user_id)


def check_funds(acct: VenueAccount, plan: OrderPlan) -> None:
    """Read whether the wallet can pay for a buy (InsufficientBalance, 402, if not) and, before
    a sale, let the venue see shares that reached the wallet outside the CLOB."""
    _check_collateral(acct, plan)
    _see_shares(acct, plan)


def _prepared(user_id: UUID, acct: VenueAccount, plan: OrderPlan, origin: Origin,
              started: float, preview: Any = None) -> PreparedOrder:
    signed = _sign(acct, plan)
    return PreparedOrder(user_id=user_id, acct=acct, plan=plan, signed=signed,
                         body=_body(acct, plan, signed), origin=origin, preview=preview,
                         started=started)


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
            filled_size=ZERO, filled_value=ZERO, fee=ZERO, source=item.origin.source,
            config_id=item.origin.config_id, target_trade_id=item.origin.target_trade_id,
            detected_at=item.origin.detected_at,
            preview=item.preview.id if item.preview is not None else None,
            created_at=now, submitted_at=now, updated_at=now)
        orders.append(order)
        trades.append({
            "id": order.id, "user": item.user_id, "order": order.id,
            "token_id": plan.market.token_id, "market_slug": plan.market.market_slug,
            "side": side, "requested_size": plan.size, "price": plan.limit_price,
            "filled_size": ZERO, "filled_value": ZERO, "fee": ZERO,
            "status": TRADE_PENDING, "config_id": item.origin.config_id, "created_at": now})
    with atomic():
        for item in prepared:
            if item.preview is not None:
                previews.consume(item.preview)
        insert_rows(Order, [order.__data__ for order in orders])
        insert_rows(Trade, trades)
    return orders


def post(prepared: PreparedOrder, client: VenueClient | AsyncVenueClient | None = None
         ) -> Returns[PostAnswer]:
    """Send a recorded order (step 3); never raises for the venue. On a blocking client (the
    process's by default) the answer, on an async one (the worker's Trio loop, pooled
    connections) an awaitable of it: ``post_steps`` run by the client's driver."""
    venue = client or venues.client()
    return venue.run_steps(post_steps(prepared, venue.clob_calls))


def post_steps(prepared: PreparedOrder, clob: ClobApi) -> Steps[PostAnswer]:
    """The venue steps of sending a recorded order (``clob``: described calls).

    Retried once only when refused for a stale order version: rebuilt for the version the
    venue now announces, re-recorded, sent again (services/platform/order_versions.py).
    """
    answer = yield from _post_once(prepared, clob)
    if not order_versions.is_stale(answer.refused):
        return answer
    try:
        yield from order_versions.refresh_steps(clob)
        rebuilt = _rebuilt(prepared)
    except (VenueError, errors.CopytradeError) as exc:
        log.warning("order %s: no rebuild for the new version (%s)", prepared.order_hash, exc)
        return answer
    yield Blocking(partial(order_versions.restamp, prepared.order_hash, rebuilt.signed,
                           rebuilt.body))
    return replace((yield from _post_once(rebuilt, clob)), resent=rebuilt)


def _post_once(prepared: PreparedOrder, clob: ClobApi) -> Steps[PostAnswer]:
    sent = time.monotonic()
    try:
        # The body recorded with the order is the one sent (and signed): not encoded again.
        answer = PostAnswer(result=(yield clob.post_order(
            prepared.acct.creds, prepared.signed, body=prepared.body)))
    except VenueRejected as exc:
        answer = PostAnswer(refused=exc)
    except VenueError as exc:
        return PostAnswer(lost=exc, sent=sent)
    return replace(answer, sent=sent, ack_ms=elapsed_ms(sent))


def _rebuilt(prepared: PreparedOrder) -> PreparedOrder:
    """The same order signed again (for the order version now in force)."""
    signed = _sign(prepared.acct, prepared.plan)
    return replace(prepared, signed=signed, body=_body(prepared.acct, prepared.plan, signed))


def settle(order: Order, prepared: PreparedOrder, answer: PostAnswer) -> Order:
    """Record the venue's answer to a sent order, or reconcile a lost one; the order as stored.

    ``settle_many`` of one (a lost answer's lookup is blocking HTTP: call it outside any
    open transaction).
    """
    [settled] = settle_many([(order, prepared, answer)])
    return settled


def settle_many(sent: Sequence[tuple[Order, PreparedOrder, PostAnswer]]) -> list[Order]:
    """Record the venue's answers to sent orders; each order as stored, in the order given.

    The answers are written together (``order_states.finish_many``: a few statements for
    the batch, in one transaction, the caller's when open). A lost answer is looked up at
    the venue by the order's hash now (blocking HTTP: call it outside any open transaction),
    or queued for reconciliation when the venue is down. A withheld order (never sent) is
    cancelled and let go of its intent (``hand_back``), as is one refused for the venue's
    mode.
    """
    settled: list[Order | None] = [None] * len(sent)
    steps: list[tuple[int, order_states.Finish, bool]] = []
    for index, (order, prepared, answer) in enumerate(sent):
        if answer.resent is not None:  # rebuilt for a new order version: its record re-stamped
            order, prepared = Order.get_by_id(order.id), answer.resent
        step = _finishing(order, prepared, answer)
        if step is None:
            settled[index] = _looked_up(order, prepared, answer)
        else:
            steps.append((index, *step))
    stored = order_states.finish_many([step for _, step, _ in steps])
    for (index, _, hand_back), order in zip(steps, stored, strict=True):
        if hand_back:
            order_outages.hand_back(order)
        settled[index] = order
    return [order for order in settled if order is not None]


def _finishing(order: Order, prepared: PreparedOrder, answer: PostAnswer
               ) -> tuple[order_states.Finish, bool] | None:
    """The state an answer gives the order, and whether its intent is let go of
    (``hand_back``: it certainly never reached the venue); None for a lost answer."""
    timings = answer.timings(prepared)
    if answer.refused is not None:
        return order_states.Finish(order, ORDER_REJECTED, error=_refusal(
            answer.refused, prepared.acct.wallet), acknowledged=True, timings=timings), False
    if answer.withheld is not None:
        # Certainly not at the venue: withdrawn (cancelled: nothing failed that the user
        # should hear of), and its intent let go to be placed anew.
        return order_states.Finish(order, ORDER_CANCELLED, error=answer.withheld), True
    if isinstance(answer.lost, VenueRestricted):
        # Refused for the venue's mode (restart, post-only, ...): certainly not placed.
        return order_states.Finish(order, ORDER_REJECTED, acknowledged=True,
                                   error=order_outages.describe(answer.lost)), True
    if answer.lost is not None or answer.result is None:
        return None
    return _post_result(order, answer.result, prepared.plan, timings), False


def _looked_up(order: Order, prepared: PreparedOrder, answer: PostAnswer) -> Order:
    """A lost answer's order, looked up at the venue by its hash (the order may or may not
    have arrived), or queued for that when the venue is down."""
    log.warning("order %s: POST failed (%s); reconciling", order.order_hash, answer.lost)
    try:
        return reconcile(order.id, acct=prepared.acct)
    except VenueError:
        log.warning("order %s left pending; queueing its reconciliation", order.order_hash)
        _queue_reconcile(order)
        return Order.get_by_id(order.id)


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


def _check_collateral(acct: VenueAccount, plan: OrderPlan) -> None:
    if plan.side is not Side.BUY:
        return
    need = plan.max_collateral
    have = venue_accounts.collateral_balance(acct)
    if have < need:
        # The CLOB caches balances: a recent deposit shows only after an update (py-sdk
        # refreshes once on `not enough balance / allowance`, then retries).
        venue_accounts.refresh_balance(acct)
        have = venue_accounts.collateral_balance(acct)
    if have < need:
        raise explained(acct, _short(need, have))


def _short(need: Decimal, have: Decimal) -> errors.InsufficientBalance:
    return errors.InsufficientBalance(
        f"Insufficient balance: this order needs up to {order_plan._plain(need)} pUSD "
        f"(fees included); the wallet holds {order_plan._plain(have)} pUSD.")


def explained(acct: VenueAccount, short: errors.InsufficientBalance) -> errors.CopytradeError:
    """Why a wallet cannot pay: its session key lapsed (the venue stops crediting a lapsed
    key's wallet; asked on chain, only once short), else ``short`` itself."""
    lapsed = _session_key_lapsed(acct.wallet) if acct.wallet.session_signer else None
    if lapsed:
        return errors.AccountNotReady(lapsed, blockers=[
            {"code": "session_key_not_authorized", "message": lapsed}])
    return short


def _see_shares(acct: VenueAccount, plan: OrderPlan) -> None:
    """Before a sale: shares that reached the wallet outside the CLOB (a split, a transfer)
    are refused by the venue until its cache re-reads them, so when the cache shows fewer
    than the sale, refresh it once (py-sdk's recovery), asking with the token's asset type
    (``CONDITIONAL-V2`` for a protocol-v2 position). The venue still decides."""
    if plan.side is not Side.SELL:
        return
    token = plan.market.token_id
    try:
        if venue_accounts.outcome_balance(acct, token) < plan.size:
            venue_accounts.refresh_balance(acct, token)
    except VenueError as exc:  # the venue answers the order itself
        log.warning("the CLOB's cached balance of token %s: %s", token, exc)


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


def _post_result(order: Order, result: PostOrderResult, plan: OrderPlan,
                 timings: dict[str, int]) -> order_states.Finish:
    """The state the venue's result gives the order (its fills' taker fee walked)."""
    if not result.success:
        return order_states.Finish(order, ORDER_REJECTED, error=result.error_msg or "refused",
                                   acknowledged=True, timings=timings)
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
        # The stage it waits out: the market's taker delay (services/markets/parameters.py).
        timings = {**timings, "taker_delay_ms": int(plan.market.taker_delay * 1000)}
    elif result.status in ("live", "unmatched") and order.time_in_force == "GTC":
        status = ORDER_LIVE
    elif shares > 0:
        status = ORDER_MATCHED
    else:
        status = ORDER_CANCELLED
    return order_states.Finish(order, status, filled_size=shares, filled_value=value, fee=fee,
                               acknowledged=True, timings=timings)


NOT_FILLED = "The order was not filled."  # the reason of an order that ended without a fill


def placed_view(order: Order) -> dict[str, Any]:
    """What placing ``order`` answers as its record stands now (PlaceOrderResponse's fields,
    the status as stored: the surface's schema words it). Its Trade shares its id."""
    filled = order.filled_size
    average = (order.filled_value / filled).quantize(Decimal("0.000001")) if filled else ZERO
    return {"order_id": order.order_hash, "status": order.status, "filled_size": filled,
            "average_price": average, "reason": reason_of(order), "trade_id": order.id,
            "execution": order_execution_view(order)}


def reason_of(order: Order) -> str | None:
    """Why the order ended without shares (its error, else NOT_FILLED); None otherwise."""
    if order.error:
        return order.error
    ended_empty = order.status == ORDER_CANCELLED and not order.filled_size
    return NOT_FILLED if ended_empty or order.status in (ORDER_REJECTED, ORDER_FAILED) else None
