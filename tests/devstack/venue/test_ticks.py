"""The sandbox serves markets at each of the venue's six tick sizes and refuses off-grid
prices with the venue's text (orders built by the official py-clob-client-v2)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from py_clob_client_v2.clob_types import CreateOrderOptions, OrderArgsV2
from py_clob_client_v2.exceptions import PolyApiException

D = Decimal
# (tick, a price on its grid, a price one step of the next finer grid off it)
GRIDS = [("0.1", "0.3", "0.35"), ("0.01", "0.45", "0.455"), ("0.005", "0.535", "0.537"),
         ("0.0025", "0.4975", "0.4976"), ("0.001", "0.537", "0.5371"),
         ("0.0001", "0.5371", None)]


@pytest.mark.parametrize(("tick", "on_grid", "off_grid"), GRIDS)
def test_each_tick_size_is_served_and_enforced(sandbox_venue, control, make_trader,
                                               tick, on_grid, off_grid):
    slug = "tick-" + tick.replace(".", "-")
    market = control.add_market(slug, tick_size=tick, fair_price=on_grid)
    token = market["token_ids"][0]
    assert control.get(f"/clob/tick-size?token_id={token}") == {"minimum_tick_size": D(tick)}
    assert D(str(control.get(f"/clob/clob-markets/{market['condition_id']}")["mts"])) == D(tick)
    trader = make_trader("100")
    options = CreateOrderOptions(tick_size=tick, neg_risk=False)
    placed = trader.client.post_order(trader.client.builder.build_order(
        OrderArgsV2(token_id=token, price=D(on_grid), size=D("10"), side="BUY"), options))
    assert placed["success"] is True and placed["status"] == "live"
    if off_grid is None:
        return
    finer = "0.0001"
    order = trader.client.builder.build_order(
        OrderArgsV2(token_id=token, price=D(off_grid), size=D("10"), side="BUY"),
        CreateOrderOptions(tick_size=finer, neg_risk=False))
    with pytest.raises(PolyApiException) as excinfo:
        trader.client.post_order(order)
    assert excinfo.value.status_code == 400
    assert excinfo.value.error_msg["error"].endswith(
        f"is invalid. Price ({off_grid}) breaks minimum tick size rule: {tick}")


def test_an_unknown_tick_size_is_refused(control):
    answer = control.call("POST", "/markets", {"slug": "tick-bad", "question": "Bad tick?",
                                               "tick_size": "0.02"}, expect=400)
    assert "0.005" in answer["error"] and "0.0025" in answer["error"]
