"""The copy engine at scale: N worker processes on PostgreSQL share the configs' targets.

A sibling of ``bench/copy_latency.py`` (whose venue process, trade injector, runtime and
users it reuses). It starts the sandbox venue in a process of its own, makes a fresh
PostgreSQL schema (``--schema``, dropped and re-created: a scratch schema), creates
``--users`` funded users and bulk-inserts ``--configs`` live configs over ``--targets``
target wallets (each target's configs belong to different users), then starts
``--workers`` processes, each running one ``CopyEngine`` as ``copytrade worker`` does
(RTDS feed on, polling as backstop, the default lease and sweep timings), which split
the targets through the Redis leases. It measures:

- time until every target runs (held and ready) and the leases are balanced, and the
  targets and configs per worker;
- idle traffic (``--idle-seconds``): venue requests by endpoint, counted by the venue
  (``GET /_sandbox/requests``), as mean per second and the busiest 10 s window, against
  the venue's documented limits; each worker's CPU, SQL statements and Redis round trips
  per second;
- per-order overhead for ``--samples`` target trades (each fanned out to configs ÷
  targets copies), as in ``copy_latency.py``: the venue's publish stamp of the target's
  fill to the venue's arrival stamp of each copy order; CPU, SQL statements, commits and
  Redis round trips per copy (the idle rates subtracted);
- with ``--takeover``: one worker is killed (SIGKILL), a trade is injected at once for
  ``--takeover-samples`` of its targets (each in a market of its own), and the time from
  the kill until the other workers hold its leases, run all its targets, and the venue
  received the copies of those trades;
- RSS per worker (after loading, and at the end);
- the machine's 1-minute load average, read every second (its mean while copying is
  printed beside the figures: on a shared machine the load moves them most).

``--alternate REV --runs N`` runs REV (a ``git worktree`` of it in a temp dir) and this tree
in turns, each under this harness (``--code``), and prints every run and the ratios of the
medians (``bench/alternation.py``).

Prints one Markdown row of figures per run, after the details::

    .venv/bin/python bench/copy_scale.py --workers 4 --configs 100000 --targets 10000 \\
        --users 1000 --samples 50 --takeover
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import Any

# With --code DIR (a worktree of another commit) the imports below, and the workers, run
# that tree's code under this harness.
sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
                       if "--code" in sys.argv[:-1] else Path(__file__).resolve().parent.parent))

from bench.copy_latency import (
    Injector,
    VenueProcess,
    add_scale_arguments,
    create_users,
    install_runtime,
    percentile,
)

CODE_TREE = str(Path(sys.modules["bench.copy_latency"].__file__ or "").resolve().parent.parent)
STATUS_SECONDS = 0.1  # how often a worker reports its counters to the harness
DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"

# The venue's documented limits per endpoint family (docs.polymarket.com/api-reference/
# rate-limits; ACCOUNTS.md §7.4): (family, endpoints counted in it, per 10 s, per 10 min).
VENUE_LIMITS: list[tuple[str, tuple[str, ...], int, int | None]] = [
    ("CLOB POST /order", ("POST /clob/order",), 3500, 36000),
    ("CLOB POST /orders", ("POST /clob/orders",), 1000, 15000),
    ("CLOB DELETE /order", ("DELETE /clob/order",), 3000, 30000),
    ("CLOB GET /balance-allowance", ("GET /clob/balance-allowance",), 200, None),
    ("CLOB GET /book", ("GET /clob/book",), 1500, None),
    ("CLOB /data/orders", ("GET /clob/data/orders",), 500, None),
    ("CLOB /data/trades", ("GET /clob/data/trades",), 500, None),
    ("CLOB ledger (/data/order)", ("GET /clob/data/order/<order_id>",), 900, None),
    ("CLOB API keys", ("POST /clob/auth/api-key", "GET /clob/auth/derive-api-key"), 100, None),
    ("CLOB (all)", ("/clob/",), 9000, None),
    ("Data API /positions", ("GET /data/positions", "GET /data/v2/positions"), 150, None),
    ("Data API (all, /activity polls)", ("/data/",), 1000, None),
    ("Gamma /markets", ("GET /gamma/markets", "GET /gamma/markets/keyset"), 300, None),
    ("Gamma (all)", ("/gamma/",), 4000, None),
    ("all endpoints", ("",), 15000, None),
]


# -- a worker process ----------------------------------------------------------------------

class _Counters:
    sql = 0  # statements sent (execute and executemany calls), BEGIN and COMMIT aside
    commits = 0
    redis = 0  # round trips (a pipeline or a script is one)


def _load_stages(path: str = "stages.py") -> Any:
    """``bench/stages.py`` (or another of ``path``) of this harness, not of the ``--code``
    tree: the base and this tree are measured the same way."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{Path(path).stem}",
                                                  Path(__file__).parent / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _count_database_calls(database: Any, each: Callable[[], None] | None = None) -> None:
    """Count the statements and commits of ``database``'s PostgreSQL connections (peewee
    sends BEGIN and COMMIT as statements: its connections are in autocommit mode); ``each``
    is called for every statement counted."""
    import psycopg2.extensions

    class Cursor(psycopg2.extensions.cursor):
        def execute(self, query: Any, vars: Any = None) -> Any:
            if query == "COMMIT":
                _Counters.commits += 1
            elif not (isinstance(query, str) and query.startswith("BEGIN")):
                _Counters.sql += 1
                if each is not None:
                    each()
            return super().execute(query, vars)

        def executemany(self, query: Any, vars_list: Any) -> Any:
            _Counters.sql += 1
            if each is not None:
                each()
            return super().executemany(query, vars_list)

    class Connection(psycopg2.extensions.connection):
        def cursor(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("cursor_factory", Cursor)
            return super().cursor(*args, **kwargs)

    database.connect_params["connection_factory"] = Connection


def _count_redis_calls() -> None:
    import redis.connection

    send = redis.connection.AbstractConnection.send_packed_command

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        _Counters.redis += 1
        send(self, command, check_health)

    redis.connection.AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]


