"""The copy path's seams: an injected sender, a reconciler without an engine, typed drafts.

Against the shared sandbox venue over real HTTP and both databases; the sender below is
the seam ``copy_execution.execute`` is given, not a patch of our code.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import trio

from models.base import db, utcnow
from models.copying import CopyIntent
from models.trading import Order
from services.copying import execution as copy_execution
from services.copying import intents as copy_intents
from services.copying.intents import CopyIntentDraft
from services.platform import venues
from services.trading import order_reconcile, orders
from services.trading.orders import PostAnswer, PreparedOrder
from services.wallets import venue_accounts
from tests.worker.copy_engine.conftest import intents_of
from tests.worker.copy_engine.test_fast_path import _engine, _row
from venue.errors import VenueError
from venue.models import Side
from worker.copy_engine import reconciler, store
from worker.copy_engine.shared_balances import ReadBudget
from worker.copy_engine.store import ConfigSnapshot


async def _in_thread(function, *args, **kwargs):
    def call():
        with db.connection_context():
            return function(*args, **kwargs)
    return await trio.to_thread.run_sync(call)


def test_execute_sends_through_its_sender_only_recorded_orders_and_settles_a_lost_answer(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    seen_at_send: list[tuple[str, str]] = []

    async def lost(prepared: PreparedOrder) -> tuple[datetime, PostAnswer]:
        # What the database holds when the order would leave: its committed record.
        def stored() -> tuple[str, str]:
            with db.connection_context():
                order = Order.get(Order.order_hash == prepared.order_hash)
                intent = CopyIntent.get_by_id(order.target_trade_id)
                return order.status, intent.status
        seen_at_send.append(await trio.to_thread.run_sync(stored))
        return utcnow(), PostAnswer(lost=VenueError("connection reset"))  # never sent

    async def main() -> copy_execution.Executed:
        engine.venue = venues.async_client()
        try:
            account = await _in_thread(venue_accounts.account, trader.user.id)
            slot = engine.wallets.accounts.put(trader.user.id, account)
            slot.refreshed(Decimal(1000), engine.wallets.accounts.now())
            quote = await engine.quotes.quote(market.yes)
            draft = _row(engine, config, market.yes, f"fill-{secrets.token_hex(4)}")
            return await copy_execution.execute(
                [draft], quote, accounts=engine.wallets.accounts, send=lost,
                run_db=_in_thread, recheck=engine.wallets.recheck)
        finally:
            await engine.venue.aclose()

    done = trio.run(main)
    assert seen_at_send == [("pending", "pending")]
    assert done.orders == 1 and done.moves == [] and done.catalogued
    [intent] = intents_of(config)
    assert [d.id for d in done.recorded] == [intent.id]
    # The venue never saw the order: looked up by its hash, it may still be on its way,
    # so order and copy stay pending; once the grace has passed, both failed.
    assert (intent.status, intent.reason) == ("pending", None)
    with db.connection_context():
        order = Order.get(Order.target_trade_id == str(intent.id))
        assert order.status == "pending"
        sent = utcnow() - order_reconcile.not_found_grace() - timedelta(seconds=1)
        Order.update(submitted_at=sent).where(Order.id == order.id).execute()
        assert copy_intents.reconcile(intent.id, intent.worker, 60) is None
        assert Order.get_by_id(order.id).status == "failed"
    [intent] = intents_of(config)
    assert (intent.status, intent.reason) == ("failed", "order_refused")
    slot = engine.wallets.accounts.get(trader.user.id)
    assert slot is not None and (slot.reserved, slot.balance) == (0, 1000)  # nothing held


def test_the_reconciler_places_an_unsent_intent_through_any_placer(bound_db, make_config,
                                                                  trader, target):
    config = make_config(trader.user, target)
    [snapshot] = store.load_configs([config.id])
    draft = CopyIntentDraft(
        id=uuid.uuid4(), config_id=config.id,
        user_id=trader.user.id, target_trade_key=f"0x{secrets.token_hex(8)}|1|BUY|{target}",
        target_address=target, token_id="1", status="pending", seen_at=utcnow(),
        side=Side.BUY, size=Decimal(5), price=Decimal("0.55"), usdc=Decimal("2.75"),
        worker="gone-engine")
    assert copy_intents.insert([draft]) == [draft]
    placed: list[tuple[ConfigSnapshot, CopyIntentDraft]] = []

    class Placer:
        async def place_intent(self, config: ConfigSnapshot, draft: CopyIntentDraft) -> None:
            placed.append((config, draft))

    async def no_engines() -> list[str]:
        return []

    count = trio.run(lambda: reconciler.reconcile_target(
        "this-engine", {snapshot.id: snapshot}, db=_in_thread, live_engines=no_engines,
        placer=Placer(), stale_after=60))
    assert count == 1
    [(config_placed, again)] = placed
    # Placed (and settled) under the name of the engine that took it over.
    assert config_placed is snapshot and again.row() == {**draft.row(), "worker": "this-engine"}
    assert again.side is Side.BUY
    with db.connection_context():
        assert CopyIntent.get_by_id(draft.id).worker == "this-engine"  # taken over


def test_a_stored_intent_reads_back_as_the_draft_that_wrote_it(bound_db, make_config, trader,
                                                              target, redis_url,
                                                              engine_prefix):
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    draft = _row(engine, config, "1234", "fill-roundtrip")
    draft.target_side, draft.target_size, draft.outcome_index = Side.SELL, Decimal(7), 1
    assert copy_intents.insert([draft]) == [draft]
    with db.connection_context():
        stored = CopyIntentDraft.stored(CopyIntent.get_by_id(draft.id))
    assert stored.row() == draft.row()
    assert stored.side is Side.BUY and stored.row()["side"] == "BUY"


def test_a_copy_past_the_balance_read_budget_goes_unchecked_and_the_venue_refuses_it(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix):
    """A copier without an estimate, the engine's balance reads spent: the order is not
    checked here (no read past the budget) but sent, and the venue's refusal is recorded
    as ``insufficient_balance`` with the venue's words."""
    poor = make_trader(funds="1")  # the copy (5 shares near 0.55) needs about 2.75 pUSD
    config = make_config(poor.user, target)
    engine = _engine(redis_url, engine_prefix)
    reads: list[int] = []

    async def send(prepared: PreparedOrder) -> tuple[datetime, PostAnswer]:
        return utcnow(), await orders.post(prepared, engine.venue)

    async def main() -> copy_execution.Executed:
        engine.venue = venues.async_client()
        try:
            account = await _in_thread(venue_accounts.account, poor.user.id)
            engine.wallets.accounts.put(poor.user.id, account)  # opened, no figure yet
            # This second's reads are spent, and stay spent however slow the machine: the
            # budget's clock stands still (on the monotonic clock it refilled in a stall).
            spent = ReadBudget(engine.wallets._budget._rate, clock=lambda: 0.0)
            spent.take(1000)
            engine.wallets._budget = spent
            quote = await engine.quotes.quote(market.yes)
            draft = _row(engine, config, market.yes, f"fill-{secrets.token_hex(4)}")
            done = await copy_execution.execute(
                [draft], quote, accounts=engine.wallets.accounts, send=send,
                run_db=_in_thread, recheck=engine.wallets.recheck)
            reads.append(engine.wallets.venue_reads)
            return done
        finally:
            await engine.venue.aclose()

    done = trio.run(main)
    assert reads == [0] and done.orders == 1  # not read, and sent
    [intent] = intents_of(config)
    assert (intent.status, intent.reason) == ("failed", "insufficient_balance")
    assert copy_execution.BALANCE_REFUSAL in intent.detail.lower()
