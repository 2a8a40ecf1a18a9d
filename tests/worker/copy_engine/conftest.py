"""Copy-engine fixtures: funded copiers, active configs, a target wallet, an engine runner.

Engines run in-process under ``trio.run`` against the shared sandbox venue (real HTTP and
RTDS websocket), real Redis (a key prefix per test) and the test database.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pytest
import redis
import trio
from eth_account import Account

from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from tests.conftest import DEADLINE
from tests.worker.conftest import delete_prefixed_keys
from worker.copy_engine.engine import CopyEngine, EngineSettings

FAST = EngineSettings(lease_ms=2000, heartbeat_seconds=0.3, sweep_seconds=0.2,
                      poll_seconds=0.3, backstop_poll_seconds=1.0, exit_check_seconds=0.3,
                      stale_intent_seconds=60)
# FAST with leases of DEADLINE, for tests that are not about losing a lease: a 2 s lease
# lapses when a loaded machine stalls an engine for 1.4 s, and its targets stop meanwhile.
STEADY = replace(FAST, lease_ms=int(DEADLINE * 1000))


@pytest.fixture
def engine_prefix(redis_url: str) -> Iterator[str]:
    """A Redis key prefix for this test's engines, cleaned afterwards."""
    prefix = f"ct-copy-{secrets.token_hex(4)}:"
    yield prefix
    delete_prefixed_keys(redis.Redis.from_url(redis_url), prefix)


@pytest.fixture
def target() -> str:
    """A fresh target wallet address (lowercase)."""
    return Account.create().address.lower()


@pytest.fixture
def make_config(bound_db: Any) -> Callable[..., CopyConfig]:
    """``make_config(user, target, **fields)``: an active config (defaults: live, 1x)."""

    def make(user: Any, target: str, **fields: Any) -> CopyConfig:
        blocked = fields.pop("blocked_categories", [])
        values = {"size_multiplier": Decimal(1), "max_position_usdc": Decimal(1000),
                  "price_deviation_bps": 500, "paper_trading": False, "is_active": True,
                  "started_at": utcnow(), **fields}
        return CopyConfig.create(user=user.id, target_address=target.lower(),
                                 blocked_categories=json.dumps(blocked), **values)

    return make


Scenario = Callable[[list[CopyEngine]], Awaitable[None]]


@pytest.fixture
def run_engines(app: Any, redis_url: str, engine_prefix: str) -> Callable[..., None]:
    """``run_engines(scenario, count=1)``: run engines, await the scenario, stop them.

    STEADY by default: a test about losing a lease passes FAST (or its own settings).
    """

    def run(scenario: Scenario, count: int = 1, settings: EngineSettings = STEADY) -> None:
        async def main() -> None:
            client = redis.Redis.from_url(redis_url)
            engines = [CopyEngine(f"engine-{i}-{secrets.token_hex(3)}", client, engine_prefix,
                                  settings) for i in range(count)]
            async with trio.open_nursery() as nursery:
                for engine in engines:
                    await nursery.start(engine.run)
                try:
                    with trio.fail_after(3 * DEADLINE):
                        await scenario(engines)
                finally:
                    nursery.cancel_scope.cancel()

        trio.run(main)

    return run


async def wait_for(check: Callable[[], Any], timeout: float = DEADLINE, step: float = 0.1) -> Any:
    """Poll a blocking ``check`` in a thread until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await trio.to_thread.run_sync(check)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {check}")
        await trio.sleep(step)


def cursor_of(target: str) -> int | None:
    """The target's saved detection cursor (a watcher writes it once it has read it)."""
    from models.base import db
    from worker.copy_engine import store

    with db.connection_context():
        return store.read_cursor(target)


def edit_config(config: CopyConfig, **fields: Any) -> None:
    """Edit a config as the API does (its version moves on), in a fresh connection."""
    from models.base import db

    with db.connection_context():
        CopyConfig.update(version=CopyConfig.version + 1, **fields).where(
            CopyConfig.id == config.id).execute()


def intents_of(config: CopyConfig) -> list[CopyIntent]:
    """The config's intents, oldest first (read in a fresh connection)."""
    from models.base import db

    with db.connection_context():
        return list(CopyIntent.select().where(CopyIntent.config == config.id)
                    .order_by(CopyIntent.created_at))


