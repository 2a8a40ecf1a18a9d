"""A partition that never doubles a copy: worker processes in network namespaces of their own.

Each ``copytrade worker`` runs in its own network namespace (``ip netns``), reaching the
host through two veth pairs: one carries Redis and PostgreSQL, the other the sandbox
venue. On the host side, small TCP forwarders bound to each veth's host address carry the
traffic to the test's Redis, PostgreSQL and venue on 127.0.0.1 (they listen there only;
nothing of the machine's services changes). Cutting a worker off from Redis and
PostgreSQL is taking its first veth down: packets are dropped, calls hang, exactly as in a
real partition, while the venue stays reachable. The venue's order ledger then says
whether a copy was sent twice or never.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

from devstack.chain.devchain import die_with_parent
from models.base import db
from models.copying import CopyIntent, TargetFence
from services.platform import copy_leases
from tests.conftest import DEADLINE, app_settings
from tests.forwarder import Forwarder
from tests.worker.copy_engine.test_processes import intents, lease_owner, orders_from, owner_pid

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="network namespaces need root and iproute2's ip")


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=30)


@dataclass
class Namespace:
    """A network namespace with a services veth (Redis, PostgreSQL) and a venue veth."""

    name: str
    links: dict[str, tuple[str, str]]  # kind -> (host end, host address)
    forwarders: list[Forwarder] = field(default_factory=list)

    def forward(self, kind: str, port: int) -> str:
        """Forward the host's 127.0.0.1:``port`` to this namespace; "address:port" seen there."""
        forwarder = Forwarder(self.links[kind][1], port)
        self.forwarders.append(forwarder)
        return f"{forwarder.host}:{forwarder.port}"

    def cut(self, kind: str) -> None:
        """Take the ``kind`` link down: its packets are dropped from now on."""
        _ip("link", "set", self.links[kind][0], "down")

    def heal(self, kind: str) -> None:
        """Bring the ``kind`` link back up."""
        _ip("link", "set", self.links[kind][0], "up")


@pytest.fixture
def namespaces() -> Iterator[Callable[[], Namespace]]:
    """``make()``: a new namespace; every one is deleted afterwards, whatever happened."""
    run = secrets.token_hex(2)
    made: list[Namespace] = []
    base = 100 + secrets.randbelow(100)

    def make() -> Namespace:
        index = len(made)
        ns = Namespace(f"ctp{run}{index}", {})
        made.append(ns)
        _ip("netns", "add", ns.name)
        _ip("-n", ns.name, "link", "set", "lo", "up")
        for slot, kind in enumerate(("services", "venue")):
            host_end, inner_end = f"ctp{run}{index}{kind[0]}h", f"ctp{run}{index}{kind[0]}n"
            subnet = f"10.{base}.{secrets.randbelow(250)}"
            _ip("link", "add", host_end, "type", "veth", "peer", "name", inner_end)
            ns.links[kind] = (host_end, f"{subnet}.{4 * slot + 1}")
            _ip("link", "set", inner_end, "netns", ns.name)
            _ip("addr", "add", f"{subnet}.{4 * slot + 1}/30", "dev", host_end)
            _ip("link", "set", host_end, "up")
            _ip("-n", ns.name, "addr", "add", f"{subnet}.{4 * slot + 2}/30", "dev", inner_end)
            _ip("-n", ns.name, "link", "set", inner_end, "up")
        return ns

    try:
        yield make
    finally:
        for ns in made:
            for forwarder in ns.forwarders:
                forwarder.close()
            _ip("netns", "del", ns.name, check=False)  # its veth pairs go with it
            for host_end, _ in ns.links.values():
                _ip("link", "del", host_end, check=False)


