"""Deposits seen with no manual step (issue 16): the deposit watcher.

For every account whose onboarding is done (deposit wallets first), the watcher reads the
maker's pUSD and USDC.e on chain and

- when pUSD differs from what it last saw (``deposit_watches``), has the CLOB re-read the
  account (``/balance-allowance/update``): the venue caches balances, so a deposit is
  invisible to orders until then;
- when pUSD or USDC.e rose, tells the owner of each transfer behind the rise that came from
  outside (``deposit.received``; a sale, a claim or a wrap is not one: ``_tell_deposits``);
- when USDC.e at a deposit wallet reaches ``AUTO_WRAP_MIN_USDC_E`` (and ``AUTO_WRAP_USDC_E``
  is on), wraps it into pUSD, all but what open USDC.e withdrawals are about to send,
  through ``services.wallets.collateral`` (its durable row, its one-in-flight-per-wallet
  index and the wallet lifecycle's rules, so two watchers wrap once). The
  amount is what the chain holds now, so a retry after a failure can never wrap twice: a
  wrap that went through left no USDC.e behind.

It runs as a periodic job (``DEPOSIT_SWEEP_SECONDS``; ``worker.maintenance`` schedules it
once per interval across workers), and for one account right after its onboarding finishes
and when its owner opens the account page (``enqueue_check``, deduplicated by job id), so a
user who funds first and onboards later is covered. Cost at scale: balances are read in
JSON-RPC batches of ``page_size`` wallets, and the venue calls and wraps of a page run at
most ``DEPOSIT_SWEEP_CONCURRENCY`` at a time. Without a chain (no ``POLYGON_RPC_URL``)
there is nothing to read and the watcher does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

import peewee

from chain import transfers
from chain.errors import ChainError
from chain.tokens import checksum, from_base_units, token_balances_base, token_decimals
from models.base import db, utcnow
from models.user import User
from models.wallet import (
    ONBOARDING_READY,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    AccountOnboarding,
    DepositWatch,
    TradingWallet,
)
from services.platform import chain_access, jobs
from services.platform.runtime import runtime
from services.wallets import collateral, venue_accounts, wallet_notices, wallets, withdrawals

log = logging.getLogger(__name__)

SWEEP_JOB = "accounts.sweep_deposits"
CHECK_JOB = "accounts.check_deposits"
SWEEP_TIMEOUT = 1800  # seconds: a sweep pages through every ready account
# How far back a rise in a balance is looked up in the chain's transfers: about 33 minutes
# of Polygon blocks, so a sweep that much late still tells what came in, within the block
# range public RPC endpoints answer eth_getLogs for.
DEPOSIT_LOOKBACK_BLOCKS = 1000
NOT_DEPOSITS_KEPT = 10_000
ZERO = Decimal(0)
_not_deposits: set[str] = set()  # transfers in this process found to be no deposit


@dataclass(frozen=True)
class Holdings:
    """What a maker holds on chain, in whole tokens."""

    pusd: Decimal
    usdc_e: Decimal


def ready_wallets() -> peewee.ModelSelect:
    """Wallets whose onboarding is done, deposit wallets first (they are the ones wrapped)."""
    first = peewee.Case(None, [(TradingWallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET,
                                0)], 1)
    return (TradingWallet.select().join(AccountOnboarding)
            .where(AccountOnboarding.status == ONBOARDING_READY)
            .order_by(first, TradingWallet.id))


def read_holdings(accounts: list[TradingWallet]) -> dict[UUID, Holdings]:
    """Each wallet's maker pUSD and USDC.e, read in one JSON-RPC batch."""
    w3 = chain_access.web3()
    tokens = chain_access.contracts()
    makers = [wallets.maker(w) for w in accounts]
    pairs = [(token, maker) for maker in makers for token in (tokens.pusd, tokens.usdce)]
    values = token_balances_base(w3, pairs)
    scale = (token_decimals(w3, tokens.pusd), token_decimals(w3, tokens.usdce))
    return {wallet.id: Holdings(pusd=from_base_units(values[2 * i], scale[0]),
                                usdc_e=from_base_units(values[2 * i + 1], scale[1]))
            for i, wallet in enumerate(accounts)}