def _proc_rss_mb(pid: int | str = "self") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run_worker(name: str, venue_url: str, database_url: str, redis_url: str, prefix: str,
               staged: bool = False, waits: bool = False) -> None:
    """One copy engine, as ``copytrade worker`` runs it; prints its counters as JSON lines
    (with ``staged``, the CPU and SQL statements of each stage of the copy path too)."""
    import redis
    import trio

    from models import database as database_module
    from worker.copy_engine.engine import CopyEngine, EngineSettings

    os.environ["COPYTRADE_INSTANCE"] = tempfile.mkdtemp(prefix="copyscale-")
    install_runtime(venue_url, redis_url, prefix)
    database = database_module.bind(database_url, fold_on_commit=False)
    stages = _load_stages() if staged else None
    if stages is not None:
        stages.install()
    fill_waits = _load_stages("fill_waits.py") if waits else None
    if fill_waits is not None:
        fill_waits.install()
    _count_database_calls(database, stages.count_sql if stages is not None else None)
    _count_redis_calls()
    # The sandbox carries no trades but the bench's: a feed idle for feed_stale_seconds
    # would count as stale (reconnecting, polling fast) as the venue's never does, and
    # the harness waits for live feeds. The other timings are production's.
    engine = CopyEngine(name, redis.Redis.from_url(redis_url), prefix,
                        EngineSettings(feed_stale_seconds=0))
    baseline = _proc_rss_mb()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            tick, targets, ready, configs = 0, 0, 0, 0
            while True:
                if tick % 10 == 0:  # walking every watcher costs: not each tick
                    watchers = list(engine.targets.values())
                    targets = len(watchers)
                    ready = sum(1 for w in watchers if w.ready.is_set())
                    configs = sum(len(w.configs) for w in watchers)
                tick += 1
                times = os.times()
                stats = engine.stats
                print(json.dumps({
                    "targets": targets, "ready": ready, "configs": configs,
                    "orders": stats.orders, "polls": stats.polls,
                    "poll_requests": stats.poll_requests, "feed": engine.feed_connected,
                    "feed_fills": stats.feed_fills, "poll_fills": stats.poll_fills,
                    "matched_fills": getattr(stats, "matched_fills", 0),
                    "cpu": times.user + times.system, "sql": _Counters.sql,
                    "commits": _Counters.commits, "redis": _Counters.redis,
                    "rss_base": baseline,
                    **({"stages": stages.snapshot()} if stages is not None else {}),
                    **({"waits": fill_waits.snapshot()} if fill_waits is not None
                       and tick % 10 == 0 else {})}),
                    flush=True)
                await trio.sleep(STATUS_SECONDS)

    try:
        trio.run(main)
    except* KeyboardInterrupt:  # the harness stops it (SIGINT): the leases were released
        pass


