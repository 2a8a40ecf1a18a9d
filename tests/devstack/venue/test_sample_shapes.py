"""The sandbox's answers have the venue's shapes: same keys, same JSON value types as the samples.

For every field the sandbox serves, the real sample must have that field with the
same JSON type (string / number / bool / array / object); a few fields we serve
that a given sample happens not to carry are listed explicitly.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import websockets
from py_clob_client_v2.clob_types import OrderArgsV2

SAMPLES = Path(__file__).resolve().parents[2] / "venue" / "samples"


def sample(name: str) -> Any:
    """A venue sample with numbers as int/Decimal."""
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"), parse_float=Decimal)


def kind(value: Any) -> str:
    """JSON type name of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def assert_shape(ours: Any, real: Any, path: str = "$", extra: frozenset = frozenset()) -> None:
    """Our value has the sample's JSON type; for objects, recursively on shared keys."""
    if real is None or ours is None:
        return  # null in either: nullable field, no type to compare
    assert kind(ours) == kind(real), f"{path}: ours {kind(ours)}, sample {kind(real)}"
    if isinstance(real, dict):
        unknown = set(ours) - set(real) - extra
        assert not unknown, f"{path}: keys not in the sample: {sorted(unknown)}"
        for key in set(ours) & set(real):
            assert_shape(ours[key], real[key], f"{path}.{key}", extra)
    elif isinstance(real, list) and real and ours:
        for index, item in enumerate(ours):
            assert_shape(item, _merged(real), f"{path}[{index}]", extra)


def _merged(items: list) -> Any:
    """One element standing for a sample array: the union of its objects' keys."""
    if not all(isinstance(item, dict) for item in items):
        return items[0]
    merged: dict = {}
    for item in items:
        for key, value in item.items():
            if merged.get(key) is None:
                merged[key] = value
    return merged


def assert_has(ours: dict, keys: list[str]) -> None:
    """The fields clients rely on are present."""
    missing = [k for k in keys if k not in ours]
    assert not missing, f"missing {missing}"


def _trade_setup(control, make_trader) -> tuple[dict, Any]:
    market = control.market(index=3)  # a sports market with fees
    trader = make_trader("100")
    trader.client.create_and_post_order(
        OrderArgsV2(token_id=market["token_ids"][0], price=Decimal("0.6"), size=Decimal(10),
                    side="BUY")
    )
    return market, trader


def test_gamma_shapes(sandbox_venue, control, make_trader):
    market, _ = _trade_setup(control, make_trader)
    ours = control.get("/gamma/markets", slug=market["slug"])[0]
    real = sample("gamma-markets.json")[0]
    assert_shape(ours, real)
    assert_has(ours, ["id", "conditionId", "slug", "outcomes", "outcomePrices", "clobTokenIds",
                      "negRisk", "orderPriceMinTickSize", "orderMinSize", "feeSchedule",
                      "closed", "active", "events", "tags", "bestBid", "bestAsk",
                      "lastTradePrice", "umaResolutionStatuses", "feesEnabled"])
    for field in ("outcomes", "outcomePrices", "clobTokenIds", "umaResolutionStatuses"):
        assert isinstance(ours[field], str)
        decoded = json.loads(ours[field])
        assert isinstance(decoded, list) and all(isinstance(v, str) for v in decoded)
    assert json.loads(ours["clobTokenIds"]) == market["token_ids"]

    by_slug = control.get(f"/gamma/markets/slug/{market['slug']}")
    assert_shape(by_slug, sample("gamma-market-by-slug.json"))
    assert control.get(f"/gamma/markets/{ours['id']}")["conditionId"] == ours["conditionId"]

    event = control.get("/gamma/events", slug="sandbox-party-nominee-2028")[0]
    real_event = sample("gamma-events.json")[0]
    assert_shape(event, real_event)
    assert len(event["markets"]) == 2 and event["negRisk"] is True
    assert kind(event["liquidity"]) == "number" and kind(event["markets"][0]["liquidity"]) == (
        "string"
    )

    search = control.get("/gamma/public-search", q="bitcoin")
    # The search capture was trimmed to a fee-free market without resolutionSource.
    assert_shape(search, sample("gamma-public-search.json"),
                 extra=frozenset({"feeSchedule", "resolutionSource"}))
    assert search["pagination"]["totalResults"] == 1

    tags = control.get("/gamma/tags")
    assert_shape(tags[0], real["tags"][0])
    sports = control.get("/gamma/markets", tag_id="1")
    assert sports and all(m["tags"][0]["slug"] == "sports" for m in sports)


def test_clob_market_data_shapes(sandbox_venue, control, make_trader):
    market, _ = _trade_setup(control, make_trader)
    token = market["token_ids"][0]
    book = control.get("/clob/book", token_id=token)
    assert_shape(book, sample("clob-book.json"))
    assert list(book) == list(sample("clob-book.json"))  # same key order as the venue
    bids = [Decimal(level["price"]) for level in book["bids"]]
    asks = [Decimal(level["price"]) for level in book["asks"]]
    assert bids == sorted(bids) and asks == sorted(asks, reverse=True)  # best last
    unhashed = dict(book, hash="")
    compact = json.dumps(unhashed, separators=(",", ":"), ensure_ascii=False)
    assert book["hash"] == hashlib.sha1(compact.encode()).hexdigest()
    assert book["last_trade_price"] == "0.56"  # the 0.6 bid took the house's 0.56 ask

    price = control.get("/clob/price", token_id=token, side="BUY")
    assert_shape(price, sample("clob-price.json"))
    assert price["price"] == book["bids"][-1]["price"]
    assert control.get("/clob/price", token_id=token, side="SELL")["price"] == (
        book["asks"][-1]["price"]
    )
    assert_shape(control.get("/clob/midpoint", token_id=token), sample("clob-midpoint.json"))
    tick = control.get("/clob/tick-size", token_id=token)
    assert_shape(tick, sample("clob-tick-size.json"))
    assert tick["minimum_tick_size"] == Decimal("0.01")
    assert_shape(control.get("/clob/neg-risk", token_id=token), sample("clob-neg-risk.json"))
    history = control.get("/clob/prices-history", market=token, interval="1w", fidelity=1)
    assert_shape(history, sample("clob-prices-history.json"))
    assert history["history"][-1]["p"] == Decimal("0.56")
    missing = control.http.get("/clob/book", params={"token_id": "123"})
    assert missing.status_code == 404
    assert missing.json() == {"error": "No orderbook exists for the requested token id"}