def _watches(page: list[TradingWallet]) -> dict[UUID, DepositWatch]:
    """The page's watch rows by wallet id, the missing ones created (two queries a page)."""
    ids = [wallet.id for wallet in page]
    found = {w.wallet_id: w for w in DepositWatch.select().where(DepositWatch.wallet.in_(ids))}
    missing = [i for i in ids if i not in found]
    if missing:
        # Another watcher may create some meanwhile: theirs stand, ours are skipped.
        (DepositWatch.insert_many([{"wallet": i} for i in missing])
         .on_conflict_ignore().execute())
        found.update({w.wallet_id: w for w in DepositWatch.select()
                      .where(DepositWatch.wallet.in_(missing))})
    return found


def _act(wallet: TradingWallet, held: Holdings, watch: DepositWatch) -> dict[str, Any]:
    """Wrap what is waiting, tell the venue about a pUSD change; what was done."""
    done: dict[str, Any] = {"wallet": str(wallet.id), "wrap": None, "refreshed": False}
    settings = runtime().settings.deposits
    # what open USDC.e withdrawals are about to send stays USDC.e (wrapped, they revert)
    spare = held.usdc_e - withdrawals.open_amount(wallet, "usdc_e")
    if settings.auto_wrap and spare >= max(settings.wrap_minimum, Decimal("0.000001")):
        row = collateral.auto_wrap(wallet, spare)
        done["wrap"] = str(row.id) if row is not None else None
    if (watch.pusd_seen or Decimal(0)) != held.pusd:
        # A deposit (or a wrap, a withdrawal): the CLOB sees it only after an update.
        venue_accounts.refresh_balance(venue_accounts.account(wallet.user_id))
        done["refreshed"] = True
    if watch.pusd_seen is not None and (held.pusd > watch.pusd_seen
                                        or held.usdc_e > (watch.usdce_seen or Decimal(0))):
        _tell_deposits(wallet, held, watch)
    if (watch.pusd_seen, watch.usdce_seen) != (held.pusd, held.usdc_e):
        # Written only on a change: an unchanged account costs the sweep no write.
        (DepositWatch.update(pusd_seen=held.pusd, usdce_seen=held.usdc_e, changed_at=utcnow())
         .where(DepositWatch.id == watch.id).execute())
    return done


def _tell_deposits(wallet: TradingWallet, held: Holdings, watch: DepositWatch) -> None:
    """deposit.received for each pUSD or USDC.e transfer to the maker that came from outside
    and is part of the rise since the balance last seen.

    The rise of each token is explained by its newest transfers in (within the last
    ``DEPOSIT_LOOKBACK_BLOCKS``), walked newest first until they add up to it: older ones
    were in the balance last seen. Of those, a sale, a claim's payout or a wrap is no deposit:
    in each the maker also gave something (chain/transfers.py). Once per transfer; a chain
    that cannot say now is asked again at the next rise.
    """
    maker = wallets.maker(wallet)
    w3 = chain_access.web3()
    contracts = chain_access.contracts()
    rises = {checksum(contracts.pusd): ("pUSD", held.pusd - (watch.pusd_seen or ZERO)),
             checksum(contracts.usdce): ("USDC.e", held.usdc_e - (watch.usdce_seen or ZERO))}
    exchanges = {checksum(a) for a in (contracts.ctf_exchange, contracts.neg_risk_exchange)
                 if a}
    try:
        found = transfers.incoming(w3, list(rises), maker, DEPOSIT_LOOKBACK_BLOCKS)
        new: list[tuple[transfers.Incoming, Decimal]] = []
        for token, (_name, rise) in rises.items():
            scale = token_decimals(w3, token)
            for transfer in sorted((t for t in found if t.token == token),
                                   key=lambda t: (t.block, t.log_index), reverse=True):
                if rise <= 0:
                    break
                amount = from_base_units(transfer.amount_base, scale)
                rise -= amount
                if transfer.sender not in exchanges and transfer.key not in _not_deposits:
                    new.append((transfer, amount))
        told = wallet_notices.deposits_told(wallet.user_id, [t.key for t, _ in new])
        for transfer, amount in new:
            if transfer.key in told:
                continue
            if transfers.gave_in(w3, transfer.tx_hash, maker):
                _remember_not_deposit(transfer.key)
                continue
            wallet_notices.deposit_received(wallet.user_id, transfer.key, amount,
                                            rises[transfer.token][0])
    except ChainError as exc:
        log.warning("deposits to %s not told now: %s", maker, exc)


