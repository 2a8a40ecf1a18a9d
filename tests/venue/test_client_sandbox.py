"""Our client against the sandbox venue over real HTTP and websockets on 127.0.0.1."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
import trio
from eth_account import Account

from devstack.venue import SandboxServer
from tests.devstack.venue.conftest import Control
from venue.client import AsyncVenueClient, VenueClient
from venue.config import VenueConfig
from venue.errors import VenueNotFound, VenueRejected, VenueTimeout
from venue.models import Market, Side
from venue.order_signer import OrderSigner
from venue.parse.values import loads
from venue.signing import OrderKey, SignedOrder


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    venue = SandboxServer(seed=7).start()
    try:
        yield venue
    finally:
        venue.stop()


@pytest.fixture
def config(sandbox: SandboxServer) -> VenueConfig:
    return VenueConfig.for_sandbox(sandbox.url, backoff_base=0.01, backoff_cap=0.02)


def control(sandbox: SandboxServer, method: str, path: str, body: Any = None) -> Any:
    """Call the sandbox-only control API."""
    response = httpx.request(method, f"{sandbox.control_url}{path}", json=body, timeout=10)
    assert response.status_code < 300, response.text
    return loads(response.content)


def new_wallet() -> tuple[str, str]:
    key = "0x" + secrets.token_hex(32)
    return key, Account.from_key(key).address


def buy(client: VenueClient, key: str, token: str, price: Decimal, size: Decimal,
        **signer: Any) -> SignedOrder:
    """A GTC BUY signed as the order service signs it: ``OrderSigner`` with the market's
    tick size and neg-risk flag as the CLOB gives them."""
    return OrderSigner.for_venue(client.config, OrderKey(key), **signer).limit(
        token, Side.BUY, price, size, tick_size=client.clob.tick_size(token),
        neg_risk=client.clob.neg_risk(token))


def ready_maker(sandbox: SandboxServer, address: str, pusd: str, *,
                eoa: bool = True) -> None:
    """Make ``address`` a maker the (strict) sandbox takes, as the operator and the account
    would: an allowlisted EOA (``eoa``) or a deposit wallet, with the exchanges approved and
    ``pusd`` deposited (seen by the CLOB only after ``/balance-allowance/update``)."""
    ctl = Control(sandbox)
    try:
        if eoa:
            ctl.allow_eoa(address)
        else:
            ctl.approve_exchanges(address)
        ctl.fund(address, pusd, seen=False)
    finally:
        ctl.close()


def open_market(client: VenueClient) -> Market:
    markets = client.gamma.markets(active=True, closed=False, limit=20)
    return next(m for m in markets if m.accepting_orders and m.token_ids)


def test_market_data_against_sandbox(sandbox: SandboxServer, config: VenueConfig) -> None:
    assert config.rtds_url == sandbox.rtds_url
    with VenueClient(config) as client:
        market = open_market(client)
        assert client.gamma.market_by_slug(market.slug).id == market.id
        assert client.gamma.market_by_id(market.id).slug == market.slug
        token = market.token_ids[0]
        assert client.gamma.market_by_token(token).condition_id == market.condition_id
        book = client.clob.book(token)
        assert book.asset_id == token and book.market == market.condition_id
        assert book.computed_hash() == book.hash
        assert client.clob.tick_size(token) == market.tick_size
        assert client.clob.neg_risk(token) is market.neg_risk
        if book.best_bid is not None:
            assert client.clob.price(token, "BUY") == book.best_bid
        if book.midpoint is not None:
            assert client.clob.midpoint(token) == book.midpoint
        assert isinstance(client.clob.fee_rate_bps(token), int)
        assert client.gamma.events(limit=5)
        assert client.gamma.tags()
        with pytest.raises(VenueNotFound):
            client.gamma.market_by_slug("no-such-market-anywhere")


def test_post_list_cancel_order_with_derived_creds(
    sandbox: SandboxServer, config: VenueConfig
) -> None:
    key, address = new_wallet()
    with VenueClient(config) as client:
        creds = client.create_or_derive_api_key(key)
        assert creds.address == address
        again = client.create_or_derive_api_key(key)  # create refused -> derive, same creds
        assert (again.api_key, again.secret) == (creds.api_key, creds.secret)
        ready_maker(sandbox, address, "100")
        assert client.clob.balance_allowance(creds) == 0  # the deposit is not seen yet
        client.clob.update_balance_allowance(creds)
        assert client.clob.balance_allowance(creds) == Decimal(100)
        market = open_market(client)
        token = market.token_ids[0]
        tick = client.clob.tick_size(token)
        # One tick above zero rests far below any ask.
        order = buy(client, key, token, tick, Decimal("10"))
        result = client.clob.post_order(creds, order)
        assert result.success, result
        assert result.order_id == order.order_hash
        assert result.status == "live"
        orders = client.all_open_orders(creds)
        assert [o.id for o in orders] == [order.order_hash]
        assert orders[0].price == tick and orders[0].side == "BUY"
        # By token: with its market, as the venue needs from 2026-12-14 (ACCOUNTS.md §12);
        # the token alone is not sent (the sandbox refuses it as the venue does).
        by_token = client.all_open_orders(creds, market=market.condition_id, asset_id=token)
        assert [o.id for o in by_token] == [order.order_hash]
        with pytest.raises(ValueError, match="market"):
            client.all_open_orders(creds, asset_id=token)
        cancelled = client.clob.cancel_order(creds, order.order_hash)
        assert cancelled.canceled == (order.order_hash,)
        assert client.all_open_orders(creds) == []
        second = buy(client, key, token, tick, Decimal("6"))
        client.clob.post_order(creds, second)
        assert client.clob.cancel_all(creds).canceled == (second.order_hash,)


def test_rejections_map_to_venue_rejected(sandbox: SandboxServer, config: VenueConfig) -> None:
    key, _ = new_wallet()
    other_key, _ = new_wallet()
    with VenueClient(config) as client:
        creds = client.create_or_derive_api_key(key)
        token = open_market(client).token_ids[0]
        # Signed by another key than the API key's: the venue refuses it.
        order = buy(client, other_key, token, Decimal("0.01"), Decimal("5"))
        with pytest.raises(VenueRejected) as caught:
            client.clob.post_order(creds, order)
        assert 400 <= caught.value.status < 500


def test_async_client_under_trio_against_sandbox(
    sandbox: SandboxServer, config: VenueConfig
) -> None:
    whale_key, whale = new_wallet()

    async def main() -> None:
        async with AsyncVenueClient(config) as client:
            markets = await client.gamma.markets(active=True, closed=False, limit=20)
            market = next(m for m in markets if m.accepting_orders)
            token = market.token_ids[0]
            book = await client.clob.book(token)
            assert book.computed_hash() == book.hash
            async with client.activity_feed([whale], ping_interval=1.0) as feed:
                with trio.fail_after(10):
                    await feed.wait_connected()
                await trio.to_thread.run_sync(
                    lambda: control(sandbox, "POST", "/trades", {
                        "wallet": whale, "token_id": token, "side": "BUY",
                        "size": "25", "price": str(book.best_ask or Decimal("0.5")),
                    })
                )
                with trio.fail_after(10):
                    live = await feed.receive()
            assert live.wallet == whale.lower() and live.asset == token
            assert live.side == "BUY" and live.size == Decimal("25")
            polled = await client.data.activity(whale, types=["TRADE"])
            assert live.dedup_key in {item.dedup_key for item in polled}
            trades = await client.data.trades(user=whale)
            assert any(t.transaction_hash == live.transaction_hash for t in trades)

    trio.run(main)
    assert whale_key


def test_sandbox_faults_retry_reads_and_surface_post_timeouts(
    sandbox: SandboxServer, config: VenueConfig
) -> None:
    key, address = new_wallet()
    with VenueClient(config) as client:
        token = open_market(client).token_ids[0]
        control(sandbox, "POST", "/faults",
                {"path": "/clob/book", "status": 503, "count": 2, "retry_after": 0})
        assert client.clob.book(token).asset_id == token  # third attempt succeeds
        creds = client.create_or_derive_api_key(key)
        ready_maker(sandbox, address, "50")
        client.clob.update_balance_allowance(creds)
        order = buy(client, key, token, client.clob.tick_size(token), Decimal("5"))
    # A venue slower than our timeout: the POST is not resent, the caller reconciles by
    # the order hash once the venue has caught up.
    slow = VenueConfig.for_sandbox(sandbox.url, timeout=0.3)
    control(sandbox, "POST", "/faults",
            {"path": "/clob/order", "method": "POST", "status": 0, "delay": 1.0})
    with VenueClient(slow) as client:
        with pytest.raises(VenueTimeout):
            client.clob.post_order(creds, order)
        ids: list[str] = []
        for _ in range(40):
            ids = [o.id for o in client.all_open_orders(creds)]
            if ids:
                break
            time.sleep(0.1)
        assert ids == [order.order_hash]
    received = control(sandbox, "GET", "/orders")
    assert [r["order_id"] for r in received] == [order.order_hash]  # sent exactly once


def test_deposit_wallet_type_3_order(sandbox: SandboxServer, config: VenueConfig) -> None:
    key, owner = new_wallet()
    _, wallet = new_wallet()  # stands in for the deposit wallet contract's address
    control(sandbox, "POST", "/deposit-wallets", {"wallet": wallet, "owner": owner})
    ready_maker(sandbox, wallet, "20", eoa=False)
    ready_maker(sandbox, owner, "20", eoa=False)  # the owner EOA: funded, but not a maker
    with VenueClient(config) as client:
        creds = client.create_or_derive_api_key(key)
        for signature_type in (0, 3):
            client.clob.update_balance_allowance(creds, signature_type=signature_type)
        token = open_market(client).token_ids[0]
        tick = client.clob.tick_size(token)
        eoa_order = buy(client, key, token, tick, Decimal("5"))
        with pytest.raises(VenueRejected, match="deposit wallet"):
            client.clob.post_order(creds, eoa_order)
        order = buy(client, key, token, tick, Decimal("5"), signature_type=3,
                    funder=wallet)
        result = client.clob.post_order(creds, order)
        assert result.success and result.order_id == order.order_hash
        assert [o.id for o in client.all_open_orders(creds)] == [order.order_hash]
