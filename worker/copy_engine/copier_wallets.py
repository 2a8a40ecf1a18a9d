"""``CopierWallets``: the copiers' opened accounts and collateral estimates, kept fresh.

An engine opens (decrypts) a copier's venue account once, when a live config of that user
starts running here, keeps it only in memory (``services.copying.accounts``), re-opens it
every ``account_reopen_seconds`` and drops it when none of the user's configs runs here
any more (and all of them when the engine stops). The collateral estimates are read from
the venue when an account is first opened here, then re-read every
``wallet_refresh_seconds`` (oldest first, at most this engine's share of
``balance_reads_per_second``: the venue's limit on balance reads is the deployment's, and
every engine running one of a user's configs keeps that user's estimate), and at once for
a copy the estimate says a wallet cannot pay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

import trio

from services.copying.accounts import AccountCache, WalletSlot
from services.wallets import venue_accounts
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueNotFound
from worker.copy_engine.settings import EngineSettings

log = logging.getLogger("copytrade.copy_engine")


class CopierWallets:
    """The opened accounts of the copiers whose live configs run here (owns the refresh task)."""

    def __init__(self, name: str, settings: EngineSettings,
                 db: Callable[..., Any], limiter: trio.CapacityLimiter,
                 users: Callable[[], set[UUID]], engines: Callable[[], int] = lambda: 1
                 ) -> None:
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

    def retain(self) -> None:
        """Forget the opened accounts of users none of whose live configs runs here now."""
        self.accounts.retain(self._users())

    def clear(self) -> None:
        """Forget every opened account (the engine stops)."""
        self.accounts.clear()

    async def open(self, user_ids: Iterable[UUID]) -> None:
        """Open (decrypt) the venue accounts of these copiers once, and read their balances."""
        missing = self.accounts.missing(user_ids)
        # Targets start concurrently and share copiers: an account another task is opening
        # is waited for, not opened (and its balance read) once more.
        busy = {self._opening[u] for u in missing if u in self._opening}
        missing = [u for u in missing if u not in self._opening]
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
        """Re-read the venue's collateral figure of these copiers (concurrently, bounded);
        ``update``: have the CLOB re-read their wallets first (it caches balances, so a
        deposit shows only after that)."""
        slots = [(u, s) for u in user_ids if (s := self.accounts.get(u)) is not None]
        async with trio.open_nursery() as nursery:
            for user_id, slot in slots:
                nursery.start_soon(self._refresh_one, user_id, slot, update)

    async def recheck(self, user_ids: Iterable[UUID]) -> None:
        """Before an order is skipped for a short estimate: the venue's fresh figure."""
        await self.refresh(user_ids, update=True)

    async def _refresh_one(self, user_id: UUID, slot: WalletSlot, update: bool) -> None:
        assert self.venue is not None
        account = slot.account
        started = self.accounts.now()
        try:
            async with self._limiter:
                if update:
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

    def due(self, seconds: float) -> list[UUID]:
        """The users whose estimate to re-read in a turn of ``seconds``: the stalest, at
        most this engine's share of the deployment's balance reads in that time."""
        share = self.settings.balance_reads_per_second / max(1, self._engines())
        stale = sorted(self.accounts.stale(), key=lambda slot: slot[1].refreshed_at)
        return [u for u, _ in stale[:max(1, int(share * seconds))]]

    async def run(self) -> None:
        """Keep collateral estimates fresh and re-open accounts now and then, until cancelled."""
        turn = max(0.5, self.settings.wallet_refresh_seconds / 3)
        while True:
            await trio.sleep(turn)
            try:
                await self.open(self._users())
                await self.refresh(self.due(turn))
            except Exception:
                log.exception("engine %s: refreshing accounts failed", self.name)


__all__ = ["CopierWallets"]
