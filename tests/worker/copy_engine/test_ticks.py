"""Copies on a half-cent (0.005) market: the copy's limit price is a whole number of ticks
and the venue, which refuses off-grid prices, fills it."""

from __future__ import annotations

import secrets
from decimal import Decimal

from models.base import db
from models.trading import Order
from tests.worker.copy_engine.conftest import copy_one_fill, intents_of


def test_a_copy_on_a_half_cent_market_is_priced_on_its_grid(run_engines, make_config, trader,
                                                            target, venue_control):
    summary = venue_control.add_market(f"tick-{secrets.token_hex(4)}", liquidity=True,
                                       fair_price="0.5", tick_size="0.005")
    token = summary["token_ids"][0]
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))
    copy_one_fill(run_engines, venue_control, config, target, token)
    [intent] = intents_of(config)
    assert intent.filled_size == Decimal(20)
    [sent] = [e for e in venue_control.received_orders()
              if e["body"]["order"]["maker"].lower() == trader.address.lower()]
    assert sent["status"] == 200
    with db.connection_context():
        order = Order.get(Order.order_hash == sent["order_id"])
    # The protective limit: the book's 0.51 ask plus 3% is 0.5253, rounded up onto whole
    # 0.005 ticks (0.530; rounding to 3 decimals would give the off-grid 0.526).
    assert order.price == Decimal("0.530")
