"""A copy on a market with a taker fee: the config's spend includes the fee, and the copy's
fee is what the venue charged (sandbox over HTTP, the real engine)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

from models.base import db
from models.copying import CopyPosition
from models.trading import Order, Trade
from services.platform import venues
from services.trading import order_reconcile, orders, previews
from tests.worker.copy_engine.conftest import copy_one_fill, intents_of


def test_a_copy_on_a_fee_market_spends_within_its_cap_fee_included(
        run_engines, make_config, trader, market, target, venue_control):
    venue_control.call("POST", f"/markets/{market.condition_id}/fees", {"rate": "0.07"},
                       expect=200)
    venues.client().cache.invalidate()
    config = make_config(trader.user, target, max_position_usdc=Decimal(5))
    before = Decimal(str(venue_control.balances(trader.address)["pusd"]))

    copy_one_fill(run_engines, venue_control, config, target, market.yes, size="400")

    [intent] = intents_of(config)
    # 5 pUSD / (0.52 limit + 0.07 x 0.52 x 0.48 fee) per share: 9.30, not the fee-blind 9.61.
    assert intent.size == Decimal("9.30")
    # Sent as a 4.74 pUSD budget (9.30 x 0.51 floored to the cent): 9.294117 shares at 0.51.
    assert intent.filled_size == Decimal("9.294117")
    assert intent.fee == Decimal("0.16258")  # 9.294117 x 0.07 x 0.51 x 0.49, to 5 dp
    charged = before - Decimal(str(venue_control.balances(trader.address)["pusd"]))
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(intent.id))
        assert Trade.get(Trade.order == order.id).fee == intent.fee == order.fee
        position = CopyPosition.get(CopyPosition.config == config.id)
    # The config's spend (its position's cost, what its cap is checked against) is the fee
    # included: exactly what left the wallet.
    assert charged == order.filled_value + intent.fee == position.cost_usdc
    assert position.cost_usdc <= config.max_position_usdc


def _rest_sell(venue_control, seller, token: str, size: str, price: str) -> None:
    venue_control.grant(seller.address, token, size)  # held a while: the CLOB has seen them
    quote = previews.create(seller.user, token, "sell", size, "limit", price)
    placed = orders.place_order(seller.user, token_id=token, side="sell", size=size,
                                order_type="limit", price=price,
                                preview_id=quote["preview_id"])
    assert placed.status == "live", placed


def test_a_copy_fee_is_trued_up_to_what_the_venue_charged(
        run_engines, make_config, make_trader, trader, target, venue_control):
    summary = venue_control.add_market(f"fees-{secrets.token_hex(4)}", liquidity=False,
                                       fair_price="0.5", fee_rate="0.0725", min_order_size="1")
    token = summary["token_ids"][0]
    seller = make_trader("0")
    # Two makers at one price: the venue rounds a fee per maker fill (0.05438 + 0.12688),
    # the book walk one per level (0.18125), so the estimate is off by 0.00001.
    _rest_sell(venue_control, seller, token, "3", "0.5")
    _rest_sell(venue_control, seller, token, "7", "0.5")
    config = make_config(trader.user, target)
    before = Decimal(str(venue_control.balances(trader.address)["pusd"]))

    copy_one_fill(run_engines, venue_control, config, target, token, size="10")

    [intent] = intents_of(config)
    assert intent.filled_size == Decimal(10) and intent.fee == Decimal("0.18125")
    order_reconcile.reconcile_pending(older_than=timedelta(0))  # the sweep reads the venue's trades
    [intent] = intents_of(config)
    charged = before - Decimal(str(venue_control.balances(trader.address)["pusd"]))
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(intent.id))
        position = CopyPosition.get(CopyPosition.config == config.id)
        assert intent.fee == order.fee == Trade.get(Trade.order == order.id).fee \
            == Decimal("0.18126")
    assert charged == order.filled_value + order.fee == position.cost_usdc
