"""``CopierWallets``: the copiers' opened accounts and collateral estimates, kept fresh.

An engine opens (decrypts) a copier's venue account once, when a live config of that user
starts running here, keeps it only in memory (``services.copying.accounts``), re-opens it
every ``account_reopen_seconds`` and drops it when none of the user's configs runs here
any more (and all of them when the engine stops). The collateral estimates are taken
when an account is first opened here, then every ``wallet_refresh_seconds`` (oldest
first), from the figure the deployment shares in Redis while it is younger than that, else
read from the venue by the one engine that claims the read, within this engine's share of
``balance_reads_per_second`` (``shared_balances``: the venue's limit on balance reads is
the deployment's, and every engine running one of a user's configs keeps that user's
estimate); accounts the budget cannot read at once are read by the refresh loop in turn.
A copy the estimate says a wallet cannot pay reads the venue's figure first if that can
go at once (the budgets allow it now); else, and for a copier without an estimate yet, the
order goes unchecked and the venue judges (it refuses what the wallet cannot pay).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any
from uuid import UUID

import redis
import trio

from services.copying.accounts import AccountCache, WalletSlot
from services.wallets import venue_accounts
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueNotFound
from worker.copy_engine.settings import EngineSettings
from worker.copy_engine.shared_balances import CLAIM_SECONDS, ReadBudget, SharedBalances

log = logging.getLogger("copytrade.copy_engine")

SHARED_POLL_SECONDS = 0.1  # how often a figure another engine is reading is looked for
BALANCE_PATH = "/balance-allowance"  # the CLOB's balance read, and its wallet re-read
UPDATE_PATH = "/balance-allowance/update"


class CopierWallets:
    """The opened accounts of the copiers whose live configs run here (owns the refresh task)."""

    def __init__(self, name: str, settings: EngineSettings,
                 db: Callable[..., Any], limiter: trio.CapacityLimiter,
                 users: Callable[[], set[UUID]], engines: Callable[[], int] = lambda: 1,
                 shared: SharedBalances | None = None) -> None:
        self.name = name
        self.settings = settings
        self.accounts = AccountCache(settings.wallet_refresh_seconds,
                                     settings.account_reopen_seconds)
        self.venue: AsyncVenueClient | None = None
        self._db = db
        self._limiter = limiter  # balance reads' own (not the detection polls')
        self._users = users  # the users with live configs running here now
        self._engines = engines  # live engines, which share the balance-read budget
        self._opening: dict[UUID, trio.Event] = {}  # accounts being opened, set when done
        self._shared = shared  # the deployment's figures (None: this engine reads its own)
        self._budget = ReadBudget(
            lambda: settings.balance_reads_per_second / max(1, self._engines()))
        self.venue_reads = 0  # balance reads this engine sent (the tests' and bench's)

    def retain(self) -> None:
        """Forget the opened accounts of users none of whose live configs runs here now."""
        self.accounts.retain(self._users())

    def clear(self) -> None:
        """Forget every opened account (the engine stops)."""
        self.accounts.clear()

    async def open(self, user_ids: Iterable[UUID]) -> None:
        """Open (decrypt) the venue accounts of these copiers once, and read their balances."""
        wanted = list(dict.fromkeys(user_ids))
        # Targets start concurrently and share copiers: an account another task is opening
        # is waited for, not opened (and its balance read) once more. Its slot is kept
        # before its balance is read, so "being opened" is asked of every wanted user, not
        # only of those without a slot.
        busy = {self._opening[u] for u in wanted if u in self._opening}
        missing = [u for u in self.accounts.missing(wanted) if u not in self._opening]
        if missing:
            done = trio.Event()
            self._opening.update(dict.fromkeys(missing, done))
            try:
                await self._open(missing)
            finally:
                for user_id in missing:
                    del self._opening[user_id]
                done.set()
        for event in busy:
            await event.wait()

    async def _open(self, missing: list[UUID]) -> None:
        # Re-opened accounts keep their estimate (refreshed in turn, not all at once).
        new = {u for u in missing if self.accounts.get(u) is None}

        def open_all() -> dict[UUID, venue_accounts.VenueAccount]:
            opened = {}
            for user_id in missing:
                try:
                    opened[user_id] = venue_accounts.account(user_id)
                except Exception as exc:  # placing will report it on the intent
                    log.warning("engine %s: cannot open the account of user %s: %s",
                                self.name, user_id, type(exc).__name__)
            return opened

        opened = await self._db(open_all)
        keep = self._users()
        for user_id, account in opened.items():
            if user_id in keep:
                self.accounts.put(user_id, account)
        await self.refresh([u for u in opened if u in keep and u in new], update=True)

    async def refresh(self, user_ids: Iterable[UUID], *, update: bool = False) -> None:
        """Take these copiers' collateral figures: the deployment's shared one while it is
        young, else the venue's (read concurrently, bounded, by the engine that claims
        it, within the read budget; the rest wait for a later turn); ``update``: have the
        CLOB re-read their wallets first (it caches balances, so a deposit shows only
        after that)."""
        slots = [(u, s) for u in user_ids if (s := self.accounts.get(u)) is not None]
        mine, theirs = await self._reads_due(slots)
        async with trio.open_nursery() as nursery:
            for user_id, slot in mine:
                nursery.start_soon(self._refresh_one, user_id, slot, update)
            if theirs:
                nursery.start_soon(self._await_shared, theirs)

    async def _reads_due(self, slots: list[tuple[UUID, WalletSlot]]
                         ) -> tuple[list[tuple[UUID, WalletSlot]], list[tuple[UUID, WalletSlot]]]:
        """Take the young shared figures; then (the slots this engine reads now, those
        another engine is reading). The rest, past the budget, wait for a later turn."""
        if self._shared is None:
            return slots[:self._budget.take(len(slots))], []
        try:
            left = self._adopt(slots, await self._shared.get([u for u, _ in slots]))
            within = left[:self._budget.take(len(left))]
            claimed = set(await self._shared.claim([u for u, _ in within]))
            won = [(u, s) for u, s in within if u in claimed]
            # A figure shared between the look and the claim (its reader's claim ended
            # as it was shared) is taken, not read again.
            mine = self._adopt(won, await self._shared.get([u for u, _ in won]))
            reading = {u for u, _ in mine}
            await self._shared.release([u for u, _ in won if u not in reading])
        except redis.RedisError as exc:  # Redis out of reach: this engine's own reads
            log.warning("engine %s: shared balances: %s", self.name, exc)
            return slots[:self._budget.take(len(slots))], []
        theirs = [(u, s) for u, s in within if u not in claimed]
        self._budget.give(len(within) - len(mine))
        return mine, theirs

    def _adopt(self, slots: list[tuple[UUID, WalletSlot]],
               shared: dict[UUID, tuple[Decimal, float]]) -> list[tuple[UUID, WalletSlot]]:
        """Take the shared figures younger than the refresh period (and newer than the
        one kept here); the slots without one."""
        now = self.accounts.now()
        left = []
        for user_id, slot in slots:
            found = shared.get(user_id)
            if found is None or found[1] >= self.settings.wallet_refresh_seconds:
                left.append((user_id, slot))
            elif now - found[1] > slot.refreshed_at:
                slot.refreshed(found[0], now - found[1])
        return left

    async def _await_shared(self, slots: list[tuple[UUID, WalletSlot]]) -> None:
        """Wait (a claim's time at most) for the figures another engine is reading; what
        does not come in time is taken at a later turn."""
        assert self._shared is not None
        with trio.move_on_after(CLAIM_SECONDS):
            while slots:
                await trio.sleep(SHARED_POLL_SECONDS)
                try:
                    slots = self._adopt(slots, await self._shared.get([u for u, _ in slots]))
                except redis.RedisError:
                    return

    async def recheck(self, user_ids: Iterable[UUID]) -> None:
        """Before an order is skipped for a short estimate: the venue's fresh figure, for as
        many as can be read at once: within the read budget, and only while the venue's
        budget for balance reads has room now (the CLOB re-reads the wallet first while its
        own budget does). A fill's orders wait for this, so it never waits for a budget or
        behind the refresh loop's reads: the rest go unchecked (the venue refuses what a
        wallet cannot pay, and a burst of copies must not push the deployment past the
        venue's limit on balance reads)."""
        slots = [(u, s) for u in dict.fromkeys(user_ids)
                 if (s := self.accounts.get(u)) is not None]
        if not slots or self._room(BALANCE_PATH) > 0:
            return
        async with trio.open_nursery() as nursery:
            for user_id, slot in slots[:self._budget.take(len(slots))]:
                nursery.start_soon(self._refresh_one, user_id, slot, True, False)

    def _room(self, path: str) -> float:
        """Seconds before the venue client's budget lets one more request to ``path`` go."""
        budgets = self.venue.transport.budgets if self.venue is not None else None
        return 0.0 if budgets is None else budgets.room("clob", "GET", path)

    async def _refresh_one(self, user_id: UUID, slot: WalletSlot, update: bool,
                           limited: bool = True) -> None:
        """Read one copier's figure (``update``: the CLOB re-reads the wallet first, when
        its budget has room now; ``limited``: within the balance reads' concurrency)."""
        assert self.venue is not None
        account = slot.account
        started, read_at = self.accounts.now(), time.time()
        self.venue_reads += 1
        try:
            async with self._limiter if limited else contextlib.nullcontext():
                # The re-read's budget (a quarter of the reads') is not waited for: a
                # slot held meanwhile would hold up the reads behind it.
                if update and self._room(UPDATE_PATH) == 0:
                    await self.venue.clob.update_balance_allowance(
                        account.creds, signature_type=account.signature_type)
                balance = await self.venue.clob.balance_allowance(
                    account.creds, asset_type="COLLATERAL",
                    signature_type=account.signature_type)
        except VenueNotFound:  # a venue without the endpoint: the chain's figure
            try:
                balance = await trio.to_thread.run_sync(venue_accounts.collateral_balance,
                                                        account)
            except Exception as exc:
                log.warning("engine %s: balance of user %s: %s", self.name, user_id, exc)
                return
        except VenueError as exc:
            log.warning("engine %s: balance of user %s: %s", self.name, user_id, exc)
            return
        slot.refreshed(balance, started)
        if self._shared is not None:
            try:
                await self._shared.put(user_id, balance, read_at)
            except redis.RedisError as exc:  # kept here; the others read their own
                log.warning("engine %s: sharing a balance: %s", self.name, exc)

    def due(self, seconds: float) -> list[UUID]:
        """The users whose estimate to re-read in a turn of ``seconds``: the stalest, at
        most this engine's share of the deployment's balance reads in that time."""
        share = self.settings.balance_reads_per_second / max(1, self._engines())
        # Accounts being opened are read by their opening (which the target waits for).
        stale = sorted([(u, s) for u, s in self.accounts.stale() if u not in self._opening],
                       key=lambda slot: slot[1].refreshed_at)
        return [u for u, _ in stale[:max(1, int(share * seconds))]]

    async def run(self) -> None:
        """Keep collateral estimates fresh and re-open accounts now and then, until cancelled."""
        # Short turns (a second at most): accounts opened past the read budget are read
        # soon, in turn; each turn reads its time's share of the budget, oldest first.
        turn = max(0.5, min(1.0, self.settings.wallet_refresh_seconds / 3))
        while True:
            await trio.sleep(turn)
            try:
                await self.open(self._users())
                await self.refresh(self.due(turn))
            except Exception:
                log.exception("engine %s: refreshing accounts failed", self.name)


__all__ = ["CopierWallets"]
