"""API throughput: the product against a bare one-route Flask app, side by side, with wrk.

Both are served by gunicorn with the same settings (``gthread``, ``--workers`` processes x
``--threads`` threads, no access log: what ``copytrade serve`` sets), on a fresh SQLite
database and the local Redis (REDIS_URL, default ``redis://127.0.0.1:6379/0``, under a
run-unique REDIS_PREFIX). The rate limit is raised out of the way through its settings
(RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST); every other hook (request id, JSON request log
to a file, Prometheus multiprocess metrics, the limiter's Redis round trip, the access
gate) runs as in production.

The bench signs in through the real flow (POST /api/auth/magic; the code is read from the
server's log, where it goes without SMTP_URL; POST /api/auth/verify-code), mints an API key
(POST /api/keys) and seeds 20 filled trades and one copy config for that user. Then, for
each route, wrk (``--connections`` over ``--wrk-threads``, ``--duration`` seconds) drives
the bare app and the product in alternating rounds (bare, product, bare, product...), so
noise from other processes on the machine hits both. Routes:

- ``healthz``: GET /healthz (database and Redis checked)
- ``public``: GET /api/stats/platform
- ``me``: GET /api/users/me with the API key
- ``trades``: GET /api/trades with the API key (20 trades)
- ``post``: POST /api/configs/<id>/stop with the API key and a new Idempotency-Key on every
  request (a cheap write: one update, plus the idempotency record's insert and completion)

The bare app answers the same method, headers and body on ``/`` with a small JSON object.
Prints, per route, the median req/s and p50/p99 latency over the rounds, the ratio to the
bare round run next to it (median of the pairs), the noise (min-max spread of req/s over
the rounds, as a percentage of the median), and the CPU the server's gunicorn workers
spent per request (user + system, from /proc) with its ratio to the bare app's: on a
machine shared with other work, req/s moves with the neighbours; CPU per request much
less, and it is what bounds req/s once the cores are the server's alone::

    .venv/bin/python bench/api_throughput.py --rounds 3

``--profile DIR`` records one gunicorn worker of the product with py-spy during each
product round (raw collapsed stacks of the thread holding the GIL,
``DIR/<route>-<round>.txt``).

``--limiter-hook`` also serves the product with the rate-limit hook it had before
flask-limiter came back (``bench/hook_site/wsgi.py``: the same GCRA bucket taken by one
before-request hook), in the same rounds (bare, product, hook, bare, ...), and prints each
route's CPU per request under both, with the ratio flask-limiter / hook.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LUA = Path(__file__).with_suffix(".lua")
HOOK_SITE = Path(__file__).with_name("hook_site")
STAGE_SITE = Path(__file__).with_name("stage_site")
# The API's stages (bench/stage_site/wsgi.py's keys): label, target CPU per request as a
# share of the bare app's whole request (measured in the same rounds, so the targets move
# with the machine's load as the figures do). With the rest at 1.1, they add up to 1.95:
# a keyed GET at half the bare app's rate, the goal, once the cores are the server's.
API_STAGES: list[tuple[str, str, float]] = [
    ("limiter", "rate limiter (flask-limiter, one Redis round trip)", 0.25),
    ("access", "access gate (the key's HMAC and lookup)", 0.2),
    ("operations", "request id, JSON log line, metrics", 0.15),
    ("security", "Host check, security headers", 0.05),
    ("hooks", "other hooks (sessions, well-known headers)", 0.05),
    ("view", "the view (profile, wallet address)", 0.15),
]
REST_TARGET = 1.1  # gunicorn's, Flask's and werkzeug's share, against the bare app's
ROUTES = ("healthz", "public", "me", "trades", "post")
SCOPES = ["read:account", "read:trades", "trade:execute"]


# -- the bare app -------------------------------------------------------------------------


def bare_app() -> Any:
    """One JSON route: the floor of what Flask under gunicorn can do here."""
    from flask import Flask, jsonify

    app = Flask("bare")

    @app.route("/", methods=["GET", "POST"])
    def index() -> Any:
        return jsonify({"status": "ok"})

    return app


def serve_bare(port: int, workers: int, threads: int) -> None:
    """Serve the bare app with the gunicorn settings ``copytrade serve`` uses."""
    from gunicorn.app.base import BaseApplication

    class Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"127.0.0.1:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("graceful_timeout", 20)
            self.cfg.set("accesslog", None)

        def load(self) -> Any:
            return bare_app()

    Server().run()


# -- processes ----------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    """Block until ``port`` accepts connections; fail with the log's tail if it dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server not listening on {port}: {log.read_text()[-3000:]}")


