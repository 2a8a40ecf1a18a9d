"""Structured logs: a JSON line per request and per job, one id from the API into the worker,
and no secret in any line (targeted checks here; the whole run is searched by log_capture).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import secrets
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace

import pytest
import trio

import cli
import config as settings_module
from models.base import utcnow
from schemas.vocabulary import ALL_SCOPES
from services.identity import auth, keys
from services.platform import jobs as jobs_service
from services.platform import logs, runtime
from services.platform.principal import Principal
from services.wallets import wallets
from tests.conftest import use_queue
from tests.operations import log_capture
from tests.worker.copy_engine.conftest import wait_for
from worker.copy_engine import detection
from worker.host import WorkerHost, WorkerSettings


def lines(stream: io.StringIO) -> list[dict]:
    """The JSON objects written so far (every line must be one)."""
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_one_json_line_per_request_with_the_request_id_in_and_out(client, captured):
    given = client.get("/healthz", headers={"X-Request-Id": "op-trace-42"})
    assert given.headers["X-Request-Id"] == "op-trace-42"
    fresh = client.get("/api/stats/platform", headers={"X-Request-Id": "bad id <script>"})
    minted = fresh.headers["X-Request-Id"]
    assert minted != "bad id <script>" and len(minted) == 32

    requests = [e for e in lines(captured) if e.get("event") == "request"]
    by_id = {e["request_id"]: e for e in requests}
    assert by_id["op-trace-42"]["route"] == "/healthz"
    assert by_id["op-trace-42"]["status"] == given.status_code
    assert by_id[minted]["path"] == "/api/stats/platform" and by_id[minted]["method"] == "GET"
    assert isinstance(by_id[minted]["duration_ms"], float)
    assert len([e for e in requests if e["request_id"] == minted]) == 1


def test_the_request_id_follows_the_work_into_the_worker(
        app, client, user, auth_headers, make_config, captured, redis_url, engine_prefix):
    saved = use_queue(redis_url, engine_prefix)
    try:
        config = make_config(user, "0x" + secrets.token_hex(20), is_active=False,
                             paper_trading=True)
        started = client.post(f"/api/configs/{config.id}/start", headers={
            **auth_headers, "X-Request-Id": "req-into-worker"})
        assert started.status_code == 200, started.get_data(as_text=True)
        job = jobs_service.fetch(jobs_service.qualified_job_id(
            jobs_service.logical_job_id("copy.sync", config.id)))
        assert job is not None and job.meta["request_id"] == "req-into-worker"

        settings = WorkerSettings(redis_url=redis_url, prefix=engine_prefix, capacity=2,
                                  grace_seconds=2, heartbeat_seconds=0.5, poll_seconds=0.05)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                host = await nursery.start(WorkerHost(settings).run)
                await wait_for(lambda: job.get_status(refresh=True).value == "finished")
                host.request_shutdown()

        trio.run(main)
    finally:
        runtime.install(saved)

    entries = lines(captured)
    job_lines = [e for e in entries if e.get("event") == "job"]
    assert len(job_lines) == 1
    done = job_lines[0]
    assert done["job_id"] == job.id and done["request_id"] == "req-into-worker"
    assert done["job"] == "copy.sync" and done["outcome"] == "succeeded"
    assert done["queue"].endswith("high") and done["duration_ms"] >= 0
    # every line the job wrote carries both ids
    assert all(e.get("request_id") == "req-into-worker"
               for e in entries if e.get("job_id") == job.id)


def test_secrets_the_app_creates_never_reach_a_log_line(app, client, user, captured):
    session = auth.issue_session(user).token
    api_secret = keys.create(Principal(user=user, kind="session", scopes=ALL_SCOPES), "k",
                             ["read:trades"], 30).secret
    wallet = wallets.get_or_create(user)
    private_key = wallets.signer(wallet)
    venue_secret = "Zm9vYmFyYmF6cXV4" + secrets.token_urlsafe(32)
    passphrase = secrets.token_hex(32)
    wallets.store_venue_credentials(wallet, "venue-key", venue_secret, passphrase)
    oauth_token = "svco_" + secrets.token_urlsafe(32)
    code = f"{secrets.randbelow(900000) + 100000}"
    created = [session, api_secret, private_key.hex(), "0x" + private_key.hex(), venue_secret,
               passphrase, oauth_token]

    # Real traffic carrying them, then the ways a careless line could quote them.
    assert client.get("/api/users/me", headers={"Authorization": f"Bearer {session}"}
                      ).status_code == 200
    client.get("/api/keys", headers={"Authorization": f"Bearer {api_secret}"})
    client.get(f"/api/users/me?token={session}&api_key={api_secret}")
    log = logging.getLogger("copytrade.test.careless")
    log.warning("headers %s", {"Authorization": f"Bearer {session}", "POLY_API_KEY": "k",
                               "POLY_PASSPHRASE": passphrase, "secret": venue_secret})
    log.info("minted %s for %s; oauth %s", api_secret, user.email, oauth_token)
    log.info("wallet key 0x%s", private_key.hex(), extra={"detail": venue_secret})
    log.info("your sign-in code is %s", code)
    try:
        raise RuntimeError(f"rpc https://u:{passphrase}@rpc.example/?key={api_secret} {session}")
    except RuntimeError:
        log.exception("call failed")

    text = captured.getvalue()
    assert lines(captured)  # every line is JSON
    for value in [*created, code]:
        assert value not in text, value
    assert not log_capture.leaks(text)
    assert "<redacted-jwt>" in text and "svck_***" in text and "<redacted-hex>" in text


def test_login_codes_are_not_logged_when_mail_is_configured(client, captured, bound_db,
                                                            set_settings):
    from models.identity import LoginCode

    set_settings(smtp_url="smtp://127.0.0.1:1")  # nothing listens: delivery fails
    response = client.post("/api/auth/magic", json={"email": "ops@example.com"})
    assert response.status_code in (202, 503)
    assert LoginCode.select().where(LoginCode.email == "ops@example.com",
                                    LoginCode.created_at > utcnow() - timedelta(minutes=1)
                                    ).exists()
    assert not log_capture.leaks(captured.getvalue())


def test_the_session_capture_is_recording_this_run(client):
    client.get("/healthz", headers={"X-Request-Id": "capture-probe"})
    path = log_capture.capture_path()
    assert path is not None and path.exists()
    for handler in logging.getLogger().handlers:
        handler.flush()
    recorded = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert any(e.get("request_id") == "capture-probe" for e in recorded)


def test_an_open_dashboards_refreshes_log_at_debug_and_everything_else_at_info(client, captured):
    client.get("/healthz", headers={"X-Request-Id": "plain-read"})
    client.get("/healthz", headers={"X-Request-Id": "htmx-poll", "HX-Request": "true"})
    client.post("/api/auth/magic", json={}, headers={"X-Request-Id": "htmx-write",
                                                     "HX-Request": "true"})
    levels = {e["request_id"]: e["level"] for e in lines(captured) if e.get("event") == "request"}
    assert levels == {"plain-read": "info", "htmx-poll": "debug", "htmx-write": "info"}


def test_copytrade_up_logs_text_with_no_request_line_and_good_news_at_info(app, set_settings):
    """`copytrade up`'s logging, set up as its children set it up (its environment, then
    Settings): readable lines, no line per web request at INFO, and the feed's return (good
    news) at INFO; `serve` and `worker` keep JSON and a line per request."""
    env = cli.up_environment({"PATH": "/usr/bin"})
    assert (env["LOG_FORMAT"], env["LOG_REQUESTS"]) == ("text", "debug")
    assert cli.up_environment({"LOG_FORMAT": "json"})["LOG_FORMAT"] == "json"  # asked for
    assert cli.up_environment({}, 8123)["BASE_URL"] == "http://127.0.0.1:8123"  # --port
    served = settings_module.load({})
    assert (served.logging.format, served.logging.requests) == ("json", "info")
    with pytest.raises(ValueError, match="LOG_REQUESTS must be 'info' or 'debug'"):
        settings_module.load({"LOG_REQUESTS": "quiet"})

    up = settings_module.load(env)
    set_settings(logging=up.logging)
    stream = io.StringIO()
    handler = logs.build_handler(stream, fmt=up.logging.format)
    handler.setLevel(up.logging.level)  # INFO, as LOG_LEVEL is by default
    logging.getLogger().addHandler(handler)
    try:
        client = app.test_client()
        client.get("/dashboard/login", headers={"X-Request-Id": "up-page"})
        client.get("/api/configs", headers={"X-Request-Id": "up-refused"})  # 401
        client.get("/healthz", headers={"X-Request-Id": "up-poll", "HX-Request": "true"})
        detection.DetectionSource("up-test").observe(
            SimpleNamespace(connected=True, stale_since=None, stale_count=0))
        set_settings(logging=served.logging)  # `serve`: a line per request again
        client.get("/dashboard/login", headers={"X-Request-Id": "serve-page"})
    finally:
        logging.getLogger().removeHandler(handler)
    text = stream.getvalue().splitlines()
    assert text and not any(line.lstrip().startswith("{") for line in text), text
    requests = [line for line in text if "copytrade.request" in line]
    assert len(requests) == 1 and re.search(r" INFO copytrade\.request: GET /dashboard/login "
                                            r"200 .*\[request serve-page\]$", requests[0]), text
    assert any(re.search(r" INFO worker\.copy_engine\.detection: engine up-test: trades now "
                         r"detected by feed", line) for line in text), text


@contextlib.contextmanager
def sole_handler() -> Iterator[io.StringIO]:
    """``configure``'s JSON handler alone on the root logger (as `copytrade serve` runs),
    writing to a buffer; pytest's own capture handlers are put back afterwards."""
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    stream = io.StringIO()
    handler = logs.build_handler(stream, fmt="json")
    handler._copytrade = True  # type: ignore[attr-defined]
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


