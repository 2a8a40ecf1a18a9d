"""On-chain detection (issue 30): the engine reads the exchanges' ``OrderFilled`` logs of its
targets from the dev chain (anvil, over its websocket or by polling logs over HTTP) and, with
pending transactions offered, the match calls before their block; every source's sighting of
one fill makes one intent.

The sandbox settles each trade on anvil through the stand-in exchange, as the venue settles on
Polygon, so a target's trade injected there is what the engine sees on chain."""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
import trio
from eth_abi import encode
from eth_account import Account
from web3 import Web3

from chain.exchange_events import (
    MATCH_ORDERS_SELECTOR,
    MATCH_ORDERS_SIGNATURE,
    SETTLE_MATCH_SELECTOR,
    _types,
    decode_match_call,
    decode_order_filled,
)
from devstack.chain.devchain import _artifacts
from models import User
from models.base import db
from models.copying import CopyIntent
from models.notifications import Notification
from services.copying import pending_matches
from tests.chain_venue import chain_venue  # noqa: F401 - the fixture
from tests.conftest import DEADLINE
from tests.worker.copy_engine.conftest import (
    STEADY,
    copy_on_second_blocks,
    inject,
    intents_of,
    owned,
    settled,
    wait_for,
)
from worker.copy_engine.engine import CopyEngine

USDC = 10**6
# FAST's 2 s lease is lost when a busy machine starves the engine for 1.4 s; the target is
# then stopped and claimed again, and its new first poll may see a fill before the source
# under test. These tests count which source saw a fill first: a lease starvation cannot cost.
# The RTDS feed off and polling slowed to a crawl: only the chain can see a fill in time.
CHAIN_ONLY = replace(STEADY, use_feed=False, poll_seconds=300, backstop_poll_seconds=300,
                     use_chain=True, chain_poll_seconds=0.2)


@pytest.fixture
def dev(chain_venue: Any, chain: Any) -> Any:  # noqa: F811 - the imported fixture
    """The dev chain's contracts (the sandbox venue attached to it is ``chain_venue``)."""
    return chain.contracts


@pytest.fixture
def copier(bound_db: Any) -> Any:
    """A user whose configs copy on paper (detection is what is under test)."""
    return User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")


def _ws(dev: Any) -> str:
    return dev.rpc_url.replace("http://", "ws://")  # anvil serves both on one port


def _rpc(w3: Web3, method: str, *params: Any) -> Any:
    answer = w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" not in answer, answer
    return answer.get("result")


def _market(control: Any, **fields: Any) -> str:
    return control.add_market(f"oc-{secrets.token_hex(4)}", liquidity=True, fair_price="0.5",
                              category="politics", **fields)["token_ids"][0]


async def _ready(engine: CopyEngine, target: str, *, pending: bool = False) -> None:
    """Wait until the engine runs ``target``, polled it once, and the chain watches it."""
    await owned(engine, target)
    with trio.fail_after(DEADLINE):
        while not (engine.chain is not None and engine.chain.connected
                   and target in engine.chain.watching and engine.stats.polls >= 1
                   and (engine.chain.pending or not pending)):
            await trio.sleep(0.05)


def _run(run_engines: Any, scenario: Any, settings: Any) -> None:
    run_engines(scenario, settings=settings)


def _settle_directly(dev: Any, maker: str, token: str, *, shares: int, usdc: int,
                     reverting: bool = False) -> str:
    """As the exchange's operator, send a settlement that only emits ``maker``'s BUY fill
    (nothing moves): the match call a pending-transaction reader decodes. Its hash.
    ``reverting``: it also pulls pUSD the maker never approved, so it reverts when mined."""
    w3 = dev.web3()
    exchange = w3.eth.contract(address=dev.ctf_exchange, abi=_artifacts()["CTFExchange"].abi)
    filled = (secrets.token_bytes(32), Web3.to_checksum_address(maker), dev.ctf_exchange, 0,
              int(token), usdc, shares, 0, bytes(32), bytes(32))
    pulls = [(Web3.to_checksum_address(maker), 0, usdc)] if reverting else []
    data = exchange.encode_abi("settleMatch", args=[
        (bytes(32), "0x" + "00" * 20, 0, 0), pulls, [], [], filled])
    return _send(dev, Account.from_key(dev.deployer_key), dev.ctf_exchange, data)


