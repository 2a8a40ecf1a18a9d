"""Two engines racing on one target: outcomes are written once and agree with the venue.

Engine A records and sends a copy, then loses the target's lease (its Redis lease and
heartbeat expire) before it settles; engine B takes the target over and reconciles A's
intent. Whatever the order of their writes, the ledger (Order, Trade, CopyIntent,
CopyPosition) ends as the venue has it, and the fill is counted once. Against the shared
sandbox venue over real HTTP, real Redis and both databases; the venue's faults (a stalled
POST /order) are armed through its control API.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
import redis
import trio

from models.base import db, utcnow
from models.copying import CopyIntent, CopyPosition
from models.trading import Order, Trade
from services.copying import execution as copy_execution
from services.platform import copy_leases, runtime, venues
from services.trading import orders
from tests.worker.copy_engine.conftest import FAST, inject, intents_of, owned, settled, wait_for
from tests.worker.copy_engine.test_execution_seams import _in_thread
from tests.worker.copy_engine.test_fast_path import _engine, _row
from venue.errors import VenueError
from worker.copy_engine import reconciler, store
from worker.copy_engine.engine import CopyEngine


def _take(engine: CopyEngine, target: str) -> None:
    """``engine`` holds the target's lease and heartbeats (as its sweep would make it)."""
    assert list(engine.ownership.leases.claim([target])) == [target]
    engine.ownership.leases.heartbeat({"heartbeat_at": "now"})


def _lose(engine: CopyEngine, target: str) -> None:
    """The engine is cut off: its lease and heartbeat expire (deleted: no waiting)."""
    client = engine.ownership.leases.client
    client.delete(engine.ownership.leases.key(target))
    engine.ownership.leases.unregister()


def _recorded(engine: CopyEngine, config: Any, market: Any, size: str
              ) -> copy_execution.Ticket:
    """Engine A's copy of one fill, prepared and recorded (not sent)."""
    async def main() -> list[copy_execution.Ticket]:
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([config.user_id])
            quote = await engine.quotes.quote(market.yes)
        finally:
            await engine.venue.aclose()
        key = f"0x{secrets.token_hex(8)}|{market.yes}|BUY|{config.target_address}"
        draft = _row(engine, config, market.yes, key, size=size)
        tickets = [copy_execution.Ticket(draft)]
        copy_execution.prepare(tickets, quote, engine.wallets.accounts)
        assert copy_execution.record([draft], tickets, quote) == [draft]
        assert tickets[0].prepared is not None
        return tickets[0]

    return trio.run(main)


@dataclass
class Race:
    """Engine A holding the target with its copy recorded (not sent), and engine B."""

    config: Any
    a: CopyEngine
    b: CopyEngine
    ticket: copy_execution.Ticket

    def hand_over(self) -> None:
        """A is cut off (lease and heartbeat expire); B takes the target."""
        _lose(self.a, self.config.target_address)
        _take(self.b, self.config.target_address)


@pytest.fixture
def race(bound_db, make_config, trader, market, target, redis_url, engine_prefix) -> Race:
    """Two engines on one target; A's copy of a fill for ``trader`` is recorded."""
    config = make_config(trader.user, target)
    a, b = _engine(redis_url, engine_prefix), _engine(redis_url, engine_prefix)
    _take(a, target)
    return Race(config, a, b, _recorded(a, config, market, "5"))


@contextlib.contextmanager
def _sent_slowly(ticket: copy_execution.Ticket, venue_control: Any,
                 answers: list[orders.PostAnswer]) -> Iterator[None]:
    """The ticket's order is POSTed in a thread while the block runs; the venue sits on it
    for two seconds before matching it. Its answer is in ``answers`` after the block."""
    prepared = ticket.prepared
    assert prepared is not None
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 0, "delay": 2, "count": 1}, expect=201)
    sending = threading.Thread(target=lambda: answers.append(orders.post(prepared)))
    sending.start()
    try:
        yield
    finally:
        sending.join(30)
        venue_control.call("DELETE", "/faults", expect=200)