def test_the_request_line_written_directly_is_the_record_line(client):
    """With configure's handler the only way out, the request line skips the log record; it
    reads as the record's line does (a second handler on the way sends it as a record)."""
    request_log = logging.getLogger("copytrade.request")
    made: list[str] = []
    factory = logging.getLogRecordFactory()

    def counting(*args, **kwargs):
        made.append(args[0])
        return factory(*args, **kwargs)

    logging.setLogRecordFactory(counting)
    try:
        with sole_handler() as stream:
            client.get("/healthz", headers={"X-Request-Id": "direct-1"})
            assert "copytrade.request" not in made  # no record: written directly
            witness = logging.NullHandler()
            request_log.addHandler(witness)
            try:
                client.get("/healthz", headers={"X-Request-Id": "record-1"})
            finally:
                request_log.removeHandler(witness)
        assert made.count("copytrade.request") == 1
    finally:
        logging.setLogRecordFactory(factory)
    direct, recorded = lines(stream)

    def comparable(entry: dict) -> dict:
        varying = ("ts", "request_id", "duration_ms", "message")
        return {name: value for name, value in entry.items() if name not in varying}

    assert list(direct) == list(recorded)  # the same fields, in the same order
    assert comparable(direct) == comparable(recorded)
    assert direct["request_id"] == "direct-1" and direct["logger"] == "copytrade.request"
    assert re.fullmatch(r"GET /healthz \d{3} \d+\.\dms", direct["message"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", direct["ts"])
    assert isinstance(direct["duration_ms"], float) and isinstance(direct["status"], int)


def test_a_request_line_with_a_secret_in_its_path_is_masked(client):
    secret = "svck_live_" + secrets.token_urlsafe(32)
    with sole_handler() as stream:
        client.get(f"/api/keys/{secret}")
    entry = next(e for e in lines(stream) if e.get("event") == "request")
    assert secret not in stream.getvalue()
    assert "svck_***" in entry["path"] and "svck_***" in entry["message"]
