"""Fixtures for trading tests: funded traders and fresh markets on the shared sandbox venue.

Registered for tests/services and tests/api by their conftest.py.
Each test gets its own market (a unique slug with house liquidity around 0.50), so tests
never see each other's books on the session-wide sandbox.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from models import User
from models.wallet import TradingWallet
from services import onboarding, venues, wallets


@dataclass
class Trader:
    """A user with a trading wallet funded at the sandbox venue."""

    user: User
    wallet: TradingWallet

    @property
    def address(self) -> str:
        """The wallet's signing key's address (the EOA; a deposit wallet's owner)."""
        return self.wallet.address


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
def make_trader(bound_db: Any, venue_control: Any) -> Callable[..., Trader]:
    """``make_trader(funds="1000")``: a new user whose wallet holds ``funds`` pUSD at the venue."""

    def make(funds: str = "1000", user: User | None = None, *,
             deposit_wallet: bool = False) -> Trader:
        owner = user or User.create(email=f"{secrets.token_hex(6)}@example.com")
        if deposit_wallet:
            return _onboarded(owner, funds, venue_control)
        wallet = wallets.get_or_create(owner)
        if Decimal(funds):
            venue_control.fund(wallet.address, funds)
        return Trader(user=owner, wallet=wallet)  # orders refresh the CLOB's cached balance

    return make


def _onboarded(owner: User, funds: str, venue_control: Any) -> Trader:
    """A deposit-wallet trader, set up by the real onboarding against the sandbox relayer
    (the job's body, run here), then funded and the CLOB's balance refreshed."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    wallet = wallets.get_or_create_deposit_wallet(owner)
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "ready", onboarding.status(owner)["error"]
    if Decimal(funds):
        venue_control.fund(wallet.funder_address, funds)
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