def _send(dev: Any, sender: Any, to: str, data: str) -> str:
    """Sign and send a call from ``sender`` (an eth_account Account); its hash."""
    w3 = dev.web3()
    tx = {"to": to, "data": data, "chainId": int(w3.eth.chain_id),
          "gas": 300_000, "nonce": w3.eth.get_transaction_count(sender.address, "pending"),
          "maxFeePerGas": 10**10, "maxPriorityFeePerGas": 10**9}
    return "0x" + w3.eth.send_raw_transaction(
        sender.sign_transaction(tx).raw_transaction).hex().removeprefix("0x")


def _strangers_match_orders(dev: Any, maker: str, token: str, *, shares: int,
                            usdc: int) -> str:
    """From a wallet that is not the exchange's operator, broadcast an unsigned
    ``matchOrders`` whose taker order is ``maker`` buying ``shares`` for ``usdc`` (it would
    revert when mined: only the operator may match). Its hash."""
    w3 = dev.web3()
    stranger = Account.create()
    _rpc(w3, "anvil_setBalance", stranger.address, hex(10**18))
    order = (secrets.randbits(64), Web3.to_checksum_address(maker),
             Web3.to_checksum_address(maker), int(token), usdc, shares, 0, 0, 0, bytes(32),
             bytes(32), b"")
    body = encode(_types(MATCH_ORDERS_SIGNATURE), [bytes(32), order, [], usdc, [], 0, []])
    return _send(dev, stranger, dev.ctf_exchange, MATCH_ORDERS_SELECTOR + body.hex())


def test_order_filled_and_the_match_call_decode_to_the_same_fill(dev, chain_venue) -> None:  # noqa: F811
    w3 = dev.web3()
    token = _market(chain_venue)
    maker = Account.create().address
    _rpc(w3, "evm_setAutomine", False)
    try:
        tx_hash = _settle_directly(dev, maker, token, shares=12 * USDC, usdc=7_440_000)
        body = w3.eth.get_transaction(tx_hash)
        [pending] = decode_match_call(dict(body) | {"input": body["input"].hex()},
                                      [dev.ctf_exchange])
        assert body["input"].hex().removeprefix("0x")[:8] == SETTLE_MATCH_SELECTOR[2:]
    finally:
        _rpc(w3, "evm_setAutomine", True)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash)
    # its OrderFilled (OrdersMatched, the other log, is no fill)
    [mined] = [fill for entry in receipt["logs"]
               if (fill := decode_order_filled(dict(entry))) is not None]
    assert (mined.maker, mined.side, mined.token_id, mined.role) == (maker, "BUY", token,
                                                                     "taker")
    assert (mined.size, mined.price, mined.usdc_size) == (Decimal(12), Decimal("0.62"),
                                                          Decimal("7.44"))
    assert mined.block_number == receipt["blockNumber"]
    assert (pending.tx_hash, pending.maker, pending.token_id, pending.shares, pending.usdc) == (
        mined.tx_hash, mined.maker, mined.token_id, mined.shares, mined.usdc)


