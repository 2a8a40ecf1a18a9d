"""Issue 41, finding 6: a target trade landing while a ``copy_open_positions`` config starts
is copied once, as a fill, not a second time with the target's open positions."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal

import trio

from models.base import db
from models.copying import KIND_MIRROR, KIND_OPEN_POSITION
from tests.conftest import DEADLINE
from tests.worker.copy_engine.conftest import intents_of, owned, settled, wait_for
from worker.copy_engine import store


def _trade(venue_control, target: str, token: str, size: str) -> int:
    """The target buys ``size`` shares at 0.5; the trade's timestamp (unix seconds)."""
    done = venue_control.call("POST", "/trades", {"wallet": target, "token_id": token,
                                                  "side": "BUY", "size": size, "price": "0.5"},
                              expect=201)
    [fill] = [f for f in done["fills"] if f["proxyWallet"].lower() == target]
    return int(fill["timestamp"])


def test_a_trade_landing_at_the_start_is_not_copied_again_with_the_open_positions(
        run_engines, make_config, trader, market, target, venue_control):
    before = _trade(venue_control, target, market.no, "30")  # held before the config starts
    deadline = time.monotonic() + DEADLINE
    while int(time.time()) <= before:  # the next trade lands in a later second
        assert time.monotonic() < deadline
        time.sleep(0.05)
    landed = _trade(venue_control, target, market.no, "20")  # lands as the config starts
    assert landed > before
    config = make_config(trader.user, target, start_mode="copy_open_positions",
                         size_multiplier=Decimal("0.5"),
                         started_at=datetime.fromtimestamp(landed, UTC))
    with db.connection_context():  # the watcher reads the target's fills from before both
        store.write_cursor(target, before - 1)

    async def scenario(engines):
        await owned(engines[0], target)
        await wait_for(settled(config, 2))

    run_engines(scenario)
    rows = intents_of(config)
    by_kind = {row.kind: row for row in rows}
    assert len(rows) == 2 and set(by_kind) == {KIND_MIRROR, KIND_OPEN_POSITION}, \
        [(r.kind, r.status, r.size) for r in rows]
    assert all(r.status == "filled" for r in rows), [(r.reason, r.detail) for r in rows]
    # What the target held at the start (30 shares) with the opening, the trade at the
    # start (20) as the fill: 15 + 10 shares, not 25 + 10.
    assert by_kind[KIND_OPEN_POSITION].filled_size == Decimal(15)
    assert by_kind[KIND_MIRROR].filled_size == Decimal(10)
    assert venue_control.balances(trader.address)["positions"] == {market.no: "25"}


def test_a_trade_the_config_missed_while_it_was_loading_stays_in_its_start_copy(
        run_engines, make_config, make_trader, trader, market, target, venue_control):
    _trade(venue_control, target, market.no, "30")
    other = make_config(make_trader().user, target)  # the target is watched already
    config = None

    async def scenario(engines):
        nonlocal config
        await owned(engines[0], target)
        landed = await trio.to_thread.run_sync(_trade, venue_control, target, market.no, "20")
        await wait_for(settled(other, 1))  # decided before the new config was loaded

        def start():  # started as the trade landed, loaded by the engine after it
            return make_config(trader.user, target, start_mode="copy_open_positions",
                               size_multiplier=Decimal("0.5"),
                               started_at=datetime.fromtimestamp(landed, UTC))

        config = await trio.to_thread.run_sync(start)
        await wait_for(settled(config, 1))

    run_engines(scenario)
    [row] = intents_of(config)  # the trade was never its fill: the start copy holds it
    assert (row.kind, row.status, row.filled_size) == (KIND_OPEN_POSITION, "filled",
                                                       Decimal(25)), (row.reason, row.detail)
    assert venue_control.balances(trader.address)["positions"] == {market.no: "25"}


def test_followers_starting_together_read_the_targets_positions_once(
        run_engines, make_config, make_trader, market, target, venue_control):
    """Issue 48: a target's configs starting with copy_open_positions each copy its
    positions once, from one read of them (the positions endpoint allows 150 requests per
    10 s: one read per config held a target with many followers for minutes)."""
    _trade(venue_control, target, market.no, "30")
    started = datetime.fromtimestamp(int(time.time()) + 1, UTC)  # after the trade
    configs = [make_config(make_trader().user, target, start_mode="copy_open_positions",
                           size_multiplier=Decimal("0.5"), started_at=started)
               for _ in range(3)]
    venue_control.call("DELETE", "/requests", expect=200)

    async def scenario(engines):
        await owned(engines[0], target)
        for config in configs:
            await wait_for(settled(config, 1))

    run_engines(scenario)
    for config in configs:
        [row] = intents_of(config)
        assert (row.kind, row.status, row.filled_size) == (KIND_OPEN_POSITION, "filled",
                                                           Decimal(15)), (row.reason, row.detail)
    tally = venue_control.call("GET", "/requests", expect=200)
    assert sum(tally["GET /data/positions"].values()) == 1, tally.keys()
