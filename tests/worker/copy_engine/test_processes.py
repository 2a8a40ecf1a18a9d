"""The copy engine in real ``copytrade worker`` processes: SIGKILL mid-copy, two workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import redis

from devstack.chain.devchain import die_with_parent
from models.base import db
from models.copying import CopyIntent
from models.trading import Order
from services.platform import copy_leases
from tests.conftest import app_settings
from tests.operations.stack import wait
from tests.worker.copy_engine.conftest import cursor_of

ROOT = Path(__file__).resolve().parents[3]


class Worker:
    """A ``python -m cli worker`` child sharing the test's database, Redis and venue."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.log = tmp_path / f"worker-{time.monotonic_ns()}.log"
        self.output = self.log.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "cli", "worker"], cwd=ROOT,
                                     env=env, stdout=self.output, stderr=subprocess.STDOUT,
                                     preexec_fn=die_with_parent)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def text(self) -> str:
        self.output.flush()
        return self.log.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def close(self) -> None:
        self.kill()
        self.output.close()


@pytest.fixture
def spawn(app, tmp_path, redis_url, engine_prefix, venue_server
          ) -> Iterator[Callable[..., Worker]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLYMARKET_")}
    env.update(
        DATABASE_URL=app_settings(app).database_url, REDIS_URL=redis_url,
        REDIS_PREFIX=engine_prefix,
        COPYTRADE_INSTANCE=str(tmp_path / "instance"), VENUE="sandbox",
        POLYMARKET_GAMMA_URL=venue_server.gamma_url, POLYMARKET_CLOB_URL=venue_server.clob_url,
        POLYMARKET_DATA_URL=venue_server.data_url, POLYMARKET_RTDS_URL=venue_server.rtds_url,
        SECRET_KEY=app_settings(app).secret_key,
        WALLET_ENCRYPTION_KEY=app_settings(app).wallet_encryption_key,
        WORKER_HEARTBEAT_SECONDS="0.5", COPY_LEASE_MS="2000", COPY_HEARTBEAT_SECONDS="0.3",
        COPY_SWEEP_SECONDS="0.3", COPY_POLL_SECONDS="0.3", COPY_BACKSTOP_POLL_SECONDS="1",
    )
    started: list[Worker] = []

    def start(**extra: str) -> Worker:
        """A worker; ``extra`` adds to (or overrides) its environment."""
        worker = Worker(tmp_path, {**env, **extra})
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.close()


def lease_owner(redis_url: str, prefix: str, target: str) -> str | None:
    raw = redis.Redis.from_url(redis_url).get(copy_leases.lease_key(target, prefix))
    return raw.decode() if raw else None


def owner_pid(owner: str | None) -> int | None:
    return int(owner.split(".")[-2]) if owner else None


def intents(config) -> list[CopyIntent]:
    with db.connection_context():
        return list(CopyIntent.select().where(CopyIntent.config == config.id)
                    .order_by(CopyIntent.created_at))


def orders_from(venue_control, address: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == address.lower()]


def inject(venue_control, wallet: str, token: str, side: str = "BUY", size: str = "10") -> None:
    venue_control.call("POST", "/trades", {"wallet": wallet, "token_id": token, "side": side,
                                           "size": size, "price": "0.5"}, expect=201)


def test_sigkill_mid_copy_neither_duplicates_nor_loses_orders(
        spawn, make_config, trader, market, target, venue_control, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    first = spawn()
    wait(lambda: owner_pid(lease_owner(redis_url, engine_prefix, target)) == first.pid,
         what="the first worker to own the target", workers=[first])
    wait(lambda: cursor_of(target) is not None, what="its watcher to read the cursor",
         workers=[first])

    # The venue stalls on POST /order: the order record is written, the order is in
    # flight when the worker dies; the venue still executes it afterwards.
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 0, "delay": "3", "count": 1},
                       expect=201)
    inject(venue_control, target, market.yes)

    def order_in_flight() -> Any:
        with db.connection_context():
            return Order.get_or_none(Order.config_id == config.id)

    wait(order_in_flight, what="the copy order record", workers=[first])
    # The record is written before the POST goes out: kill only once the venue holds it
    # (its stall rule consumed), or a slow machine kills the worker before it sent anything.
    wait(lambda: not any(f["path"] == "/clob/order" for f in venue_control.state()["faults"]),
         what="the order to reach the stalling venue", workers=[first])
    first.kill(signal.SIGKILL)
    wait(lambda: orders_from(venue_control, trader.address), what="the stalled order")

    # While no worker runs, the target trades again: nobody sees it live.
    inject(venue_control, target, market.yes, size="12")
    second = spawn()
    wait(lambda: owner_pid(lease_owner(redis_url, engine_prefix, target)) == second.pid,
         what="the second worker to take the target over", workers=[second])

    def both_settled() -> Any:
        rows = intents(config)
        return rows if len(rows) == 2 and all(r.status == "filled" for r in rows) else None

    rows = wait(both_settled, what="both trades mirrored", workers=[second])
    assert sorted(r.size for r in rows) == [Decimal(10), Decimal(12)]
    sent = orders_from(venue_control, trader.address)
    assert len(sent) == 2, sent  # one order per target trade: none twice, none lost
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "22"}


def test_two_workers_share_configs_and_take_over_from_a_stopped_one(
        spawn, make_config, make_trader, market, venue_control, redis_url, engine_prefix):
    from eth_account import Account

    targets = [Account.create().address.lower() for _ in range(2)]
    traders = [make_trader() for _ in targets]
    configs = [make_config(t.user, target, paper_trading=True)
               for t, target in zip(traders, targets, strict=True)]
    a, b = spawn(), spawn()

    def owners() -> dict[str, str | None]:
        return {t: lease_owner(redis_url, engine_prefix, t) for t in targets}

    def spread() -> Any:
        found = owners()
        pids = {owner_pid(o) for o in found.values()}
        return found if None not in pids and pids == {a.pid, b.pid} else None

    placed = wait(spread, what="one target on each worker", workers=[a, b])
    assert len(set(placed.values())) == 2  # each config runs on exactly one worker

    victim = a
    moved = [t for t, o in placed.items() if owner_pid(o) == victim.pid]
    victim.kill(signal.SIGTERM)  # graceful: it releases its leases on the way out
    wait(lambda: all(owner_pid(lease_owner(redis_url, engine_prefix, t)) == b.pid
                     for t in targets), timeout=15, what="the survivor to own everything",
         workers=[b])
    time.sleep(1.0)
    inject(venue_control, moved[0], market.yes)
    config = configs[targets.index(moved[0])]
    rows = wait(lambda: [r for r in intents(config) if r.status == "filled"],
                what="the moved config to copy", workers=[b])
    assert len(rows) == 1
