"""GET /healthz reports the process, the database and Redis."""

from __future__ import annotations

from app import create_app
from tests.conftest import free_port, one_database


def test_healthz_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["redis"]["ok"] and body["process"]["ok"]


def test_healthz_reports_redis_down(app_config):
    config = dict(app_config, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    broken = create_app(config)
    try:
        response = broken.test_client().get("/healthz")
    finally:
        from models.base import db
        db.initialize(broken.extensions["database"])
    assert response.status_code == 503
    body = response.get_json()
    assert body["redis"]["ok"] is False and body["database"]["ok"] is True
    assert body["code"] == "cache_error"
    assert response.headers["Retry-After"] == "5"



def test_the_rate_limiters_answer_proves_redis_reachable(app, app_config, client, monkeypatch):
    """The limiter's Redis call of the same request stands for the PING (one round trip)."""
    import redis

    def refuse(self, *args, **kwargs):
        raise redis.exceptions.ConnectionError("injected")

    monkeypatch.setattr(redis.Redis, "ping", refuse)
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Remaining"]  # the limiter did reach Redis

    unlimited = create_app(dict(app_config, RATE_LIMIT_ENABLED=False))
    try:
        answer = unlimited.test_client().get("/healthz")
    finally:
        from models.base import db
        db.initialize(app.extensions["database"])
    assert answer.status_code == 503 and answer.get_json()["redis"]["ok"] is False


@one_database
def test_the_site_icon_is_served_where_browsers_ask_for_it(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response.mimetype == "image/x-icon"
    body = response.get_data()
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header, one image
    assert b"\x89PNG" in body