def test_with_the_feed_off_the_chain_copies_within_two_blocks(
        dev, chain_venue, copier, make_config, run_engines, target) -> None:  # noqa: F811
    """Blocks every second, as a real chain makes them: the copy is decided before the
    second block after the settlement's."""
    w3 = dev.web3()
    token = _market(chain_venue)
    config = make_config(copier, target, paper_trading=True)
    settings = replace(CHAIN_ONLY, chain_ws_url=_ws(dev))

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _ready(engine, target)
        intent, fill, blocks = await copy_on_second_blocks(w3, chain_venue, config, target,
                                                           token)
        assert blocks <= 2, blocks
        assert intent.status == "filled" and intent.target_tx_hash == fill["transactionHash"]
        assert (engine.stats.chain_fills, engine.stats.feed_fills, engine.stats.poll_fills) \
            == (1, 0, 0)
        assert intent.detection_source == "chain"
        fields = engine.detection.fields()
        assert (fields["detection_chain"], fields["detection_chain_mode"]) == ("live",
                                                                               "websocket")

    _run(run_engines, scenario, settings)
    [intent] = intents_of(config)
    assert (intent.target_size, intent.target_price, intent.target_side) == (
        Decimal(10), Decimal("0.5"), "BUY")


def test_logs_polled_over_http_detect_a_fill_too(
        dev, chain_venue, copier, make_config, run_engines, target) -> None:  # noqa: F811
    token = _market(chain_venue)
    config = make_config(copier, target, paper_trading=True)

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _ready(engine, target)
        assert engine.chain is not None and engine.chain.mode == "logs"
        await trio.to_thread.run_sync(lambda: _settle_directly(
            dev, target, token, shares=20 * USDC, usdc=10 * USDC))
        [intent] = await wait_for(settled(config))
        assert intent.target_size == Decimal(20) and intent.target_price == Decimal("0.5")
        assert engine.stats.chain_fills == 1 and engine.stats.delays["chain"][0] >= 0

    _run(run_engines, scenario, CHAIN_ONLY)


def test_a_neg_risk_markets_fill_is_read_from_the_neg_risk_exchange(
        dev, chain_venue, copier, make_config, run_engines, target) -> None:  # noqa: F811
    """A neg-risk market settles through the Neg-Risk Exchange, whose OrderFilled the
    engine reads beside the CTF Exchange's (the feed off, polling asleep)."""
    w3 = dev.web3()
    token = _market(chain_venue, neg_risk=True)
    config = make_config(copier, target, paper_trading=True)

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _ready(engine, target)
        sold = await inject(chain_venue, target, token, "BUY", "10", "0.5")
        [fill] = [f for f in sold["fills"] if f["proxyWallet"].lower() == target]
        receipt = await trio.to_thread.run_sync(
            w3.eth.wait_for_transaction_receipt, fill["transactionHash"])
        # settled by the neg-risk exchange, not the CTF one
        emitters = {entry["address"].lower() for entry in receipt["logs"]
                    if decode_order_filled(dict(entry)) is not None}
        assert emitters == {dev.neg_risk_exchange.lower()}, emitters
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled" and intent.detection_source == "chain"
        assert intent.target_tx_hash == fill["transactionHash"]
        assert engine.stats.chain_fills == 1 and engine.stats.poll_fills == 0

    _run(run_engines, scenario, replace(CHAIN_ONLY, chain_ws_url=_ws(dev)))


def test_a_fill_seen_by_the_feed_and_the_chain_makes_one_intent(
        dev, chain_venue, copier, make_config, run_engines, target) -> None:  # noqa: F811
    token = _market(chain_venue)
    config = make_config(copier, target, paper_trading=True)
    settings = replace(STEADY, use_chain=True, chain_ws_url=_ws(dev), poll_seconds=300,
                       backstop_poll_seconds=300)

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _ready(engine, target)
        with trio.fail_after(DEADLINE):
            while not engine.feed_connected:
                await trio.sleep(0.05)
        await inject(chain_venue, target, token, "BUY", "10", "0.5")
        await wait_for(settled(config))
        # both saw it: one was first, the other a duplicate
        await wait_for(lambda: engine.stats.duplicates >= 1)
        assert engine.stats.feed_fills + engine.stats.chain_fills == 1
        # and each source's own sighting is kept (the benchmark's "seen by" figures)
        await wait_for(lambda: {"feed", "chain"} <= set(engine.stats.sightings))
        [intent] = intents_of(config)
        seen = {}
        for source in ("feed", "chain"):
            [(tx_hash, at)] = engine.stats.sightings[source]
            assert tx_hash == intent.target_tx_hash and 0 <= time.time() - at < 60
            seen[source] = at
        # The copy records the source that saw the fill first, the one credited with it.
        first = "feed" if engine.stats.feed_fills else "chain"
        assert intent.detection_source == first
        assert seen[first] <= seen[({"feed", "chain"} - {first}).pop()]

    _run(run_engines, scenario, settings)
    assert len(intents_of(config)) == 1