def _pass(engine: CopyEngine, config: Any, recheck: bool = False) -> int:
    """One reconciliation pass of ``engine``, running ``config``: as at a target's start,
    or (``recheck``) the running engine's recheck of open intents of any age."""
    [snapshot] = store.load_configs([config.id])
    configs = {snapshot.id: snapshot}
    parts = {"db": _in_thread, "live_engines": engine.ownership.live_engines,
             "placer": engine.executor, "stale_after": 60}

    async def main() -> int:
        engine.venue = venues.async_client()
        try:
            if recheck:
                return await reconciler.recheck(engine.name, lambda: configs,
                                                older_than=0, **parts)
            return await reconciler.reconcile_target(engine.name, configs, **parts)
        finally:
            await engine.venue.aclose()

    return trio.run(main)


def _reconcile(engine: CopyEngine, config: Any) -> int:
    """The engine's reconciliation of the target's open intents (as at take-over)."""
    return _pass(engine, config)


def _recheck(engine: CopyEngine, config: Any) -> int:
    """The running engine's recheck pass over open intents (any age)."""
    return _pass(engine, config, recheck=True)


def _assert_ledger_agrees(ticket: copy_execution.Ticket, config: Any, trader: Any,
                          market: Any, venue_control: Any) -> None:
    venue_shares = Decimal(venue_control.balances(trader.address)["positions"][market.yes])
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(ticket.draft.id))
        trade = Trade.get_by_id(order.id)
        intent = CopyIntent.get_by_id(ticket.draft.id)
        [position] = CopyPosition.select().where(CopyPosition.config == config.id)
    assert (order.status, order.filled_size) == ("matched", venue_shares)
    assert (trade.status, trade.filled_size) == ("filled", venue_shares)
    assert (intent.status, intent.reason, intent.filled_size) == ("filled", None, venue_shares)
    assert intent.order_id == order.order_hash
    assert position.shares == venue_shares  # the fill counted once
    assert position.opened == 1


def test_a_stale_answer_settled_after_the_new_owner_reconciled_counts_once(
        race, trader, market, venue_control):
    ticket = race.ticket
    assert ticket.prepared is not None
    ticket.sent_at, ticket.answer = utcnow(), orders.post(ticket.prepared)
    assert ticket.answer.result is not None and ticket.answer.result.success

    race.hand_over()  # between A's send and its settle; B reconciles first
    assert _reconcile(race.b, race.config) == 0
    with db.connection_context():
        intent = CopyIntent.get_by_id(ticket.draft.id)
    assert (intent.status, intent.worker) == ("filled", race.b.name)

    copy_execution.settle([ticket])  # A, cut off until now, settles its stale answer

    assert ticket.holding is None  # A moved no position: B's reconciliation did
    _assert_ledger_agrees(ticket, race.config, trader, market, venue_control)


def test_not_found_during_a_slow_send_keeps_the_order_pending_until_the_venue_has_it(
        race, trader, market, venue_control):
    ticket = race.ticket
    answers: list[orders.PostAnswer] = []
    with _sent_slowly(ticket, venue_control, answers):
        race.hand_over()
        # B looks A's order up while it is still on its way: not found, within the grace.
        assert _reconcile(race.b, race.config) == 0
        with db.connection_context():
            order = Order.get(Order.target_trade_id == str(ticket.draft.id))
            intent = CopyIntent.get_by_id(ticket.draft.id)
            assert (order.status, Trade.get_by_id(order.id).status) == ("pending", "pending")
        assert (intent.status, intent.worker) == ("pending", race.b.name)
    [answer] = answers
    assert answer.result is not None and answer.result.success

    ticket.sent_at, ticket.answer = utcnow(), answer
    copy_execution.settle([ticket])  # A's answer: the order's fact, but not A's intent
    with db.connection_context():
        assert Order.get_by_id(order.id).status == "matched"
        assert CopyIntent.get_by_id(ticket.draft.id).status == "pending"  # B's now
    assert ticket.holding is None

    assert _reconcile(race.b, race.config) == 0  # B's next lookup finds it and settles it
    _assert_ledger_agrees(ticket, race.config, trader, market, venue_control)