def _rehost(url: str, where: str) -> str:
    """``url`` with its host:port replaced by ``where``."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.replace(
        f"{parts.hostname}:{parts.port}", where)).geturl()


class Worker:
    """``python -m cli worker`` inside a namespace."""

    def __init__(self, ns: Namespace, tmp_path: Path, env: dict[str, str]) -> None:
        self.log = tmp_path / f"worker-{ns.name}.log"
        self.output = self.log.open("wb")
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns.name, sys.executable, "-m", "cli", "worker"],
            cwd=ROOT, env=env, stdout=self.output, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent)

    @property
    def pid(self) -> int:
        return self.proc.pid  # ip netns exec execs the worker: the same process

    def text(self) -> str:
        self.output.flush()
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.output.close()


@pytest.fixture
def spawn(app, tmp_path, redis_url, engine_prefix, venue_server, namespaces
          ) -> Iterator[Callable[[], tuple[Worker, Namespace]]]:
    """``spawn()``: a worker in a namespace of its own, and its namespace."""
    settings = app_settings(app)
    started: list[Worker] = []

    def start() -> tuple[Worker, Namespace]:
        ns = namespaces()
        database = urlsplit(settings.database_url)
        venue = urlsplit(venue_server.gamma_url)
        redis_at = urlsplit(redis_url)
        venue_at = ns.forward("venue", venue.port)
        env = {k: v for k, v in os.environ.items() if not k.startswith("POLYMARKET_")}
        env.update(
            DATABASE_URL=_rehost(settings.database_url,
                                 ns.forward("services", database.port)),
            REDIS_URL=_rehost(redis_url, ns.forward("services", redis_at.port)),
            REDIS_PREFIX=engine_prefix, COPYTRADE_INSTANCE=str(tmp_path / "instance"),
            VENUE="sandbox",
            **{name: _rehost(getattr(venue_server, attribute), venue_at) for name, attribute
               in (("POLYMARKET_GAMMA_URL", "gamma_url"), ("POLYMARKET_CLOB_URL", "clob_url"),
                   ("POLYMARKET_DATA_URL", "data_url"),
                   ("POLYMARKET_RTDS_URL", "rtds_url"))},
            SECRET_KEY=settings.secret_key,
            WALLET_ENCRYPTION_KEY=settings.wallet_encryption_key,
            WORKER_HEARTBEAT_SECONDS="0.5", COPY_LEASE_MS="2000", COPY_HEARTBEAT_SECONDS="0.3",
            COPY_SWEEP_SECONDS="0.3", COPY_POLL_SECONDS="0.3", COPY_BACKSTOP_POLL_SECONDS="1",
        )
        worker = Worker(ns, tmp_path, env)
        started.append(worker)
        return worker, ns

    yield start
    for worker in started:
        worker.close()


def wait(check: Callable[[], Any], what: str, workers: list[Worker],
         timeout: float = DEADLINE) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {w.log.name}\n{w.text()[-4000:]}" for w in workers)
            raise AssertionError(f"timed out waiting for {what}\n{logs}")
        time.sleep(0.1)


def inject(venue_control: Any, wallet: str, token: str, size: str) -> None:
    venue_control.call("POST", "/trades", {"wallet": wallet, "token_id": token, "side": "BUY",
                                           "size": size, "price": "0.5"}, expect=201)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_worker_cut_off_from_redis_and_postgresql_neither_doubles_nor_loses_a_copy(
        spawn, make_config, trader, market, target, venue_control, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    a, a_ns = spawn()
    owner = lambda: owner_pid(lease_owner(redis_url, engine_prefix, target))  # noqa: E731
    wait(lambda: owner() == a.pid, "worker A to own the target", [a])
    b, _ = spawn()
    client = redis.Redis.from_url(redis_url)
    engines = copy_leases.engines_key(engine_prefix)
    wait(lambda: len(client.smembers(engines)) == 2, "worker B's engine to heartbeat", [a, b])

    def filled(count: int) -> Callable[[], Any]:
        def check() -> Any:
            rows = intents(config)
            return rows if len(rows) == count and all(r.status == "filled" for r in rows) \
                else None
        return check

    inject(venue_control, target, market.yes, "10")
    wait(filled(1), "A to copy the first trade", [a, b])
    assert owner() == a.pid

    # A loses Redis and PostgreSQL, not the venue: it still sees the target's trades.
    a_heartbeat = copy_leases.engine_key(lease_owner(redis_url, engine_prefix, target) or "",
                                         engine_prefix)
    a_ns.cut("services")
    inject(venue_control, target, market.yes, "11")
    wait(lambda: owner() == b.pid, "B to take the target over", [a, b], timeout=30)
    inject(venue_control, target, market.yes, "12")
    wait(filled(3), "B to copy the trades made during the partition", [a, b])
    with db.connection_context():
        fence = TargetFence.get(TargetFence.target_address == target).token
    assert "no lease renewal" in a.text()  # A stopped by its own clock, not by being told
    assert not client.exists(a_heartbeat)

    a_ns.heal("services")
    # Back, heartbeating, and running nothing: it does not take the target back.
    wait(lambda: client.hget(a_heartbeat, "targets") == b"0", "A to heartbeat again", [a, b],
         timeout=60)
    assert owner() == b.pid
    inject(venue_control, target, market.yes, "13")
    rows = wait(filled(4), "the trade after the partition to be copied", [a, b])

    # Nothing doubled, nothing lost: one order per target trade at the venue.
    sent = orders_from(venue_control, trader.address)
    assert len(sent) == 4, sent
    assert sorted(r.size for r in rows) == [Decimal(s) for s in ("10", "11", "12", "13")]
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "46"}
    by_size = {r.size: r for r in rows}
    assert by_size[Decimal(10)].fence < fence  # A's, before the take-over
    assert {by_size[Decimal(s)].fence for s in ("11", "12", "13")} == {fence}  # B's
    assert all(r.worker == by_size[Decimal(11)].worker for r in rows[1:])
    with db.connection_context():
        assert CopyIntent.select().where(CopyIntent.config == config.id,
                                         CopyIntent.status != "filled").count() == 0
