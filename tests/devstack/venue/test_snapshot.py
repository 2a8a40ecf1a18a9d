"""The sandbox venue's state file (`copytrade sandbox --state`): a venue started from it has
the orders, API keys and balances the saved one had; a file it cannot read, or one naming
anything but the venue's records, is set aside and the venue starts afresh."""

from __future__ import annotations

import os
import pickle
from decimal import Decimal

import httpx
from py_clob_client_v2.client import ClobClient
from py_clob_client_v2.clob_types import OpenOrderParams, OrderArgsV2, OrderPayload

from devstack.venue import SandboxServer, SandboxState, snapshot
from tests.devstack.venue.conftest import Control


def test_a_venue_started_from_the_saved_state_has_the_orders_keys_and_balances(
        tmp_path, sandbox_venue, control, make_trader) -> None:
    market = control.add_market("kept-across-restarts")
    trader = make_trader("100")
    token = market["token_ids"][0]
    order = trader.client.create_and_post_order(
        OrderArgsV2(token_id=token, price=Decimal("0.40"), size=Decimal("10"), side="BUY"))
    balances = control.balances(trader.address)
    path = tmp_path / "sandbox-state.bin"
    refused = httpx.post(f"{sandbox_venue.control_url}/snapshot", timeout=10)
    assert refused.status_code == 409  # started without a state file
    sandbox_venue.app.extensions["sandbox_state_file"] = str(path)
    saved = httpx.post(f"{sandbox_venue.control_url}/snapshot", timeout=10)
    assert saved.status_code == 200 and path.is_file()

    restarted = SandboxServer(seed=7).start()
    again = Control(restarted)
    try:
        assert snapshot.load(restarted.state, path)
        client = ClobClient(restarted.clob_url, chain_id=137, key=trader.key,
                            creds=trader.client.creds)  # the same API key, still valid
        orders = client.get_open_orders(OpenOrderParams(market=market["condition_id"]))
        assert [o["id"] for o in orders] == [order["orderID"]]
        assert client.get_order_book(token)["bids"] == [{"price": "0.4", "size": "10"}]
        assert again.balances(trader.address) == balances
        # and it trades on: the order cancels, the next one rests
        assert client.cancel_order(OrderPayload(orderID=order["orderID"]))["canceled"] == [
            order["orderID"]]
        placed = client.create_and_post_order(
            OrderArgsV2(token_id=token, price=Decimal("0.30"), size=Decimal("5"), side="BUY"))
        assert placed["success"] is True
    finally:
        again.close()
        restarted.stop()


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


def test_a_file_it_cannot_read_or_naming_other_code_is_set_aside(tmp_path) -> None:
    state = SandboxState()
    markets = set(state.catalog.markets)
    for name, data in (("garbage", b"not a snapshot"),
                       ("code", pickle.dumps({"format": snapshot.FORMAT, "x": _Evil()})),
                       ("older", pickle.dumps({"format": snapshot.FORMAT + 1})),
                       ("partless", pickle.dumps({"format": snapshot.FORMAT}))):
        path = tmp_path / f"{name}.bin"
        path.write_bytes(data)
        assert snapshot.load(state, path) is False
        assert not path.exists() and (tmp_path / f"{name}.bin.unreadable").is_file()
        assert set(state.catalog.markets) == markets  # afresh: the seeded catalog
    assert snapshot.load(state, tmp_path / "absent.bin") is False
