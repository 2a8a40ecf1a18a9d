"""Preview and order round-trip times over real HTTP against the sandbox venue.

Starts a sandbox venue and the web app (threaded werkzeug servers on free ports) with a
fresh SQLite database in a temporary folder, signs up one user with a funded deposit wallet
(onboarded through the sandbox relayer before anything is timed), then times N rounds of
``POST /api/markets/order/preview`` followed by ``POST /api/markets/order`` for a market
order (FOK) and a limit order (GTC), and prints p50/p95/max per step as a Markdown table.

    .venv/bin/python bench/order_roundtrip.py --runs 50
"""

from __future__ import annotations

import argparse
import logging
import math
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from werkzeug.serving import make_server

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.copy_latency import onboard_user
from devstack.stack import sandbox_builder_env
from devstack.venue import SandboxServer, free_port
from models import User, migrate
from models import database as database_module
from models.base import db
from services.identity import auth


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def timed(http: httpx.Client, path: str, body: dict[str, Any], headers: dict[str, str]
          ) -> tuple[float, dict[str, Any]]:
    """POST and return (milliseconds, JSON body); raises on a non-200 answer."""
    start = time.perf_counter()
    response = http.post(path, json=body, headers=headers)
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{path} answered {response.status_code}: {response.text}")
    return elapsed, response.json()


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no per-request log lines

    folder = Path(tempfile.mkdtemp(prefix="ct-bench-"))
    database_url = f"sqlite:///{folder / 'bench.db'}"
    bound = database_module.open_database(database_url)
    with bound.connection_context():
        migrate.migrate(bound)

    venue = SandboxServer(seed=1).start()
    app = create_app({
        "VENUE": "sandbox", "POLYMARKET_GAMMA_URL": venue.gamma_url,
        "POLYMARKET_CLOB_URL": venue.clob_url, "POLYMARKET_DATA_URL": venue.data_url,
        "POLYMARKET_RTDS_URL": "", "DATABASE_URL": database_url,
        "POLYMARKET_RELAYER_URL": f"{venue.url}/relayer", **sandbox_builder_env({}),
        "INSTANCE_PATH": str(folder), "RATE_LIMIT_BURST": 100000,
        "RATE_LIMIT_PER_SECOND": 100000,
    })
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    control = httpx.Client(base_url=venue.control_url, timeout=10)
    try:
        slug = f"bench-{secrets.token_hex(4)}"
        control.post("/markets", json={"slug": slug, "question": "Bench?", "liquidity": True,
                                       "fair_price": "0.5"}).raise_for_status()
        market = next(m for m in control.get("/state").json()["markets"] if m["slug"] == slug)
        token = market["token_ids"][0]
        db.initialize(app.extensions["database"])
        with app.extensions["database"].connection_context():
            user = User.create(email=f"bench-{secrets.token_hex(4)}@example.com")
            onboard_user(control, user)  # a ready deposit wallet, funded: not measured
            token_text = auth.issue_session(user).token
        headers = {"Authorization": f"Bearer {token_text}"}
        orders = {
            "market": {"token_id": token, "side": "buy", "size": "10", "order_type": "market"},
            "limit": {"token_id": token, "side": "buy", "size": "10", "order_type": "limit",
                      "price": "0.40"},
        }
        timings: dict[str, list[float]] = {f"{kind} {step}": [] for kind in orders
                                           for step in ("preview", "order")}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for body in orders.values():  # warm-up: credentials, caches, connections
                _, quote = timed(http, "/api/markets/order/preview", body, headers)
                timed(http, "/api/markets/order", {**body, "preview_id": quote["preview_id"]},
                      headers)
            for _ in range(args.runs):
                for kind, body in orders.items():
                    elapsed, quote = timed(http, "/api/markets/order/preview", body, headers)
                    timings[f"{kind} preview"].append(elapsed)
                    elapsed, placed = timed(http, "/api/markets/order",
                                            {**body, "preview_id": quote["preview_id"]},
                                            headers)
                    if placed["status"] == "rejected":
                        raise SystemExit(f"order rejected: {placed}")
                    timings[f"{kind} order"].append(elapsed)
    finally:
        server.shutdown()
        control.close()
        venue.stop()

    print(f"{args.runs} runs, sandbox venue and web app on 127.0.0.1, SQLite\n")
    print("| step | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|")
    for name, values in timings.items():
        print(f"| {name} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} "
              f"| {max(values):.1f} |")


if __name__ == "__main__":
    main()
