"""`copytrade up`'s own steps: migrations through the CLI, the embedded Redis."""

from __future__ import annotations

import os

import redis

from devstack.stack import embedded_redis, migrate_database


def test_migrations_run_through_the_cli_and_count_what_they_applied(tmp_path) -> None:
    env = {**os.environ, "COPYTRADE_INSTANCE": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'up.db'}"}
    assert migrate_database(env) > 0
    assert migrate_database(env) == 0


def test_embedded_redis_serves_on_a_unix_socket(tmp_path) -> None:
    url, server = embedded_redis(tmp_path / "instance")
    assert url.startswith("unix://")
    client = redis.Redis.from_url(url)
    assert client.ping()
    client.close()
    server.shutdown()


def test_copytrade_up_gives_the_app_the_sandbox_relayers_builder_key() -> None:
    import base64

    from devstack.stack import sandbox_builder_env

    given = sandbox_builder_env({"POLYMARKET_BUILDER_API_KEY": None})
    assert set(given) == {"POLYMARKET_BUILDER_API_KEY", "POLYMARKET_BUILDER_SECRET",
                          "POLYMARKET_BUILDER_PASSPHRASE"}
    assert base64.urlsafe_b64decode(given["POLYMARKET_BUILDER_SECRET"])  # a usable secret
    # The operator's own key is never replaced.
    assert sandbox_builder_env({"POLYMARKET_BUILDER_API_KEY": "mine"}) == {}