def test_clob_trading_shapes(sandbox_venue, control, make_trader):
    market = control.market(index=0)
    trader = make_trader("100")
    token = market["token_ids"][0]
    matched = trader.client.create_and_post_order(
        OrderArgsV2(token_id=token, price=Decimal("0.7"), size=Decimal(10), side="BUY")
    )
    real_response = sample("clob-post-order-response.json")
    assert_shape(matched, real_response, extra=frozenset({"tradeIDs"}))
    assert_has(matched, list(real_response))
    assert matched["status"] == "matched"

    live = trader.client.create_and_post_order(
        OrderArgsV2(token_id=token, price=Decimal("0.2"), size=Decimal(10), side="BUY")
    )
    listed = trader.client.get_open_orders()
    real_orders = sample("clob-open-orders.json")
    assert_shape(listed[0], real_orders["data"][0])
    assert_has(listed[0], list(real_orders["data"][0]))
    canceled = trader.client.cancel_all()
    assert_shape(canceled, sample("clob-cancel-response.json"))
    assert canceled["canceled"] == [live["orderID"]]
    creds = trader.client.derive_api_key()
    assert creds.api_key and creds.api_secret and creds.api_passphrase
    received = control.received_orders()[0]["body"]
    real_request = sample("clob-post-order-request.json")
    assert list(received["order"]) == list(real_request["order"])
    assert_shape(received["order"], real_request["order"])
    assert list(received)[:2] == ["order", "owner"]


def test_data_api_shapes(sandbox_venue, control, make_trader):
    market, trader = _trade_setup(control, make_trader)
    user = trader.address
    trades = control.get("/data/trades", user=user)
    assert_shape(trades[0], sample("data-trades.json")[0])
    assert_has(trades[0], list(sample("data-trades.json")[0]))
    activity = control.get("/data/activity", user=user)
    assert_shape(activity[0], sample("data-activity.json")[0])
    assert_has(activity[0], list(sample("data-activity.json")[0]))
    positions = control.get("/data/positions", user=user)
    assert_shape(positions[0], sample("data-positions.json")[0])
    assert_has(positions[0], list(sample("data-positions.json")[0]))
    board = control.get("/data/v1/leaderboard", timePeriod="ALL", orderBy="PNL")
    assert_shape(board[0], sample("data-leaderboard.json")[0])
    assert_has(board[0], list(sample("data-leaderboard.json")[0]))
    assert market["condition_id"] == trades[0]["conditionId"]


def test_rtds_frame_shape(sandbox_venue, control):
    market = control.market(index=3)
    subscribe = {"action": "subscribe", "subscriptions": [{"topic": "activity", "type": "trades"}]}

    async def run() -> list[dict]:
        async with websockets.connect(sandbox_venue.rtds_url) as ws:
            await ws.send(json.dumps(subscribe))
            await ws.send("ping")
            await asyncio.wait_for(ws.recv(), 5)
            await asyncio.to_thread(
                control.call, "POST", "/trades",
                {"wallet": "0x2222222222222222222222222222222222222222",
                 "token_id": market["token_ids"][1], "side": "BUY", "price": "0.4",
                 "size": "50"},
                201,
            )
            return [json.loads(await asyncio.wait_for(ws.recv(), 5), parse_float=Decimal)
                    for _ in range(2)]

    frames = asyncio.run(run())
    real = sample("rtds-activity-trades.json")
    for frame in frames:
        assert_shape(frame, real[0])
        assert list(frame) == list(real[0])
        assert_has(frame["payload"], [k for k in real[1]["payload"]])
    taker = frames[0]["payload"]
    assert "fee" in taker  # a sports market charges the taker


def test_data_api_v2_shapes_and_cursor(sandbox_venue, control, make_trader):
    market, trader = _trade_setup(control, make_trader)
    trader.client.create_and_post_order(
        OrderArgsV2(token_id=market["token_ids"][0], price=Decimal("0.6"), size=Decimal(5),
                    side="BUY")
    )
    user = trader.address
    first = control.get("/data/v2/activity", user=user, limit=1)
    real = sample("data-v2-activity.json")
    assert_shape(first, real)
    assert_has(first["data"][0], list(real["data"][0]))
    assert first["pagination"]["has_more"] is True
    second = control.get("/data/v2/activity", user=user, cursor=first["pagination"]["next_cursor"])
    assert len(second["data"]) == 1 and second["pagination"]["has_more"] is False
    assert second["data"][0]["transaction_hash"] != first["data"][0]["transaction_hash"]

    trades = control.get("/data/v2/trades", user=user)
    assert_shape(trades, sample("data-v2-trades.json"))
    assert len(trades["data"]) == 2
    positions = control.get("/data/v2/positions", user=user)
    real_positions = sample("data-v2-positions.json")
    assert_shape(positions, real_positions)
    assert_has(positions["data"][0], list(real_positions["data"][0]))
    assert positions["data"][0]["current_size"] == 15
