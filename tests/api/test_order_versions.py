"""Order versions through REST over the sandbox: a version bump is followed (the refused order
is rebuilt for the new version, re-recorded and sent once more), and position-id markets
trade on Exchange V3. The bump is undone after each test (the venue is session-wide)."""

from __future__ import annotations

import json

from devstack.venue.order_signing import parse_order, recover_order_signer
from models.trading import Order
from services.platform import venues
from tests.http_helpers import json_body


def _place(client, headers, body) -> dict:
    quote = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    placed = client.post("/api/markets/order", headers=headers,
                         json={**body, "preview_id": json_body(quote)["preview_id"]})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    return json_body(placed)


def _sent_by(venue_control, maker: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == maker.lower()]


def test_a_version_bump_is_followed_with_one_rebuild(client, auth_headers, me, market,
                                                     venue_control, venue_server,
                                                     version_bump):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    assert _place(client, auth_headers, body)["status"] == "filled"
    assert venues.order_version().value == 2 and venues.order_version().read_at is not None
    version_bump(3)
    placed = _place(client, auth_headers, body)
    assert placed["status"] == "filled" and placed["filled_size"] == "10"
    first, stale, rebuilt = _sent_by(venue_control, me.maker)
    assert first["status"] == 200 and stale["status"] == 400
    assert stale["error"] == "order_version_mismatch"
    assert rebuilt["status"] == 200 and rebuilt["order_id"] == placed["order_id"]
    # The record holds what went out the second time, signed for Exchange V3.
    order = Order.get(Order.order_hash == placed["order_id"])
    assert json.loads(order.signed_body) == rebuilt["body"]
    config = venue_server.state.config
    assert recover_order_signer(parse_order(rebuilt["body"]["order"]), config.chain_id,
                                config.exchange_v3, version="3") == me.address
    assert venues.order_version().value == 3
    # The next order is signed for version 3 straight away: one POST, no refusal.
    _place(client, auth_headers, body)
    assert [e["status"] for e in _sent_by(venue_control, me.maker)] == [200, 400, 200, 200]
    assert Order.select().where(Order.user == me.user.id).count() == 3


def test_a_position_id_market_trades_on_exchange_v3(client, auth_headers, me,
                                                    make_sandbox_market, venue_control,
                                                    venue_server):
    market = make_sandbox_market(position_ids=True)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
            "price": "0.45"}
    placed = _place(client, auth_headers, body)
    assert placed["status"] == "accepted"
    [sent] = _sent_by(venue_control, me.maker)
    assert sent["status"] == 200
    config = venue_server.state.config
    assert recover_order_signer(parse_order(sent["body"]["order"]), config.chain_id,
                                config.exchange_v3, version="3") == me.address
    assert venues.order_version().value == 2  # V3 by the token, not by a bump