def _remember_not_deposit(key: str) -> None:
    """Remember a transfer that was no deposit (its receipt is not read again here)."""
    if len(_not_deposits) >= NOT_DEPOSITS_KEPT:
        _not_deposits.clear()
    _not_deposits.add(key)


def _act_safely(wallet: TradingWallet, held: Holdings, watch: DepositWatch
                ) -> dict[str, Any]:
    """``_act`` in its own database connection (a pool thread); a failure is logged, and
    the account is looked at again next sweep."""
    with db.connection_context():
        try:
            return _act(wallet, held, watch)
        except Exception as exc:
            log.warning("deposit check of wallet %s failed: %s", wallet.id, exc)
            return {"wallet": str(wallet.id), "error": str(exc)}


def check(wallets: Iterable[TradingWallet]) -> list[dict[str, Any]]:
    """Read and act on ``wallets`` page by page; one entry per wallet (what was done)."""
    if not chain_access.current().rpc_url:
        return []
    settings = runtime().settings.deposits
    results: list[dict[str, Any]] = []
    page: list[TradingWallet] = []

    def flush() -> None:
        held = read_holdings(page)
        watches = _watches(page)
        with ThreadPoolExecutor(max_workers=settings.concurrency,
                                thread_name_prefix="deposits") as pool:
            results.extend(pool.map(lambda w: _act_safely(w, held[w.id], watches[w.id]),
                                    page))
        page.clear()

    for wallet in wallets:
        page.append(wallet)
        if len(page) >= settings.page_size:
            flush()
    if page:
        flush()
    return results


def sweep() -> list[dict[str, Any]]:
    """The periodic job's body: every ready account, deposit wallets first."""
    return check(ready_wallets().iterator())


def check_wallet(wallet_id: UUID | str) -> list[dict[str, Any]]:
    """One account's check (after onboarding, on opening the account page)."""
    return check(ready_wallets().where(TradingWallet.id == wallet_id))


def enqueue_check(wallet: TradingWallet) -> None:
    """Queue ``check_wallet`` for this wallet (once while one is pending); never raises: a
    missed check is caught by the next sweep."""
    try:
        jobs.enqueue(CHECK_JOB, wallet.id, job_id=jobs.logical_job_id(CHECK_JOB, wallet.id))
    except Exception as exc:  # Redis down: the page or onboarding must not fail for it
        log.warning("could not queue the deposit check of wallet %s: %s", wallet.id, exc)


def on_account_viewed(user: User | UUID | str) -> None:
    """The owner opened their account: a ready account's deposits are looked at now (a job,
    deduplicated by its id), so funds sent before set-up are not left to the next sweep."""
    wallet = wallets.for_user(user)
    if wallet is not None and AccountOnboarding.select().where(
            AccountOnboarding.wallet == wallet.id,
            AccountOnboarding.status == ONBOARDING_READY).exists():
        enqueue_check(wallet)


def enqueue_sweep() -> None:
    """Queue the sweep of every ready account (once while one is pending)."""
    jobs.enqueue(SWEEP_JOB, job_id=jobs.logical_job_id(SWEEP_JOB), queue="low",
                 timeout=SWEEP_TIMEOUT)


__all__ = ["CHECK_JOB", "SWEEP_JOB", "Holdings", "check", "check_wallet", "enqueue_check",
           "enqueue_sweep", "on_account_viewed", "read_holdings", "ready_wallets", "sweep"]
