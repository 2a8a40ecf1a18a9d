"""Fees as the venue charges them: the formula against the official SDK, the market's fee
model from the CLOB (``fd``) and Gamma, and what a fill really cost (the venue's trades)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx

from models.trading import Order, OrderFill, Trade
from services.platform import venues
from services.trading import order_reconcile, orders, previews
from tests.sdk_env import sdk_result
from tests.venue_lifecycle import delay_market
from venue import fees
from venue.models import FeeSchedule
from venue.parse.clob_trades import parse_trade

CASES = [  # (rate, exponent, price)
    ("0.07", "1", "0.5"), ("0.05", "1", "0.03"), ("0.04", "2", "0.81"), ("0.0725", "1", "0.51"),
    ("0.25", "2", "0.999"),
]


def test_effective_rate_and_buy_budget_match_the_official_sdk() -> None:
    budget = Decimal("10")
    sdk = sdk_result("""
from decimal import Decimal
from polymarket._internal.actions.orders.market import adjust_buy_amount_for_fees
from polymarket._internal.actions.orders.market_data import PlatformFeeInfo
result = []
for rate, exponent, price in payload["cases"]:
    fee = PlatformFeeInfo(rate=Decimal(rate), exponent=Decimal(exponent))
    p = Decimal(price)
    effective = fee.rate * ((p * (Decimal(1) - p)) ** fee.exponent)
    amount = adjust_buy_amount_for_fees(amount=Decimal(payload["budget"]), price=p,
                                        max_spend=Decimal(payload["budget"]), fee=fee)
    result.append([str(effective), str(amount)])
""", {"cases": CASES, "budget": str(budget)})
    for (rate, exponent, price), (effective, amount) in zip(CASES, sdk, strict=True):
        args = Decimal(rate), Decimal(exponent), Decimal(price)
        assert fees.effective_rate(*args) == Decimal(effective)
        assert fees.buy_notional(budget, *args) == Decimal(amount)
        # What the notional then costs, fee included, stays within the budget.
        shares = fees.buy_notional(budget, *args) / Decimal(price)
        spent = shares * Decimal(price) + shares * fees.effective_rate(*args)
        assert spent <= budget


def test_fees_round_to_five_places_with_the_minimum() -> None:
    assert fees.round_fee(Decimal("0.181177500")) == Decimal("0.18118")
    assert fees.round_fee(Decimal("0.024980004")) == Decimal("0.02498")
    assert fees.round_fee(Decimal("0.000000001")) == Decimal("0.00001")  # the minimum
    assert fees.round_fee(Decimal(0)) == 0
    assert fees.taker_fee(Decimal("0.0725"), Decimal(1), Decimal(10), Decimal("0.51")) \
        == Decimal("0.18118")


def _pusd(venue_control, address: str) -> Decimal:
    return Decimal(str(venue_control.balances(address)["pusd"]))


def test_the_fee_model_comes_from_the_clob_and_follows_the_venue(bound_db, make_sandbox_market,
                                                                 venue_control) -> None:
    market = make_sandbox_market()
    client = venues.client()
    raw = httpx.get(f"{client.config.clob_url}/clob-markets/{market.condition_id}").json()
    assert "fd" not in raw  # fee-free: no fd at all, as the venue
    gamma = client.gamma.market_by_token(market.yes)
    assert client.fee_schedule(gamma) is None

    venue_control.call("POST", f"/markets/{market.condition_id}/fees",
                       {"rate": "0.04", "exponent": 2}, expect=200)
    client.cache.invalidate()
    gamma = client.gamma.market_by_token(market.yes)
    schedule = client.fee_schedule(gamma)
    assert schedule is not None
    assert (schedule.rate, schedule.exponent) == (Decimal("0.04"), Decimal(2))
    assert gamma.fee_schedule is not None and gamma.fees_enabled
    assert (gamma.fee_schedule.rate, gamma.fee_schedule.exponent) == (Decimal("0.04"),
                                                                      Decimal(2))
    venue_control.call("POST", f"/markets/{market.condition_id}/fees", {"rate": "1.5"},
                       expect=400)
    # The official SDK reads the sandbox's answers as we do (fee-free: no fd; then r, e).
    fee_market = httpx.get(f"{client.config.clob_url}/clob-markets/"
                           f"{market.condition_id}").json()
    sdk = sdk_result("""