def settled(config: CopyConfig, count: int = 1) -> Callable[[], list[CopyIntent] | None]:
    """A check: the config has ``count`` intents and none is still pending."""

    def check() -> list[CopyIntent] | None:
        rows = intents_of(config)
        if len(rows) >= count and all(r.status not in ("pending",) for r in rows):
            return rows
        return None

    return check


async def owned(engine: CopyEngine, target: str) -> None:
    """Wait until ``engine`` runs ``target`` and its watcher is ready."""
    async def ready() -> bool:
        rt = engine.targets.get(target)
        return rt is not None and rt.ready.is_set()

    with trio.fail_after(DEADLINE):
        while not await ready():
            await trio.sleep(0.05)


async def inject(control: Any, wallet: str, token_id: str, side: str, size: str,
                 price: str = "0.5") -> dict:
    """Make ``wallet`` trade on the sandbox (as a whale would)."""
    body = {"wallet": wallet, "token_id": token_id, "side": side, "size": size,
            "price": price}
    return await trio.to_thread.run_sync(
        lambda: control.call("POST", "/trades", body, expect=201))


async def copy_on_second_blocks(w3: Any, control: Any, config: CopyConfig, target: str,
                                token_id: str) -> tuple[CopyIntent, dict, int]:
    """With the chain making a block every second (as a real chain does), ``target`` buys
    on the chain-backed sandbox; its config's intent, the target's fill, and how many blocks
    after the settlement's the copy was decided in."""
    w3.provider.make_request("evm_setIntervalMining", [1])
    try:
        sold = await inject(control, target, token_id, "BUY", "10", "0.5")
        [fill] = [f for f in sold["fills"] if f["proxyWallet"].lower() == target]
        receipt = await trio.to_thread.run_sync(
            w3.eth.wait_for_transaction_receipt, fill["transactionHash"])
        [intent] = await wait_for(settled(config), step=0.02)
        now = await trio.to_thread.run_sync(lambda: w3.eth.block_number)
    finally:
        w3.provider.make_request("evm_setIntervalMining", [0])
        w3.provider.make_request("evm_setAutomine", [True])
    return intent, fill, now - receipt["blockNumber"]


def copy_one_fill(run_engines: Callable[..., None], control: Any, config: CopyConfig,
                  target: str, token_id: str, side: str = "BUY", size: str = "40") -> None:
    """Run an engine until ``target``'s one trade in ``token_id`` is copied and filled."""
    async def scenario(engines: list[CopyEngine]) -> None:
        await owned(engines[0], target)
        await inject(control, target, token_id, side, size, "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)

    run_engines(scenario)



@dataclass
class Copier:
    """A user whose trading wallet is funded at the sandbox venue."""

    user: Any
    address: str  # the maker: where the funds and positions are (the deposit wallet)
    signer: str  # the owner key that signs its orders


@dataclass
class Market:
    """A fresh sandbox market."""

    slug: str
    condition_id: str
    yes: str
    no: str


@pytest.fixture
def make_trader(bound_db: Any, venue_control: Any) -> Callable[..., Copier]:
    """``make_trader(funds="1000")``: a user on the elite tier with an onboarded deposit
    wallet (the product's default account) holding ``funds`` pUSD, seen by the CLOB."""
    from models import User
    from tests.trading_support import onboarded_trader

    def make(funds: str = "1000") -> Copier:
        user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
        onboarded = onboarded_trader(user, funds, venue_control)
        return Copier(user=user, address=onboarded.maker, signer=onboarded.address)

    return make


@pytest.fixture
def trader(make_trader: Callable[..., Copier]) -> Copier:
    """A copier with 1000 pUSD."""
    return make_trader()


@pytest.fixture
def market(venue_control: Any) -> Market:
    """A fresh politics market quoted by the house around 0.50 (bid 0.49, ask 0.51)."""
    slug = f"copy-{secrets.token_hex(5)}"
    summary = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                       category="politics")
    return Market(slug=slug, condition_id=summary["condition_id"],
                  yes=summary["token_ids"][0], no=summary["token_ids"][1])