def test_an_answer_lost_during_a_slow_send_is_settled_by_the_engines_recheck(
        race, trader, market, venue_control):
    ticket = race.ticket
    with _sent_slowly(ticket, venue_control, []):
        # A's client gave up on the answer; the order is still on its way to the venue.
        ticket.sent_at = utcnow()
        ticket.answer = orders.PostAnswer(lost=VenueError("read timeout"))
        copy_execution.settle([ticket])
        with db.connection_context():
            assert CopyIntent.get_by_id(ticket.draft.id).status == "pending"
            assert Order.get(Order.target_trade_id == str(ticket.draft.id)).status \
                == "pending"

    assert _recheck(race.a, race.config) == 1  # A's next look finds it at the venue
    assert _recheck(race.a, race.config) == 0  # and settled it once
    _assert_ledger_agrees(ticket, race.config, trader, market, venue_control)


def test_a_dead_engines_copy_is_settled_by_the_recheck_of_the_engine_running_its_config(
        race, trader, market, venue_control):
    ticket = race.ticket
    assert ticket.prepared is not None
    ticket.sent_at, ticket.answer = utcnow(), orders.post(ticket.prepared)
    # B runs the target already (its start-up reconciliation saw A alive); A dies.
    race.hand_over()
    assert _recheck(race.b, race.config) == 1
    with db.connection_context():
        assert CopyIntent.get_by_id(ticket.draft.id).worker == race.b.name
    copy_execution.settle([ticket])  # A's answer, had it lived to record it
    assert ticket.holding is None
    _assert_ledger_agrees(ticket, race.config, trader, market, venue_control)


@pytest.mark.parametrize("next_owner", ["the same engine", "another engine"])
def test_a_copy_its_engine_held_back_when_the_lease_clock_ran_out_is_placed_once_by_the_next_owner(
        race, trader, market, venue_control, next_owner):
    ticket = race.ticket
    assert ticket.prepared is not None
    held_back = ticket.prepared.order_hash
    # A's lease clock runs out between the record and the send (a stall on a busy machine):
    # A sends nothing, and stops the target; its leases go (A itself is still alive).
    race.a.lease.running = True
    race.a.ownership.valid_until = 0.0

    async def send() -> tuple[Any, orders.PostAnswer]:
        race.a.venue = venues.async_client()
        try:
            assert ticket.prepared is not None
            return await race.a.executor.send(ticket.prepared)
        finally:
            await race.a.venue.aclose()

    ticket.sent_at, ticket.answer = trio.run(send)
    copy_execution.settle([ticket])
    assert ticket.holding is None
    race.a.ownership.leases.release([race.config.target_address])
    # A renews again (its clock restarts); driven step by step, outside a running engine.
    race.a.lease.running = False
    owner = race.a if next_owner == "the same engine" else race.b
    _take(owner, race.config.target_address)

    # The next owner's start places the copy now: not 120 s later as "never reached the
    # venue", which would miss the target's trade.
    assert _reconcile(owner, race.config) == 1
    _assert_ledger_agrees(ticket, race.config, trader, market, venue_control)
    with db.connection_context():
        intent = CopyIntent.get_by_id(ticket.draft.id)
        held = Order.get(Order.order_hash == held_back)
    assert intent.worker == owner.name
    assert held.status == "cancelled" and held.target_trade_id is None  # withdrawn
    assert held.error and held.error.startswith("Not sent")
    assert not Trade.select().where(Trade.order == held.id).exists()
    received = [e["order_id"] for e in venue_control.received_orders()
                if e["body"]["order"]["maker"].lower() == trader.address.lower()]
    assert held_back not in received and len(received) == 1  # placed once
    assert _reconcile(owner, race.config) == 0 and _recheck(owner, race.config) == 0


