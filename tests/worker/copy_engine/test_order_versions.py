"""The copy engine follows a version bump (the refused copy is rebuilt and sent once more,
its record re-stamped) and copies on position-id markets through Exchange V3."""

from __future__ import annotations

import secrets
from decimal import Decimal

from devstack.venue.order_signing import parse_order, recover_order_signer
from models.base import db
from models.trading import Order
from services.platform import order_versions, venues
from tests.worker.copy_engine.conftest import copy_one_fill, intents_of


def _orders_from(venue_control, address: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == address.lower()]


def test_a_copy_refused_for_a_stale_version_is_rebuilt_and_fills(
        run_engines, make_config, trader, market, target, venue_control, venue_server,
        version_bump):
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))
    order_versions.ensure_read()  # version 2 read before the bump: the copy is signed for it
    version_bump(3)
    copy_one_fill(run_engines, venue_control, config, target, market.yes)
    [intent] = intents_of(config)
    assert intent.filled_size == Decimal(20)
    stale, rebuilt = _orders_from(venue_control, trader.address)
    assert (stale["status"], stale["error"]) == (400, "order_version_mismatch")
    assert rebuilt["status"] == 200
    state = venue_server.state
    assert recover_order_signer(parse_order(rebuilt["body"]["order"]), state.config.chain_id,
                                state.config.exchange_v3, version="3") == trader.signer
    with db.connection_context():
        [order] = Order.select().where(Order.config_id == config.id)
        assert order.order_hash == rebuilt["order_id"] and order.status == "matched"
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "20"}
    assert venues.order_version().value == 3


def test_a_fill_on_a_position_id_market_is_copied_on_exchange_v3(
        run_engines, make_config, trader, target, venue_control, venue_server):
    summary = venue_control.add_market(f"v3-{secrets.token_hex(4)}", liquidity=True,
                                       fair_price="0.5", position_ids=True)
    token = summary["token_ids"][0]
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))
    copy_one_fill(run_engines, venue_control, config, target, token)
    [sent] = _orders_from(venue_control, trader.address)
    assert sent["status"] == 200
    state = venue_server.state
    assert recover_order_signer(parse_order(sent["body"]["order"]), state.config.chain_id,
                                state.config.exchange_v3, version="3") == trader.signer
    assert venue_control.balances(trader.address)["positions"] == {token: "20"}