def gunicorn_workers(master: int) -> list[int]:
    """The pids of a gunicorn master's worker processes."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{master}$", text, re.MULTILINE):
            found.append(int(status.parent.name))
    return sorted(found)


def cpu_seconds(master: int) -> float:
    """User + system CPU seconds used so far by a gunicorn master's workers."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in gunicorn_workers(master):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def stop(process: subprocess.Popen) -> None:
    """Stop a server we started (gunicorn exits its workers on SIGTERM)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


# -- the product --------------------------------------------------------------------------


def product_env(folder: Path, port: int) -> dict[str, str]:
    """The product's settings: fresh SQLite and instance, local Redis, limits raised."""
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update({
        "COPYTRADE_INSTANCE": str(folder / "instance"),
        "DATABASE_URL": f"sqlite:///{folder / 'copytrade.db'}",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        "REDIS_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
        "BASE_URL": f"http://127.0.0.1:{port}",
        "RATE_LIMIT_PER_SECOND": "1000000000",
        "RATE_LIMIT_BURST": "1000000000",
        "SMTP_URL": "",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
    })
    return env


def http(port: int, method: str, path: str, body: Any = None,
         token: str | None = None) -> tuple[int, Any]:
    """One JSON exchange with the product."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.request(method, f"http://127.0.0.1:{port}{path}", json=body,
                             headers=headers, timeout=120)
    return response.status_code, response.json() if response.content else None


def sign_in(port: int, log: Path, email: str) -> str:
    """A session JWT through the real flow: magic code mailed (here: logged), then verified."""
    status, _ = http(port, "POST", "/api/auth/magic", {"email": email})
    assert status == 202, status
    code = None
    for _ in range(50):
        found = re.findall(rf"sign-in code for {re.escape(email)}: (\d{{6}})", log.read_text())
        if found:
            code = found[-1]
            break
        time.sleep(0.1)
    if code is None:
        raise SystemExit("no sign-in code in the server log")
    status, body = http(port, "POST", "/api/auth/verify-code", {"email": email, "code": code})
    assert status == 200, (status, body)
    return body["token"]


def seed(database_url: str, user_id: str) -> str:
    """20 filled trades and one (stopped) copy config for the user; the config's id."""
    from models import database
    from models.copying import CopyConfig
    from models.trading import Trade

    bound = database.bind(database_url)
    with bound.connection_context():
        for n in range(20):
            Trade.create(user=user_id, token_id=f"{n + 1:077d}", market_slug=f"market-{n}",
                         side="BUY", requested_size=Decimal("10"), price=Decimal("0.5"),
                         filled_size=Decimal("10"), filled_value=Decimal("5"),
                         fee=Decimal("0.01"), latency_ms=120 + n, status="filled")
        config = CopyConfig.create(user=user_id, target_address="0x" + "ab" * 20,
                                   size_multiplier=Decimal("1"),
                                   max_position_usdc=Decimal("100"), price_deviation_bps=100)
    bound.close()
    return str(config.id)


# -- wrk ----------------------------------------------------------------------------------


def wrk(url: str, args: argparse.Namespace, env: dict[str, str],
        master: int | None = None) -> dict[str, float]:
    """One wrk round: req/s, p50/p99 ms, any error answers, and the server's CPU µs per
    request (``master``'s workers)."""
    cpu_before = cpu_seconds(master) if master else 0.0
    out = subprocess.run(
        ["wrk", f"-t{args.wrk_threads}", f"-c{args.connections}", f"-d{args.duration}s",
         "-s", str(LUA), url], capture_output=True, text=True, env={**os.environ, **env},
        check=True).stdout
    cpu = cpu_seconds(master) - cpu_before if master else 0.0
    found = json.loads(out.strip().splitlines()[-1])
    seconds = found["duration_us"] / 1e6
    return {"rps": found["requests"] / seconds, "p50": found["p50_us"] / 1000,
            "p99": found["p99_us"] / 1000,
            "cpu_us": cpu / max(1, found["requests"]) * 1e6,
            "errors": found["non_2xx_3xx"] + found["socket_errors"],
            "requests": found["requests"]}


