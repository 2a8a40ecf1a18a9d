"""The operator commands on a running stack: two real worker processes holding copy leases.

``copytrade status`` (text and ``--json``), ``jobs retry``/``purge``, ``executors move`` and
``worker --drain`` run as subprocesses against the same database, Redis prefix and sandbox
venue as the workers, the way an operator on another machine would run them.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest
from eth_account import Account

from models.base import db
from models.copying import CopyIntent
from services.platform import jobs as jobs_service
from services.platform import runtime
from tests.conftest import DEADLINE, use_queue
from tests.operations.stack import WorkerProcess, cli, stack_env, wait
from tests.worker.copy_engine.conftest import cursor_of


@pytest.fixture
def deployment(app, tmp_path, redis_url, engine_prefix, venue_server) -> Iterator[dict]:
    """The environment of a test deployment, with a ``spawn()`` for worker processes."""
    env = stack_env(app, redis_url, engine_prefix, venue_server, tmp_path / "instance")
    # The workers' periodic jobs (the notifications tick, the deposit and claim sweeps) would
    # come and go in the queues whose depth the status is checked against: queued once at
    # the start, then not again during the test.
    env.update(NOTIFY_TICK_SECONDS="3600", DEPOSIT_SWEEP_SECONDS="0", CLAIM_SWEEP_SECONDS="0")
    started: list[WorkerProcess] = []

    def spawn() -> WorkerProcess:
        worker = WorkerProcess(env, tmp_path)
        started.append(worker)
        return worker

    saved = use_queue(redis_url, engine_prefix)  # this test's enqueues
    yield {"env": env, "spawn": spawn}
    runtime.install(saved)
    for worker in started:
        worker.close()


def intents(config) -> list[CopyIntent]:
    """A config's intents (fresh connection)."""
    with db.connection_context():
        return list(CopyIntent.select().where(CopyIntent.config == config.id))


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_status_jobs_and_move_on_a_running_stack(deployment, make_config, make_trader):
    """status, jobs retry/purge and executors move against two live workers.

    PostgreSQL only: the stack's two worker processes and the CLI processes share the
    database as a deployment does (a deployment with several workers runs PostgreSQL), and
    what differs between the databases here (the intents' writes and unique keys, the
    cursors) is covered on both by the lighter tests of tests/worker/copy_engine; the
    SQLite run repeated the same processes at the suite's third-highest CPU cost.
    """
    env, spawn = deployment["env"], deployment["spawn"]
    targets = [Account.create().address.lower() for _ in range(2)]
    configs = [make_config(make_trader("0").user, t, paper_trading=True) for t in targets]
    a, b = spawn(), spawn()
    by_name = {a.name: a, b.name: b}
    wait(lambda: len(a.leases()) == 1 and len(b.leases()) == 1, DEADLINE,
         "one target on each worker", [a, b])
    failing = jobs_service.enqueue("no.such.job")
    wait(lambda: failing.get_status(refresh=True).value == "failed", DEADLINE, "the job to fail",
         [a, b])
    # Jobs queued at the start (a new trader's checks, the first tick) are taken by the busy
    # workers in their time: the status below is read once the queue is empty.
    wait(lambda: jobs_service.queue("default").count == 0, DEADLINE, "the queue to drain",
         [a, b])

    text = cli(env, "status")
    assert "WORKERS (2)" in text and "FAILED JOBS (1)" in text and "COPY EXECUTORS (2)" in text
    for worker in (a, b):
        assert worker.name in text and str(worker.pid) in text
    assert failing.id in text and "UnknownJob" in text
    # each engine's detection source and what it spends, then every source's cost and delay
    assert "DETECTION (2 engines)" in text and "DETECTION SOURCES" in text
    sources = text[text.index("DETECTION SOURCES"):].splitlines()[2:6]
    assert [line.split()[0] for line in sources] == ["feed", "matched", "chain", "poll"]
    assert "eth_getLogs" in sources[2] and "22 s" in sources[3]
    for config in configs:
        line = next(line for line in text.splitlines() if str(config.id) in line)
        assert (a.name in line) != (b.name in line)  # owned by exactly one worker

    data = json.loads(cli(env, "status", "--json"), parse_float=Decimal)
    workers = {w["id"]: w for w in data["workers"]}
    assert set(workers) == {a.name, b.name}
    for name, worker in workers.items():
        assert worker["pid"] == by_name[name].pid and worker["host"]
        assert worker["heartbeat_age_seconds"] < 5 and worker["started_at"]
        assert worker["leases"] == by_name[name].leases()
    assert sorted(t for w in workers.values() for t in w["leases"]) == sorted(targets)
    queues = {q["name"]: q for q in data["queues"]}
    assert set(queues) == {"high", "default", "low", "replays"}
    assert queues["default"]["failed"] == 1 and queues["default"]["depth"] == 0
    assert data["failed"]["count"] == 1
    newest = data["failed"]["newest"][0]
    assert newest["id"] == failing.id and newest["job"] == "no.such.job"
    assert newest["reason"].startswith("UnknownJob")
    executors = {e["config_id"]: e for e in data["executors"]}
    assert set(executors) == {str(c.id) for c in configs}
    assert set(data["detection"]) == {a.name, b.name}
    assert {row["detection"] for row in data["detection"].values()} <= {
        "feed", "matched", "chain", "poll"}
    assert [s["source"] for s in data["detection_sources"]] == ["feed", "matched", "chain",
                                                                  "poll"]
    for config in configs:
        assert executors[str(config.id)]["owner"] in (a.name, b.name)
        assert executors[str(config.id)]["target"] == config.target_address

    # retry: the failed job runs again (and fails again: its name is still unknown).
    first_failure = newest["failed_at"]
    assert f"re-queued {failing.id}" in cli(env, "jobs", "retry", failing.id)
    wait(lambda: failing.get_status(refresh=True).value == "failed"
         and json.loads(cli(env, "status", "--json"))["failed"]["newest"][0]["failed_at"]
         != first_failure, DEADLINE, "the retried job to run", [a, b])
    assert "1 job(s) re-queued" in cli(env, "jobs", "retry", "--all-failed")
    wait(lambda: failing.get_status(refresh=True).value == "failed", DEADLINE, "it to fail again")
    refused = cli(env, "jobs", "retry", "no-such-id", ok=False)
    assert "no failed job" in refused

    # purge: a fresh failure is kept at 7d, gone at 0s.
    assert "purged 0 failed job(s)" in cli(env, "jobs", "purge", "--failed",
                                           "--older-than", "7d")
    assert "purged 1 failed job(s)" in cli(env, "jobs", "purge", "--failed",
                                           "--older-than", "0s")
    assert "FAILED JOBS (0)" in cli(env, "status")

    # move: the config's target goes to the other worker at once, and stays there.
    config = configs[0]
    before = a if config.target_address in a.leases() else b
    other = b if before is a else a
    out = cli(env, "executors", "move", str(config.id))
    assert f"released target {config.target_address} from {before.name}" in out
    assert f"now run by {other.name}" in out
    time.sleep(3)  # several sweeps and lease renewals later
    assert config.target_address in other.leases()
    assert config.target_address not in before.leases()
    moved = {e["config_id"]: e for e in json.loads(cli(env, "status", "--json"))["executors"]}
    assert moved[str(config.id)]["owner"] == other.name


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_drain_hands_executors_over_without_a_missed_or_duplicate_copy(
        deployment, make_config, make_trader, market, venue_control):
    """A drained worker's executors go to the other, no trade missed or copied twice.

    PostgreSQL only: the stack's two worker processes and the CLI processes share the
    database as a deployment does (a deployment with several workers runs PostgreSQL), and
    what differs between the databases here (the intents' writes and unique keys, the
    cursors) is covered on both by the lighter tests of tests/worker/copy_engine; the
    SQLite run repeated the same processes at the suite's third-highest CPU cost.
    """
    env, spawn = deployment["env"], deployment["spawn"]
    targets = [Account.create().address.lower() for _ in range(3)]
    copiers = [make_trader() for _ in targets]
    configs = [make_config(c.user, t) for c, t in zip(copiers, targets, strict=True)]
    a, b = spawn(), spawn()
    wait(lambda: len(a.leases()) + len(b.leases()) == 3 and a.leases() and b.leases(), DEADLINE,
         "the targets spread over both workers", [a, b])
    wait(lambda: all(cursor_of(t) is not None for t in targets), DEADLINE,
         "every watcher to read its cursor", [a, b])

    trades = {t: 0 for t in targets}
    stop = threading.Event()

    def trade_continuously() -> None:
        while not stop.is_set():
            for target in targets:
                venue_control.call("POST", "/trades", {
                    "wallet": target, "token_id": market.yes, "side": "BUY", "size": "5",
                    "price": "0.5"}, expect=201)
                trades[target] += 1
            time.sleep(0.4)

    trader = threading.Thread(target=trade_continuously)
    trader.start()
    try:
        time.sleep(1.5)
        # a copies before it drains (the test ends asking that both workers copied)
        wait(lambda: any(i.worker == a.name for c in configs for i in intents(c)), DEADLINE,
             "a to copy a trade", [a])
        drained = a.leases()
        out = cli(env, "worker", "--drain", "--id", a.name, "--timeout", "60")
        assert f"{a.name}: exited" in out
        try:
            assert a.proc.wait(timeout=DEADLINE) == 0, a.text()[-6000:]
        except subprocess.TimeoutExpired:
            a.proc.send_signal(signal.SIGUSR1)  # its threads' stacks, into its log
            time.sleep(2)
            pytest.fail("a did not exit after its drain:\n" + a.text()[-12000:])
        assert "drain requested" in a.text()
        # b took the drained worker's executors over (the drain released their leases and
        # told the others: claimed at b's next sweep)
        wait(lambda: set(b.leases()) == set(targets), DEADLINE, "b to own every target", [b])
        time.sleep(1.5)  # b copies a few trades too
        wait(lambda: any(i.worker == b.name for c in configs for i in intents(c)
                         if c.target_address in drained), DEADLINE,
             "b to copy a trade of a drained target", [b])
    finally:
        stop.set()
        trader.join()
    assert drained and sum(trades.values()) >= 9

    def all_copied() -> bool:
        return all(len(intents(c)) == trades[c.target_address]
                   and all(i.status == "filled" for i in intents(c)) for c in configs)

    wait(all_copied, DEADLINE, "every trade copied", [b])
    time.sleep(2)  # a late duplicate would show up now
    for config, copier in zip(configs, copiers, strict=True):
        rows = intents(config)
        assert len(rows) == trades[config.target_address]  # none missed, none twice
        assert len({r.target_trade_key for r in rows}) == len(rows)
        orders = [e for e in venue_control.received_orders()
                  if e["body"]["order"]["maker"].lower() == copier.address.lower()]
        assert len(orders) == len(rows)  # one venue order per target trade
    assert {r.worker for c in configs for r in intents(c)} == {a.name, b.name}

    # A worker restarted after all were gone resumes from the saved cursors: the trade
    # made while nobody ran is copied once.
    cli(env, "worker", "--drain", "--id", b.name, "--timeout", "60")
    target = targets[0]
    venue_control.call("POST", "/trades", {"wallet": target, "token_id": market.yes,
                                           "side": "BUY", "size": "7", "price": "0.5"},
                       expect=201)
    c = spawn()
    wait(lambda: set(c.leases()) == set(targets), DEADLINE, "the new worker to take over", [c])
    config = configs[0]
    rows = wait(lambda: [r for r in intents(config) if r.target_size == Decimal(7)
                         and r.status == "filled"], DEADLINE, "the missed trade copied", [c])
    assert len(rows) == 1
    assert len(intents(config)) == trades[target] + 1
