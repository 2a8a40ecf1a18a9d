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
import gc
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import trio

from models.base import utcnow
from models.copying import INTENT_PENDING, INTENT_SKIPPED, KIND_MIRROR
from services.copying import execution as copy_execution
from services.copying import intents as copy_intents
from services.copying import mirror as copying
from services.copying.execution import Quote
from services.copying.intents import CopyIntentDraft
from services.copying.mirror import Holding, TargetFill
from services.trading import order_outages, orders
from services.trading.orders import PostAnswer, PreparedOrder
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueRestricted
from venue.models import ActivityItem, Side
from venue.restrictions import restart_backoff
from worker.copy_engine.copier_wallets import CopierWallets
from worker.copy_engine.quotes import QuoteSource
from worker.copy_engine.settings import EngineSettings, EngineStats
from worker.copy_engine.store import ConfigSnapshot

log = logging.getLogger("copytrade.copy_engine")

STALE_FILL = "stale_fill"


def trade_key(item: ActivityItem) -> str:
    """The stored identity of a target fill (tx hash, asset, side, wallet)."""
    return "|".join(item.dedup_key)


class FillExecutor:
    """Decides target fills for their configs and executes the copies (owns the exit checks)."""

    def __init__(self, name: str, settings: EngineSettings, stats: EngineStats,
                 quotes: QuoteSource, wallets: CopierWallets,
                 db: Callable[..., Any]) -> None:
        self.name = name
        self.settings = settings
        self.stats = stats
        self.quotes = quotes
        self.wallets = wallets
        self.venue: AsyncVenueClient | None = None
        self.place_limiter = trio.CapacityLimiter(64)
        self._db = db
        self._catalogued: set[str] = set()  # tokens whose market the catalogue holds
        # Fills being copied right now (seen -> answers in): backstop polls wait for none.
        self.copying = 0
        self.quiet = trio.Event()
        self.quiet.set()
        self._gc_held_since: float | None = None
        # Starts background tasks (copies waiting for the venue to reopen): the engine's.
        self.spawn: Callable[..., Any] | None = None

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
                          item: ActivityItem, seen_at: datetime) -> list[CopyIntentDraft]:
        """Decide for every config of the target, record the intents, place the copies."""
        snapshots = list(configs.values())
        if not snapshots:
            return []
        with self.copying_now():
            return await self._handle_fill(target, configs, snapshots, item, seen_at)

    async def _handle_fill(self, target: str, configs: dict[UUID, ConfigSnapshot],
                           snapshots: list[ConfigSnapshot], item: ActivityItem,
                           seen_at: datetime) -> list[CopyIntentDraft]:
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
        market = quote.view
        target_after = None
        if fill.side is Side.SELL and any(
                c.holdings.get(fill.token_id, Holding()).shares > 0 for c in snapshots):
            assert self.venue is not None
            positions = await self.venue.data.positions(target, market=item.condition_id)
            target_after = sum((p.size for p in positions if p.asset == fill.token_id),
                               Decimal(0))
        drafts = []
        for config in snapshots:
            if config.started_ts and item.timestamp < config.started_ts - 2:
                continue  # the fill predates this config's start: not its business
            if age > self.settings.max_fill_age_seconds:
                decision = copying.Decision(
                    action="skip", token_id=fill.token_id, side=fill.side, reason=STALE_FILL,
                    detail=f"Seen {int(age)} s after the target traded; too late to copy.")
            else:
                decision = copying.decide(
                    config.rules, fill, market,
                    config.holdings.get(fill.token_id, Holding()),
                    target_position_after=target_after)
            drafts.append(self.draft(config, fill, decision, seen_at, KIND_MIRROR, fill.key))
        return await self.execute(configs, drafts, quote)

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
            detail=decision.detail, worker=self.name, created_at=seen_at)
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
                      drafts: list[CopyIntentDraft], quote: Quote, *, insert: bool = True
                      ) -> list[CopyIntentDraft]:
        """Record intents (``insert``) and place their copies; the drafts recorded.

        The drafts are decisions for ``configs``. One call to ``copy_execution.execute``;
        the positions it moved go into the configs' snapshots. Without ``insert`` the
        drafts are stored intents re-placed after a restart.
        """
        token = quote.info.token_id
        done = await copy_execution.execute(
            drafts, quote,
            accounts=self.wallets.accounts, send=self.send, run_db=self._db,
            recheck=self.wallets.recheck, insert=insert,
            catalogue_market=token not in self._catalogued)
        if done.catalogued:
            self._catalogued.add(token)  # its market is in the catalogue now
        self._apply(configs, done.moves)
        for draft, refusal in done.waiting:
            config = configs.get(draft.config_id)
            if config is not None:
                self._later(self.retry_when_open, config, draft, refusal)
        self.stats.intents += len(done.recorded) if insert else 0
        self.stats.orders += done.orders
        return done.recorded

    @staticmethod
    def _apply(configs: dict[UUID, ConfigSnapshot],
               moves: Iterable[copy_execution.PositionMove]) -> None:
        for move in moves:
            config = configs.get(move.config_id)
            if config is not None:
                config.holdings[move.token_id] = move.holding
                config.opened[move.token_id] = move.opened

    async def send(self, prepared: PreparedOrder) -> tuple[datetime, PostAnswer]:
        """Send one recorded order on the engine's client; when it left and the answer."""
        assert self.venue is not None
        limiter = self.place_limiter
        try:
            # A free slot is taken without a checkpoint: the fill's orders are written in the
            # loop's first pass over them, not after a round trip through the scheduler each.
            limiter.acquire_nowait()
        except trio.WouldBlock:
            await limiter.acquire()
        try:
            sent_at = utcnow()
            answer = await orders.post_async(self.venue, prepared)
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
                              refusal: VenueRestricted) -> None:
        """Place a copy the venue refused for its mode again, while its fill is young enough.

        Waits the venue's Retry-After (else 1-2 s doubling, capped at 30 s: ACCOUNTS.md
        §7.4) between attempts; once the next attempt would come after the fill's age
        limit, the intent is skipped with the mode's reason (``venue_restarting``, ...).
        """
        seen = draft.target_timestamp or draft.seen_at.timestamp()
        deadline = seen + self.settings.max_fill_age_seconds
        attempt = 0
        while True:
            attempt += 1
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
                continue
            done = await copy_execution.execute(
                [draft], quote, accounts=self.wallets.accounts, send=self.send,
                run_db=self._db, recheck=self.wallets.refresh, insert=False,
                catalogue_market=False)
            self._apply({config.id: config}, done.moves)
            self.stats.orders += done.orders
            again = [refused for waiting, refused in done.waiting if waiting.id == draft.id]
            if not again:
                return
            refusal = again[0]

    async def place_intent(self, config: ConfigSnapshot, draft: CopyIntentDraft) -> None:
        """Place one stored intent's order (live ones as a batch of one; paper the plain way)."""
        if not config.paper and not draft.paper:
            quote = await self.quotes.quote(draft.token_id)
            await self.execute({config.id: config}, [draft], quote, insert=False)
            return
        async with self.place_limiter:
            move = await self._db(copy_execution.place_and_settle, draft, paper=config.paper)
        self.stats.orders += 1
        self._apply({config.id: config}, [move] if move is not None else [])

    # -- take-profit / stop-loss ------------------------------------------------------------

    async def check_exits(self, configs: dict[UUID, ConfigSnapshot]) -> list[CopyIntentDraft]:
        """Sell positions whose take-profit or stop-loss is crossed (one intent per opening)."""
        watched = [(c, token, h) for c in configs.values()
                   if c.rules.take_profit_bps or c.rules.stop_loss_bps
                   for token, h in c.holdings.items() if h.shares > 0]
        if not watched:
            return []
        quotes: dict[str, Quote] = {}
        drafts = []
        now = datetime.now(UTC)
        for config, token, holding in watched:
            if token not in quotes:
                try:
                    quotes[token] = await self.quotes.quote(token)
                except VenueError:
                    continue
            decision = copying.decide_exit(config.rules, token, holding, quotes[token].view)
            if decision is None or not decision.copies:
                continue
            signal = copying.exit_signal(config.rules, holding, quotes[token].view.best_bid)
            key = f"{signal}:{token}:{config.opened.get(token, 0)}"
            drafts.append(self.draft(config, None, decision, now, signal or "exit", key))
        inserted = []
        for token in dict.fromkeys(draft.token_id for draft in drafts):
            inserted += await self.execute(
                configs, [draft for draft in drafts if draft.token_id == token], quotes[token])
        return inserted


__all__ = ["FillExecutor", "trade_key"]