from polymarket._internal.actions.orders.market_data import _parse_platform_fee_info
result = [[str(i.rate), str(i.exponent)] for i in map(_parse_platform_fee_info, payload)]
""", [raw, fee_market])
    assert [[Decimal(r), Decimal(e)] for r, e in sdk] == [[0, 0], [Decimal("0.04"), 2]]


def test_a_fill_found_later_carries_the_fee_the_venue_charged(trader, make_sandbox_market,
                                                              venue_control, venue_clock):
    market = make_sandbox_market(fee_rate="0.0725")
    before = _pusd(venue_control, trader.maker)
    delay_market(venue_control, market.condition_id, 5)
    quote = previews.create(trader.user, market.yes, "buy", "10", "market", None)
    assert quote["fee"] == Decimal("0.18118")  # 10 x 0.0725 x 0.51 x 0.49, to 5 dp
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    assert placed.status == "delayed"
    order = Order.get(Order.order_hash == placed.order_hash)
    assert order.fee == 0  # nothing matched yet

    venue_clock.advance(5)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get_by_id(order.id)
    charged = before - _pusd(venue_control, trader.maker) - order.filled_value
    assert order.filled_size == Decimal(10) and charged == Decimal("0.18118")
    # Before: a fill found by reconciliation was recorded with fee 0.
    assert order.fee == charged
    assert Trade.get_by_id(placed.id).fee == charged
    [fill] = OrderFill.select().where(OrderFill.order == order.id)
    assert fill.fee == charged


def test_the_trade_fee_follows_the_market_exponent(trader, make_sandbox_market,
                                                   venue_control, venue_clock):
    market = make_sandbox_market()
    venue_control.call("POST", f"/markets/{market.condition_id}/fees",
                       {"rate": "0.04", "exponent": 2}, expect=200)
    venues.client().cache.invalidate()
    before = _pusd(venue_control, trader.maker)
    quote = previews.create(trader.user, market.yes, "buy", "10", "market", None)
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    assert placed.status == "matched"
    venue_clock.advance(1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get(Order.order_hash == placed.order_hash)
    charged = before - _pusd(venue_control, trader.maker) - order.filled_value
    assert charged == Decimal("0.02498")  # 10 x 0.04 x (0.51 x 0.49)^2, to 5 dp
    assert quote["fee"] == charged
    assert order.fee == charged and Trade.get_by_id(placed.id).fee == charged


def test_a_trade_record_prices_the_takers_fee_per_maker_fill() -> None:
    row = {"id": "t1", "taker_order_id": "0xTAKER", "market": "0xc", "asset_id": "1",
           "side": "BUY", "size": "10", "price": "0.5", "status": "MATCHED",
           "fee_rate_bps": "725", "maker_orders": [
               {"order_id": "0xm1", "asset_id": "1", "matched_amount": "3", "price": "0.5"},
               {"order_id": "0xm2", "asset_id": "2", "matched_amount": "7", "price": "0.5"}]}
    trade = parse_trade(row)
    schedule = FeeSchedule(rate=Decimal("0.0725"), exponent=Decimal(1), taker_only=True,
                           rebate_rate=Decimal(0))
    # One fee per maker fill (0.054375 -> 0.05438, 0.126875 -> 0.12688); makers pay 0.
    assert trade.fee_of("0xtaker", schedule) == Decimal("0.18126")
    assert trade.fee_of("0xm1", schedule) == 0
    # A record without fee_rate_bps: the market's rate; "0": fee-free whatever the market.
    assert parse_trade({**row, "fee_rate_bps": None}).fee_of("0xtaker", schedule) \
        == Decimal("0.18126")
    assert parse_trade({**row, "fee_rate_bps": "0"}).fee_of("0xtaker", schedule) == 0
