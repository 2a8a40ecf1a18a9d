"""``FillExecutor``: what a target's fill (or a TP/SL check) becomes, and its copies placed.

For each config of the target, the fill is decided (``services.copying.mirror``) into a
``CopyIntentDraft`` (copy, or skip with the reason); the fill's drafts then go to
``services.copying.execution.execute`` in one call, which records them and places the live
copies as one batch through this executor's sender, and answers with the positions that
moved (kept in the configs' snapshots). Take-profit and stop-loss checks sell a whole
position once per opening, the same way.

While a fill is being copied, Python's garbage collection waits (``copying_now``), and so
do the targets' backstop polls (``quiet``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import trio

from models.base import utcnow
from models.copying import (
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_PENDING,
    INTENT_SKIPPED,
    KIND_MARKET_END,
    KIND_MIRROR,
    KIND_OPEN_POSITION,
)
from services.copying import execution as copy_execution
from services.copying import fences, reservations
from services.copying import intents as copy_intents
from services.copying import mirror as copying
from services.copying.execution import Quote
from services.copying.intents import CopyIntentDraft
from services.copying.mirror import Holding, TargetFill
from services.platform.numbers import plural
from services.trading import order_outages, orders
from services.trading.orders import PostAnswer, PreparedOrder, elapsed_ms
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueRestricted
from venue.models import ActivityItem, Position, Side
from venue.restrictions import restart_backoff
from worker.copy_engine import store
from worker.copy_engine.copier_wallets import CopierWallets
from worker.copy_engine.detection import Detection
from worker.copy_engine.ownership import SendLease
from worker.copy_engine.quotes import QuoteSource
from worker.copy_engine.settings import EngineSettings, EngineStats
from worker.copy_engine.store import ConfigSnapshot

log = logging.getLogger("copytrade.copy_engine")

STALE_FILL = "stale_fill"
TARGET_VALUE_TTL = 60.0  # seconds a target's portfolio value is reused (proportional sizing)
# A bid-less token's market is read from Gamma afresh (to see a resolution before the
# metadata cache expires) at most this often; the cached one serves in between.
RESOLUTION_READ_SECONDS = 10.0
# Intents that copy a target's fill (or its positions at a start): the breaker holds them.
COPY_KINDS = frozenset({KIND_MIRROR, KIND_OPEN_POSITION})
# Why a recorded copy's order was held back (the order's error, as people read it).
LEASE_LAPSED = ("Not sent: the worker could not renew its lease on the target in time; the "
                "copy is placed again by the worker running it next.")


def trade_key(item: ActivityItem) -> str:
    """The stored identity of a target fill (tx hash, asset, side, wallet)."""
    return "|".join(item.dedup_key)


class FillExecutor:
    """Decides target fills for their configs and executes the copies (owns the exit checks)."""

    def __init__(self, name: str, settings: EngineSettings, stats: EngineStats,
                 quotes: QuoteSource, wallets: CopierWallets,
                 db: Callable[..., Any], *, lease: SendLease | None = None,
                 spawn: Callable[..., Any] | None = None) -> None:
        self.name = name
        self.settings = settings
        self.stats = stats
        self.quotes = quotes
        self.wallets = wallets
        self.venue: AsyncVenueClient | None = None
        self.place_limiter = trio.CapacityLimiter(64)
        self._db = db
        self._catalogued: set[str] = set()  # tokens whose market the catalogue holds
        self._target_values: dict[str, tuple[float, Decimal]] = {}
        self._market_reads: dict[str, float] = {}  # token -> last fresh Gamma read (monotonic)
        # (config, start) whose target positions were copied at start (copy_open_positions)
        self._started: set[tuple[UUID, int]] = set()
        # Fills being copied right now (seen -> answers in): backstop polls wait for none.
        self.copying = 0
        self.quiet = trio.Event()
        self.quiet.set()
        self._gc_held_since: float | None = None
        # Starts background tasks (copies waiting for the venue to reopen): the engine's.
        self.spawn = spawn
        # The engine's lease fencing: the token a target's intents are written under, and
        # whether its lease clock still allows sending (outside an engine: no fencing).
        self.lease = lease or SendLease()

    def fence_of(self, target: str) -> int | None:
        """The fencing token ``target``'s intents are written under (None: unfenced)."""
        return self.lease.token(target)

    def may_send(self) -> bool:
        """Whether the lease clock still allows sending."""
        return self.lease.may_send()

    @contextlib.contextmanager
    def copying_now(self) -> Iterator[None]:
        """Mark a fill's copy in progress: backstop polls and garbage collection wait.

        A collection pass of a heap holding thousands of configs takes milliseconds to tens
        of milliseconds; during a copy that is latency. It is put off until no copy is in
        flight; under a stream of overlapping copies, until one ends ``gc_hold_seconds``
        or more after the hold began.
        """
        if self.copying == 0:
            self.quiet = trio.Event()
            if gc.isenabled() and self.settings.gc_hold_seconds > 0:
                gc.disable()
                self._gc_held_since = time.monotonic()
        self.copying += 1
        try:
            yield
        finally:
            self.copying -= 1
            if self.copying == 0:
                self.quiet.set()
            if self._gc_held_since is not None and (
                    self.copying == 0 or time.monotonic() - self._gc_held_since
                    > self.settings.gc_hold_seconds):
                self._gc_held_since = None
                gc.enable()

    # -- deciding ------------------------------------------------------------------------

    async def handle_fill(self, target: str, configs: dict[UUID, ConfigSnapshot],
                          item: ActivityItem, seen: Detection) -> list[CopyIntentDraft]:
        """Decide for every config of the target, record the intents, place the copies."""
        snapshots = list(configs.values())
        if not snapshots:
            return []
        with self.copying_now():
            return await self._handle_fill(target, configs, snapshots, item, seen)

    async def _handle_fill(self, target: str, configs: dict[UUID, ConfigSnapshot],
                           snapshots: list[ConfigSnapshot], item: ActivityItem,
                           seen: Detection) -> list[CopyIntentDraft]:
        seen_at = seen.at
        try:
            side: Side | str = Side.parse(item.side)
        except ValueError:
            side = item.side  # not a trade's side: every config skips it as not a trade
        fill = TargetFill(
            key=trade_key(item), wallet=item.wallet, token_id=item.asset, side=side,
            size=item.size, price=item.price, timestamp=item.timestamp,
            condition_id=item.condition_id, outcome=item.outcome,
            outcome_index=item.outcome_index, market_slug=item.slug,
            tx_hash=item.transaction_hash)
        age = seen_at.timestamp() - item.timestamp
        quote = await self.quotes.quote(item.asset)
        other = await self._other_quote(quote) if any(
            c.rules.direction == "inverse" for c in snapshots) else None
        target_after = None
        if fill.side is Side.SELL and any(
                c.holdings.get(self._token_for(c, fill, other), Holding()).shares > 0
                for c in snapshots):
            assert self.venue is not None
            positions = await self.venue.data.positions(target, market=item.condition_id)
            target_after = sum((p.size for p in positions if p.asset == fill.token_id),
                               Decimal(0))
        contexts = await self.contexts(target, snapshots)
        drafts = []
        taken: dict[UUID, Decimal] = {}  # pUSD each user's buys of this fill will spend
        for config in snapshots:
            if config.started_ts and item.timestamp < config.started_ts - (
                    0 if config.rules.start_mode == "copy_open_positions" else 2):
                # The fill predates this config's start: not its business (copied with the
                # target's open positions, for copy_open_positions, so no grace for skew).
                continue
            if age > self.settings.max_fill_age_seconds:
                decision = copying.Decision(
                    action="skip", token_id=fill.token_id, side=fill.side, reason=STALE_FILL,
                    detail=f"Seen {int(age)} s after the target traded; too late to copy.")
                drafts.append(self.draft(config, fill, decision, seen_at, KIND_MIRROR,
                                         fill.key))
                continue
            context = contexts[config.id]
            if context.user_exposure_usdc is not None:
                # The user's other configs copying this fill took some of the limit already.
                context = dataclasses.replace(context, user_exposure_usdc=(
                    context.user_exposure_usdc + taken.get(config.user_id, Decimal(0))))
            draft = self.decide(config, fill, quote, other, context, seen_at, KIND_MIRROR,
                                target_after=target_after)
            if draft.side is Side.BUY and draft.usdc:
                taken[config.user_id] = taken.get(config.user_id, Decimal(0)) + draft.usdc
            drafts.append(draft)
        decided = time.monotonic()  # the decision stage ends: quotes read, rules applied
        for draft in drafts:
            draft.detection_source, draft.decided_clock = seen.source, decided
            draft.decision_ms = elapsed_ms(seen.clock, decided)
        return await self.execute_by_token(configs, drafts, [quote, other])

    @staticmethod
    def _token_for(config: ConfigSnapshot, fill: TargetFill, other: Quote | None) -> str:
        """The token a config trades for the fill (the other outcome's when inverse)."""
        if config.rules.direction == "inverse" and other is not None:
            return other.info.token_id
        return fill.token_id

    async def _other_quote(self, quote: Quote) -> Quote | None:
        """The quote of the market's other outcome (inverse copies), None when there is none."""
        others = [t for t in quote.market.token_ids if t != quote.info.token_id]
        if len(others) != 1:
            return None
        try:
            return await self.quotes.quote(others[0])
        except VenueError as exc:
            log.info("no quote for the other outcome %s: %s", others[0], exc)
            return None

    def decide(self, config: ConfigSnapshot, fill: TargetFill, quote: Quote,
               other: Quote | None, context: copying.CopyContext, seen_at: datetime,
               kind: str, *, target_after: Decimal | None = None,
               key: str | None = None) -> CopyIntentDraft:
        """One config's draft for a target fill (mirrored, or inverted onto the other
        outcome), decided by ``services.copying.mirror``."""
        own, view = fill, quote.view
        if config.rules.direction == "inverse":
            if other is None:
                decision = copying.Decision(
                    action="skip", token_id=fill.token_id, side=fill.side,
                    reason=copying.NO_LIQUIDITY,
                    detail="Inverse copy: the market has no other outcome to trade.")
                return self.draft(config, fill, decision, seen_at, kind, key or fill.key)
            own, view = copying.inverse_fill(fill, other.info.token_id), other.view
        market = fill.condition_id or own.token_id
        context = dataclasses.replace(
            context, entries=config.entries.get(own.token_id, 0),
            open_positions=config.open_positions, last_copy_at=config.last_copy.get(market))
        # The position before the sale: what the target holds after it plus what it sold.
        before = target_after + fill.size if target_after is not None else None
        decision = copying.decide(
            config.rules, own, view, config.holdings.get(own.token_id, Holding()),
            target_position_after=target_after, target_position_before=before,
            context=context)
        if decision.copies:
            # Counted as decided, in flight too: the next fill of a scaling-in target sees
            # this buy before it settles (a failed one leaves the count one high: fewer
            # copies, never more).
            config.copied(own.token_id, market, decision.side, int(seen_at.timestamp()))
        draft = self.draft(config, fill, decision, seen_at, kind, key or fill.key)
        if own is not fill:
            draft.outcome, draft.outcome_index = "", own.outcome_index
        return draft

    async def contexts(self, target: str, snapshots: Iterable[ConfigSnapshot]
                       ) -> dict[UUID, copying.CopyContext]:
        """What each config's rules read besides the fill: the time, budgets spent, the
        user's exposure, balances and the target's value (only for the rules set)."""
        now = time.time()
        today = datetime.fromtimestamp(now, UTC).date()
        snaps = list(snapshots)
        exposure: dict[bool, dict[UUID, Decimal]] = {}
        for paper in (False, True):
            users = {c.user_id for c in snaps
                     if c.paper == paper and c.rules.max_total_exposure_usdc is not None}
            if users:
                # Held and in flight (other targets' copies not settled yet): the decision
                # is made on it; the intent write reserves against it for certain.
                exposure[paper] = await self._db(reservations.exposure, users, paper)
        target_value = None
        if any(c.rules.sizing_mode == "proportional" for c in snaps):
            target_value = await self._target_value(target)
        contexts = {}
        for config in snaps:
            balance = None
            if config.rules.sizing_mode == "proportional":
                slot = self.wallets.accounts.get(config.user_id)
                balance = slot.available if slot is not None and not config.paper else None
                if config.paper and config.rules.total_budget_usdc is not None:
                    # The paper book has no balance: the budget left stands for it.
                    balance = config.rules.total_budget_usdc - config.spent_total
            contexts[config.id] = copying.CopyContext(
                now=int(now), spent_today_usdc=config.spent_on(today),
                spent_total_usdc=config.spent_total,
                user_exposure_usdc=exposure.get(config.paper, {}).get(config.user_id),
                balance_usdc=balance, target_value_usdc=target_value,
                breaker_retry_at=config.retry_ts, buys_paused=config.buys_paused)
        return contexts

    async def _target_value(self, target: str) -> Decimal | None:
        """The target's portfolio value (its positions' current value), cached a minute."""
        cached = self._target_values.get(target)
        if cached is not None and time.monotonic() - cached[0] < TARGET_VALUE_TTL:
            return cached[1]
        assert self.venue is not None
        try:
            positions = await self.venue.data.positions(target, limit=500)
        except VenueError as exc:
            log.info("target %s: no portfolio value (%s)", target, exc)
            return None
        value = sum((p.current_value for p in positions), Decimal(0))
        self._target_values[target] = (time.monotonic(), value)
        return value

    async def execute_by_token(self, configs: dict[UUID, ConfigSnapshot],
                               drafts: list[CopyIntentDraft], quotes: Iterable[Quote | None]
                               ) -> list[CopyIntentDraft]:
        """Execute drafts grouped by the quote of their token (one batch per token)."""
        recorded: list[CopyIntentDraft] = []
        for quote in quotes:
            if quote is None:
                continue
            batch = [d for d in drafts if d.token_id == quote.info.token_id]
            drafts = [d for d in drafts if d.token_id != quote.info.token_id]
            if batch:
                recorded += await self.execute(configs, batch, quote)
        if drafts:  # skips about a token with no quote of its own (an inverse copy's)
            await self._db(copy_intents.insert, drafts)
            recorded += drafts
        return recorded

    def draft(self, config: ConfigSnapshot, fill: TargetFill | None,
              decision: copying.Decision, seen_at: datetime, kind: str, key: str
              ) -> CopyIntentDraft:
        """The intent one decision writes (``fill`` is None for an exit)."""
        copies = decision.copies
        draft = CopyIntentDraft(
            id=uuid.uuid4(), config_id=config.id, user_id=config.user_id,
            target_trade_key=key, target_address=config.target, token_id=decision.token_id,
            status=INTENT_PENDING if copies else INTENT_SKIPPED, seen_at=seen_at, kind=kind,
            paper=config.paper, side=Side.parse(decision.side) if copies else None,
            size=decision.size if copies else None, price=decision.price,
            usdc=decision.usdc if copies else None, reason=decision.reason,
            detail=decision.detail, worker=self.name, created_at=seen_at,
            fence=self.fence_of(config.target),
            guarded=copies and decision.side == Side.BUY and (
                config.rules.max_total_exposure_usdc is not None
                or config.rules.needs_spending))
        if fill is not None:
            draft.target_side, draft.target_size = fill.side, fill.size
            draft.target_price, draft.target_timestamp = fill.price, fill.timestamp
            draft.target_tx_hash, draft.condition_id = fill.tx_hash, fill.condition_id
            draft.outcome, draft.outcome_index = fill.outcome, fill.outcome_index
            draft.market_slug = fill.market_slug
            draft.detection_delay_ms = max(0, int((seen_at.timestamp() - fill.timestamp)
                                                  * 1000))
        return draft

    # -- executing ----------------------------------------------------------------------

    async def execute(self, configs: dict[UUID, ConfigSnapshot],
                      drafts: list[CopyIntentDraft], quote: Quote, *, insert: bool = True,
                      attempt: int = 0) -> list[CopyIntentDraft]:
        """Record intents (``insert``) and place their copies; the drafts recorded.

        The drafts are decisions for ``configs``. One call to ``copy_execution.execute``;
        the positions it moved go into the configs' snapshots and the outcomes into their
        failure breakers. Without ``insert`` the drafts are stored intents placed again
        (after a restart, or the venue's ``attempt``-th refusal for its mode); copies the
        venue refused for its mode are retried in the background (``retry_when_open``).
        """
        token = quote.info.token_id
        if not self.may_send():
            # The lease clock ran out (renewals failed): another engine may own the target
            # by now; the fill is its to copy (raised: the target's cursor stays before it).
            raise fences.LeaseLapsed("the lease clock ran out")
        if not insert:  # decided earlier: the breaker may have opened since
            drafts = await self._past_breaker(configs, drafts)
            if not drafts:
                return []
        now = time.monotonic()
        for draft in drafts:  # exits and re-placed intents: placing is measured from here
            if draft.decided_clock is None:
                draft.decided_clock = now
        done = await copy_execution.execute(
            drafts, quote,
            accounts=self.wallets.accounts, send=self.send, run_db=self._db,
            recheck=self.wallets.recheck, insert=insert,
            catalogue_market=token not in self._catalogued, may_send=self.may_send)
        if done.catalogued:
            self._catalogued.add(token)  # its market is in the catalogue now
        self._apply(configs, done.moves)
        await self._breaker(configs, done)
        for draft, refusal in done.waiting:
            config = configs.get(draft.config_id)
            if config is not None:
                self._later(self.retry_when_open, config, draft, refusal, attempt + 1)
        self.stats.intents += len(done.recorded) if insert else 0
        self.stats.orders += done.orders
        return done.recorded

    async def _past_breaker(self, configs: dict[UUID, ConfigSnapshot],
                            drafts: list[CopyIntentDraft]) -> list[CopyIntentDraft]:
        """The stored copies of fills that may still go out: one whose config's failure
        breaker opened after it was decided is skipped (``breaker_open``), as the decision
        would skip it now. Exits pass: the breaker never holds them back."""
        now = int(time.time())
        going = []
        for draft in drafts:
            config = configs.get(draft.config_id)
            if draft.kind in COPY_KINDS and config is not None \
                    and copying.breaker_holds(config.retry_ts, now):
                await self._db(copy_intents.settle, draft.id, {
                    "status": INTENT_SKIPPED, "reason": copying.BREAKER_OPEN,
                    "detail": copying.REASONS[copying.BREAKER_OPEN], "settled_at": utcnow()},
                    worker=draft.worker)
            else:
                going.append(draft)
        return going

    @staticmethod
    def _apply(configs: dict[UUID, ConfigSnapshot],
               moves: Iterable[copy_execution.PositionMove]) -> None:
        today = datetime.now(UTC).date()
        for move in moves:
            config = configs.get(move.config_id)
            if config is not None:
                config.holdings[move.token_id] = move.holding
                config.opened[move.token_id] = move.opened
                if move.holding.shares <= 0:
                    config.entries.pop(move.token_id, None)  # flat: the next buy opens it
                if move.side is not None:
                    config.spend(move.side, move.paid, today)

    async def _breaker(self, configs: dict[UUID, ConfigSnapshot],
                       done: copy_execution.Executed) -> None:
        """Count copies that failed in a row (out of funds too) and trip or close the
        config's breaker (``mirror.breaker_after``); written through when it moves."""
        outcomes = {draft.id: changes for draft, changes in done.outcomes}
        for draft in done.recorded:
            if draft.id not in outcomes and draft.status in (INTENT_FAILED, INTENT_SKIPPED):
                outcomes[draft.id] = {"status": draft.status, "reason": draft.reason,
                                      "detail": draft.detail}
        by_id = {draft.id: draft for draft in done.recorded}
        by_id.update({draft.id: draft for draft, _ in done.outcomes})
        for intent_id, changes in outcomes.items():
            draft = by_id[intent_id]
            config = configs.get(draft.config_id)
            status, reason = changes.get("status"), changes.get("reason")
            failed = status == INTENT_FAILED or reason == copying.INSUFFICIENT_BALANCE
            if config is None or not (failed or status == INTENT_FILLED):
                continue
            if not failed and config.failures == 0 and config.trips == 0:
                continue  # closed and staying closed: nothing to write
            failures, trips, pause = copying.breaker_after(
                config.failures, config.trips, config.rules.max_consecutive_failures,
                failed=failed)
            config.failures, config.trips = failures, trips
            if pause is not None:
                config.retry_ts = int(time.time()) + pause
            elif not failed:
                config.retry_ts = None
            retry_at = (datetime.fromtimestamp(config.retry_ts, UTC)
                        if config.retry_ts is not None else None)
            await self._db(store.write_breaker, config.id, failures, trips, retry_at,
                           reason if failed else None,
                           changes.get("detail") if failed else None,
                           tripped=pause is not None)

    async def send(self, prepared: PreparedOrder) -> tuple[datetime, PostAnswer]:
        """Send one recorded order on the engine's client; when it left and the answer."""
        assert self.venue is not None
        if not self.may_send():
            # Recorded, but the lease may have expired since: not sent. Certainly not at the
            # venue, so the copy is handed back to be placed by the target's next owner.
            log.error("engine %s: lease clock ran out; order %s not sent", self.name,
                      prepared.order_hash)
            return utcnow(), PostAnswer(withheld=LEASE_LAPSED)
        limiter = self.place_limiter
        try:
            # A free slot is taken without a checkpoint: the fill's orders are written in the
            # loop's first pass over them, not after a round trip through the scheduler each.
            limiter.acquire_nowait()
        except trio.WouldBlock:
            await limiter.acquire()
        try:
            sent_at = utcnow()
            answer = await orders.post(prepared, self.venue)
        finally:
            limiter.release()
        refused = answer.refused
        if refused is not None and refused.status in (401, 403):
            self.wallets.accounts.drop(prepared.user_id)  # refused: re-open them next time
        return sent_at, answer

    def _later(self, task: Callable[..., Any], *args: Any) -> None:
        """Run ``task`` beside the fills (the engine's nursery), not in this target's queue."""
        if self.spawn is None:
            raise RuntimeError("the fill executor runs outside an engine")
        self.spawn(task, *args)

    async def retry_when_open(self, config: ConfigSnapshot, draft: CopyIntentDraft,
                              refusal: VenueRestricted, attempt: int = 1) -> None:
        """Place a copy the venue refused for its mode again, while its fill is young enough.

        Waits the venue's Retry-After (else 1-2 s doubling, capped at 30 s: ACCOUNTS.md
        §7.4) before the ``attempt``; once it would come after the fill's age limit, the
        intent is skipped with the mode's reason (``venue_restarting``, ...). The attempt
        goes through ``execute`` like any copy: balances rechecked the same way, its
        outcome counted by the failure breaker, a refusal again retried from there.
        """
        seen = draft.target_timestamp or draft.seen_at.timestamp()
        deadline = seen + self.settings.max_fill_age_seconds
        while True:
            delay = restart_backoff(attempt, refusal.retry_after)
            if time.time() + delay > deadline:
                await self._db(copy_intents.settle, draft.id, {
                    "status": INTENT_SKIPPED, "reason": order_outages.reason_for(refusal),
                    "detail": f"{order_outages.describe(refusal)} The venue did not reopen "
                              "within the fill's age limit.",
                    "settled_at": utcnow()}, worker=draft.worker)
                return
            await trio.sleep(delay)
            try:
                quote = await self.quotes.quote(draft.token_id)
            except VenueError as exc:
                log.info("copy intent %s: no quote yet (%s); waiting", draft.id, exc)
                attempt += 1
                continue
            break
        draft.fence = self.fence_of(config.target)
        # The lease clock ran out: the next owner reconciles the intent.
        with contextlib.suppress(fences.LeaseLapsed):
            await self.execute({config.id: config}, [draft], quote, insert=False,
                               attempt=attempt)

    async def place_intent(self, config: ConfigSnapshot, draft: CopyIntentDraft) -> None:
        """Place one stored intent's order (live ones as a batch of one; paper the plain way)."""
        draft.fence = self.fence_of(config.target)  # re-placed under this engine's token
        if not config.paper and not draft.paper:
            quote = await self.quotes.quote(draft.token_id)
            await self.execute({config.id: config}, [draft], quote, insert=False)
            return
        if not self.may_send():
            return
        async with self.place_limiter:
            move, _ = await self._db(copy_execution.place_and_settle, draft,
                                     paper=config.paper)
        self.stats.orders += 1
        self._apply({config.id: config}, [move] if move is not None else [])

    # -- take-profit / stop-loss ------------------------------------------------------------

    def opening_due(self, config: ConfigSnapshot) -> bool:
        """Whether the config still has the target's open positions to copy at its start."""
        return (config.rules.start_mode == "copy_open_positions"
                and (config.id, config.started_ts) not in self._started)

    async def check_exits(self, configs: dict[UUID, ConfigSnapshot],
                          tokens: frozenset[str] | None = None) -> list[CopyIntentDraft]:
        """A target's exit work, asked for by the engine's exit schedule: sell positions
        whose take-profit, stop-loss or market end (``exit_hours_before_end``) has come
        (one intent per opening) and stop configs whose loss or drawdown stop is hit, for
        the positions in ``tokens`` (their price moved or their clock came due); with
        ``tokens`` None, every position of the target's configs, and the target's open
        positions copied at a config's start (``copy_open_positions``)."""
        inserted: list[CopyIntentDraft] = []
        if tokens is None:
            due = [config for config in configs.values() if self.opening_due(config)]
            if due:
                inserted += await self.copy_open_positions(configs, due)
        self.stats.exit_visits += len(configs)
        quotes: dict[str, Quote] = {}

        async def quote(token: str) -> Quote | None:
            if token not in quotes:
                try:
                    quotes[token] = await self.quotes.quote(token)
                except VenueError:
                    return None
            return quotes[token]

        drafts = []
        now = datetime.now(UTC)
        for config in configs.values():
            rules = config.rules
            if not (rules.take_profit_bps or rules.stop_loss_bps
                    or rules.exit_hours_before_end is not None):
                continue
            for token, holding in config.holdings.items():
                if holding.shares <= 0 or (tokens is not None and token not in tokens) \
                        or (found := await quote(token)) is None:
                    continue
                decision = copying.decide_exit(rules, token, holding, found.view)
                kind = copying.exit_signal(rules, holding, found.view.best_bid) or "exit"
                if (decision is None or not decision.copies) and copying.exit_before_end(
                        rules, found.view, int(now.timestamp())):
                    kind = KIND_MARKET_END
                    decision = copying.closing_sell(rules, token, holding, found.view,
                                                    KIND_MARKET_END)
                if decision is None or not decision.copies:
                    continue
                key = f"{kind}:{token}:{config.opened.get(token, 0)}"
                drafts.append(self.draft(config, None, decision, now, kind, key))
        for token in dict.fromkeys(draft.token_id for draft in drafts):
            inserted += await self.execute(
                configs, [draft for draft in drafts if draft.token_id == token], quotes[token])
        stopping = [c for c in configs.values() if c.rules.needs_stop_check and (
            tokens is None or any(config_holds(c, t) for t in tokens))]
        if stopping:
            # One read of the realized PnL for all of them (after the sales above), not one
            # per config: a book move asks this of every holder of the token.
            realized = await self._db(store.realized_pnls, {c.id: c.paper for c in stopping})
            for config in stopping:
                inserted += await self.check_stop(configs, config, quote, realized[config.id])
        return inserted

    async def check_stop(self, configs: dict[UUID, ConfigSnapshot], config: ConfigSnapshot,
                         quote: Callable[[str], Awaitable[Quote | None]],
                         realized: Decimal) -> list[CopyIntentDraft]:
        """Stop the config when its loss or drawdown stop is hit (PnL: realized plus the
        positions marked at the best bid), closing its positions when asked.

        ``realized`` is the config's realized PnL as read before the check. A resolved
        market's positions close at their payout first (realized once, and read again); a
        position without a bid is marked at its last bid if recent enough (``mark``). A
        position it cannot mark leaves no verdict: after ``stop_no_verdict_seconds`` of
        that the config's buying is paused (``stop_unverified``) until it has one again.
        """
        held = {t: h for t, h in config.holdings.items() if h.shares > 0}
        unrealized = Decimal(0)
        views: dict[str, Quote] = {}
        payouts: dict[str, Decimal] = {}
        unmarked: list[str] = []
        provisional = False
        for token, holding in held.items():
            found = await quote(token)
            if found is not None:
                views[token] = found
            how, price = await self.mark(token, found)
            if how == "payout":
                payouts[token] = price
            elif how is None:
                unmarked.append(token)
            else:
                provisional = provisional or how == "last"
                unrealized += holding.shares * price - holding.cost_usdc
        if payouts:
            await self._db(store.close_resolved, config.id, config.paper, payouts)
            for token in payouts:
                config.holdings[token] = Holding()
                held.pop(token)
            realized = (await self._db(store.realized_pnls, {config.id: config.paper})
                        )[config.id]
        config.stop_unsettled = provisional or bool(unmarked)
        if unmarked:
            await self._no_verdict(config, unmarked)
            return []
        config.unvalued_since = None
        if config.buys_paused == copying.STOP_UNVERIFIED:
            await self._db(store.resume_buys, config.id)
            config.buys_paused = None
        total = realized + unrealized
        if total > config.peak_pnl:
            config.peak_pnl = total
            await self._db(store.write_peak, config.id, total)
        signal = copying.stop_signal(config.rules, total, config.peak_pnl,
                                     sum((h.cost_usdc for h in held.values()), Decimal(0)))
        if signal is None:
            return []
        reason, why = signal
        now = datetime.now(UTC)
        closing = []
        if config.rules.close_positions_on_stop:
            for token, holding in held.items():
                if token in views:
                    decision = copying.closing_sell(config.rules, token, holding,
                                                    views[token].view, reason)
                else:  # no quote to sell by: the position stays held, and its decision says so
                    decision = copying.Decision(
                        action="skip", token_id=token, side=Side.SELL,
                        reason=copying.NO_LIQUIDITY,
                        detail=f"{copying.signal_words(reason)}: no quote of its market to "
                               "sell by (the venue did "
                               "not answer); the position stays held.")
                closing.append(self.draft(config, None, decision, now, reason,
                                          f"{reason}:{token}:{config.opened.get(token, 0)}"))
        marker = self.draft(config, None, copying.Decision(
            action="skip", token_id="", side=Side.SELL, reason=reason,
            detail=why + (f" Closing {plural(len(closing), 'position')} at market."
                          if closing else "")), now, reason, f"{reason}:{config.started_ts}")
        inserted = await self._db(copy_intents.insert, [marker])
        if not inserted:
            return []  # stopped already (by another engine, or its user)
        done = []
        for draft in closing:
            if draft.token_id in views:
                done += await self.execute(configs, [draft], views[draft.token_id])
            else:
                done += await self._db(copy_intents.insert, [draft])
        report = why
        if closing:
            filled = sum(1 for d in done if d.status != INTENT_SKIPPED)
            report += f" Closing positions: {filled} of {len(closing)} sale(s) sent."
        await self._db(store.stop_by_rule, config.id, reason, report)
        configs.pop(config.id, None)  # no decision for it from now on
        log.info("config %s stopped: %s", config.id, report)
        return inserted + done

    async def mark(self, token: str, found: Quote | None
                   ) -> tuple[str | None, Decimal]:
        """How a stop values one share of ``token``: ("payout", what it redeems for) once
        its market resolved, ("bid", the best bid), ("last", the last bid seen, no older
        than ``stop_mark_max_age_seconds``), or (None, 0) when it cannot."""
        market = found.market if found is not None else None
        if market is not None and (paid := market.payout(token)) is not None:
            return "payout", paid
        if found is not None and found.view.best_bid is not None:
            return "bid", found.view.best_bid
        assert self.venue is not None
        now = time.monotonic()
        fresh = now - self._market_reads.get(token, -RESOLUTION_READ_SECONDS) \
            >= RESOLUTION_READ_SECONDS
        if fresh:
            if len(self._market_reads) > 10_000:
                self._market_reads = {t: at for t, at in self._market_reads.items()
                                      if now - at < RESOLUTION_READ_SECONDS}
            self._market_reads[token] = now
        try:  # no bid (or no book): a resolution shows at Gamma before its cache expires
            market = await self.venue.gamma.market_by_token(token, fresh=fresh)
        except VenueError as exc:
            log.info("token %s: no market to mark by (%s)", token, exc)
        else:
            if (paid := market.payout(token)) is not None:
                return "payout", paid
        last = self.quotes.last_bid(token)
        if last is not None and time.time() - last[1] <= self.settings.stop_mark_max_age_seconds:
            return "last", last[0]
        return None, Decimal(0)

    async def _no_verdict(self, config: ConfigSnapshot, unmarked: list[str]) -> None:
        """A stop check without a verdict: timed, and once it lasts
        ``stop_no_verdict_seconds`` the config's buying is paused (with a notice)."""
        now = time.time()
        if config.unvalued_since is None:
            config.unvalued_since = now
        waited = now - config.unvalued_since
        if config.buys_paused is not None or waited < self.settings.stop_no_verdict_seconds:
            return
        reason = copying.STOP_UNVERIFIED
        detail = (f"The loss/drawdown stop has not valued {len(unmarked)} held position(s) "
                  f"for {int(waited)} s (no bid, no payout, no bid seen within "
                  f"{int(self.settings.stop_mark_max_age_seconds)} s: "
                  f"{', '.join(t[:12] for t in unmarked[:3])}); buying is paused until it "
                  "can.")
        await self._db(store.pause_buys, config.id, reason, detail)
        config.buys_paused = reason
        log.warning("config %s: %s", config.id, detail)

    async def copy_open_positions(self, configs: dict[UUID, ConfigSnapshot],
                                  due: list[ConfigSnapshot]) -> list[CopyIntentDraft]:
        """Mirror the target's positions as they were at each ``due`` config's start as
        buys, once per start, each sized and guarded like a copy of a fill at its current
        price.

        The target's positions and fills are read once for all the due configs (one
        target's), not once per config: the Data API's positions endpoint allows 150
        requests per 10 s (venue/budgets.py), and a target with a thousand followers
        starting together would otherwise take minutes before its next fill is decided.
        The target's fills from a start on are the fill handler's (each mirrored on its
        own), so they are taken out of the positions read now: a trade landing while the
        config starts is copied once, as a fill (issue 41, finding 6). The positions are
        read before the fills, so a trade between the two reads is taken out rather than
        counted twice. A fill the target's other configs were decided on before this one
        was loaded (the start and the engine's reload are moments apart) was not this
        config's: it stays in the positions copied. Positions whose start copy is
        recorded already (an earlier engine's, before a restart) are not read about again:
        the fills since a start long ago can be many pages.
        """
        assert self.venue is not None
        target = due[0].target
        try:
            positions = await self.venue.data.positions(target, limit=500)
            positions = [p for p in positions if p.size > 0 and not p.redeemable]
            done = await self._db(store.opened_at_start, {c.id: c.started_ts for c in due},
                                  [p.asset for p in positions]) if positions else {}
            left = {c.id: [p for p in positions if p.asset not in done.get(c.id, ())]
                    for c in due}
            reading = [c.started_ts for c in due if left[c.id]]
            fills = await self.venue.activity_history(
                target, types="TRADE", start=min(reading)) if reading else []
        except VenueError as exc:
            log.info("target %s: positions unreadable (%s); the start copies of %s are "
                     "retried", target, exc, plural(len(due), "config"))
            return []
        decided = await self._db(store.decided_for, list(configs), [
            trade_key(item) for item in fills]) if fills else {}
        recorded: list[CopyIntentDraft] = []
        for config in due:
            recorded += await self._open_positions(configs, config, left[config.id], fills,
                                                   decided)
        return recorded

    async def _open_positions(self, configs: dict[UUID, ConfigSnapshot],
                              config: ConfigSnapshot, positions: list[Position],
                              fills: list[ActivityItem], decided: dict[str, set[UUID]]
                              ) -> list[CopyIntentDraft]:
        """One config's start copies of ``positions`` less its ``fills`` since its start."""
        # Fills this config missed (decided for others only) stay in its positions.
        mine = [item for item in fills if item.timestamp >= config.started_ts
                and config.id in decided.get(trade_key(item), {config.id})]
        since_start = fills_since(mine, config.started_ts)
        self._started.add((config.id, config.started_ts))
        now = datetime.now(UTC)
        recorded: list[CopyIntentDraft] = []
        for position in positions:
            held = position.size - since_start.get(position.asset, Decimal(0))
            if held <= 0:
                continue  # nothing held at the start: its fills since are mirrored as such
            fill = TargetFill(
                key=store.opening_key(position.asset, config.started_ts),
                wallet=config.target, token_id=position.asset, side=Side.BUY,
                size=held, price=position.cur_price, timestamp=int(now.timestamp()),
                condition_id=position.condition_id, outcome=position.outcome,
                outcome_index=position.outcome_index, market_slug=position.slug)
            try:
                found = await self.quotes.quote(position.asset)
            except VenueError:
                continue
            other = (await self._other_quote(found)
                     if config.rules.direction == "inverse" else None)
            context = (await self.contexts(config.target, [config]))[config.id]
            draft = self.decide(config, fill, found, other, context, now, KIND_OPEN_POSITION)
            recorded += await self.execute_by_token(configs, [draft], [found, other])
        return recorded


def fills_since(fills: Iterable[ActivityItem], start: int) -> dict[str, Decimal]:
    """Shares of each token the fills from ``start`` on (the fill handler's, for a config
    started then) added to the wallet's position: bought minus sold."""
    moved: dict[str, Decimal] = {}
    for item in fills:
        if item.timestamp < start:
            continue
        try:
            side = Side.parse(item.side)
        except ValueError:
            continue  # not a trade's side: the fill handler skips it too
        change = item.size if side is Side.BUY else -item.size
        moved[item.asset] = moved.get(item.asset, Decimal(0)) + change
    return moved


def config_holds(config: ConfigSnapshot, token: str) -> bool:
    """Whether the config holds shares of ``token``."""
    holding = config.holdings.get(token)
    return holding is not None and holding.shares > 0


__all__ = ["FillExecutor", "config_holds", "fills_since", "trade_key"]
