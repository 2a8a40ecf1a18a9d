"""A fill's orders never wait for a balance read they do not need, nor for a budget (issue 48).

At 10,000 configs a fill waited 6 s before its first order: a copier without an estimate
yet was read first, and the CLOB's wallet re-read (``/balance-allowance/update``, 50 per
10 s) waited for its budget. Against the shared sandbox venue over real HTTP, both
databases; the venue client's own budgets, their clock stopped, stand for a spent budget.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from decimal import Decimal

import trio

from models.base import utcnow
from services.copying import execution as copy_execution
from services.platform import venues
from services.trading import orders
from services.trading.orders import PostAnswer, PreparedOrder
from services.wallets import venue_accounts
from tests.worker.copy_engine.conftest import intents_of
from tests.worker.copy_engine.test_execution_seams import _in_thread
from tests.worker.copy_engine.test_fast_path import _engine, _row
from venue.budgets import RateBudgets

# Not a timing: a bound on a fault (a wait for a budget whose clock stands still never ends).
DEADLINE = 60


def _spent(path: str) -> RateBudgets:
    """The venue client's budgets with ``path``'s family spent for good (the clock stands
    still, so it never refills however slow the machine)."""
    budgets = RateBudgets(clock=lambda: 0.0)
    while budgets.take("clob", "GET", path) == 0:
        pass
    return budgets


def _execute(engine, config, user_id, market, *, estimate: Decimal | None,
             budgets: RateBudgets | None = None) -> copy_execution.Executed:
    """One copy of a fill through ``copy_execution.execute`` with the engine's recheck; the
    copier's estimate set to ``estimate`` (None: opened, no figure yet)."""
    async def send(prepared: PreparedOrder) -> tuple[datetime, PostAnswer]:
        return utcnow(), await orders.post(prepared, engine.venue)

    async def main() -> copy_execution.Executed:
        engine.venue = venues.async_client()
        try:
            account = await _in_thread(venue_accounts.account, user_id)
            slot = engine.wallets.accounts.put(user_id, account)
            if estimate is not None:
                slot.refreshed(estimate, engine.wallets.accounts.now())
            quote = await engine.quotes.quote(market.yes)
            if budgets is not None:
                engine.venue.transport.budgets = budgets
            draft = _row(engine, config, market.yes, f"fill-{secrets.token_hex(4)}")
            with trio.fail_after(DEADLINE):
                return await copy_execution.execute(
                    [draft], quote, accounts=engine.wallets.accounts, send=send,
                    run_db=_in_thread, recheck=engine.wallets.recheck)
        finally:
            await engine.venue.aclose()

    return trio.run(main)


def test_a_copier_without_an_estimate_is_not_read_before_the_fills_orders(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix):
    """The read budget has room, but the copy does not wait for a read it does not need
    to decide: it goes unchecked (the venue judges) and is filled."""
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    done = _execute(engine, config, trader.user.id, market, estimate=None)
    assert engine.wallets.venue_reads == 0 and done.orders == 1
    [intent] = intents_of(config)
    assert intent.status == "filled", (intent.reason, intent.detail)


def test_a_short_estimate_is_read_again_without_waiting_for_the_wallet_re_read_budget(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix,
        venue_control):
    """The estimate says the wallet cannot pay; the CLOB's re-read budget is spent: the
    venue's figure is read without it (no wait), and the copy it can pay goes out."""
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    venue_control.call("DELETE", "/requests", expect=200)
    done = _execute(engine, config, trader.user.id, market, estimate=Decimal(0),
                    budgets=_spent("/balance-allowance/update"))
    tally = venue_control.call("GET", "/requests", expect=200)
    assert engine.wallets.venue_reads == 1 and done.orders == 1
    assert "GET /clob/balance-allowance/update" not in tally
    [intent] = intents_of(config)
    assert intent.status == "filled", (intent.reason, intent.detail)


def test_a_short_estimate_goes_unchecked_when_the_balance_read_budget_has_no_room(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix):
    """The venue client's budget for balance reads has no room now: the copy does not wait
    for it, it goes unchecked and the venue judges (here: it can pay)."""
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    done = _execute(engine, config, trader.user.id, market, estimate=Decimal(0),
                    budgets=_spent("/balance-allowance"))
    assert engine.wallets.venue_reads == 0 and done.orders == 1
    [intent] = intents_of(config)
    assert intent.status == "filled", (intent.reason, intent.detail)
