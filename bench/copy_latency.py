"""Copy overhead of the copy engine against the sandbox venue (zero artificial latency).

Starts a sandbox venue in a process of its own (so that the venue's CPU work, which is
not our overhead, does not share our interpreter; ``--venue-in-process`` serves it from
a thread of this process, as the first version of this benchmark did), a fresh SQLite
database (or ``--database-url``, e.g. ``postgresql://...``: its tables are emptied), uses
the Redis at REDIS_URL (default local), creates ``--users`` funded users with derived
venue credentials and ``--configs`` live configs spread over ``--targets`` target
wallets, runs one ``CopyEngine`` (RTDS feed on, polling as backstop) and then, for
``--samples`` target trades injected through the sandbox control API, measures:

- copy overhead: "target trade visible" (the venue's own stamp of the moment it published
  the fill to the Data API and the RTDS feed; the injecting call's work before that is the
  harness's, printed apart by ``--breakdown``) to "order received by the venue" (the
  sandbox stamps a request's arrival before doing any work on it), for every mirrored
  order, in ms;
- venue polling requests per detection cycle (one cycle polls every owned target once);
- the process's RSS before and after the engine loaded its configs;
- detection delay per source (the fill's time, whole seconds as the venue stamps it, to
  the engine's first sighting, for the fills each source saw first: ``feed``, ``poll``,
  and with on-chain detection ``chain`` and ``pending``), and each source's own sighting
  of every sample, first or not, timed from the injecting call (what a source is worth on
  its own while a faster one beats it).

``--chain`` starts anvil (the devstack's dev chain, automining: a settlement is mined as it
is sent), deploys the dev contracts and attaches the sandbox to it, so that every trade
settles on chain and emits ``OrderFilled``; the engine reads them over anvil's websocket
(and the pending match calls), so the ``chain`` and ``pending`` sources are measured beside
the feed and polling::

    .venv/bin/python bench/copy_latency.py --configs 20 --targets 4 --users 5 --chain

``--activity`` runs without the RTDS activity feed's ``trades`` type (ACCOUNTS.md §12):
``orders_matched`` turns it off in the sandbox (the engine falls back to
``activity/orders_matched`` on the same connection; the sandbox's whales trade meanwhile, so
that the feed carries something), ``gone`` turns both types off: the engine reads the
exchanges' logs by itself over ``POLYGON_RPC_URL`` (HTTP, every ``--chain-poll`` seconds,
the ``COPY_CHAIN_FALLBACK`` path) with ``--chain``, and polls the Data API without it.
Each run also prints the engine's Data API polls and chain JSON-RPC calls of its last
minute (what each source costs)::

    .venv/bin/python bench/copy_latency.py --configs 4 --targets 2 --users 2 --samples 10 \
        --chain --activity gone

``--breakdown`` also prints where the time goes, and the venue's own handling time
(arrival to answer: auth, signature checks, matching; not part of the overhead).

``--restart-window SECONDS`` opens a matching-engine restart (425 for that long, then
``--post-only-seconds`` of post-only) just before the middle sample, injects the samples
``--gap`` seconds apart, and prints, once every copy settled, a row: copies, filled (of
which waited for the venue to reopen), skipped as too old (``venue_*``), lost (neither:
must be 0), and orders the venue accepted (one per filled copy: nothing doubled)::

    .venv/bin/python bench/copy_latency.py --configs 20 --targets 4 --users 5 --samples 8 \
        --restart-window 4 --post-only-seconds 3

Prints a Markdown row per run::

    .venv/bin/python bench/copy_latency.py --configs 1000 --targets 100 --samples 20

``--rules on`` switches every copy rule of issues 27 and 45 on for every config (and an exposure
limit for every user), each set so the copy still goes out: what they cost on the fill's
path, measured beside ``--rules off`` (the default) in the same sitting::

    for rules in off on; do .venv/bin/python bench/copy_latency.py --rules $rules; done
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas.rule_fields import DEFAULT_BANDS


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def rss_mb() -> float:
    """Resident set size now, MB (from /proc; ru_maxrss is only the peak)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class VenueProcess:
    """The sandbox venue served by a child process (same URLs as ``SandboxServer``)."""

    def __init__(self, seed: int) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        root = str(Path(__file__).resolve().parent.parent)
        code = (f"import sys; sys.path.insert(0, {root!r})\n"
                "from devstack.venue.server import serve\n"
                f"serve(port={self.port}, seed={seed}, whales=False)\n")
        self.process = subprocess.Popen([sys.executable, "-c", code])
        deadline = time.monotonic() + 120  # a loaded machine imports slowly
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.process.kill()  # not left behind, listening, once it comes up
                    raise SystemExit("the venue process did not start") from None
                time.sleep(0.1)
        url = f"http://127.0.0.1:{self.port}"
        self.gamma_url, self.clob_url, self.data_url = (f"{url}/gamma", f"{url}/clob",
                                                        f"{url}/data")
        self.rtds_url, self.control_url = f"ws://127.0.0.1:{self.port}/rtds", f"{url}/_sandbox"

    def stop(self) -> None:
        """Stop the child process."""
        self.process.terminate()
        self.process.wait(timeout=10)


