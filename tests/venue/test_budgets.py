"""venue.budgets: one sliding-window budget per endpoint family, used by both transports."""

from __future__ import annotations

import time

import pytest

from devstack.venue import SandboxServer
from devstack.venue.faults import FaultRule
from venue.budgets import Family, RateBudgets, Window, family_of
from venue.client import VenueClient
from venue.config import VenueConfig
from venue.errors import VenueRestricted


@pytest.mark.parametrize(("api", "method", "path", "family"), [
    ("clob", "POST", "/order", "clob_post_order"),
    ("clob", "POST", "/orders", "clob_post_orders"),
    ("clob", "DELETE", "/order", "clob_cancel_order"),
    ("clob", "GET", "/data/order/0xabc", "clob_data_orders"),
    ("clob", "GET", "/data/orders", "clob_data_orders"),
    ("clob", "GET", "/data/trades", "clob_data_trades"),
    ("clob", "GET", "/balance-allowance", "clob_balance"),
    ("clob", "GET", "/balance-allowance/update", "clob_balance_update"),
    ("clob", "POST", "/auth/api-key", "clob_api_keys"),
    ("clob", "GET", "/midpoint", "clob"),
    ("data", "GET", "/activity", "data"),
    ("data", "GET", "/trades", "data_trades"),
    ("data", "GET", "/positions", "data_positions"),
    ("gamma", "GET", "/markets", "gamma_markets"),
    ("gamma", "GET", "/events", "gamma_events"),
])
def test_each_request_counts_against_its_family(api, method, path, family):
    assert family_of(api, method, path).name == family


def test_documented_limits_burst_and_sustained():
    windows = {f.name: f.windows for f in family_of.__defaults__[0]}
    assert windows["clob_post_order"] == (Window(3500, 10.0), Window(36000, 600.0))
    assert windows["clob_balance"] == (Window(200, 10.0),)
    assert windows["clob_balance_update"] == (Window(50, 10.0),)
    assert windows["clob_data_trades"] == (Window(500, 10.0),)
    assert windows["clob_api_keys"] == (Window(100, 10.0),)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_spent_family_waits_while_the_others_go_on():
    clock = Clock()
    budgets = RateBudgets(clock=clock)
    for _ in range(200):
        assert budgets.take("clob", "GET", "/balance-allowance") == 0
    clock.now += 4
    # Balance reads are spent for 6 more seconds; detection polls and orders are not.
    assert budgets.take("clob", "GET", "/balance-allowance") == pytest.approx(6.0)
    assert budgets.take("data", "GET", "/activity") == 0
    assert budgets.take("clob", "POST", "/order") == 0
    assert budgets.used("clob_balance") == 200 and budgets.used("clob_post_order") == 1
    clock.now += 6
    assert budgets.take("clob", "GET", "/balance-allowance") == 0


def test_the_sustained_window_holds_order_posts_after_bursts():
    clock = Clock()
    budgets = RateBudgets(share=0.01, clock=clock)  # 35 per 10 s, 360 per 10 min
    sent = 0
    while clock.now < 1000 + 600:
        wait = budgets.take("clob", "POST", "/order")
        if wait:
            clock.now += wait
        else:
            sent += 1
    # Bursts of 35 per 10 s until 360 in the 10-minute window; then nothing until it slides.
    assert sent == 360


def test_share_must_be_a_fraction():
    with pytest.raises(ValueError):
        RateBudgets(share=1.5)


@pytest.fixture
def venue():
    server = SandboxServer(seed=3).start()
    yield server
    server.stop()


def test_the_transport_waits_for_its_family_and_429_is_a_refusal(venue):
    config = VenueConfig.for_sandbox(venue.url)
    with VenueClient(config) as client:
        client.transport.budgets = RateBudgets(families=(
            Family("clob_book", "clob", "GET", "/book", (Window(2, 0.6),)),))
        token = next(iter(venue.state.catalog.markets_by_id.values())).token_ids[0]
        started = time.monotonic()
        for _ in range(3):
            client.clob.book(token)
        assert time.monotonic() - started >= 0.55  # the third waited for the window
        started = time.monotonic()
        client.clob.midpoint(token)  # another family: no wait
        assert time.monotonic() - started < 0.5

        venue.state.faults.add(FaultRule("/clob/time", 5, status=429, retry_after=30))
        with pytest.raises(VenueRestricted) as caught:
            client.clob.server_time()
        assert (caught.value.mode, caught.value.retry_after) == ("rate_limited", 30)
