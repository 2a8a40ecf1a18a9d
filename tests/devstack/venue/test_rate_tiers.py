"""Per-signer rate-limit tiers (ACCOUNTS.md §12): the signer's tier read before its first order
or cancel and every 3 hours, sizing its budgets; a cancel-all charged 1 plus one token per
order it cancelled; a cancel too big for the bucket split so no request drives it below
zero. Against the sandbox's ``GET /v1/user/rate-limit-tier`` and its token buckets
(``POST /_sandbox/rate-tiers``)."""

from __future__ import annotations

import secrets
from decimal import Decimal

import pytest

from devstack.venue import SandboxServer
from tests.devstack.venue.conftest import Control
from tests.venue.test_client_sandbox import buy, new_wallet, open_market, ready_maker
from venue.budgets import RateBudgets, SignerBudget
from venue.client import VenueClient
from venue.config import VenueConfig
from venue.rate_tiers import TIERS, parse_tier


def _order_id() -> str:
    return "0x" + secrets.token_hex(32)


def test_the_tier_is_read_before_the_first_cancel_and_again_after_three_hours(
        sandbox_venue: SandboxServer, control: Control) -> None:
    key, address = new_wallet()
    control.call("POST", "/rate-tiers", {"tiers": {address: "gold"}}, expect=200)
    now = [0.0]
    with VenueClient(VenueConfig.for_sandbox(sandbox_venue.url)) as client:
        client.transport.budgets = budgets = RateBudgets(clock=lambda: now[0])
        creds = client.create_or_derive_api_key(key)
        signer = address.lower()
        assert budgets.tiers() == {} and budgets.tier_due(signer)
        assert client.clob.rate_limit_tier(creds) == TIERS["gold"]
        client.clob.cancel_order(creds, _order_id())
        assert budgets.tiers() == {signer: "gold"}
        # Gold: cancels at 800 a second (8,000 a window, above the family's 3,000), a
        # bucket of 1,200; orders at 400 a second, 600 at once; 90% of each kept.
        assert budgets.signer_limit(signer, "cancels") == 3000
        assert budgets.signer_limit(signer, "orders") == 3500
        assert budgets.cancel_bucket(signer) == (1079.0, 1080)
        control.call("POST", "/rate-tiers", {"tiers": {address: "standard"}}, expect=200)
        now[0] += 3 * 3600 - 1
        client.clob.cancel_order(creds, _order_id())
        assert budgets.tiers() == {signer: "gold"}  # not asked again within 3 hours
        now[0] += 1
        client.clob.cancel_order(creds, _order_id())
        assert budgets.tiers() == {signer: "standard"}
        assert budgets.signer_limit(signer, "cancels") == 720  # 90% of 80 a second, 10 s
        assert budgets.cancel_bucket(signer)[1] == 108


def test_a_venue_without_the_route_leaves_the_budgets_as_they_were(
        sandbox_venue: SandboxServer, control: Control) -> None:
    key, address = new_wallet()
    control.call("POST", "/faults", {"path": "/clob/v1/user/rate-limit-tier", "status": 404},
             expect=201)
    with VenueClient(VenueConfig.for_sandbox(sandbox_venue.url)) as client:
        creds = client.create_or_derive_api_key(key)
        client.clob.cancel_order(creds, _order_id())
        budgets = client.transport.budgets
        assert budgets is not None
        assert budgets.tiers() == {} and not budgets.tier_due(address)  # asked: not again
        assert budgets.signer_limit(address, "cancels") == 3000


def test_tier_answers_are_read_by_name() -> None:
    assert parse_tier({"tier": "Silver"}) == TIERS["silver"]
    assert parse_tier("ELITE") == TIERS["elite"]
    with pytest.raises(ValueError):
        parse_tier({"tier": "mithril"})


