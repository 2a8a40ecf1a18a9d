"""Fixtures for trading tests: funded traders and fresh markets on the shared sandbox venue.

Registered for the whole suite by ``pytest_plugins`` in tests/conftest.py (a folder's own
conftest.py may define its own, as tests/worker/copy_engine/ does).
Each test gets its own market (a unique slug with house liquidity around 0.50), so tests
never see each other's books on the session-wide sandbox.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from rq.job import JobStatus

from models import User
from models.wallet import AccountOnboarding, TradingWallet
from services.platform import jobs, runtime, venues
from services.wallets import onboarding, trading_accounts, wallets
from tests.wallet_fixtures import allow_eoa_operator
from venue.signing import OrderKey


@dataclass
class Trader:
    """A user with a trading wallet funded at the sandbox venue (at its maker)."""

    user: User
    wallet: TradingWallet

    @property
    def address(self) -> str:
        """The wallet's signing key's address (the EOA; a deposit wallet's owner)."""
        return self.wallet.address

    @property
    def maker(self) -> str:
        """Where the account's funds and positions are (the deposit wallet, or the EOA)."""
        return wallets.maker(self.wallet)


@dataclass
class SandboxMarket:
    """A market created for one test."""

    slug: str
    condition_id: str
    token_ids: list[str]
    outcomes: list[str]

    @property
    def yes(self) -> str:
        """Outcome 0's token id."""
        return self.token_ids[0]

    @property
    def no(self) -> str:
        """Outcome 1's token id."""
        return self.token_ids[1]


@pytest.fixture
def make_sandbox_market(venue_control: Any) -> Callable[..., SandboxMarket]:
    """``make_sandbox_market(**fields)``: a fresh sandbox market (house liquidity on by default)."""

    def make(**fields: Any) -> SandboxMarket:
        slug = f"t-{secrets.token_hex(5)}"
        body = {"liquidity": True, "fair_price": "0.5", **fields}
        summary = venue_control.add_market(slug, **body)
        return SandboxMarket(slug=slug, condition_id=summary["condition_id"],
                             token_ids=list(summary["token_ids"]),
                             outcomes=list(summary["outcomes"]))

    return make


@pytest.fixture
def market(make_sandbox_market: Callable[..., SandboxMarket]) -> SandboxMarket:
    """A fresh fee-free market quoted by the house around 0.50 (tick 0.01, minimum 5)."""
    return make_sandbox_market()


@pytest.fixture
def eoa_allowlist() -> Iterator[Callable[[str], None]]:
    """``eoa_allowlist(address)``: the operator's TRADING_EOA_ALLOWLIST also holds
    ``address`` for this test (the runtime's settings; restored afterwards)."""
    previous = runtime.runtime()
    yield allow_eoa_operator
    runtime.install(previous)


@pytest.fixture
def make_trader(bound_db: Any, venue_control: Any,
                eoa_allowlist: Callable[[str], None]) -> Callable[..., Trader]:
    """``make_trader(funds="1000")``: a new user with an onboarded deposit wallet (the
    product's default account) holding ``funds`` pUSD at its maker, seen by the CLOB.
    ``deposit_wallet=False``: a legacy plain EOA instead (``legacy_eoa_trader``)."""

    def make(funds: str = "1000", user: User | None = None, *,
             deposit_wallet: bool = True) -> Trader:
        owner = user or User.create(email=f"{secrets.token_hex(6)}@example.com")
        if not deposit_wallet:
            return legacy_eoa_trader(owner, funds, venue_control, eoa_allowlist)
        return onboarded_trader(owner, funds, venue_control)

    return make


@pytest.fixture
def make_eoa_trader(make_trader: Callable[..., Trader]) -> Callable[..., Trader]:
    """``make_eoa_trader(funds="1000")``: a user trading as a legacy plain EOA (type 0), one
    the operator and the venue both allowlist."""
    return lambda funds="1000", user=None: make_trader(funds, user, deposit_wallet=False)


def run_onboarding(wallet: TradingWallet, timeout: float = 30.0) -> None:
    """Run the wallet's onboarding job body here until the account is ready; a test's real
    worker may be running the job its creation queued, and holds the lease meanwhile."""
    row = take_queued(wallet)
    deadline = time.monotonic() + timeout
    while (state := onboarding.run(row.id)) == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state == "ready", onboarding.status(wallet.user_id)["error"]


def take_queued(wallet: TradingWallet) -> AccountOnboarding:
    """Take the onboarding job the wallet's creation queued off its queue, as a worker
    picking it up would (its body runs here), so the test's queue holds only what the test
    queues; the onboarding's row."""
    row = onboarding.record(wallet)
    job = jobs.fetch(jobs.qualified_job_id(jobs.logical_job_id(onboarding.JOB_NAME, row.id)))
    if job is not None and job.get_status(refresh=True) == JobStatus.QUEUED:
        job.cancel()
    return row


def onboarded_trader(owner: User, funds: str, venue_control: Any) -> Trader:
    """A deposit-wallet trader, set up by the real onboarding against the sandbox relayer
    (the job's body, run here), then funded at the maker and the CLOB's balance refreshed
    (a fresh deposit: the CLOB sees it after ``/balance-allowance/update``)."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    wallet = wallets.get_or_create(owner)
    run_onboarding(wallet)
    if Decimal(funds):
        venue_control.fund(wallets.maker(wallet), funds, seen=False)
        onboarding.refresh_balance(owner)
    return Trader(user=owner, wallet=TradingWallet.get_by_id(wallet.id))


def legacy_eoa_trader(owner: User, funds: str, venue_control: Any,
                      allow: Callable[[str], None]) -> Trader:
    """A legacy plain-EOA trader (type 0): a fresh key the operator allowlists (``allow``),
    connected as an existing account, allowlisted at the venue with its exchange approvals
    made, onboarded (credentials, balance update) and funded at the EOA."""
    key = OrderKey("0x" + secrets.token_hex(32))
    allow(key.address)
    venue_control.allow_eoa(key.address)
    wallet = trading_accounts.connect(owner, wallet_address=key.address,
                                      private_key=key.private_key)
    run_onboarding(wallet)
    if Decimal(funds):
        venue_control.fund(wallet.address, funds, seen=False)
        onboarding.refresh_balance(owner)
    return Trader(user=owner, wallet=TradingWallet.get_by_id(wallet.id))


@pytest.fixture
def trader(make_trader: Callable[..., Trader]) -> Trader:
    """A user with 1000 pUSD at the venue."""
    return make_trader()


@pytest.fixture(autouse=False)
def fresh_venue_cache() -> None:
    """Forget cached venue metadata (Gamma markets) so a just-resolved market reads fresh."""
    venues.client().cache.invalidate()
