"""RTDS websocket delivery of fills, and the scripted whales that trade on a schedule."""

from __future__ import annotations

import asyncio
import json
import time
from decimal import Decimal

import websockets
from py_clob_client_v2.clob_types import OrderArgsV2

SUBSCRIBE = {"action": "subscribe", "subscriptions": [{"topic": "activity", "type": "trades"}]}


async def _collect(url: str, trigger, count: int) -> list[dict]:
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps(SUBSCRIBE))
        await ws.send("ping")
        assert await asyncio.wait_for(ws.recv(), 5) == "pong"  # subscription is processed
        await asyncio.to_thread(trigger)
        frames = []
        while len(frames) < count:
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5), parse_float=Decimal))
        return frames


def test_injected_whale_trade_reaches_rtds_and_data_api(sandbox_venue, control):
    market = control.market(index=0)
    whale = "0x1111111111111111111111111111111111111111"

    stamps: list[tuple[float, int, float]] = []

    def trigger() -> None:
        before = time.time()
        answer = control.call("POST", "/trades", {
            "wallet": whale, "token_id": market["token_ids"][0], "side": "BUY",
            "price": "0.61", "size": "100",
        }, expect=201)
        stamps.append((before, answer["published_us"], time.time()))

    frames = asyncio.run(_collect(sandbox_venue.rtds_url, trigger, 2))
    whale_frame = next(f for f in frames if f["payload"]["proxyWallet"].lower() == whale)
    assert whale_frame["topic"] == "activity" and whale_frame["type"] == "trades"
    payload = whale_frame["payload"]
    assert payload["proxyWallet"] == "0x1111111111111111111111111111111111111111"
    assert payload["side"] == "BUY" and payload["price"] == Decimal("0.61")
    assert payload["size"] == 100 and payload["asset"] == market["token_ids"][0]
    assert payload["conditionId"] == market["condition_id"]
    assert isinstance(whale_frame["timestamp"], int) and isinstance(payload["timestamp"], int)
    other = next(f for f in frames if f is not whale_frame)["payload"]
    assert other["transactionHash"] == payload["transactionHash"]
    assert other["price"] + payload["price"] == 1  # the two sides of one mint

    rows = control.get("/data/trades", user=whale)
    assert len(rows) == 1 and rows[0]["transactionHash"] == payload["transactionHash"]
    # The venue stamps when it published the fill (the latency benchmark's "visible"):
    # within the injecting call, as an integer count of microseconds.
    [(before, published_us, after)] = stamps
    assert isinstance(published_us, int)
    assert before * 1_000_000 <= published_us <= after * 1_000_000


def test_every_order_fill_is_broadcast(sandbox_venue, control, make_trader):
    market = control.add_market("rtds-fill", fair_price="0.5", liquidity=True)
    trader = make_trader("100")

    def trigger() -> None:
        trader.client.create_and_post_order(
            OrderArgsV2(token_id=market["token_ids"][1], price=Decimal("0.55"),
                        size=Decimal(10), side="BUY")
        )

    frames = asyncio.run(_collect(sandbox_venue.rtds_url, trigger, 2))
    wallets = {f["payload"]["proxyWallet"] for f in frames}
    assert trader.address in wallets  # checksummed, as RTDS sends it
    mine = next(f["payload"] for f in frames if f["payload"]["proxyWallet"] == trader.address)
    assert mine["outcome"] == "No" and mine["price"] == Decimal("0.51")


def test_unsubscribed_connections_get_nothing(sandbox_venue, control):
    async def run() -> None:
        async with websockets.connect(sandbox_venue.rtds_url) as ws:
            await ws.send("ping")
            assert await asyncio.wait_for(ws.recv(), 5) == "pong"
            await asyncio.to_thread(control.call, "POST", "/whales/tick", None, 201)
            await ws.send("PING")
            assert await asyncio.wait_for(ws.recv(), 5) == "PONG"

    asyncio.run(run())


def test_whales_trade_on_a_schedule_and_stop(sandbox_venue, control):
    state = control.state()
    assert state["whales_running"] is False  # off by default in tests
    control.call("POST", "/whales/start", {"interval": "0.05"}, expect=200)
    deadline = time.monotonic() + 5
    rows: list = []
    while time.monotonic() < deadline and len(rows) < 3:
        rows = control.get("/data/trades", limit=50)
        time.sleep(0.05)
    control.call("POST", "/whales/stop", expect=200)
    assert len(rows) >= 3
    whales = {w.lower() for w in state["whales"]}
    assert {r["proxyWallet"] for r in rows} <= whales
    assert all(r["name"] for r in rows)
    settled = len(control.get("/data/trades", limit=500))
    time.sleep(0.2)
    assert len(control.get("/data/trades", limit=500)) == settled


def test_whale_schedule_is_seeded():
    from devstack.venue import SandboxState

    first, second = SandboxState(seed=3, clock=lambda: 1.0), SandboxState(seed=3, clock=lambda: 1.0)
    a = [(f.proxy_wallet, f.asset, f.side, f.size, f.price) for f in first.whale_tick()]
    b = [(f.proxy_wallet, f.asset, f.side, f.size, f.price) for f in second.whale_tick()]
    assert a == b and a
