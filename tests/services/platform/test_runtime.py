"""The process runtime: built once, reached through one accessor, never guessed."""

from __future__ import annotations

import pytest

import config
from services.platform import chain_access, jobs, runtime, venues, wiring


@pytest.fixture
def no_runtime():
    """No runtime installed for the test (the session app's is put back afterwards)."""
    saved = runtime.install(None)
    yield
    runtime.install(saved)


def test_runtime_raises_until_built(no_runtime):
    with pytest.raises(RuntimeError, match="never built"):
        runtime.runtime()
    # The thin module functions reach through it: no fallback to the environment.
    for reach in (venues.client, venues.async_client, chain_access.current, chain_access.web3,
                  jobs.current_config):
        with pytest.raises(RuntimeError, match="never built"):
            reach()


def test_build_install_and_close(no_runtime, tmp_path, redis_url):
    settings = config.load(env={"REDIS_URL": redis_url, "REDIS_PREFIX": "rt-test:",
                                "VENUE": "polymarket", "CHAIN_ID": "80002"},
                           instance=tmp_path)
    built = wiring.build_runtime(settings)
    assert runtime.install(built) is None
    assert runtime.runtime() is built
    assert jobs.current_config() == runtime.JobsConfig(redis_url=redis_url, prefix="rt-test:")
    assert jobs.queue_name("default") == "rt-test:default"
    assert venues.client() is venues.client()  # one shared blocking client
    assert venues.client().config.clob_url == "https://clob.polymarket.com"
    assert chain_access.chain_id() == 80002
    assert built.redis().ping()
    runtime.close()
    with pytest.raises(RuntimeError, match="never built"):
        runtime.runtime()


def test_replaced_restores_the_runtime(app, redis_url):
    before = runtime.runtime()
    swap = runtime.JobsConfig(redis_url=redis_url, prefix="other:")
    with runtime.replaced(jobs=swap) as inside:
        assert jobs.current_config() is swap
        assert inside.venue is before.venue  # untouched parts are shared
    assert runtime.runtime() is before
