"""Live market parameters (ACCOUNTS.md §11): ``mos``, ``mts`` and ``fd`` from /clob-markets,
read by one accessor (``services.markets.parameters``) for previews, orders and copies, and an
order re-checked under the parameters of the moment, not refused because its preview saw
others. Taker delays: a delayed order is open and not cancellable."""

from __future__ import annotations

from decimal import Decimal

import pytest

from models.trading import Order
from services.markets import parameters
from services.platform import errors, venues
from services.trading import order_cancels, order_plan, orders, previews


def _set(venue_control, market, **fields) -> None:
    venue_control.call("POST", f"/markets/{market.condition_id}/parameters", fields,
                       expect=200)


def test_the_accessor_reads_the_live_minimum_and_caches_it_briefly(app, market, venue_control):
    assert parameters.live(market.condition_id).min_order_size == Decimal(5)
    _set(venue_control, market, min_order_size="12", taker_delay_ms=250)
    assert parameters.live(market.condition_id).min_order_size == Decimal(5)  # cached (10 s)
    fresh = parameters.live(market.condition_id, fresh=True)
    assert (fresh.min_order_size, fresh.taker_delay) == (Decimal(12), Decimal("0.25"))
    assert parameters.min_order_size(market.condition_id) == Decimal(12)  # the dust rule's
    info = order_plan.market_info(market.yes)
    assert (info.min_order_size, info.taker_delay) == (Decimal(12), Decimal("0.25"))


def test_market_details_show_the_live_parameters(app, market, venue_control):
    """What an agent sizes an order by (get_market_details) is what the order is checked
    against: the live mos/mts, not Gamma's copy (cached here, as Gamma lags)."""
    from services.markets import markets

    venues.client().gamma.market_by_slug(market.slug)  # Gamma's answer: 5 and 0.01
    _set(venue_control, market, min_order_size="12", tick_size="0.001")
    details = markets.market_details(slug=market.slug)
    assert (details["min_order_size"], details["tick_size"]) == (Decimal(12),
                                                                Decimal("0.001"))


def test_an_order_is_rechecked_under_parameters_changed_since_its_preview(
        trader, market, venue_control):
    quote = previews.create(trader.user, market.yes, "buy", "8", "limit", "0.40")
    assert quote["min_order_size"] == Decimal(5)
    _set(venue_control, market, min_order_size="6")  # still met: placed, not refused
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="8",
                                order_type="limit", price="0.40",
                                preview_id=quote["preview_id"])
    assert placed.status == "live"
    quote = previews.create(trader.user, market.yes, "buy", "8", "limit", "0.40")
    _set(venue_control, market, min_order_size="10")  # no longer met: refused, saying why
    with pytest.raises(errors.ValidationFailed, match="minimum order size of 10"):
        orders.place_order(trader.user, token_id=market.yes, side="buy", size="8",
                           order_type="limit", price="0.40", preview_id=quote["preview_id"])


def test_a_delayed_order_is_open_and_not_cancellable(trader, market, venue_control):
    _set(venue_control, market, taker_delay_ms=60_000)
    quote = previews.create(trader.user, market.yes, "buy", "10", "market")
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    assert placed.status == "delayed"  # open, not a final unfilled answer
    order = Order.get(Order.order_hash == placed.order_hash)
    assert order.status == "delayed"
    # Its stages show the delay it waits out (issue 33 item 4), beside placement and ack.
    assert order.taker_delay_ms == 60_000 and order.ack_ms is not None
    assert orders.placed_view(placed)["execution"]["stages"]["taker_delay_ms"] == 60_000
    with pytest.raises(errors.BadRequest, match="taker delay"):
        order_cancels.cancel_order(trader.user, order.order_hash)
    # The venue refuses too (what a cancel without the client's rule would meet).
    from services.wallets import venue_accounts
    acct = venue_accounts.account(trader.user)
    answer = venues.client().clob.cancel_order(acct.creds, order.order_hash)
    assert answer.canceled == () and "taker delay" in answer.not_canceled[order.order_hash]