def test_a_running_engine_fails_an_order_the_venue_never_got_only_after_the_grace(
        run_engines, make_config, trader, market, target, venue_control):
    config = make_config(trader.user, target)
    grace = 1.5
    settings = dataclasses.replace(runtime.runtime().settings,
                                   order_not_found_grace_seconds=grace)
    # The venue fails the POST before reading it: the order never arrives.
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "count": 1}, expect=201)

    async def scenario(engines: list[CopyEngine]) -> None:
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        [intent] = await wait_for(settled(config))
        assert (intent.status, intent.reason) == ("failed", "order_refused")

    try:
        with runtime.replaced(settings=settings):
            run_engines(scenario, settings=dataclasses.replace(
                FAST, recheck_seconds=0.2, recheck_after_seconds=0))
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    [intent] = intents_of(config)
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(intent.id))
    assert order.status == "failed" and "never reached" in (order.error or "")
    assert intent.settled_at is not None and order.submitted_at is not None
    # Pending while the order might still have been on its way; failed by the recheck.
    assert (intent.settled_at - order.submitted_at).total_seconds() >= grace


def _cut_off(client: redis.Redis) -> None:
    """Every later command of this client fails to connect, as if Redis were unreachable.

    (A connection a thread is using right now, the control channel's, is left to it.)
    """
    pool = client.connection_pool
    pool.connection_kwargs.update(host="127.0.0.1", port=1)
    pool.disconnect(inuse_connections=False)
    pool.reset()  # a connection in use now is dropped when it comes back, not reused


def test_an_engine_cut_off_from_redis_mid_send_and_the_new_owner_settle_the_copy_once(
        app, make_config, trader, market, target, venue_control, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    settings = dataclasses.replace(FAST, recheck_seconds=0.2, recheck_after_seconds=0)

    async def main() -> None:
        clients = [redis.Redis.from_url(redis_url) for _ in range(2)]
        engines = [CopyEngine(f"engine-{i}-{secrets.token_hex(3)}", client, engine_prefix,
                              settings) for i, client in enumerate(clients)]
        async with trio.open_nursery() as nursery:
            for engine in engines:
                await nursery.start(engine.run)
            with trio.fail_after(60):
                while not any(target in e.targets and e.targets[target].ready.is_set()
                              for e in engines):
                    await trio.sleep(0.05)
                a, b = engines if target in engines[0].targets else engines[::-1]
                # The venue sits on the copy's POST /order long enough for a take-over.
                venue_control.call("POST", "/faults", {
                    "path": "/clob/order", "method": "POST", "status": 0, "delay": 5,
                    "count": 1}, expect=201)
                await inject(venue_control, target, market.yes, "BUY", "10", "0.5")

                def in_flight() -> Any:
                    with db.connection_context():
                        return Order.get_or_none(Order.config_id == config.id)

                await wait_for(in_flight)
                _cut_off(a.redis)  # A keeps running, but its lease and heartbeat lapse
                expire = redis.Redis.from_url(redis_url)
                lease = copy_leases.lease_key(target, engine_prefix)
                while target not in b.targets or not b.targets[target].ready.is_set():
                    # Now, not a lease period later (again, if a call A had in flight
                    # when it was cut off renewed them).
                    expire.delete(copy_leases.engine_key(a.name, engine_prefix))
                    if expire.get(lease) == a.name.encode():
                        expire.delete(lease)
                    await trio.sleep(0.05)

                def taken_over() -> bool:
                    with db.connection_context():
                        return CopyIntent.select().where(CopyIntent.config == config.id,
                                                         CopyIntent.worker == b.name).exists()

                await wait_for(taken_over)  # B took the intent over, and looked its order
                with db.connection_context():  # up: still on its way, so not failed
                    assert Order.get(Order.config_id == config.id).status == "pending"
                await wait_for(settled(config))
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    [intent] = intents_of(config)
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(intent.id))
        trade = Trade.get_by_id(order.id)
        [position] = CopyPosition.select().where(CopyPosition.config == config.id)
    venue_shares = Decimal(venue_control.balances(trader.address)["positions"][market.yes])
    assert (order.status, order.filled_size) == ("matched", venue_shares)
    assert (trade.status, trade.filled_size) == ("filled", venue_shares)
    assert (intent.status, intent.reason, intent.filled_size) == ("filled", None, venue_shares)
    assert position.shares == venue_shares
    sent = [e for e in venue_control.received_orders() if e["order_id"] == order.order_hash]
    assert len(sent) == 1
