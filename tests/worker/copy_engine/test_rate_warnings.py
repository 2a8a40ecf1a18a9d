"""Per-signer rate-limit warnings under a running copy engine (ACCOUNTS.md §11, issue 33
item 1): the sandbox warns a copier's signer past one order a minute; the engine's budget for
that signer backs off, and its heartbeat carries it to ``copytrade status`` and the metrics,
which follow the slow recovery afterwards."""

from __future__ import annotations

import redis
import trio

from cli import throttle_text
from services.platform import metrics, operations
from tests.worker.copy_engine.conftest import inject, intents_of, owned, wait_for
from venue.budgets import RateBudgets


def _gauge(kind: str) -> float:
    return metrics.VENUE_SIGNER_LIMIT.labels(kind)._value.get()


def test_a_warned_copier_is_backed_off_in_status_and_metrics(
        run_engines, make_config, trader, market, target, venue_control, redis_url,
        engine_prefix):
    config = make_config(trader.user, target)
    signer = trader.signer.lower()  # the owner key signing its orders (POLY_ADDRESS)
    client = redis.Redis.from_url(redis_url)
    seen: dict[str, object] = {}

    async def scenario(engines):
        engine = engines[0]
        seen["engine"] = engine.name
        budgets = engine._venue.transport.budgets
        ceiling = budgets.lowest()["orders"]
        await owned(engine, target)
        for size in ("10", "12"):  # the second copy's order draws the warning
            await inject(venue_control, target, market.yes, "BUY", size, "0.5")
        await wait_for(lambda: len([i for i in intents_of(config)
                                    if i.status != "pending"]) == 2)
        assert budgets.signer_limit(signer, "orders") < ceiling
        await trio.sleep(engine.settings.heartbeat_seconds * 3)
        seen["status"] = await trio.to_thread.run_sync(
            lambda: operations.snapshot(client, engine_prefix, include_executors=False))
        seen["gauge"], seen["ceiling"] = _gauge("orders"), ceiling

    venue_control.call("POST", "/signer-limits", {"orders": 1, "window": 60}, expect=200)
    try:
        run_engines(scenario)
        warnings = venue_control.call("POST", "/signer-limits", {}, expect=200)["warnings"]
    finally:
        venue_control.call("POST", "/signer-limits", {}, expect=200)
    assert warnings >= 1
    throttle = seen["status"]["venue_throttle"]
    [limit] = throttle[seen["engine"]][signer].values()
    assert list(throttle[seen["engine"]][signer]) == ["orders"] and limit < seen["ceiling"]
    text = throttle_text(throttle)
    assert "(1 signers backed off)" in text and signer in text and f"{limit:g}/10s" in text
    assert seen["gauge"] == limit  # the heartbeat set the metric from the same budget


def test_the_metrics_follow_the_recovery_not_only_the_warning() -> None:
    now = [0.0]
    budgets = RateBudgets(clock=lambda: now[0])
    signer = "0x" + "c" * 40
    for _ in range(8):
        budgets.take("clob", "DELETE", "/order", signer)
    budgets.warned("clob", "DELETE", "/order", signer)
    metrics.venue_signer_limits(budgets.lowest())
    assert (_gauge("cancels"), _gauge("orders")) == (4.0, 3500.0)
    now[0] = 10.0
    metrics.venue_signer_limits(budgets.lowest())
    assert _gauge("cancels") == 6.0  # a quarter more and one, a window later
    now[0] = 10_000.0
    metrics.venue_signer_limits(budgets.lowest())
    assert _gauge("cancels") == 3000.0 and budgets.throttled() == {}