@dataclass
class Followers:
    """A target's market on the dev chain and two paper configs of one copier following it:
    ``eager`` opted in to pending matches, ``careful`` waits for the block."""

    w3: Web3
    token: str
    eager: Any
    careful: Any


@pytest.fixture
def followers(dev, chain_venue, copier, make_config, target) -> Followers:  # noqa: F811
    """Two configs following ``target``, one copying pending matches."""
    return Followers(w3=dev.web3(), token=_market(chain_venue),
                     eager=make_config(copier, target, paper_trading=True,
                                       copy_pending_matches=True),
                     careful=make_config(copier, target, paper_trading=True))


def test_a_pending_match_is_copied_before_its_block_only_by_configs_that_opt_in(
        dev, followers, run_engines, target) -> None:
    w3, token, eager, careful = followers.w3, followers.token, followers.eager, followers.careful
    settings = _pending_settings(dev)
    mined = threading.Event()

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _hold_blocks(engine, target, w3)
        try:
            tx_hash = await trio.to_thread.run_sync(lambda: _settle_directly(
                dev, target, token, shares=10 * USDC, usdc=5 * USDC))
            [early] = await wait_for(settled(eager))
            # still in the mempool: the opted-in config copied it before its block
            assert w3.eth.get_transaction(tx_hash)["blockNumber"] is None
            assert early.status == "filled" and early.target_tx_hash == tx_hash
            assert intents_of(careful) == [] and engine.stats.pending_fills == 1
            _rpc(w3, "evm_mine")
            mined.set()
        finally:
            _rpc(w3, "evm_setAutomine", True)
        [late] = await wait_for(settled(careful))
        assert late.target_tx_hash == tx_hash and late.status == "filled"
        # each copy records what it acted on: the pending call, or the block confirming it
        assert (early.detection_source, late.detection_source) == ("pending", "chain")
        # the confirmation was taken in (and not handed to the opted-in config again)
        await wait_for(lambda: not engine.targets[target].pending)

    _run(run_engines, scenario, settings)
    assert mined.is_set()
    assert len(intents_of(eager)) == 1 and len(intents_of(careful)) == 1


async def _hold_blocks(engine: CopyEngine, target: str, w3: Web3) -> None:
    """Once the engine reads pending calls naming ``target``, stop mining (until evm_mine)."""
    await _ready(engine, target, pending=True)
    _rpc(w3, "evm_setAutomine", False)


def _pending_settings(dev: Any) -> Any:
    """Chain detection with pending calls read, believed from the sandbox's operator."""
    return replace(CHAIN_ONLY, chain_ws_url=_ws(dev), use_pending=True,
                   pending_operators=(dev.deployer.lower(),))


def test_a_strangers_match_call_naming_the_target_is_not_copied_the_operators_is(
        dev, followers, run_engines, target) -> None:
    w3, token, eager = followers.w3, followers.token, followers.eager

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _ready(engine, target, pending=True)
        assert engine.chain is not None
        _rpc(w3, "evm_setAutomine", False)
        try:
            faked = await trio.to_thread.run_sync(lambda: _strangers_match_orders(
                dev, target, token, shares=10 * USDC, usdc=5 * USDC))
            real = await trio.to_thread.run_sync(lambda: _settle_directly(
                dev, target, token, shares=11 * USDC, usdc=5 * USDC))
            # both pending, read in the order sent: once the operator's is copied, the
            # stranger's was handled before it
            await wait_for(lambda: [i for i in intents_of(eager) if i.target_tx_hash == real])
            assert w3.eth.get_transaction(faked)["blockNumber"] is None
            [copied] = intents_of(eager)
            assert (copied.target_tx_hash, copied.detection_source) == (real, "pending")
            assert engine.chain.pending_refused == 1 and engine.stats.pending_fills == 1
            _rpc(w3, "evm_mine")
        finally:
            _rpc(w3, "evm_setAutomine", True)
        # the stranger's call reverted (only the operator matches); the operator's settled
        assert w3.eth.get_transaction_receipt(faked)["status"] == 0
        assert w3.eth.get_transaction_receipt(real)["status"] == 1
        # the operator's was confirmed by its receipt: nothing refuted
        await wait_for(lambda: not engine.chain.unconfirmed)
        assert engine.stats.pending_refuted == 0

    _run(run_engines, scenario, _pending_settings(dev))
    assert len(intents_of(eager)) == 1