class Worker:
    """A worker process and its latest counters."""

    def __init__(self, name: str, venue_url: str, database_url: str, redis_url: str,
                 prefix: str, staged: bool = False, waits: bool = False) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", name, "--venue-url", venue_url,
             "--database-url", database_url, "--redis-url", redis_url, "--prefix", prefix,
             "--code", CODE_TREE, *(["--stages"] if staged else []),
             *(["--waits"] if waits else [])],
            stdout=subprocess.PIPE, text=True)
        self.status: dict[str, Any] = {}
        self.alive = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                status = json.loads(line)
                if "waits" not in status and "waits" in self.status:
                    status["waits"] = self.status["waits"]  # sent every tenth report
                self.status = status

    def get(self, key: str) -> float:
        """The latest value of one counter (0 before the first report)."""
        return self.status.get(key, 0)

    def rss_mb(self) -> float:
        """The process's resident set size now, MB."""
        return _proc_rss_mb(self.process.pid)

    def kill(self) -> None:
        """SIGKILL: no lease is released, no goodbye."""
        self.alive = False
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """Stop gracefully (the engine releases its leases)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.alive = False


# -- the harness ------------------------------------------------------------------------------

class LoadSampler:
    """The machine's 1-minute load average, read every second in a thread: the noise the
    figures were measured in (other processes compete for the same cores)."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (time.time(), load)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.time(), os.getloadavg()[0]))
            self._stop.wait(1.0)

    def between(self, start: float, end: float) -> tuple[float, float]:
        """Mean and highest load read in [start, end] (the latest reading if none)."""
        loads = [load for at, load in self.samples if start <= at <= end] or [
            self.samples[-1][1] if self.samples else os.getloadavg()[0]]
        return sum(loads) / len(loads), max(loads)

    def stop(self) -> None:
        """Stop reading."""
        self._stop.set()


def scratch_schema(url: str, schema: str) -> str:
    """Drop and re-create ``schema``; the URL whose connections work inside it."""
    from models.database import open_database

    if not schema.isidentifier() or schema.lower() == "public":
        raise SystemExit(f"--schema {schema!r}: a scratch schema name, not public")
    admin = open_database(url)
    with admin.connection_context():
        admin.execute_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.execute_sql(f'CREATE SCHEMA "{schema}"')
    admin.close_all()
    return f"{url}{'&' if '?' in url else '?'}options=-c%20search_path%3D{schema}"