def stage_totals(folder: Path) -> dict[str, float]:
    """CPU seconds per stage, summed over the product's workers (their latest reports)."""
    totals: dict[str, float] = {}
    for path in folder.glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            for stage, seconds in json.loads(path.read_text())["cpu"].items():
                totals[stage] = totals.get(stage, 0.0) + seconds
    return totals


def print_stages(routes: list[str], results: dict[str, dict[str, list[dict[str, float]]]],
                 labels: dict[str, str]) -> None:
    """Per route, each stage's CPU per request (median over the rounds) beside its floor
    and target; the rest is gunicorn's, Flask's and werkzeug's, whose floor is the bare
    app's whole request."""
    sys.path.insert(0, str(Path(__file__).with_name("floors")))
    from api_floors import measure  # a floor script's sibling names, as it runs them

    floors = measure()
    for name in routes:
        product, bare = results[name]["product"], results[name]["bare"]
        bare_us = statistics.median(r["cpu_us"] for r in bare)
        total = statistics.median(r["cpu_us"] for r in product)
        print(f"\n{labels[name]}: server CPU per request by stage, µs (median of "
              f"{len(product)} rounds)\n")
        print("| stage | µs / request | floor µs | target µs |")
        print("|---|---|---|---|")
        staged = 0.0
        for key, label, target in API_STAGES:
            us = statistics.median(r.get(f"stage_{key}", 0.0) for r in product)
            staged += us
            floor = floors.get(key)
            print(f"| {label} | {us:.0f} | {'-' if floor is None else f'{floor:.0f}'} | "
                  f"{target * bare_us:.0f} |")
        rest_target = REST_TARGET * bare_us
        print(f"| the rest: gunicorn, Flask, werkzeug, serialization | {total - staged:.0f} | "
              f"{bare_us:.0f} (the bare app's request) | {rest_target:.0f} |")
        goal = rest_target + sum(t for _, _, t in API_STAGES) * bare_us
        print(f"| **all** | **{total:.0f}** | - | {goal:.0f} (half the bare app's rate) |")


def route_table(config_id: str, key: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Each route's path and wrk environment."""
    auth = {"BENCH_AUTH": f"Bearer {key}"}
    return {
        "healthz": ("/healthz", {}),
        "public": ("/api/stats/platform", {}),
        "me": ("/api/users/me", auth),
        "trades": ("/api/trades", auth),
        "post": (f"/api/configs/{config_id}/stop",
                 {**auth, "BENCH_METHOD": "POST", "BENCH_IDEMPOTENCY": "1"}),
    }


def profile_start(pid: int, seconds: int, out: Path) -> subprocess.Popen:
    """py-spy on one worker for a round: raw collapsed stacks of the thread holding the GIL
    (the interpreter's CPU, which bounds a process's throughput; waits are left out)."""
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("py-spy")), "record", "-p", str(pid), "-d",
         str(seconds), "-r", "200", "--gil", "-f", "raw", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize(rows: list[dict[str, float]], bares: list[dict[str, float]]) -> dict[str, float]:
    """Medians over rounds, the paired ratio, and the req/s spread."""
    rps = [r["rps"] for r in rows]
    median = statistics.median(rps)
    return {
        "rps": median, "p50": statistics.median(r["p50"] for r in rows),
        "p99": statistics.median(r["p99"] for r in rows),
        "ratio": statistics.median(r["rps"] / b["rps"] for r, b in zip(rows, bares, strict=True)),
        "noise": (max(rps) - min(rps)) / median * 100 if median else 0.0,
        "cpu_us": statistics.median(r["cpu_us"] for r in rows),
        "cpu_ratio": statistics.median(b["cpu_us"] / r["cpu_us"]
                                       for r, b in zip(rows, bares, strict=True)),
        "errors": sum(r["errors"] for r in rows),
    }


