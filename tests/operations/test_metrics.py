"""GET /metrics: who may read it, which series it exposes, and that they move with real work.

Everything runs in this process (default registry): the app over the Flask client, the
sandbox venue over real HTTP, copy engines and a worker host under trio, real Redis and
the test database. ``test_multiprocess.py`` covers the shared folder across processes.
"""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import replace
from decimal import Decimal

import pytest
import trio

from services.identity import auth
from services.platform import runtime, venues
from tests.conftest import use_queue
from tests.operations.scrape import names, total
from tests.worker.copy_engine.conftest import STEADY, inject, owned, settled, wait_for
from venue.errors import VenueNotFound
from worker.host import WorkerHost, WorkerSettings

SERIES = [
    "copytrade_http_requests_total", "copytrade_http_request_duration_seconds_bucket",
    "copytrade_rate_limit_rejections_total", "copytrade_idempotency_replays_total",
    "copytrade_idempotency_conflicts_total", "copytrade_venue_request_duration_seconds_count",
    "copytrade_venue_request_errors_total", "copytrade_copy_detections_total",
    "copytrade_copies_total", "copytrade_copy_skips_total", "copytrade_copy_outcomes_total",
    "copytrade_copy_latency_seconds_bucket", "copytrade_copy_detection_delay_seconds_count",
    "copytrade_copy_executors", "copytrade_job_duration_seconds_count",
    "copytrade_job_failures_total",
]