def seed(control: Any, users: int, configs: int, targets: int, threads: int = 4
         ) -> list[str]:
    """Users (in ``threads`` threads) and live configs (bulk); the target addresses."""
    from eth_account import Account

    from models.base import db, utcnow
    from models.bulk import insert_rows
    from models.copying import CopyConfig

    def make(count: int) -> list[Any]:
        with db.connection_context():
            return create_users(control, count)

    with ThreadPoolExecutor(threads) as pool:
        shares = [users // threads + (1 if i < users % threads else 0) for i in range(threads)]
        made = [u for part in pool.map(make, [s for s in shares if s]) for u in part]
    addresses = [Account.create().address.lower() for _ in range(targets)]
    now = utcnow()
    rows = []
    for i in range(configs):
        target, nth = i % targets, i // targets
        per_target = math.ceil(configs / targets)
        rows.append({  # a target's configs belong to consecutive (different) users
            "id": uuid.uuid4(), "user": made[(target * per_target + nth) % len(made)].id,
            "target_address": addresses[target], "size_multiplier": Decimal("0.5"),
            "max_position_usdc": Decimal(100000), "price_deviation_bps": 500,
            "blocked_categories": "[]", "is_active": True, "paper_trading": False,
            "started_at": now, "created_at": now, "updated_at": now})
    with db.connection_context(), db.atomic():
        insert_rows(CopyConfig, rows, chunk=1000)
    return addresses


def sweep_queries(runs: int = 7) -> str:
    """The median time of the queries every engine's sweep runs (each second: the configs
    written since its last look; on a change, the active counts of the targets changed;
    every ``full_sweep_seconds``, the full read of the active targets), timed from here:
    the database's share of an idle worker."""
    from models.base import db
    from models.copying import CopyConfig
    from worker.copy_engine import store

    def changed() -> None:  # one config written, then what the next sweep reads
        config = CopyConfig.select(CopyConfig.id, CopyConfig.target_address).first()
        mark = store.latest_revision()
        CopyConfig.update(last_error=None).where(CopyConfig.id == config.id).execute()
        store.active_targets([c.target for c in store.config_changes(mark)])

    # (A tree under --code may lack the change counter: its cells read nan.)
    revisions = getattr(store, "config_changes", None) is not None
    if revisions:
        with db.connection_context():
            mark = store.latest_revision()
    timings = []
    for query in ((lambda: store.config_changes(mark), changed) if revisions
                  else (None, None)) + (store.active_targets,):
        if query is None:
            timings.append(float("nan"))
            continue
        with db.connection_context():
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                query()
                times.append((time.perf_counter() - started) * 1000)
        timings.append(percentile(times, 50))
    return (f"a sweep's changes query {timings[0]:.1f} ms, one config written and read back "
            f"with its target's count {timings[1]:.1f} ms, the full read of the active "
            f"targets {timings[2]:.1f} ms")


def wait_for(condition: Callable[[], bool], seconds: float, what: str,
             every: float = 0.1) -> float:
    """Wait until ``condition()``; the seconds it took (exits saying ``what`` on timeout)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > seconds:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(every)
    return time.monotonic() - started


def venue_rates(control: Any, start: float, end: float) -> dict[str, tuple[float, int]]:
    """Per endpoint: mean requests per second over [start, end) and the busiest 10 s."""
    tally = control.get("/requests", params={"since": int(start)}).json()
    first, last = int(start), int(end)
    rates = {}
    for endpoint, per_second in tally.items():
        counts = [per_second.get(str(s), 0) for s in range(first, last)]
        windows = [sum(counts[i:i + 10]) for i in range(max(1, len(counts) - 9))]
        rates[endpoint] = (sum(counts) / max(1, last - first), max(windows))
    return rates


def _in_family(endpoint: str, members: tuple[str, ...]) -> bool:
    # A member is an endpoint ("GET /clob/book") or a path prefix ("/clob/"; "" is all).
    path = endpoint.partition(" ")[2]
    return any(endpoint == m or (m[:1] in ("", "/") and path.startswith(m)) for m in members)


def family_rates(rates: dict[str, tuple[float, int]]
                 ) -> list[tuple[str, float, int, int, int | None]]:
    """Each documented limit's family: (family, mean/s, busiest 10 s, limit/10 s, /10 min)."""
    rows = []
    for family, members, per_10s, per_10min in VENUE_LIMITS:
        chosen = {e: r for e, r in rates.items() if _in_family(e, members)}
        if chosen or family == "all endpoints":
            rows.append((family, sum(r[0] for r in chosen.values()),
                         sum(r[1] for r in chosen.values()), per_10s, per_10min))
    return rows


def print_rates(title: str, rates: dict[str, tuple[float, int]]) -> None:
    """The endpoints' rates, then the families against the documented limits."""
    print(f"  {title}:")
    for endpoint, (mean, peak) in sorted(rates.items()):
        print(f"    {endpoint}: {mean:.1f}/s (busiest 10 s: {peak})")
    for family, mean, peak, per_10s, per_10min in family_rates(rates):
        share = peak / per_10s * 100
        sustained = (f", {mean * 600:.0f} per 10 min of {per_10min:,}" if per_10min else "")
        flag = "  ** ABOVE THE LIMIT **" if peak > per_10s else ""
        print(f"    {family}: busiest 10 s {peak} of {per_10s:,} ({share:.0f}%){sustained}"
              f"{flag}")


def stage_totals(workers: list[Worker]) -> dict[str, dict[str, float]]:
    """The live workers' stage counters, summed (``--stages``)."""
    return _load_stages().add([w.status for w in workers if w.alive])


def stage_figures(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]],
                  orders: int, per_copy: dict[str, float], idle_rate: dict[str, float],
                  elapsed: float) -> dict[str, float]:
    """Each stage's CPU and SQL statements per copy (``bench/stages.py``)."""
    return _load_stages().figures(before, after, orders, per_copy["cpu"], idle_rate["cpu"],
                                  elapsed)


def print_stage_table(figures: dict[str, Any], copies: int,
                      load: tuple[float, float]) -> None:
    """The per-stage budget beside each stage's floor, measured now (``bench/floors/``)."""
    floors = _load_stages("floors/run.py").measure(copies)
    print(f"  CPU per stage, per copy order ({figures['orders']} copies, {copies} per fill; "
          f"machine load {load[0]:.1f}, at most {load[1]:.1f}, on {os.cpu_count()} cores):")
    for row in _load_stages().table(figures, floors):
        print(f"  {row}")


def totals(workers: list[Worker], key: str) -> float:
    """A counter summed over the live workers."""
    return sum(w.get(key) for w in workers if w.alive)