class Injector:
    """Injects target trades from a process of its own, so that the harness's HTTP work
    (building the call, reading the venue's answer) never competes with the engine for
    this interpreter while the engine is copying."""

    CODE = ("import sys, json, httpx\n"
            "client = httpx.Client(base_url=sys.argv[1], timeout=30)\n"
            "for line in sys.stdin:\n"
            "    answer = client.post('/trades', json=json.loads(line))\n"
            "    answer.raise_for_status()\n"
            "    print(answer.text, flush=True)\n")

    def __init__(self, control_url: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", self.CODE, control_url],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)

    def inject(self, trade: dict[str, str]) -> dict:
        """POST /_sandbox/trades from the child process; the venue's answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(trade) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("the injecting process failed")
        return json.loads(line)

    def stop(self) -> None:
        """End the child process."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def install_runtime(venue_url: str, redis_url: str, prefix: str,
                    chain: dict[str, str] | None = None) -> None:
    """Build and install this process's runtime against the sandbox venue at ``venue_url``
    (and the dev chain whose settings are ``chain``, when given)."""
    import config
    from devstack.stack import sandbox_builder_env
    from services.platform import runtime, wiring

    runtime.install(wiring.build_runtime(config.load(os.environ, overrides={
        "VENUE": "sandbox", "POLYMARKET_GAMMA_URL": f"{venue_url}/gamma",
        "POLYMARKET_CLOB_URL": f"{venue_url}/clob", "POLYMARKET_DATA_URL": f"{venue_url}/data",
        "POLYMARKET_RTDS_URL": venue_url.replace("http://", "ws://") + "/rtds",
        "POLYMARKET_RELAYER_URL": f"{venue_url}/relayer", **sandbox_builder_env(os.environ),
        "CHAIN_ID": 137, "REDIS_URL": redis_url, "REDIS_PREFIX": prefix, **(chain or {})})))


def attach_dev_chain(port: int) -> tuple[Any, dict[str, str]]:
    """Start anvil with the dev contracts and have the sandbox on ``port`` settle on it (as
    ``copytrade up`` wires them); anvil's process and the app's settings for the chain."""
    from devstack.chain import devchain
    from devstack.stack import attach_sandbox_chain, sandbox_contracts

    if devchain.find_anvil() is None:
        raise SystemExit("--chain needs anvil: run `make setup` (npm install)")
    anvil = devchain.start_anvil()
    try:
        dev = devchain.deploy_dev_contracts(anvil.rpc_url, anvil.accounts[0].private_key)
        attach_sandbox_chain(port, anvil.rpc_url, dev.ctf, {
            "deposit_wallet_factory": dev.deposit_wallet_factory,
            "deposit_wallet_beacon": dev.deposit_wallet_beacon,
            "operator_key": dev.deployer_key, "contracts": sandbox_contracts(dev)})
    except BaseException:
        anvil.stop()
        raise
    # anvil serves its websocket on the same port: logs as blocks come, pending match calls
    return anvil, {**dev.env(), "COPY_CHAIN_WS_URL": anvil.rpc_url.replace("http://", "ws://")}