def main() -> None:
    """Start both servers, sign in, run the alternating rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk round")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn processes")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads each")
    parser.add_argument("--routes", default=",".join(ROUTES),
                        help=f"comma-separated subset of {', '.join(ROUTES)}")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--limiter-hook", action="store_true",
                        help="also run the product with the pre-flask-limiter hook")
    parser.add_argument("--stages", action="store_true",
                        help="serve the product with its hooks timed per stage "
                             "(bench/stage_site/) and print each route's CPU per stage, "
                             "beside each stage's floor (bench/floors/api_floors.py)")
    parser.add_argument("--serve-bare", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare is not None:
        serve_bare(args.serve_bare, args.workers, args.threads)
        return
    routes = [r for r in args.routes.split(",") if r]
    unknown = set(routes) - set(ROUTES)
    if unknown:
        parser.error(f"unknown route(s) {sorted(unknown)}")

    with tempfile.TemporaryDirectory(prefix="api-bench-") as tmp:
        folder = Path(tmp)
        product_port, bare_port = free_port(), free_port()
        env = product_env(folder, product_port)
        subprocess.run([sys.executable, "-m", "cli", "migrate"], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        product_log, bare_log = folder / "product.log", folder / "bare.log"
        gunicorn = ["--workers", str(args.workers), "--threads", str(args.threads)]
        hook = None
        hook_port = free_port()
        with product_log.open("w") as plog, bare_log.open("w") as blog:
            stage_dir = folder / "stages"
            stage_dir.mkdir()
            # With --stages, served from stage_site/, whose wsgi.py shadows ours.
            product = subprocess.Popen(
                [sys.executable, "-m", "cli", "serve", "--port", str(product_port), *gunicorn],
                env={**env, "API_STAGES_DIR": str(stage_dir)} if args.stages else env,
                cwd=STAGE_SITE if args.stages else ROOT, stdout=plog,
                stderr=subprocess.STDOUT)
            bare = subprocess.Popen(
                [sys.executable, __file__, "--serve-bare", str(bare_port), *gunicorn],
                cwd=ROOT, stdout=blog, stderr=subprocess.STDOUT)
            if args.limiter_hook:
                # Same database and Redis; run from hook_site/, whose wsgi.py shadows ours.
                hook = subprocess.Popen(
                    [sys.executable, "-m", "cli", "serve", "--port", str(hook_port), *gunicorn],
                    env={**env, "BASE_URL": f"http://127.0.0.1:{hook_port}"}, cwd=HOOK_SITE,
                    stdout=(folder / "hook.log").open("w"), stderr=subprocess.STDOUT)
        try:
            wait_listening(product_port, product, product_log)
            wait_listening(bare_port, bare, bare_log)
            if hook is not None:
                wait_listening(hook_port, hook, folder / "hook.log")
            session = sign_in(product_port, product_log, "bench@example.com")
            status, minted = http(product_port, "POST", "/api/keys",
                                  {"name": "bench", "scopes": SCOPES}, token=session)
            assert status == 201, (status, minted)
            key = minted["secret"]
            status, me = http(product_port, "GET", "/api/users/me", token=key)
            assert status == 200, (status, me)
            table = route_table(seed(env["DATABASE_URL"], me["id"]), key)
            for name in routes:  # warm both (imports, caches, connections)
                path, extra = table[name]
                wrk_args = argparse.Namespace(**{**vars(args), "duration": 1})
                wrk(f"http://127.0.0.1:{bare_port}/", wrk_args, extra)
                wrk(f"http://127.0.0.1:{product_port}{path}", wrk_args, extra)
                if hook is not None:
                    wrk(f"http://127.0.0.1:{hook_port}{path}", wrk_args, extra)
            if args.profile:
                args.profile.mkdir(parents=True, exist_ok=True)
            results: dict[str, dict[str, list[dict[str, float]]]] = {
                name: {"bare": [], "product": [], "hook": []} for name in routes}
            for round_no in range(args.rounds):
                for name in routes:
                    path, extra = table[name]
                    results[name]["bare"].append(
                        wrk(f"http://127.0.0.1:{bare_port}/", args, extra, bare.pid))
                    spy = None
                    if args.profile:
                        pid = gunicorn_workers(product.pid)[0]
                        spy = profile_start(pid, args.duration,
                                            args.profile / f"{name}-{round_no}.txt")
                    staged_before = stage_totals(stage_dir) if args.stages else {}
                    results[name]["product"].append(
                        wrk(f"http://127.0.0.1:{product_port}{path}", args, extra,
                            product.pid))
                    if args.stages:
                        time.sleep(0.7)  # the workers write their totals every 0.5 s
                        done = results[name]["product"][-1]
                        after = stage_totals(stage_dir)
                        done.update({f"stage_{k}": (after.get(k, 0) - staged_before.get(k, 0))
                                     * 1e6 / max(1, done["requests"]) for k in after})
                    if spy is not None:
                        spy.wait()
                    if hook is not None:
                        results[name]["hook"].append(
                            wrk(f"http://127.0.0.1:{hook_port}{path}", args, extra, hook.pid))
        finally:
            stop(product)
            stop(bare)
            if hook is not None:
                stop(hook)

    print(f"wrk {args.wrk_threads} threads x {args.connections} connections, "
          f"{args.duration} s rounds, {args.rounds} round(s) each, alternating bare/product; "
          f"gunicorn gthread {args.workers} x {args.threads}\n")
    print("| route | req/s | p50 ms | p99 ms | ratio to bare | noise (req/s spread) "
          "| server CPU µs/request | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    bare_all = [row for name in routes for row in results[name]["bare"]]
    bare_rps = [r["rps"] for r in bare_all]
    bare_median = statistics.median(bare_rps)
    print(f"| bare Flask, one JSON route | {bare_median:,.0f} | "
          f"{statistics.median(r['p50'] for r in bare_all):.2f} | "
          f"{statistics.median(r['p99'] for r in bare_all):.2f} | 1.00 | "
          f"{(max(bare_rps) - min(bare_rps)) / bare_median * 100:.0f}% | "
          f"{statistics.median(r['cpu_us'] for r in bare_all):.0f} | 1.00 |")
    labels = {"healthz": "GET /healthz", "public": "GET /api/stats/platform (public)",
              "me": "GET /api/users/me (API key)", "trades": "GET /api/trades (API key, 20)",
              "post": "POST /api/configs/{id}/stop (API key, Idempotency-Key)"}
    rows = {}
    for name in routes:
        row = summarize(results[name]["product"], results[name]["bare"])
        rows[name] = row
        flag = f" ({row['errors']:.0f} errors)" if row["errors"] else ""
        print(f"| {labels[name]}{flag} | {row['rps']:,.0f} | {row['p50']:.2f} | "
              f"{row['p99']:.2f} | {row['ratio']:.2f} | {row['noise']:.0f}% | "
              f"{row['cpu_us']:.0f} | {row['cpu_ratio']:.2f} |")
    if hook is not None:
        print("\nRate limiter: flask-limiter (the product) beside the before-request hook it "
              "replaced, in the same rounds\n")
        print("| route | flask-limiter CPU µs/request | hook CPU µs/request | ratio "
              "| flask-limiter req/s | hook req/s |")
        print("|---|---|---|---|---|---|")
        for name in routes:
            product_rows, hook_rows = results[name]["product"], results[name]["hook"]
            ratio = statistics.median(p["cpu_us"] / h["cpu_us"]
                                      for p, h in zip(product_rows, hook_rows, strict=True))
            print(f"| {labels[name]} | "
                  f"{statistics.median(r['cpu_us'] for r in product_rows):.0f} | "
                  f"{statistics.median(r['cpu_us'] for r in hook_rows):.0f} | {ratio:.2f} | "
                  f"{statistics.median(r['rps'] for r in product_rows):,.0f} | "
                  f"{statistics.median(r['rps'] for r in hook_rows):,.0f} |")
    if args.stages:
        print_stages(routes, results, labels)
    if args.json:
        print(json.dumps({"rows": rows, "raw": results}, indent=1))


if __name__ == "__main__":
    main()
