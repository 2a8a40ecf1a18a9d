"""A stale RTDS connection (pings answered, trades gone: the sandbox's mute switch) is
dropped and opened again after ``stale_after`` seconds, and marked stale until a trade
frame flows again.

Timing is waited on, never assumed: a trade injected before the venue has read the
connection's subscription, or while the feed is between connections (as after every stale
drop), reaches nobody, on the venue as here. So a trade the test needs delivered is injected
again until one arrives, and the stale drops are counted, not expected after a fixed time.
"""

from __future__ import annotations

import time

import trio

from venue.rtds import open_activity_feed

STALE_AFTER = 0.8
DEADLINE = 60  # seconds: a busy machine slows the scenario, it must not fail it


def _trade(control, wallet: str, token: str) -> set[str]:
    """Inject a fill of ``wallet``; the transaction hashes the venue published for it."""
    answer = control.call("POST", "/trades", {"wallet": wallet, "token_id": token,
                                              "side": "BUY", "size": "10", "price": "0.5"},
                          expect=201)
    return {fill["transactionHash"] for fill in answer["fills"]}


async def _delivered(feed, control, wallet: str, token: str):
    """Inject trades of ``wallet`` until the feed delivers one of them; that trade."""
    sent: set[str] = set()
    with trio.fail_after(DEADLINE):
        while True:
            sent |= await trio.to_thread.run_sync(_trade, control, wallet, token)
            with trio.move_on_after(1):
                while True:
                    item = await feed.receive()
                    if item.transaction_hash in sent:
                        return item


def test_a_feed_with_no_trades_is_reconnected_and_recovers(sandbox_venue, control):
    market = control.add_market("rtds-stale", fair_price="0.5")
    token = market["token_ids"][0]
    wallet = "0x" + "5a" * 20

    async def scenario() -> None:
        async with open_activity_feed(sandbox_venue.rtds_url, [wallet], ping_interval=0.2,
                                      stale_after=STALE_AFTER, backoff_initial=0.05) as feed:
            with trio.fail_after(DEADLINE):
                await feed.wait_connected()
            first = await _delivered(feed, control, wallet, token)
            assert first.wallet == wallet and feed.stale_since is None

            await trio.to_thread.run_sync(
                lambda: control.call("POST", "/rtds/mute", {"enabled": True}, expect=200))
            muted_since = time.monotonic()
            connections, stale_count = feed.connections, feed.stale_count
            muted = await trio.to_thread.run_sync(_trade, control, wallet, token)

            async def nothing_muted_arrives() -> None:
                while True:  # pings are still answered; a trade sent before the mute may land
                    item = await feed.receive()
                    assert item.transaction_hash not in muted, "a muted feed delivered a trade"

            def went_stale_twice() -> bool:
                return (feed.stale_count >= stale_count + 2
                        and feed.connections >= connections + 2
                        # at least as long as the fixed wait this replaces watched for leaks
                        and time.monotonic() - muted_since >= 2.2)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(nothing_muted_arrives)
                with trio.fail_after(DEADLINE):
                    while not went_stale_twice():
                        await trio.sleep(0.05)
                nursery.cancel_scope.cancel()
            assert feed.stale_since is not None and feed.stale_count >= 2
            assert feed.connections >= 3  # dropped and opened again each time it went stale
            assert f"no trade frame for {STALE_AFTER:g} s" in (feed.last_error or "")

            await trio.to_thread.run_sync(
                lambda: control.call("POST", "/rtds/mute", {"enabled": False}, expect=200))
            again = await _delivered(feed, control, wallet, token)
            assert again.wallet == wallet and feed.stale_since is None

    trio.run(scenario)


def _activity(control, kind: str, state: str) -> None:
    control.call("POST", "/rtds/activity", {"type": kind, "state": state}, expect=200)


def test_trades_silent_or_refused_orders_matched_on_the_same_connection(sandbox_venue,
                                                                         control):
    """ACCOUNTS.md §12: ``activity/trades`` silent for ``stale_after`` (or refused at once)
    is replaced by ``activity/orders_matched`` on the same connection; trades back, the feed
    drops orders_matched again."""
    token = control.add_market("rtds-matched", fair_price="0.5")["token_ids"][0]
    wallet = "0x" + "5c" * 20

    async def scenario(state: str) -> None:
        async with open_activity_feed(sandbox_venue.rtds_url, [wallet], ping_interval=0.2,
                                      stale_after=3.0, backoff_initial=0.05) as feed:
            with trio.fail_after(DEADLINE):
                await feed.wait_connected()
            item = await _delivered(feed, control, wallet, token)
            assert item.wallet == wallet and feed.carrier == "orders_matched"
            assert feed.connections == 1 and feed.stale_count == 0  # the same connection
            assert ("trades" in feed.refused) == (state == "refused")
            assert feed.subscribed == ({"orders_matched"} if state == "refused"
                                       else {"trades", "orders_matched"})
            if state == "off":  # trades back: one type again
                await trio.to_thread.run_sync(_activity, control, "trades", "on")
                with trio.fail_after(DEADLINE):
                    while feed.subscribed != {"trades"}:
                        await _delivered(feed, control, wallet, token)
                assert feed.carrier == "trades" and feed.connections == 1

    for state in ("off", "refused"):
        _activity(control, "trades", state)
        try:
            trio.run(scenario, state)
        finally:
            _activity(control, "trades", "on")


def test_the_activity_switch_names_a_type_and_a_state(control):
    assert control.call("POST", "/rtds/activity", {"type": "comments", "state": "off"},
                        expect=400)["error"] == "type must be one of trades, orders_matched"
    assert control.call("POST", "/rtds/activity", {"type": "trades", "state": "gone"},
                        expect=400)["error"] == "state must be one of on, off, refused"


def test_the_mute_switch_takes_a_boolean(control):
    answer = control.call("POST", "/rtds/mute", {"enabled": "yes"}, expect=400)
    assert answer["error"] == "enabled must be true or false"


def test_a_killed_feed_is_closed_refused_until_back(sandbox_venue, control):
    market = control.add_market("rtds-down", fair_price="0.5")
    token = market["token_ids"][0]
    wallet = "0x" + "5b" * 20

    def down(enabled: bool) -> None:
        control.call("POST", "/rtds/down", {"enabled": enabled}, expect=200)

    async def scenario() -> None:
        async with open_activity_feed(sandbox_venue.rtds_url, [wallet], ping_interval=0.2,
                                      backoff_initial=0.05, backoff_max=0.2) as feed:
            with trio.fail_after(DEADLINE):
                await feed.wait_connected()
            await _delivered(feed, control, wallet, token)
            connections = feed.connections
            await trio.to_thread.run_sync(down, True)
            with trio.fail_after(DEADLINE):
                while feed.connected:  # the open connection is closed by the venue
                    await trio.sleep(0.05)
                while "503" not in (feed.last_error or ""):  # and a new one refused
                    await trio.sleep(0.05)
            assert not feed.connected and feed.connections == connections
            await trio.to_thread.run_sync(down, False)
            with trio.fail_after(DEADLINE):
                await feed.wait_connected()
            assert (await _delivered(feed, control, wallet, token)).wallet == wallet

    try:
        trio.run(scenario)
    finally:
        down(False)