def onboard_user(control: Any, user: Any, funds: str = "1000000") -> str:
    """Give ``user`` the product's default account, ready before anything is measured: a
    deposit wallet deployed, approved and credentialed by the onboarding job's body (run
    here, through the sandbox relayer at zero seconds a step), funded at its maker.
    Returns the maker."""
    from services.wallets import onboarding, wallets

    control.post("/relayer", json={"step_seconds": 0}).raise_for_status()
    wallet = wallets.get_or_create(user)
    status = onboarding.run(onboarding.record(wallet).id)
    if status != "ready":
        raise SystemExit(f"onboarding ended {status}: {onboarding.status(user)['error']}")
    maker = wallets.maker(wallet)
    # seen: the deposit is already in the CLOB's balance cache (no /update to measure)
    control.post("/fund", json={"address": maker, "amount": funds,
                                "seen": True}).raise_for_status()
    return maker


# Every rule on, none in the way of the bench's 20-share buys at 0.5 in "Bench ..." markets.
RULES_ON: dict[str, Any] = {
    "min_trade_usdc": Decimal(1), "max_trade_usdc": Decimal(100000), "round_up_to_min": True,
    "min_target_trade_usdc": Decimal(1), "min_price": Decimal("0.01"),
    "max_price": Decimal("0.99"), "copy_buys": True, "copy_sells": True,
    "daily_budget_usdc": Decimal(900000), "total_budget_usdc": Decimal(900000),
    "loss_stop_usdc": Decimal(900000), "max_drawdown_bps": 10000,
    "close_positions_on_stop": True, "max_consecutive_failures": 5,
    "start_mode": "copy_open_positions", "skip_if_ends_within_hours": Decimal(1),
    "exit_hours_before_end": Decimal(1), "include_keywords": '["bench"]',
    "exclude_keywords": '["nothing-matches-this"]',
    # Issue 45's: every add of up to 1000, sells by the percentage read, a cooldown of a
    # second (the samples come --gap apart), the default price bands.
    "entry_policy": "max_adds", "max_adds_count": 1000, "sell_mode": "same_percentage",
    "max_open_positions": 10000, "market_cooldown_seconds": 1,
    "price_deviation_bands": json.dumps(DEFAULT_BANDS),
}


def create_users(control: Any, count: int) -> list[Any]:
    """``count`` elite users, each with an onboarded deposit wallet funded at its maker (and
    so with derived venue credentials)."""
    from models import User

    users = []
    for _ in range(count):
        user = User.create(email=f"{secrets.token_hex(6)}@bench.local", tier="elite")
        onboard_user(control, user)
        users.append(user)
    return users


def add_scale_arguments(parser: argparse.ArgumentParser, *, configs: int, targets: int,
                        users: int) -> None:
    """The options both copy benchmarks take: how many configs, targets, users, samples."""
    parser.add_argument("--configs", type=int, default=configs)
    parser.add_argument("--targets", type=int, default=targets)
    parser.add_argument("--users", type=int, default=users)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL",
                                                              "redis://127.0.0.1:6379/0"))