def test_a_cancel_all_is_charged_for_each_cancelled_order_and_may_leave_the_bucket_negative(
        ) -> None:
    budget = SignerBudget(ceiling=800)
    budget.sized(0.0, rate=80.0, burst=120.0, ceiling=800)
    assert budget.room(0.0, 1) == 0
    budget.count(0.0, 1)        # the cancel-all's own token
    budget.charge(0.0, 130)     # then one per order it cancelled
    assert budget.tokens == -11
    # the next cancel waits until the bucket is back above zero and holds its cost
    assert budget.room(0.0, 1) == pytest.approx(12 / 80)
    assert budget.room(12 / 80, 1) == 0


def test_a_batch_waits_for_its_whole_cost_in_the_bucket() -> None:
    budget = SignerBudget(ceiling=400)
    budget.sized(0.0, rate=40.0, burst=60.0, ceiling=400)
    budget.count(0.0, 55)
    assert budget.room(0.0, 15) == pytest.approx(10 / 40)  # admitted whole, not in part
    assert budget.room(0.0, 5) == 0


def test_a_cancel_all_too_big_for_the_bucket_is_split_and_never_drives_it_below_zero(
        sandbox_venue: SandboxServer, control: Control) -> None:
    key, address = new_wallet()
    control.call("POST", "/rate-tiers", {"enforce": True}, expect=200)  # standard: 120 cancels
    resting = 130
    with VenueClient(VenueConfig.for_sandbox(sandbox_venue.url)) as client:
        creds = client.create_or_derive_api_key(key)
        ready_maker(sandbox_venue, address, "100")
        client.clob.update_balance_allowance(creds)
        token = open_market(client).token_ids[0]
        tick = client.clob.tick_size(token)
        for _ in range(resting):  # paced by the order bucket (40 a second, 60 at once)
            assert client.clob.post_order(creds, buy(client, key, token, tick,
                                                     Decimal("5"))).success
        assert len(client.all_open_orders(creds)) == resting
        # 1 + 130 tokens would take the venue's bucket of 120 to -11 in one request
        result = client.cancel_all_orders(creds)
        assert len(result.canceled) == resting
        assert client.all_open_orders(creds) == []
    shown = control.call("POST", "/rate-tiers", {}, expect=200)
    lowest = shown["lowest"][address.lower()]
    assert float(lowest["cancels"]) >= 0 and float(lowest["orders"]) >= 0


def test_a_small_cancel_all_goes_as_one_request_and_is_charged_for_its_orders(
        sandbox_venue: SandboxServer, control: Control) -> None:
    key, address = new_wallet()
    control.call("POST", "/rate-tiers", {"enforce": True}, expect=200)
    with VenueClient(VenueConfig.for_sandbox(sandbox_venue.url)) as client:
        # the client's clock stands still: its buckets move only by what it spends
        client.transport.budgets = budgets = RateBudgets(clock=lambda: 0.0)
        creds = client.create_or_derive_api_key(key)
        ready_maker(sandbox_venue, address, "100")
        client.clob.update_balance_allowance(creds)
        token = open_market(client).token_ids[0]
        tick = client.clob.tick_size(token)
        for _ in range(3):
            client.clob.post_order(creds, buy(client, key, token, tick, Decimal("5")))
        assert budgets.cancel_bucket(address) == (108.0, 108)  # 90% of standard's 120
        assert len(client.cancel_all_orders(creds).canceled) == 3
        assert budgets.cancel_bucket(address) == (104.0, 108)  # 1 + 3 cancelled
    # the sandbox's bucket took the same: one request, 1 + 3 (and its refill since)
    assert float(control.call("POST", "/rate-tiers", {}, expect=200)["lowest"][address.lower()][
        "cancels"]) == pytest.approx(116, abs=3)



def test_the_switches_refuse_what_they_do_not_know(control: Control) -> None:
    control.call("POST", "/rate-tiers", {"tiers": {"0x" + "1" * 40: "mithril"}}, expect=400)
    control.call("POST", "/rate-tiers", {"tiers": {"not-an-address": "gold"}}, expect=400)
    control.call("POST", "/rate-tiers", {"enforce": "yes"}, expect=400)
    control.call("POST", "/relayer", {"wrong_nonce": "sometimes"}, expect=400)
    shown = control.call("POST", "/relayer", {"wrong_nonce": "off"}, expect=200)
    assert shown["wrong_nonce"] == "off"

