"""A stale RTDS connection (pings answered, trades gone: the sandbox's mute switch) is
dropped and opened again after ``stale_after`` seconds, and marked stale until a trade
frame flows again."""

from __future__ import annotations

import trio

from venue.rtds import open_activity_feed


def _trade(control, wallet: str, token: str) -> None:
    control.call("POST", "/trades", {"wallet": wallet, "token_id": token, "side": "BUY",
                                     "size": "10", "price": "0.5"}, expect=201)


def test_a_feed_with_no_trades_is_reconnected_and_recovers(sandbox_venue, control):
    market = control.add_market("rtds-stale", fair_price="0.5")
    token = market["token_ids"][0]
    wallet = "0x" + "5a" * 20

    async def scenario() -> None:
        async with open_activity_feed(sandbox_venue.rtds_url, [wallet], ping_interval=0.2,
                                      stale_after=0.8, backoff_initial=0.05) as feed:
            with trio.fail_after(5):
                await feed.wait_connected()
            await trio.to_thread.run_sync(_trade, control, wallet, token)
            with trio.fail_after(5):
                first = await feed.receive()
            assert first.wallet == wallet and feed.stale_since is None
            await trio.to_thread.run_sync(
                lambda: control.call("POST", "/rtds/mute", {"enabled": True}, expect=200))
            await trio.to_thread.run_sync(_trade, control, wallet, token)
            with trio.move_on_after(2.2):  # nothing arrives; pings are still answered
                await feed.receive()
                raise AssertionError("a muted feed delivered a trade")
            assert feed.stale_since is not None and feed.stale_count >= 2
            assert feed.connections >= 3  # dropped and opened again each time it went stale
            assert "no trade frame for 0.8 s" in (feed.last_error or "")
            await trio.to_thread.run_sync(
                lambda: control.call("POST", "/rtds/mute", {"enabled": False}, expect=200))
            await trio.to_thread.run_sync(_trade, control, wallet, token)
            with trio.fail_after(5):
                again = await feed.receive()
            assert again.wallet == wallet and feed.stale_since is None

    trio.run(scenario)


def test_the_mute_switch_takes_a_boolean(control):
    answer = control.call("POST", "/rtds/mute", {"enabled": "yes"}, expect=400)
    assert answer["error"] == "enabled must be true or false"