def main() -> None:
    """Run one configuration and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scale_arguments(parser, configs=100, targets=10, users=50)
    parser.add_argument("--database-url", default="",
                        help="a scratch database (its configs, intents, orders and trades "
                             "are deleted first); default: a fresh SQLite file")
    parser.add_argument("--breakdown", action="store_true",
                        help="also print where the time goes (detect, decide, plan/sign, send)")
    parser.add_argument("--cold-books", action="store_true",
                        help="a new market per sample: every copy reads GET /book (by "
                             "default later samples find the book on the market channel)")
    parser.add_argument("--samples-detail", action="store_true",
                        help="with --breakdown, also print each sample's steps (slowest last)")
    parser.add_argument("--venue-in-process", action="store_true",
                        help="serve the sandbox venue from a thread of this process")
    parser.add_argument("--profile", default="",
                        help="write a pyinstrument profile of the engine's loop to this file "
                             "(HTML when it ends in .html)")
    parser.add_argument("--restart-window", type=float, default=0.0,
                        help="open a restart (425) of this many seconds before the middle "
                             "sample and report the copies lost (see the docstring)")
    parser.add_argument("--post-only-seconds", type=float, default=5.0,
                        help="with --restart-window: the post-only phase after the 425s")
    parser.add_argument("--gap", type=float, default=1.0,
                        help="with --restart-window: seconds between injected samples")
    parser.add_argument("--rules", choices=("off", "on"), default="off",
                        help="on: every copy rule switched on (see RULES_ON)")
    parser.add_argument("--chain", action="store_true",
                        help="settle on a dev chain (anvil) and detect on chain too")
    parser.add_argument("--activity", choices=("trades", "orders_matched", "gone"),
                        default="trades", help="which RTDS activity types the sandbox sends")
    parser.add_argument("--chain-poll", type=float, default=2.0,
                        help="seconds between two reads of the logs (--activity gone)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    folder = Path(tempfile.mkdtemp(prefix="copybench-"))
    os.environ["COPYTRADE_INSTANCE"] = str(folder / "instance")
    os.environ.setdefault("WALLET_ENCRYPTION_KEY", secrets.token_hex(32))

    import httpx
    import redis
    import trio
    from eth_account import Account

    from devstack.venue import SandboxServer
    from models import database as database_module
    from models import migrate
    from models.base import db, utcnow
    from models.copying import CopyConfig, CopyIntent
    from worker.copy_engine.engine import CopyEngine, EngineSettings

    sandbox = SandboxServer(seed=3).start() if args.venue_in_process else VenueProcess(seed=3)
    anvil, chain_env = attach_dev_chain(sandbox.port) if args.chain else (None, {})
    prefix = f"copybench-{secrets.token_hex(3)}:"
    install_runtime(sandbox.gamma_url.removesuffix("/gamma"), args.redis_url, prefix,
                    chain_env)
    url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
    database = database_module.bind(url, fold_on_commit=False)  # as the worker does
    with database.connection_context():
        migrate.migrate(database)
        if args.database_url:  # a server database: start from empty tables
            from models.copying import CopyPosition, TargetCursor
            from models.trading import Order, Trade

            for model in (Trade, Order, CopyIntent, CopyPosition, TargetCursor, CopyConfig):
                model.delete().execute()
    control = httpx.Client(base_url=sandbox.control_url, timeout=30)
    # One market; with --cold-books one per sample, so that no sample's book can come from
    # the market channel (each copy reads GET /book, as a target's first fill in a token).
    slugs = [f"bench-{i}" for i in range(args.samples if args.cold_books else 1)]
    for slug in slugs:
        control.post("/markets", json={"slug": slug, "question": f"Bench {slug}?",
                                       "liquidity": True, "fair_price": "0.5",
                                       "category": "politics"})
    by_slug = {m["slug"]: m["token_ids"][0] for m in control.get("/state").json()["markets"]}
    tokens = [by_slug[slug] for slug in slugs]

    started = time.perf_counter()
    with db.connection_context():
        users = create_users(control, min(args.users, args.configs))
        targets = [Account.create().address.lower() for _ in range(args.targets)]
        now = utcnow()
        rows = [{"id": uuid.uuid4(), "user": users[i % len(users)].id,
                 "target_address": targets[i % len(targets)],
                 "size_multiplier": Decimal("0.5"), "max_position_usdc": Decimal(100000),
                 "price_deviation_bps": 500, "blocked_categories": "[]",
                 "is_active": True, "paper_trading": False, "started_at": now,
                 "created_at": now, "updated_at": now,
                 **(RULES_ON if args.rules == "on" else {})} for i in range(args.configs)]
        if args.rules == "on":
            from models import User

            User.update(max_total_exposure_usdc=Decimal(900000)).where(
                User.id.in_([u.id for u in users])).execute()
        with db.atomic():
            for start in range(0, len(rows), 500):
                CopyConfig.insert_many(rows[start:start + 500]).execute()
    setup_seconds = time.perf_counter() - started

    client = redis.Redis.from_url(args.redis_url)
    gone = args.activity == "gone"  # the chain only as the feed's fallback, over HTTP
    settings = EngineSettings(poll_seconds=1.0, backstop_poll_seconds=5.0, sweep_seconds=1.0,
                              exit_check_seconds=60, use_chain=args.chain and not gone,
                              use_pending=args.chain and not gone, chain_fallback=gone,
                              pending_operators=tuple(
                                  a.lower() for a in chain_env.get(
                                      "COPY_PENDING_OPERATORS", "").split(",") if a),
                              chain_poll_seconds=args.chain_poll,
                              feed_stale_seconds=30.0 if args.activity == "trades" else 2.0,
                              chain_ws_url="" if gone else chain_env.get("COPY_CHAIN_WS_URL",
                                                                         ""))
    expected = {"trades": "feed", "orders_matched": "matched",
                "gone": "chain" if args.chain else "poll"}[args.activity]
    for kind in {"trades": (), "orders_matched": ("trades",),
                 "gone": ("trades", "orders_matched")}[args.activity]:
        control.post("/rtds/activity", json={"type": kind, "state": "off"})
    if args.activity == "orders_matched":  # something to carry: the feed shows it is live
        control.post("/whales/start", json={"interval": 0.5})
    latencies: list[float] = []
    marks: list[tuple[float, dict[str, int]]] = []
    handled: list[float] = []
    injections: list[float] = []
    figures: dict[str, float] = {}
    detected_by: list[str] = []  # the engine's live detection source at the end
    delays: dict[str, list[float]] = {}  # detection delay (s) per source that saw a fill first
    sightings: dict[str, list[float]] = {}  # injection to each source's sighting (s)
    injected_at: dict[str, float] = {}  # a sample's transaction hash: when it was injected

    async def all_targets_taken(engine: CopyEngine) -> None:
        deadline = time.monotonic() + 600
        while not (len(engine.targets) == len(targets) and all(
                rt.ready.is_set() for rt in engine.targets.values())
                and engine.detection.source == expected and (not args.chain or (
                    engine.chain is not None and engine.chain.connected
                    and len(engine.chain.watching) == len(targets)))):
            if time.monotonic() > deadline:
                raise SystemExit("the engine did not take all targets")
            await trio.sleep(0.2)

    async def sighted_by_chain(engine: CopyEngine) -> None:
        deadline = time.monotonic() + 30
        while len(engine.stats.sightings.get("chain", ())) < args.samples:
            if time.monotonic() > deadline:
                raise SystemExit("the chain did not see every sample")
            await trio.sleep(0.05)

    async def run() -> None:
        engine = CopyEngine(f"bench-{secrets.token_hex(3)}", client, prefix, settings)
        rss_before = rss_mb()
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            await all_targets_taken(engine)
            figures["rss_mb"] = rss_mb()
            figures["rss_delta_mb"] = figures["rss_mb"] - rss_before
            polls, requests = engine.stats.polls, engine.stats.poll_requests
            await trio.sleep(6)  # idle: polling only (feed up -> backstop interval)
            cycles = (engine.stats.polls - polls) / max(1, len(targets))
            figures["poll_requests_per_cycle"] = (
                (engine.stats.poll_requests - requests) / cycles if cycles else float("nan"))
            per_target = args.configs // len(targets)
            done = engine.stats.orders
            reads, hits = engine.stats.book_requests, engine.stats.book_hits
            for sample in range(args.samples):
                target = targets[sample % len(targets)]
                await trio.to_thread.run_sync(lambda: control.delete("/orders"))
                await trio.sleep(0.05)  # let that call's thread go quiet
                injected = time.time()
                answer = await trio.to_thread.run_sync(injector.inject, {
                    "wallet": target, "token_id": tokens[sample % len(tokens)], "side": "BUY",
                    "size": "20", "price": "0.5"})
                # Visible = when the venue published the fill (Data API and feed), stamped
                # by the venue; the injecting call's own work before that is the harness's.
                visible = answer["published_us"] / 1_000_000
                injected_at.update((fill["transactionHash"], injected)
                                   for fill in answer["fills"])
                injections.append((visible - injected) * 1000)
                done += per_target
                wait_until = time.monotonic() + 120
                while engine.stats.orders < done:  # sent and settled (read in this loop)
                    if time.monotonic() > wait_until:
                        raise SystemExit("orders did not settle")
                    await trio.sleep(0.01)
                received = await trio.to_thread.run_sync(
                    lambda: control.get("/orders").json())
                latencies.extend(e["received_at"] - visible * 1000 for e in received)
                handled.extend(e["handled_us"] / 1000 for e in received if "handled_us" in e)
                marks.append((visible, {e["order_id"]: e["received_at"] for e in received}))
            figures["book_reads"] = engine.stats.book_requests - reads
            figures["book_hits"] = engine.stats.book_hits - hits
            delays.update({source: list(kept) for source, kept in engine.stats.delays.items()})
            if args.chain:  # the chain's own sightings of the last sample may still come
                await sighted_by_chain(engine)
            figures["polls_per_minute"] = engine.detection.polls_per_minute()
            figures["chain_calls_per_minute"] = engine.detection.chain_calls.per_minute()
            detected_by.append(engine.detection.source)
            for source, kept in engine.stats.sightings.items():
                first: dict[str, float] = {}  # a poll may see a fill again: its first time
                for tx_hash, at in kept:
                    if tx_hash in injected_at:
                        first[tx_hash] = min(at, first.get(tx_hash, at))
                sightings[source] = [at - injected_at[tx] for tx, at in first.items()]
            nursery.cancel_scope.cancel()

    async def run_restart() -> None:
        engine = CopyEngine(f"bench-{secrets.token_hex(3)}", client, prefix, settings)
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            await all_targets_taken(engine)
            await trio.to_thread.run_sync(lambda: control.delete("/orders"))
            middle = args.samples // 2
            for sample in range(args.samples):
                if sample == middle:
                    await trio.to_thread.run_sync(lambda: control.post("/restart", json={
                        "seconds": str(args.restart_window),
                        "post_only_seconds": str(args.post_only_seconds), "retry_after": 1}))
                await trio.to_thread.run_sync(injector.inject, {
                    "wallet": targets[sample % len(targets)], "token_id": tokens[0],
                    "side": "BUY", "size": "20", "price": "0.5"})
                await trio.sleep(args.gap)
            expected = args.samples * (args.configs // len(targets))

            def intents() -> list[tuple[str, str | None]]:
                with db.connection_context():
                    return list(CopyIntent.select(CopyIntent.status, CopyIntent.reason)
                                .where(CopyIntent.kind == "mirror").tuples())

            wait_until = time.monotonic() + args.restart_window + args.post_only_seconds + 300
            while True:
                rows = await trio.to_thread.run_sync(intents)
                if len(rows) >= expected and all(s not in ("pending", "sent") for s, _ in rows):
                    break
                if time.monotonic() > wait_until:
                    raise SystemExit("copies did not settle")
                await trio.sleep(0.5)
            received = await trio.to_thread.run_sync(lambda: control.get("/orders").json())
            figures["copies"] = len(rows)
            figures["filled"] = sum(1 for s, _ in rows if s == "filled")
            figures["skipped_venue"] = sum(1 for s, r in rows
                                           if s == "skipped" and (r or "").startswith("venue_"))
            figures["waited"] = sum(1 for s, r in rows
                                    if s == "filled" and (r or "").startswith("venue_"))
            figures["lost"] = figures["copies"] - figures["filled"] - figures["skipped_venue"]
            figures["accepted"] = sum(1 for e in received
                                      if (e.get("response") or {}).get("success"))
            nursery.cancel_scope.cancel()

    if args.restart_window:
        injector = Injector(sandbox.control_url)
        try:
            trio.run(run_restart)
        finally:
            injector.stop()
            sandbox.stop()
        print(f"| {args.configs} | {args.targets} | {args.samples} | "
              f"{args.restart_window:g} + {args.post_only_seconds:g} s | "
              f"{figures['copies']:.0f} | {figures['filled']:.0f} "
              f"({figures['waited']:.0f} after waiting) | "
              f"{figures['skipped_venue']:.0f} | {figures['lost']:.0f} | "
              f"{figures['accepted']:.0f} |")
        return
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(async_mode="disabled", interval=0.0005)
        profiler.start()
    injector = Injector(sandbox.control_url)
    try:
        trio.run(run)
    finally:
        injector.stop()
        sandbox.stop()  # a failed run must not leave the venue process behind
        if anvil is not None:
            anvil.stop()
    if args.profile:
        profiler.stop()
        Path(args.profile).write_text(profiler.output_html() if args.profile.endswith(".html")
                                      else profiler.output_text(show_all=False))
    if args.breakdown:
        print(f"  books: {figures['book_reads']:.0f} read with GET /book, "
              f"{figures['book_hits']:.0f} from the market channel")
        print(f"  inject call -> venue published (harness, not overhead): p50 "
              f"{percentile(injections, 50):.1f} ms, p95 {percentile(injections, 95):.1f} ms")
        print_breakdown(marks, detail=args.samples_detail)
        if handled:
            print(f"  venue handling (arrival -> answer, not overhead): p50 "
                  f"{percentile(handled, 50):.1f} ms, p95 {percentile(handled, 95):.1f} ms")
    print_detection(delays, sightings)
    if detected_by:
        print(f"  detecting by {detected_by[0]}: {figures['polls_per_minute']:.0f} Data API "
              f"polls and {figures['chain_calls_per_minute']:.0f} chain JSON-RPC calls in the "
              "last minute")
    if args.chain:
        print("  (with --chain: anvil automines, each settlement in a block of its own)")
    print(f"rules {args.rules}:")
    print(f"| {args.configs} | {args.targets} | {len(latencies)} | "
          f"{percentile(latencies, 50):.1f} | {percentile(latencies, 95):.1f} | "
          f"{percentile(latencies, 99):.1f} | {figures['poll_requests_per_cycle']:.2f} | "
          f"{figures['rss_mb']:.0f} ({figures['rss_delta_mb']:+.0f}) | {setup_seconds:.0f} s |")
    print_stages()


def print_stages() -> None:
    """The copies' own stage split, as recorded per intent (what /api/configs/{id}/quality
    sums): p50 / p95 / max of each stage, and the detection sources seen."""
    from models.base import db
    from models.copying import CopyIntent
    from services.trading.stats import stage_figures

    with db.connection_context():
        rows = list(CopyIntent.select().where(CopyIntent.kind == "mirror",
                                              CopyIntent.status != "skipped").dicts())
    sources = Counter(row["detection_source"] or "?" for row in rows)
    print("  stages (recorded per copy): " + ", ".join(
        f"{name} {f['p50_ms']}/{f['p95_ms']}/{f['max_ms']} ms"
        for name, f in stage_figures(rows).items() if f["count"]) + " (p50/p95/max); "
        "sources " + ", ".join(f"{k} {v}" for k, v in sorted(sources.items())))


def print_detection(delays: dict[str, list[float]],
                    sightings: dict[str, list[float]] | None = None) -> None:
    """Detection delay per source (the fill's own time, whole seconds at the venue, to the
    engine's first sighting), for the fills each source saw first: feed, poll, and, with
    on-chain detection on (COPY_CHAIN_*, ``--chain``), chain and pending; then each
    source's own first sighting of each sample, from the injecting call."""
    for label, measure, table in (("detected by", "detection delay", delays),
                                  ("seen by", "injection to sighting", sightings or {})):
        for source, values in sorted(table.items()):
            if values:
                print(f"  {label} {source}: {len(values)} fills, {measure} p50 "
                      f"{percentile(values, 50) * 1000:.0f} ms, p95 "
                      f"{percentile(values, 95) * 1000:.0f} ms, "
                      f"max {max(values) * 1000:.0f} ms")


def print_breakdown(marks: list[tuple[float, dict[str, int]]], *, detail: bool = False
                    ) -> None:
    """Median and p95 ms of each step from the target trade to the venue's receipt."""
    from models.base import db
    from models.copying import CopyIntent
    from models.trading import Order

    steps: dict[str, list[float]] = {
        "detect (visible -> seen)": [],
        "decide, sign, record (seen -> order record)": [],
        "commit -> POST started": [],
        "POST -> venue received": []}
    received = {k: v for _, m in marks for k, v in m.items()}
    per_sample: dict[float, list[list[float]]] = {}
    with db.connection_context():
        for intent in CopyIntent.select().where(CopyIntent.order_id.is_null(False)):
            order = Order.get_or_none(Order.order_hash == intent.order_id)
            visible = next((v for v, m in marks if intent.order_id in m), None)
            if order is None or visible is None or order.submitted_at is None \
                    or intent.sent_at is None:
                continue
            values = [(intent.seen_at.timestamp() - visible) * 1000,
                      (order.submitted_at - intent.seen_at).total_seconds() * 1000,
                      (intent.sent_at - order.submitted_at).total_seconds() * 1000,
                      received[intent.order_id] - intent.sent_at.timestamp() * 1000]
            for name, value in zip(steps, values, strict=True):
                steps[name].append(value)
            per_sample.setdefault(visible, []).append(values)
    for name, values in steps.items():
        if values:
            print(f"  {name}: p50 {percentile(values, 50):.1f} ms, "
                  f"p95 {percentile(values, 95):.1f} ms")
    if detail:  # per sample: each step's first..last order, and the slowest order's total
        rows = sorted(per_sample.values(), key=lambda r: max(sum(v) for v in r))
        for orders in rows:
            spans = [f"{min(v[i] for v in orders):.1f}-{max(v[i] for v in orders):.1f}"
                     for i in range(4)]
            print("   ", " | ".join(spans), f"| max total {max(sum(v) for v in orders):.1f}")


if __name__ == "__main__":
    main()
