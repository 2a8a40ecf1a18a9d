"""Fixtures for the sandbox venue: a started server on a free port, control calls, traders.

Copy the pattern elsewhere:

    def test_something(sandbox_venue):
        sandbox_venue.clob_url   # ClobClient host
        sandbox_venue.data_url   # POLYMARKET_DATA_URL
        sandbox_venue.rtds_url   # ws://127.0.0.1:P/rtds
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from py_clob_client_v2.client import ClobClient

from devstack.venue import SandboxServer
from tests.conftest import DEADLINE
from venue.tls import client_context


def decode(response: httpx.Response) -> Any:
    """JSON body with floats as Decimal (never float)."""
    return json.loads(response.text, parse_float=Decimal)


class Control:
    """Thin client of the sandbox-only control API."""

    def __init__(self, venue: SandboxServer) -> None:
        self.venue = venue
        # The control API's answer time is never what a test asserts: a loaded machine may
        # take seconds over a chain attach, so it gets the suite's deadline.
        self.http = httpx.Client(base_url=venue.url, timeout=DEADLINE, verify=client_context())

    def get(self, path: str, **params: Any) -> Any:
        """GET a path of the venue (any API) and decode it."""
        response = self.http.get(path, params=params or None)
        return decode(response)

    def call(self, method: str, path: str, body: Any = None, expect: int | None = None) -> Any:
        """Call /_sandbox{path}; asserts the status when `expect` is given."""
        response = self.http.request(method, f"/_sandbox{path}", json=body)
        if expect is not None:
            assert response.status_code == expect, response.text
        return decode(response)

    def state(self) -> dict:
        """GET /_sandbox/state."""
        return self.call("GET", "/state", expect=200)

    def market(self, slug: str | None = None, *, index: int = 0) -> dict:
        """A market summary by slug, or the index-th market."""
        markets = self.state()["markets"]
        if slug is None:
            return markets[index]
        return next(m for m in markets if m["slug"] == slug)

    def add_market(self, slug: str, **fields: Any) -> dict:
        """Create a market (no house liquidity unless asked); returns its control summary."""
        body = {"slug": slug, "question": f"Will {slug} happen?", "liquidity": False, **fields}
        self.call("POST", "/markets", body, expect=201)
        return self.market(slug)

    def fund(self, address: str, amount: str, *, seen: bool = True) -> None:
        """Credit pUSD. ``seen``: the CLOB's balance cache has picked the deposit up already
        (the scenario most tests start from); ``seen=False`` leaves it to a
        ``/balance-allowance/update``, as a fresh deposit on the venue."""
        self.call("POST", "/fund", {"address": address, "amount": amount, "seen": seen},
                  expect=200)

    def grant(self, address: str, token_id: str, shares: str, *, seen: bool = True) -> None:
        """Credit outcome tokens (as if split earlier; ``seen`` as for ``fund``)."""
        self.call("POST", "/fund", {"address": address, "token_id": token_id,
                                    "shares": shares, "seen": seen}, expect=200)

    def strict_accounts(self, enabled: bool | None = None, *, allowlisted: Sequence[str] = (),
                        grandfathered: Sequence[str] = ()) -> dict:
        """POST /_sandbox/strict-accounts: switch the venue's account rules (on by default)
        and add allowlisted EOAs / grandfathered proxy or Safe makers; answers the result."""
        body: dict[str, Any] = {"allowlisted": list(allowlisted),
                                "grandfathered": list(grandfathered)}
        if enabled is not None:
            body["enabled"] = enabled
        return self.call("POST", "/strict-accounts", body, expect=200)

    def allow_eoa(self, address: str) -> None:
        """Make an EOA a type-0 maker the venue takes: allowlisted by the operator, with its
        own pUSD and CTF approvals of both exchanges (as it would send them, paying gas)."""
        self.strict_accounts(allowlisted=[address])
        self.approve_exchanges(address)

    def approve_exchanges(self, owner: str) -> None:
        """pUSD ``approve`` and CTF ``setApprovalForAll`` of both exchanges, and of Exchange
        V3 for protocol-v2 markets (positions on the PositionManager), from ``owner``."""
        state = self.state()
        pairs = [(state["exchange"], state["ctf"]), (state["neg_risk_exchange"], state["ctf"]),
                 (state["exchange_v3"], state["position_manager"])]
        for exchange, positions in pairs:
            self.call("POST", "/approvals", {"owner": owner, "token": state["collateral"],
                                             "spender": exchange}, expect=200)
            self.call("POST", "/approvals", {"owner": owner, "token": positions,
                                             "operator": exchange, "approved": True},
                      expect=200)

    def balances(self, address: str) -> dict:
        """pUSD and positions of an address."""
        return self.call("GET", f"/balances/{address}", expect=200)

    def received_orders(self) -> list[dict]:
        """Every order envelope the venue received."""
        return self.call("GET", "/orders", expect=200)

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()


@dataclass
class Trader:
    """A funded wallet with API creds and an official ClobClient."""

    address: str
    key: str
    client: ClobClient


@pytest.fixture
def sandbox_venue() -> Iterator[SandboxServer]:
    """A sandbox venue on a free 127.0.0.1 port (the venue's account rules on, as by
    default), stopped after the test."""
    venue = SandboxServer(seed=7).start()
    try:
        yield venue
    finally:
        venue.stop()


@pytest.fixture
def control(sandbox_venue: SandboxServer) -> Iterator[Control]:
    """The control API of `sandbox_venue`."""
    ctl = Control(sandbox_venue)
    try:
        yield ctl
    finally:
        ctl.close()


@pytest.fixture
def make_trader(sandbox_venue: SandboxServer, control: Control) -> Callable[..., Trader]:
    """Factory: a fresh EOA with API creds (L1 create) and `funds` pUSD; ``allowlisted``
    (the default) makes it a maker the strict venue takes (``Control.allow_eoa``)."""

    def make(funds: str = "1000", *, allowlisted: bool = True, **client_kwargs: Any) -> Trader:
        key = "0x" + secrets.token_hex(32)
        address = Account.from_key(key).address
        client = ClobClient(sandbox_venue.clob_url, chain_id=137, key=key, **client_kwargs)
        client.set_api_creds(client.create_or_derive_api_key())
        if allowlisted:
            control.allow_eoa(address)
        if Decimal(funds):
            control.fund(address, funds)
        return Trader(address=address, key=key, client=client)

    return make