def test_a_pending_copy_whose_match_reverts_when_mined_is_marked_and_its_owner_told(
        dev, followers, copier, run_engines, target) -> None:
    w3, token, eager, careful = followers.w3, followers.token, followers.eager, followers.careful

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await _hold_blocks(engine, target, w3)
        try:
            tx_hash = await trio.to_thread.run_sync(lambda: _settle_directly(
                dev, target, token, shares=10 * USDC, usdc=5 * USDC, reverting=True))
            [early] = await wait_for(settled(eager))
            assert early.status == "filled" and early.detection_source == "pending"
            _rpc(w3, "evm_mine")
        finally:
            _rpc(w3, "evm_setAutomine", True)
        assert w3.eth.get_transaction_receipt(tx_hash)["status"] == 0
        await wait_for(lambda: "not confirmed" in intents_of(eager)[0].detail)
        assert engine.stats.pending_refuted == 1

    _run(run_engines, scenario, _pending_settings(dev))
    [copy] = intents_of(eager)
    assert "its transaction reverted" in copy.detail and "nothing was sold" in copy.detail
    # the careful config waited for a block, and none confirmed the fill
    assert intents_of(careful) == []
    with db.connection_context():
        [told] = Notification.select().where(Notification.user == copier.id,
                                             Notification.type == "copy.unconfirmed")
    assert json.loads(told.payload)["reason"] == "reverted"
    assert "its transaction reverted" in told.text


def test_an_unsent_copy_of_an_unconfirmed_match_is_cancelled(
        copier, make_config, target) -> None:
    """A copy recorded from a pending match but not sent yet (its order waiting for the
    venue to reopen, say) is cancelled when the match is refuted; a filled one is kept."""
    waiting = make_config(copier, target, paper_trading=True, copy_pending_matches=True)
    tx_hash = "0x" + secrets.token_hex(32)
    common = {"user_id": copier.id, "target_address": target, "target_tx_hash": tx_hash,
              "token_id": "7", "target_side": "BUY", "detection_source": "pending",
              "side": "BUY", "size": Decimal(10), "price": Decimal("0.5"),
              "seen_at": datetime.now(UTC), "paper": True}
    unsent = CopyIntent.create(config=waiting, target_trade_key=f"{tx_hash}:7:BUY",
                               status="pending", **common)
    other = make_config(copier, target, paper_trading=True, copy_pending_matches=True)
    filled = CopyIntent.create(config=other, target_trade_key=f"{tx_hash}:7:BUY",
                               status="filled", filled_size=Decimal(10),
                               filled_price=Decimal("0.5"), **common)
    assert pending_matches.refute(target, tx_hash, "7", "BUY", "not_mined") == {
        "cancelled": 1, "marked": 1}
    unsent, filled = CopyIntent.get_by_id(unsent.id), CopyIntent.get_by_id(filled.id)
    assert (unsent.status, unsent.reason) == ("cancelled", pending_matches.REASON)
    assert "never mined" in unsent.detail
    assert filled.status == "filled" and "never mined" in filled.detail
    # told once, for the copy that could not be undone
    assert [n.type for n in Notification.select().where(Notification.user == copier.id)] == [
        "copy.unconfirmed"]
