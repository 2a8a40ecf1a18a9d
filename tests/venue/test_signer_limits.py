"""Per-signer rate limits (ACCOUNTS.md §11): ``Poly-RateLimit-Warning`` read on every answer,
each signer's budget backing off and recovering slowly, batches whole, cancels split at 1,000.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest

from devstack.venue import SandboxServer
from services.platform import metrics
from tests.devstack.venue.conftest import Control
from venue.budgets import RateBudgets, SignerBudget
from venue.client import VenueClient
from venue.clob import MAX_CANCEL_IDS
from venue.config import VenueConfig
from venue.errors import VenueRateLimited
from venue.signing import compact_json, l2_headers


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    venue = SandboxServer(seed=5).start()
    try:
        yield venue
    finally:
        venue.stop()


def _ids(count: int) -> list[str]:
    return ["0x" + secrets.token_hex(32) for _ in range(count)]


def test_warning_backs_the_signer_off_and_shows_in_metrics(sandbox: SandboxServer) -> None:
    ctl = Control(sandbox)
    ctl.call("POST", "/signer-limits", {"cancels": 3, "window": 60}, expect=200)
    key = "0x" + secrets.token_hex(32)
    before = metrics.VENUE_RATE_WARNINGS.labels("cancels")._value.get()
    with VenueClient(VenueConfig.for_sandbox(sandbox.url)) as client:
        creds = client.create_or_derive_api_key(key)
        signer = creds.address.lower()
        budgets = client.transport.budgets
        assert budgets is not None
        for order_id in _ids(4):  # the fourth is past the sandbox's limit: warned
            client.clob.cancel_order(creds, order_id)
        # Backed off to half the rate that drew the warning; the next cancel has to wait.
        assert budgets.signer_limit(signer, "cancels") == 2
        assert budgets.throttled() == {signer: {"cancels": 2.0}}
        assert budgets.take("clob", "DELETE", "/order", signer) > 0
        # Orders are another budget; other signers are not slowed.
        assert budgets.take("clob", "POST", "/order", signer) == 0
        assert budgets.take("clob", "DELETE", "/order", "0x" + "1" * 40) == 0
    assert metrics.VENUE_RATE_WARNINGS.labels("cancels")._value.get() == before + 1
    assert ctl.call("POST", "/signer-limits", {}, expect=200)["warnings"] == 1
    ctl.close()


def test_enforced_limit_answers_429(sandbox: SandboxServer) -> None:
    ctl = Control(sandbox)
    ctl.call("POST", "/signer-limits", {"cancels": 1, "enforce": True}, expect=200)
    with VenueClient(VenueConfig.for_sandbox(sandbox.url, rate_budget_share=0)) as client:
        creds = client.create_or_derive_api_key("0x" + secrets.token_hex(32))
        client.clob.cancel_order(creds, _ids(1)[0])
        with pytest.raises(VenueRateLimited):
            client.clob.cancel_order(creds, _ids(1)[0])
    ctl.close()


def test_budget_recovers_slowly() -> None:
    now = [0.0]
    budgets = RateBudgets(clock=lambda: now[0])
    signer = "0x" + "a" * 40
    for _ in range(10):
        assert budgets.take("clob", "POST", "/order", signer) == 0
    assert budgets.warned("clob", "POST", "/order", signer) == ("orders", 5.0)
    assert budgets.take("clob", "POST", "/order", signer) > 0  # 10 sent, limit 5
    now[0] = 10.0  # one quiet window: a quarter more (and one), not the ceiling at once
    assert budgets.signer_limit(signer, "orders") == pytest.approx(7.25)
    now[0] = 60.0
    assert 7.25 < budgets.signer_limit(signer, "orders") < 3500
    now[0] = 10_000.0
    assert budgets.signer_limit(signer, "orders") == 3500
    assert budgets.throttled() == {}


def test_a_batch_goes_whole_or_waits() -> None:
    budget = SignerBudget(ceiling=5)
    assert budget.room(0.0, 15) == 0  # an empty window lets a batch bigger than it go alone
    budget.count(0.0, 15)
    assert budget.room(1.0, 1) > 0
    assert budget.room(10.5, 5) == 0
    budget.count(10.5, 4)
    assert budget.room(11.0, 2) > 0   # 4 + 2 > 5: the batch waits whole, never split
    assert budget.room(11.0, 1) == 0


def test_the_windows_running_count_is_the_sum_of_the_orders_it_holds() -> None:
    """``used`` keeps a running sum (it is read on every order): after orders and batches
    come and leave the window at uneven times, it still equals the weights sent in the last
    ``SIGNER_WINDOW`` seconds, and a warning backs off below that rate."""
    import random

    from venue.budgets import SIGNER_WINDOW

    rng = random.Random(48)
    budget = SignerBudget(ceiling=3500)
    sent: list[tuple[float, int]] = []
    now = 0.0
    for _ in range(2000):
        now += rng.choice((0.001, 0.01, 0.5, 3.0))
        weight = rng.choice((1, 1, 1, 4, 15))
        budget.count(now, weight)
        sent.append((now, weight))
        now += rng.random() * 2  # read later (the clock only moves on)
        assert budget.used(now) == sum(w for t, w in sent if t > now - SIGNER_WINDOW)
    held = budget.used(now)
    assert held > 0 and budget.warned(now) == pytest.approx(min(3500.0, held) * 0.5)


def test_cancel_of_more_than_1000_orders_is_split(sandbox: SandboxServer) -> None:
    ids = _ids(MAX_CANCEL_IDS + 1)
    with VenueClient(VenueConfig.for_sandbox(sandbox.url)) as client:
        creds = client.create_or_derive_api_key("0x" + secrets.token_hex(32))
        with pytest.raises(ValueError):
            client.clob.cancel_orders(creds, ids)
        result = client.cancel_many(creds, ids)
        assert set(result.not_canceled) == set(ids) and result.canceled == ()
        # The venue refuses one request with more (what an unsplit cancel would get).
        body = compact_json(ids)
        answer = httpx.request("DELETE", f"{sandbox.clob_url}/orders", content=body,
                               headers=l2_headers(creds, "DELETE", "/orders", body))
        assert answer.status_code == 400 and "at most 1000" in answer.text


def test_status_lists_backed_off_signers_and_each_signers_tier(redis_url: str) -> None:
    import json
    import uuid

    import redis

    from cli import tiers_text
    from services.platform import copy_leases, operations

    client = redis.Redis.from_url(redis_url)
    prefix = f"ct-test-throttle-{uuid.uuid4().hex[:8]}:"
    signer = "0x" + "b" * 40
    try:
        client.sadd(copy_leases.engines_key(prefix), "engine-1", "engine-2")
        client.hset(copy_leases.engine_key("engine-1", prefix),
                    mapping={"throttled": json.dumps({signer: {"orders": 5.0}}),
                             "rate_tiers": json.dumps({signer: "gold"})})
        client.hset(copy_leases.engine_key("engine-2", prefix),
                    mapping={"throttled": "{}", "rate_tiers": "{}"})
        data = operations.snapshot(client, prefix, include_executors=False)
        assert data["venue_throttle"] == {"engine-1": {signer: {"orders": 5.0}}}
        # the rate-limit tier the venue names for each engine's signers (ACCOUNTS.md §12)
        assert data["venue_tiers"] == {"engine-1": {signer: "gold"}}
        text = tiers_text(data["venue_tiers"])
        assert "(1 signers)" in text and signer in text
        assert "400/s, 600" in text and "800/s, 1200" in text
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
