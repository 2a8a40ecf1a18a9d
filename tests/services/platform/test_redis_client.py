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