@contextlib.contextmanager
def profiling(workers: list[Worker], folder: str, seconds: float) -> Iterator[None]:
    """py-spy records every live worker for ``seconds`` (collapsed stacks in ``folder``),
    only while a thread holds the interpreter: where the CPU goes, not the waits."""
    spy = str(Path(sys.executable).with_name("py-spy"))
    records = []
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for w in workers:
            if w.alive:
                records.append(subprocess.Popen(
                    [spy, "record", "--pid", str(w.process.pid), "--duration",
                     str(int(seconds)), "--rate", "200", "--format", "raw", "--gil",
                     "--nonblocking", "--output", f"{folder}/{w.name}.txt"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        yield
    finally:
        for record in records:
            with contextlib.suppress(subprocess.TimeoutExpired):
                record.wait(timeout=seconds + 30)


def print_profile(folder: str, top: int = 25) -> None:
    """The recorded workers' busiest functions: own samples, and samples beneath them."""
    own: dict[str, int] = {}
    beneath: dict[str, int] = {}
    total = 0
    for path in Path(folder).glob("*.txt"):
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = [f.strip() for f in stack.split(";")]
            frames = [f for f in frames if not f.startswith(("process ", "thread "))] or frames
            total += int(count)
            own[frames[-1]] = own.get(frames[-1], 0) + int(count)
            for frame in set(frames):
                beneath[frame] = beneath.get(frame, 0) + int(count)
    if not total:
        return
    print(f"  profile ({total} samples in {folder}): own time")
    for frame, n in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {n / total * 100:5.1f}%  {frame}")
    print("  inclusive")
    for frame, n in sorted(beneath.items(), key=lambda kv: -kv[1])[:top * 2]:
        print(f"    {n / total * 100:5.1f}%  {frame}")


def main() -> None:
    """Run one configuration and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    add_scale_arguments(parser, configs=2000, targets=200, users=100)
    parser.add_argument("--idle-seconds", type=float, default=20.0,
                        help="the idle window whose traffic is measured (polls, leases)")
    parser.add_argument("--takeover", action="store_true",
                        help="kill one worker (SIGKILL) and time the take-over of its targets")
    parser.add_argument("--takeover-samples", type=int, default=5)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument("--schema", default="copyscale",
                        help="a scratch schema, dropped and re-created")
    parser.add_argument("--py-spy", default="",
                        help="record every worker with py-spy during the samples into this "
                             "folder (collapsed stacks, one file per worker)")
    # A worker process (started by the harness).
    parser.add_argument("--worker", default="", help=argparse.SUPPRESS)
    parser.add_argument("--venue-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--prefix", default="", help=argparse.SUPPRESS)
    parser.add_argument("--code", default="", help="run this tree's code (a worktree of "
                        "another commit) under this harness")
    parser.add_argument("--stages", action="store_true",
                        help="count CPU and SQL statements per stage of the copy path in the "
                             "workers (bench/stages.py), measure each stage's floor "
                             "(bench/floors/) and print the budget table")
    parser.add_argument("--waits", action="store_true",
                        help="time each fill from the feed's hand-over to its first order, "
                             "by part, in the workers (bench/fill_waits.py), and print the "
                             "slowest fills' parts")
    parser.add_argument("--summary", default="", help="also write the figures as JSON here")
    parser.add_argument("--alternate", default="", metavar="REV",
                        help="run REV (a worktree of it in a temp dir) and this tree "
                             "alternately, --runs times each, and print the ratios")
    parser.add_argument("--runs", type=int, default=3, help="runs of each with --alternate")
    args = parser.parse_args()
    if args.alternate:
        from bench.alternation import alternate
        alternate(__file__, args.alternate, args.runs, _passed_on(sys.argv[1:]))
        return
    if args.worker:
        run_worker(args.worker, args.venue_url, args.database_url, args.redis_url,
                   args.prefix, args.stages, args.waits)
        return
    os.environ["COPYTRADE_INSTANCE"] = tempfile.mkdtemp(prefix="copyscale-")
    os.environ.setdefault("WALLET_ENCRYPTION_KEY", secrets.token_hex(32))  # the workers' too
    run(args)


def _passed_on(argv: list[str]) -> list[str]:
    """The options each alternated run takes: these, less the alternation's own."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--alternate", "--runs", "--summary", "--code"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def run(args: argparse.Namespace) -> None:
    """The harness: venue, database, workers, then each measurement in turn."""
    import httpx
    import redis

    from models import database as database_module
    from models import migrate
    from services.platform.copy_leases import lease_key

    venue = VenueProcess(seed=3)
    venue_url = venue.gamma_url.removesuffix("/gamma")
    prefix = f"copyscale-{secrets.token_hex(3)}:"
    workers: list[Worker] = []
    injector = Injector(venue.control_url)
    load = LoadSampler()
    run_start = time.time()
    try:
        install_runtime(venue_url, args.redis_url, prefix)
        url = scratch_schema(args.database_url, args.schema)
        database = database_module.bind(url, fold_on_commit=False)
        with database.connection_context():
            migrate.migrate(database)
        control = httpx.Client(base_url=venue.control_url, timeout=60)
        slugs = ["scale-0"] + [f"scale-takeover-{i}" for i in range(args.takeover_samples)]
        for slug in slugs:
            control.post("/markets", json={"slug": slug, "question": f"Bench {slug}?",
                                           "liquidity": True, "fair_price": "0.5",
                                           "category": "politics"})
        by_slug = {m["slug"]: m["token_ids"][0] for m in control.get("/state").json()["markets"]}
        started = time.monotonic()
        targets = seed(control, args.users, args.configs, args.targets)
        seeded = time.monotonic() - started

        def per_target(address: str) -> int:  # configs i copy target i % targets
            index = targets.index(address)
            return args.configs // len(targets) + (index < args.configs % len(targets))
        print(f"  seeded {args.users} users and {args.configs} configs over {args.targets} "
              f"targets in {seeded:.1f} s; {sweep_queries()}", flush=True)

        control.delete("/requests")  # the seeding's own requests are not the workers'
        started, start_wall = time.monotonic(), time.time()
        workers = [Worker(f"scale-{i}", venue_url, url, args.redis_url, prefix,
                          args.stages, args.waits) for i in range(args.workers)]
        share = math.ceil(len(targets) / args.workers)

        def running() -> bool:
            live = [w for w in workers if w.alive]
            return (sum(w.get("ready") for w in live) == len(targets)
                    and sum(w.get("targets") for w in live) == len(targets)
                    and all(w.get("feed") for w in live))

        def balanced() -> bool:
            return running() and max(w.get("targets") for w in workers) <= share

        wait_for(running, 1800, "every target to run", every=0.2)
        to_run = time.monotonic() - started
        wait_for(balanced, 600, "the leases to balance", every=0.2)
        to_balance = time.monotonic() - started
        rss_loaded = [w.rss_mb() for w in workers]
        print_rates("venue requests while starting", venue_rates(control, start_wall,
                                                                 time.time() + 1))
        print(f"  every target running after {to_run:.1f} s, balanced after {to_balance:.1f} s;"
              f" per worker: targets {[int(w.get('targets')) for w in workers]}, configs "
              f"{[int(w.get('configs')) for w in workers]}, RSS MB "
              f"{[round(r) for r in rss_loaded]} (at start "
              f"{[round(w.get('rss_base')) for w in workers]})", flush=True)

        # New targets' first polls take turns at the deployment's feed-down poll rate:
        # measure the steady state once every target has polled.
        polled = wait_for(lambda: totals(workers, "polls") >= len(targets), 1800,
                          "every target's first poll", every=0.5)
        print(f"  every target polled once after {to_balance + polled:.1f} s", flush=True)
        # Idle: polls, lease renewals, heartbeats, sweeps, balance reads.
        time.sleep(2)
        idle = {k: totals(workers, k) for k in ("cpu", "sql", "commits", "redis",
                                                "poll_requests")}
        idle_start = time.time()
        time.sleep(args.idle_seconds)
        idle_end = time.time()
        idle_rate = {k: (totals(workers, k) - v) / (idle_end - idle_start)
                     for k, v in idle.items()}
        print(f"  idle, all workers: CPU {idle_rate['cpu'] * 100:.0f}% of a core, "
              f"{idle_rate['sql']:.0f} SQL statements/s ({idle_rate['commits']:.0f} commits), "
              f"{idle_rate['redis']:.0f} Redis round trips/s, "
              f"{idle_rate['poll_requests']:.1f} polls/s")
        print_rates(f"venue requests while idle ({args.idle_seconds:.0f} s)",
                    venue_rates(control, idle_start, idle_end))

        # Copies.
        latencies: list[float] = []
        fills: list[tuple[float, float, int, str]] = []
        before = {k: totals(workers, k) for k in ("cpu", "sql", "commits", "redis")}
        stages_before = stage_totals(workers)
        done = totals(workers, "orders")
        sources = {k: totals(workers, k) for k in ("feed_fills", "matched_fills", "poll_fills")}
        sample_start = time.time()
        token = by_slug["scale-0"]
        with profiling(workers, args.py_spy, args.samples * 0.6 + 5):
            for sample in range(args.samples):
                target = targets[(sample * 7919) % len(targets)]  # spread over the workers
                control.delete("/orders")
                time.sleep(0.05)
                answer = injector.inject({"wallet": target, "token_id": token, "side": "BUY",
                                          "size": "20", "price": "0.5"})
                visible = answer["published_us"] / 1_000_000
                done += per_target(target)
                wait_for(lambda goal=done: totals(workers, "orders") >= goal, 120, "the copies",
                         every=0.01)
                received = control.get("/orders").json()
                fill = sorted(e["received_at"] - visible * 1000 for e in received)
                latencies.extend(fill)
                if fill:
                    fills.append((fill[-1], fill[0], sample, target))
        sample_end = time.time()
        print("  fills first seen while copying, by source: " + ", ".join(
            f"{k[:-6]} {totals(workers, k) - v:.0f}" for k, v in sources.items()), flush=True)
        # The slowest fills, their first copy beside their last: a fill slow from its first
        # copy waited before the fan-out (detection, the loop); one slow only at its tail
        # waited inside it (per-copy work, budgets, the database).
        print("  slowest fills (last / first copy ms, sample, target): " + "; ".join(
            f"{last:.0f} / {first:.0f} #{n} {t[:10]}"
            for last, first, n, t in sorted(fills, reverse=True)[:4]), flush=True)
        if args.waits:
            time.sleep(1.5)  # the workers' next report with their fills' parts
            print_waits(workers, sample_start)
        if args.py_spy:
            print_profile(args.py_spy)
        elapsed = sample_end - sample_start
        orders = len(latencies)
        per_copy = {k: (totals(workers, k) - v - idle_rate[k] * elapsed) / max(1, orders)
                    for k, v in before.items()}
        copy_load = load.between(sample_start, sample_end)
        print(f"  copies: {orders} orders for {args.samples} fills; per copy (idle rates "
              f"subtracted): CPU {per_copy['cpu'] * 1000:.2f} ms, "
              f"{per_copy['sql']:.2f} SQL statements, {per_copy['commits']:.2f} commits, "
              f"{per_copy['redis']:.2f} Redis round trips; machine load (1-min average) "
              f"{copy_load[0]:.1f} (at most {copy_load[1]:.1f}) on {os.cpu_count()} cores")
        print_rates(f"venue requests while copying ({elapsed:.0f} s)",
                    venue_rates(control, sample_start, sample_end))
        staged: dict[str, float] = {}
        if args.stages:
            staged = stage_figures(stages_before, stage_totals(workers), orders,
                                   per_copy, idle_rate, elapsed)

        takeover: dict[str, float] = {}
        if args.takeover and args.workers > 1:
            takeover = measure_takeover(args, workers, targets, control, injector, by_slug,
                                        per_target, redis.Redis.from_url(args.redis_url),
                                        lambda t: lease_key(t, prefix))
        rss_end = [w.rss_mb() for w in workers if w.alive]
        print(f"  RSS at the end MB: {[round(r) for r in rss_end]}")
        run_load = load.between(run_start, time.time())
        figures = {
            "workers": args.workers, "configs": args.configs, "targets": args.targets,
            "orders": orders, "p50_ms": percentile(latencies, 50),
            "p95_ms": percentile(latencies, 95), "p99_ms": percentile(latencies, 99),
            "cpu_ms_per_copy": per_copy["cpu"] * 1000, "sql_per_copy": per_copy["sql"],
            "commits_per_copy": per_copy["commits"], "redis_per_copy": per_copy["redis"],
            "load_copies": copy_load[0], "load_copies_max": copy_load[1],
            "load_run": run_load[0], "cores": os.cpu_count() or 0,
            "rss_mb": max(rss_loaded + rss_end), "to_run_s": to_run,
            "idle_cpu": idle_rate["cpu"], **takeover, **staged}
        taken = (f"{takeover['takeover_leases_s']:.1f} / {takeover['takeover_copied_s']:.1f}"
                 f" s ({takeover['takeover_after_expiry_s']:.1f} s after expiry)"
                 if takeover else "—")
        print(f"| {args.workers} | {args.configs:,} | {args.targets:,} | {orders} | "
              f"{figures['p50_ms']:.1f} | {figures['p95_ms']:.1f} | "
              f"{figures['p99_ms']:.1f} | {figures['cpu_ms_per_copy']:.2f} | "
              f"{figures['sql_per_copy']:.1f} | {figures['commits_per_copy']:.1f} | "
              f"{copy_load[0]:.1f} | {figures['rss_mb']:.0f} | {to_run:.0f} s | {taken} | "
              f"{seeded:.0f} s |")
        if args.stages:
            print_stage_table(figures, args.configs // args.targets, copy_load)
        if args.summary:
            Path(args.summary).write_text(json.dumps(figures))
    finally:
        load.stop()
        for w in workers:
            w.stop()
        injector.stop()
        venue.stop()
        client = redis.Redis.from_url(args.redis_url)  # this run's keys (the engine set)
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            client.delete(key)


def print_waits(workers: list[Worker], since: float, top: int = 6) -> None:
    """The slowest fills from the feed's hand-over to their first order, by part (ms)."""
    records = [r for w in workers for r in w.status.get("waits", [])
               if r.get("source") != "poll" or r.get("first_send") is not None]
    records = [r for r in records if r.get("first_send") is not None]
    if not records:
        print("  fill waits: none recorded")
        return
    sends = sorted(r["first_send"] * 1000 for r in records)
    print(f"  fill waits ({len(records)} fills with an order; hand-over to first order ms): "
          f"p50 {percentile(sends, 50):.1f}, p99 {percentile(sends, 99):.1f}, "
          f"max {sends[-1]:.1f}")
    for r in sorted(records, key=lambda r: -r["first_send"])[:top]:
        parts = ", ".join(f"{k} {v * 1000:.0f}" for k, v in sorted(
            r["parts"].items(), key=lambda kv: -kv[1]) if v * 1000 >= 0.5)
        ahead = ", ".join(f"{k} {v * 1000:.0f}" for k, v in r["ahead"].items()) or "nothing"
        busy = ", ".join(f"{k} {v}" for k, v in sorted(
            r.get("busy", {}).items(), key=lambda kv: -kv[1])[:5]) or "none"
        print(f"    {r['target'][:10]} ({r['source']}): first order {r['first_send'] * 1000:.0f},"
              f" queued {r['queued'] * 1000:.0f} (ahead: {ahead}); parts: {parts}")
        most = r.get('busy_total', 0)
        print(f"      database calls under way at its calls (most at once {most}):"
              f" {busy}")


def measure_takeover(args: argparse.Namespace, workers: list[Worker], targets: list[str],
                     control: Any, injector: Injector, by_slug: dict[str, str],
                     per_target: Callable[[str], int], client: Any,
                     key: Callable[[str], str]) -> dict[str, float]:
    """Kill the last worker; seconds until its leases, its targets and their copies moved
    (from the kill, and the last copy from the moment its leases expired)."""
    victim = workers[-1]
    holders = client.mget([key(t) for t in targets])
    theirs = [t for t, h in zip(targets, holders, strict=True)
              if h and h.decode() == victim.name]
    step = max(1, len(theirs) // args.takeover_samples)
    chosen = theirs[::step][:args.takeover_samples]
    tokens = {by_slug[f"scale-takeover-{i}"]: t for i, t in enumerate(chosen)}
    control.delete("/orders")
    pipe = client.pipeline()
    for target in theirs:
        pipe.pttl(key(target))
    killed = time.time()
    victim.kill()
    expiry = killed + max(pipe.execute()) / 1000  # its leases lapse unrenewed from now
    for token, target in tokens.items():
        injector.inject({"wallet": target, "token_id": token, "side": "BUY", "size": "20",
                         "price": "0.5"})
    survivors = [w for w in workers if w.alive]
    moments: dict[str, float] = {}
    copied: dict[str, float] = {}
    deadline = time.monotonic() + 300
    while len(moments) < 2 or len(copied) < len(tokens):
        if time.monotonic() > deadline:
            raise SystemExit("the take-over did not finish")
        now = time.time()
        if "leases" not in moments:
            held = client.mget([key(t) for t in theirs])
            if all(h and h.decode() != victim.name for h in held):
                moments["leases"] = now - killed
        if "running" not in moments and (
                sum(w.get("ready") for w in survivors) == len(targets)
                and sum(w.get("targets") for w in survivors) == len(targets)):
            moments["running"] = now - killed
        by_token: dict[str, list[float]] = {}
        for entry in control.get("/orders").json():
            token = str(entry["body"]["order"]["tokenId"])
            by_token.setdefault(token, []).append(entry["received_at"] / 1000)
        for token, stamps in by_token.items():
            if token in tokens and len(stamps) >= per_target(tokens[token]) \
                    and token not in copied:
                copied[token] = max(stamps) - killed
        time.sleep(0.2)
    times = sorted(copied.values())
    print(f"  take-over of {victim.name}'s {len(theirs)} targets (SIGKILL): leases held by "
          f"others after {moments['leases']:.1f} s, every target running after "
          f"{moments['running']:.1f} s; copies of {len(times)} trades injected at the kill "
          f"received after {', '.join(f'{t:.1f}' for t in times)} s (the last "
          f"{killed + times[-1] - expiry:.1f} s after the leases expired); targets per "
          f"survivor {[int(w.get('targets')) for w in survivors]}")
    return {"takeover_leases_s": moments["leases"], "takeover_copied_s": times[-1],
            "takeover_after_expiry_s": killed + times[-1] - expiry}


if __name__ == "__main__":
    main()
