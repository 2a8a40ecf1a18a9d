"""Issue 41, finding 2: the exposure cap and the budgets count copies in flight.

Two real ``copytrade worker`` processes share the test's database (SQLite or PostgreSQL),
Redis and venue. A user capped at 12 pUSD copies two targets, one run by each worker; both
targets buy at the same moment, and the first order to reach the venue is held there for a
while (in flight, its intent open): each copy alone fits the cap, both do not. Round after
round, one copy fills and the other is skipped with ``exposure_limit``: what the user
holds never passes the cap. A config's budget holds the same way while a copy waits at a
delayed market.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

import trio
from eth_account import Account

from models.base import db, utcnow
from models.copying import INTENT_OPEN, CopyConfig, CopyPosition
from models.user import User
from services.copying import mirror
from tests.venue_lifecycle import delay_market
from tests.worker.copy_engine.conftest import cursor_of
from tests.worker.copy_engine.test_processes import (  # noqa: F401 (the spawn fixture)
    inject,
    intents,
    lease_owner,
    owner_pid,
    spawn,
    wait,
)

CAP = Decimal(12)
ROUNDS = 5


def _set_cap(user: Any, cap: Decimal) -> None:
    with db.connection_context():
        User.update(max_total_exposure_usdc=cap).where(User.id == user.id).execute()


def _stop(configs: list[CopyConfig]) -> None:
    """Stop a round's configs (as the API does), so the next round's targets get the room."""
    with db.connection_context():
        CopyConfig.update(is_active=False, version=CopyConfig.version + 1).where(
            CopyConfig.id.in_([c.id for c in configs])).execute()


def _held(configs: list[CopyConfig]) -> Decimal:
    with db.connection_context():
        rows = CopyPosition.select().where(CopyPosition.config.in_([c.id for c in configs]))
        return sum((row.cost_usdc for row in rows if row.shares > 0), Decimal(0))


def _final(configs: list[CopyConfig], count: int) -> Any:
    rows = [row for config in configs for row in intents(config)]
    return rows if len(rows) == count and all(r.status not in INTENT_OPEN for r in rows) \
        else None


def _stall_next_order(venue_control: Any, seconds: str) -> None:
    """The venue holds the next POST /order that long before it executes it."""
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 0, "delay": seconds, "count": 1},
                       expect=201)


def test_two_workers_buying_for_one_user_never_pass_its_exposure_cap(
        spawn, make_config, make_trader, venue_control, redis_url, engine_prefix):  # noqa: F811
    workers = [spawn(), spawn()]

    def one_round(round_no: int) -> None:
        trader = make_trader()
        _set_cap(trader.user, CAP)
        slug = f"cap-{round_no}-{secrets.token_hex(4)}"
        token = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                         category="politics")["token_ids"][0]
        targets = [Account.create().address.lower() for _ in range(2)]
        configs = [make_config(trader.user, target) for target in targets]

        def split() -> bool:
            pids = {owner_pid(lease_owner(redis_url, engine_prefix, t)) for t in targets}
            return pids == {w.pid for w in workers}

        wait(split, what=f"round {round_no}: one target on each worker", workers=workers)
        wait(lambda: all(cursor_of(t) is not None for t in targets),
             what="both watchers reading", workers=workers)
        _stall_next_order(venue_control, "2")
        for target in targets:  # the same moment: each copy alone fits under the cap
            inject(venue_control, target, token, size="20")
        rows = wait(lambda: _final(configs, 2), what=f"round {round_no}: both decided",
                    workers=workers)

        outcomes = sorted((r.status, r.reason) for r in rows)
        assert outcomes == [("filled", None), ("skipped", mirror.EXPOSURE_LIMIT)], \
            [(r.status, r.reason, r.detail) for r in rows]
        held = _held(configs)
        assert Decimal(10) < held <= CAP, held  # one copy of 20 shares, the cap kept
        [filled] = [r for r in rows if r.status == "filled"]
        assert filled.reserved_usdc is not None and filled.reserved_usdc >= held
        assert venue_control.balances(trader.address)["positions"] == {token: "20"}
        _stop(configs)

    for round_no in range(ROUNDS):
        one_round(round_no)


def test_a_budget_counts_the_copy_waiting_at_a_delayed_market(
        spawn, make_config, trader, venue_control, redis_url, engine_prefix):  # noqa: F811
    # Open intents are looked up again soon, so the delayed copies settle within the test.
    workers = [spawn(COPY_RECHECK_SECONDS="0.3", COPY_RECHECK_AFTER_SECONDS="0")
               for _ in range(2)]

    def one_round(round_no: int) -> None:
        summary = venue_control.add_market(f"budget-{round_no}-{secrets.token_hex(4)}",
                                           liquidity=True, fair_price="0.5",
                                           category="politics")
        token = summary["token_ids"][0]
        delay_market(venue_control, summary["condition_id"], 2)
        target = Account.create().address.lower()
        config = make_config(trader.user, target, total_budget_usdc=CAP)
        wait(lambda: owner_pid(lease_owner(redis_url, engine_prefix, target))
             in {w.pid for w in workers}, what="a worker to run the target", workers=workers)
        wait(lambda: cursor_of(target) is not None, what="its watcher reading",
             workers=workers)
        # The first copy waits at the venue (sent, nothing spent yet) when the second comes.
        inject(venue_control, target, token, size="20")
        wait(lambda: [r for r in intents(config) if r.status == "sent"],
             what=f"round {round_no}: the first copy waiting at the venue", workers=workers)
        inject(venue_control, target, token, size="20")
        rows = wait(lambda: _final([config], 2), what=f"round {round_no}: both settled",
                    workers=workers)

        outcomes = [(r.status, r.reason) for r in rows]
        assert outcomes == [("filled", None), ("skipped", mirror.TOTAL_BUDGET_EXHAUSTED)], \
            [(r.status, r.reason, r.detail) for r in rows]
        assert Decimal(10) < _held([config]) <= CAP
        _stop([config])

    for round_no in range(ROUNDS):
        one_round(round_no)


def test_the_intent_write_cuts_a_copy_to_what_others_left_and_frees_it_when_final(
        bound_db, make_config, make_trader, market, redis_url, engine_prefix):
    from services.copying import execution as copy_execution
    from services.copying import intents as copy_intents
    from services.copying import reservations
    from services.platform import venues
    from tests.worker.copy_engine.test_fast_path import _engine, _row

    trader = make_trader()
    cap = Decimal(15)
    _set_cap(trader.user, cap)
    first, second = (make_config(trader.user, Account.create().address) for _ in range(2))
    engine = _engine(redis_url, engine_prefix)

    def exposure() -> Decimal:
        return reservations.exposure([trader.user.id], False)[trader.user.id]

    async def main():
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([trader.user.id])
            quote = await engine.quotes.quote(market.yes)
        finally:
            await engine.venue.aclose()

        def record(config, key: str) -> tuple[Any, copy_execution.Ticket]:
            # Decided while nothing was held or in flight: 20 shares, as both engines would.
            draft = _row(engine, config, market.yes, key, size="20")
            assert draft.guarded
            tickets = [copy_execution.Ticket(draft)]
            copy_execution.prepare(tickets, quote, engine.wallets.accounts)
            assert copy_execution.record([draft], tickets, quote,
                                         accounts=engine.wallets.accounts) == [draft]
            return draft, tickets[0]

        one, _ = record(first, "fill-1")
        assert one.size == Decimal(20) and one.reserved_usdc == reservations.worst_cost(
            one, quote.view)
        assert exposure() == one.reserved_usdc
        two, ticket = record(second, "fill-2")  # the cap's rest: cut down and signed again
        per_share = quote.view.buy_cost_per_share(two.price)
        assert Decimal(5) <= two.size < Decimal(20)
        assert two.size * per_share <= cap - one.reserved_usdc \
            < (two.size + Decimal("0.01")) * per_share
        assert ticket.prepared is not None and ticket.prepared.plan.size == two.size
        assert "counting copies in flight" in two.detail
        assert exposure() == one.reserved_usdc + two.reserved_usdc <= cap
        three, ticket = record(first, "fill-3")  # nothing left: skipped, nothing signed
        assert (three.status, three.reason) == ("skipped", mirror.EXPOSURE_LIMIT)
        assert ticket.prepared is None and ticket.order is None
        assert exposure() == one.reserved_usdc + two.reserved_usdc
        # A copy that ends without a fill (refused, cancelled, or failed as not_sent by the
        # reconciler after its worker died) frees its whole reservation.
        assert copy_intents.settle(one.id, {"status": "failed", "reason": "not_sent",
                                            "settled_at": utcnow()})
        assert exposure() == two.reserved_usdc
        four, _ = record(first, "fill-4")
        assert four.status == "pending" and four.size == Decimal(20)

    trio.run(main)