def scrape(client) -> str:
    """The exposition, read as a scraper on this machine would."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Content-Type"].startswith("text/plain")
    return response.get_data(as_text=True)


def test_metrics_need_the_operator_token_or_a_loopback_client(client, settings, set_settings):
    assert client.get("/metrics").status_code == 200  # the Flask client is 127.0.0.1
    outside = client.get("/metrics", environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert outside.status_code == 401 and "Bearer" in outside.headers["WWW-Authenticate"]

    token = secrets.token_urlsafe(24)
    set_settings(metrics=replace(settings.metrics, token=token))
    assert client.get("/metrics").status_code == 401  # a token is set: loopback too
    wrong = {"Authorization": "Bearer not-the-token"}
    assert client.get("/metrics", headers=wrong).status_code == 401
    right = client.get("/metrics", headers={"Authorization": f"Bearer {token}"},
                       environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert right.status_code == 200
    assert "copytrade_http_requests_total" in right.get_data(as_text=True)


def tight_app(redis_url: str, prefix: str):
    """A client of a small app behind the real rate limiter (1/s, burst 1)."""
    from flask import Flask

    from blueprints import errors, ratelimit

    small = Flask("tight")
    tight = replace(runtime.runtime().settings, redis_prefix=f"{prefix}rl:",
                    rate_limit_enabled=True, rate_limit_per_second=1, rate_limit_burst=1)
    with runtime.replaced(settings=tight, redis_url=redis_url):
        ratelimit.init_app(small)
    errors.register(small)
    small.add_url_rule("/ping", "ping", lambda: "pong")
    return small.test_client()


def _place_order(client, headers, token_id: str, key: str) -> tuple[dict, dict]:
    body = {"token_id": token_id, "side": "buy", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    sent = {**body, "preview_id": quote.json["preview_id"]}
    placed = client.post("/api/markets/order", json=sent,
                         headers={**headers, "Idempotency-Key": key})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    return sent, json.loads(placed.get_data(as_text=True), parse_float=Decimal)


def test_series_move_when_the_suite_trades_copies_and_runs_jobs(
        app, app_config, client, trader, make_trader, market, make_config, target,
        run_engines, venue_control, redis_url, engine_prefix):
    before = scrape(client)

    # A trade through the REST API, replayed once with its key, then the key misused.
    headers = {"Authorization": f"Bearer {auth.issue_session(trader.user).token}"}
    key = str(uuid.uuid4())
    sent, first = _place_order(client, headers, market.yes, key)
    replay = client.post("/api/markets/order", json=sent,
                         headers={**headers, "Idempotency-Key": key})
    assert replay.status_code == 200 and replay.headers["Idempotent-Replay"] == "true"
    misuse = client.post("/api/markets/order", json={**sent, "size": "11"},
                         headers={**headers, "Idempotency-Key": key})
    assert misuse.status_code == 400  # another body under the same key

    # The rate limiter refuses a burst: the real limiter on an app with a bucket of one.
    codes = [tight_app(redis_url, engine_prefix).get("/ping").status_code for _ in range(3)]
    assert 429 in codes

    # A copy: one config mirrors the target, another blocks the market's category.
    copier = make_config(trader.user, target)
    blocked = make_config(make_trader().user, target, blocked_categories=["politics"])
    seen_executors: list[str] = []

    async def scenario(engines) -> None:
        await owned(engines[0], target)
        await trio.sleep(0.5)
        await inject(venue_control, target, market.yes, "BUY", "10")
        await wait_for(settled(copier))
        await wait_for(settled(blocked))
        seen_executors.append(await trio.to_thread.run_sync(scrape, client))

    run_engines(scenario, settings=STEADY)

    # Jobs: one succeeds, one fails, on an in-process worker host.
    from services.platform import jobs as jobs_service

    saved = use_queue(redis_url, engine_prefix)
    try:
        ok = jobs_service.enqueue("worker.ping")
        bad = jobs_service.enqueue("no.such.job")
        settings = WorkerSettings(redis_url=redis_url, prefix=engine_prefix, capacity=2,
                                  grace_seconds=2, heartbeat_seconds=0.5, poll_seconds=0.05)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                host = await nursery.start(WorkerHost(settings).run)

                def done() -> bool:
                    return all(j.get_status(refresh=True).value in ("finished", "failed")
                               for j in (ok, bad))

                await wait_for(done)
                host.request_shutdown()

        trio.run(main)
    finally:
        runtime.install(saved)

    # A venue call that fails (an unknown market: 404).
    with pytest.raises(VenueNotFound):
        venues.client().gamma.market_by_slug(f"no-such-market-{secrets.token_hex(4)}")

    after = scrape(client)
    assert set(SERIES) <= names(after), set(SERIES) - names(after)

    def moved(name: str, **labels: str) -> Decimal:
        return total(after, name, **labels) - total(before, name, **labels)

    assert first["status"] == "filled"
    assert moved("copytrade_http_requests_total", route="/api/markets/order",
                 status="200") >= 1
    assert moved("copytrade_http_request_duration_seconds_count",
                 route="/api/markets/order/preview") == 1
    assert moved("copytrade_idempotency_replays_total") == 1
    assert moved("copytrade_idempotency_conflicts_total", kind="mismatch") == 1
    assert moved("copytrade_rate_limit_rejections_total") >= 1
    # Our order and the copy's, each one POST /order to the venue.
    assert moved("copytrade_venue_request_duration_seconds_count", api="clob",
                 endpoint="/order", method="POST") >= 2
    assert moved("copytrade_venue_request_duration_seconds_count", api="data") >= 1
    assert moved("copytrade_venue_request_errors_total", api="gamma",
                 endpoint="/markets/slug/{slug}", error="VenueNotFound") == 1
    assert moved("copytrade_copy_detections_total") >= 1
    assert moved("copytrade_copies_total", kind="mirror") == 1
    assert moved("copytrade_copy_skips_total", reason="category_blocked") == 1
    assert moved("copytrade_copy_outcomes_total", status="filled") == 1
    assert moved("copytrade_copy_latency_seconds_count") == 1
    assert moved("copytrade_copy_detection_delay_seconds_count") == 2
    assert total(seen_executors[0], "copytrade_copy_executors", kind="targets") >= 1
    assert total(seen_executors[0], "copytrade_copy_executors", kind="configs") >= 2
    assert moved("copytrade_job_duration_seconds_count", job="worker.ping",
                 outcome="succeeded") == 1
    assert moved("copytrade_job_failures_total", job="no.such.job") == 1


def test_metrics_need_the_token_whenever_base_url_is_not_loopback(client, settings,
                                                                   set_settings):
    """Issue 18 finding 4: behind a proxy on the same host every client is loopback, so a
    public BASE_URL takes away the loopback exemption."""
    set_settings(base_url="https://copytrade.example",
                 metrics=replace(settings.metrics, token=None))
    public = "https://copytrade.example"  # the Host the proxy forwards (others get 400)
    # a loopback peer, no token configured
    assert client.get("/metrics", base_url=public).status_code == 401
    token = secrets.token_urlsafe(24)
    set_settings(metrics=replace(settings.metrics, token=token))
    assert client.get("/metrics", base_url=public).status_code == 401
    assert client.get("/metrics", base_url=public,
                      headers={"Authorization": f"Bearer {token}"}).status_code == 200
