"""Fencing tokens of target leases: every take-over moves the token on, the intent write
refuses an older one (on both databases), and an engine that cannot renew stops sending by
its own clock before its lease can expire. The partition test with worker processes in
network namespaces of their own is ``test_partition.py``."""

from __future__ import annotations

import secrets
import time
from typing import Any

import redis
import trio

from models.base import db
from models.copying import CopyIntent
from models.trading import Order
from services.copying import execution as copy_execution
from services.copying import fences
from services.copying import intents as copy_intents
from services.platform import copy_leases, venues
from services.platform.copy_leases import TargetLeases
from tests.worker.copy_engine.conftest import FAST, owned
from tests.worker.copy_engine.test_fast_path import _engine, _row
from tests.worker.copy_engine.test_fencing import _cut_off, _lose
from worker.copy_engine.engine import CopyEngine


def test_every_take_over_moves_the_token_on_and_a_late_renewal_takes_nothing_back(
        redis_url, engine_prefix):
    client = redis.Redis.from_url(redis_url)
    target = f"0x{secrets.token_hex(20)}"
    a, b = (TargetLeases(client, engine_prefix, name, 5000) for name in ("eng-a", "eng-b"))
    [first] = a.claim([target]).values()
    assert b.claim([target]) == {}  # held: no take-over, no new token
    client.delete(a.key(target))  # A's lease expired
    assert a.renew([target]) == set()  # a late renewal does not take it back
    assert client.get(a.key(target)) is None
    assert b.claim([target]) == {target: first + 1}
    assert copy_leases.move_target(client, engine_prefix, target, "eng-a", 5000) == "eng-b"
    assert a.adopt(target) == first + 2  # the operator's move is a take-over too
    assert b.adopt(target) is None  # not B's any more
    # Redis lost its counters: the holder moves past the database's token.
    client.delete(copy_leases.fence_key(target, engine_prefix))
    assert a.adopt(target, floor=first + 2) == first + 3


def _record(engine: CopyEngine, config: Any, quote: Any, draft: Any, *, insert: bool = True
            ) -> list[Any]:
    tickets = [copy_execution.Ticket(draft)]
    copy_execution.prepare(tickets, quote, engine.wallets.accounts)
    return copy_execution.record([draft], tickets, quote, insert=insert)


def test_an_engine_whose_lease_was_taken_over_records_and_sends_nothing(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    a, b = _engine(redis_url, engine_prefix), _engine(redis_url, engine_prefix)
    [old] = a.ownership.leases.claim([target]).values()
    assert fences.register(target, old) == old

    async def main() -> None:
        a.venue = venues.async_client()
        try:
            await a.wallets.open([trader.user.id])
            await b.wallets.open([trader.user.id])
            quote = await a.quotes.quote(market.yes)
        finally:
            await a.venue.aclose()

        def draft(engine: CopyEngine, key: str, token: int) -> Any:
            row = _row(engine, config, market.yes, key)
            row.fence = token
            return row

        before = draft(a, "fill-1", old)
        assert _record(a, config, quote, before) == [before]
        # A is cut off; its lease expires and B takes the target over (a new token,
        # registered before B runs it).
        _lose(a, target)
        [new] = b.ownership.leases.claim([target]).values()
        assert new == old + 1
        assert fences.register(target, new) == new
        assert fences.register(target, old) == new  # a stale registration rolls nothing back
        stale = draft(a, "fill-2", old)
        assert _record(a, config, quote, stale) == []  # refused in the write itself
        assert copy_intents.insert([draft(a, "fill-2", old)]) == []
        fresh = draft(b, "fill-2", new)
        assert _record(b, config, quote, fresh) == [fresh]
        # A stored intent re-placed under the old token (a retry, a reconcile) gets no order.
        stored = draft(a, "fill-3", new)
        assert copy_intents.insert([stored]) == [stored]
        stored.fence = old
        assert _record(a, config, quote, stored, insert=False) == []
        stored.fence = new
        assert _record(b, config, quote, stored, insert=False) == [stored]

    trio.run(main)
    with db.connection_context():
        rows = {r.target_trade_key: r for r in CopyIntent.select().where(
            CopyIntent.config == config.id)}
        orders_for = {o.target_trade_id for o in Order.select().where(
            Order.config_id == config.id)}
    assert {key: row.fence for key, row in rows.items()} == {
        "fill-1": old, "fill-2": old + 1, "fill-3": old + 1}
    assert rows["fill-2"].worker == b.name
    assert orders_for == {str(rows[k].id) for k in ("fill-1", "fill-2", "fill-3")}


def test_an_engine_cut_off_from_redis_stops_its_targets_before_their_leases_expire(
        app, make_config, trader, target, redis_url, engine_prefix):
    make_config(trader.user, target)
    lease = copy_leases.lease_key(target, engine_prefix)
    watcher = redis.Redis.from_url(redis_url)

    async def main() -> None:
        engine = CopyEngine(f"engine-{secrets.token_hex(3)}", redis.Redis.from_url(redis_url),
                            engine_prefix, FAST)
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            await owned(engine, target)
            assert engine.ownership.may_send()
            assert engine.ownership.token(target) == fences_now(target)
            cut = time.monotonic()
            _cut_off(engine.redis)
            with trio.fail_after(10):
                while engine.targets:
                    await trio.sleep(0.02)
            stopped = time.monotonic()
            # Stopped by its own clock while Redis still held its lease: no other engine
            # could have taken the target yet.
            assert watcher.get(lease) == engine.name.encode()
            assert watcher.pttl(lease) > 0
            assert stopped - cut <= FAST.lease_ms / 1000
            assert not engine.ownership.may_send()
            assert engine.ownership.token(target) == 0  # any later draft is refused
            nursery.cancel_scope.cancel()

    trio.run(main)


def fences_now(target: str) -> int | None:
    """The target's registered fencing token (in a fresh connection)."""
    with db.connection_context():
        return fences.current(target)
