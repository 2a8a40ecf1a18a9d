"""The deposit watcher (issue 16, "no manual step besides funding"): on a sandbox whose
relayer runs deposit wallets on anvil, USDC.e minted to a ready deposit wallet is wrapped
into pUSD by the watcher alone and a live order then goes through; two watchers at once
wrap once; a relayer failure leaves the wrap failed with the relayer's reason and a later
run wraps again; a pUSD deposit reaches the CLOB's cached balance through the watcher."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from models.base import db, utcnow
from models.user import User
from models.wallet import CollateralWrap, DepositWatch
from services.platform import errors, runtime
from services.trading import orders, previews
from services.wallets import collateral, deposits, onboarding, venue_accounts, wallets
from tests.chain_venue import chain_venue, run_queued_jobs  # noqa: F401
from tests.dashboard.conftest import job_prefix  # noqa: F401 - queues of the test's own
from tests.wallet_fixtures import USDC

pytestmark = pytest.mark.usefixtures("job_prefix")


@pytest.fixture
def venue_control(chain_venue: Any) -> Any:  # noqa: F811 - make_trader onboards here
    """This test's chain-backed sandbox, for the trading fixtures."""
    return chain_venue


def _ready(make_trader: Any) -> tuple[Any, str]:
    trader = make_trader("0", deposit_wallet=True)
    # Onboarding's end queued a deposit check of the account: nothing is held yet.
    assert run_queued_jobs() == [deposits.CHECK_JOB]
    return trader, trader.wallet.funder_address


def _held(chain: Any, token: str, address: str) -> int:
    from chain.tokens import token_balance_base

    return token_balance_base(chain.web3(), token, address)


def _cached_pusd(trader: Any) -> Decimal:
    """The CLOB's cached collateral balance (no update asked)."""
    return venue_accounts.collateral_balance(venue_accounts.account(trader.user))


def test_usdc_e_alone_is_wrapped_by_the_watcher_and_a_live_order_goes_through(
        make_trader, chain, market) -> None:
    dev = chain.contracts
    trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, 25 * USDC)  # the user's only step: funding with USDC.e

    [seen] = deposits.sweep()
    assert seen["wrap"] is not None and seen["refreshed"] is False
    assert "accounts.wrap" in run_queued_jobs()
    wrap = CollateralWrap.get_by_id(seen["wrap"])
    assert (wrap.status, wrap.amount, wrap.error) == ("confirmed", Decimal(25), None)
    assert _held(chain, dev.usdce, maker) == 0
    assert _held(chain, dev.pusd, maker) == 25 * USDC
    assert _cached_pusd(trader) == 25  # the wrap's job had the CLOB re-read the wallet

    quote = previews.create(trader.user, market.yes, "buy", "10", "market", None)
    order = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                               order_type="market", preview_id=quote["preview_id"])
    assert order.status == "matched", order.error

    # Nothing left to wrap: the next sweeps send nothing.
    assert [s["wrap"] for s in deposits.sweep()] == [None]
    assert CollateralWrap.select().count() == 1


def test_two_watcher_runs_at_once_wrap_once(make_trader, chain) -> None:
    dev = chain.contracts
    _trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, 10 * USDC)
    start = threading.Barrier(2)
    answers: list[Any] = []

    def watch() -> None:
        with db.connection_context():
            start.wait()
            answers.extend(deposits.sweep())

    runs = [threading.Thread(target=watch) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(60)
    assert len(answers) == 2 and all("error" not in a for a in answers), answers
    assert sorted(a["wrap"] is not None for a in answers) == [False, True]
    assert CollateralWrap.select().count() == 1
    # The user asking meanwhile gets a clear answer, not a second wrap.
    with pytest.raises(errors.Conflict):
        collateral.request_wrap(_trader.user, "10")
    run_queued_jobs()
    assert _held(chain, dev.pusd, maker) == 10 * USDC


def test_a_relayer_failure_leaves_the_wrap_failed_with_its_reason_and_a_later_run_retries(
        make_trader, chain, chain_venue) -> None:  # noqa: F811
    dev = chain.contracts
    _trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, 7 * USDC)
    chain_venue.call("POST", "/relayer", {"fail_next": {
        "state": "FAILED", "message": "onramp paused"}}, expect=200)
    [first] = deposits.sweep()
    run_queued_jobs()
    failed = CollateralWrap.get_by_id(first["wrap"])
    assert failed.status == "failed" and "onramp paused" in failed.error
    assert _held(chain, dev.usdce, maker) == 7 * USDC  # nothing moved

    # Right after a failure the watcher holds back (a refusing relayer is not hammered)...
    assert [s["wrap"] for s in deposits.sweep()] == [None]
    # ...and once the pause is over it wraps again, from what the chain holds.
    (CollateralWrap.update(updated_at=utcnow() - timedelta(minutes=6))
     .where(CollateralWrap.id == failed.id).execute())
    [retry] = deposits.sweep()
    run_queued_jobs()
    assert CollateralWrap.get_by_id(retry["wrap"]).status == "confirmed"
    assert _held(chain, dev.pusd, maker) == 7 * USDC
    assert CollateralWrap.get_by_id(failed.id).status == "failed"  # history kept


def test_usdc_e_sent_before_onboarding_is_wrapped_when_it_finishes(chain_venue,  # noqa: F811
                                                                   chain, bound_db) -> None:
    dev = chain.contracts
    user = User.create(email="funds-first@example.com")
    wallet = wallets.get_or_create(user)  # a deposit wallet; its onboarding is queued
    dev.mint(dev.usdce, wallet.funder_address, 12 * USDC)  # funded, not deployed yet
    # The worker runs the onboarding, which queues the deposit check, which wraps.
    assert run_queued_jobs() == [onboarding.JOB_NAME, deposits.CHECK_JOB, collateral.JOB_NAME]
    assert onboarding.status(user)["status"] == "ready"
    assert _held(chain, dev.pusd, wallet.funder_address) == 12 * USDC
    assert _held(chain, dev.usdce, wallet.funder_address) == 0


def test_a_pusd_deposit_reaches_the_clobs_cached_balance_through_the_watcher(
        make_trader, chain) -> None:
    dev = chain.contracts
    trader, maker = _ready(make_trader)
    dev.mint(dev.pusd, maker, 40 * USDC)
    assert _cached_pusd(trader) == 0  # on chain; the venue has not looked

    [seen] = deposits.sweep()
    assert seen == {"wallet": str(trader.wallet.id), "wrap": None, "refreshed": True}
    assert _cached_pusd(trader) == 40
    watch = DepositWatch.get(DepositWatch.wallet == trader.wallet.id)
    assert watch.pusd_seen == 40
    [again] = deposits.sweep()  # nothing changed: the venue is not asked, nothing written
    assert again["refreshed"] is False
    assert DepositWatch.get_by_id(watch.id).changed_at == watch.changed_at
    dev.mint(dev.pusd, maker, 2 * USDC)  # a second deposit is seen too
    [third] = deposits.sweep()
    assert third["refreshed"] is True and _cached_pusd(trader) == 42


def test_auto_wrap_off_leaves_usdc_e_for_the_user_and_dust_is_left_alone(
        make_trader, chain) -> None:
    dev = chain.contracts
    _trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, USDC // 2)  # below AUTO_WRAP_MIN_USDC_E (1)
    assert [s["wrap"] for s in deposits.sweep()] == [None]
    dev.mint(dev.usdce, maker, 5 * USDC)
    current = runtime.runtime()
    off = replace(current.settings, deposits=replace(current.settings.deposits,
                                                     auto_wrap=False))
    runtime.install(replace(current, settings=off))
    try:
        assert [s["wrap"] for s in deposits.sweep()] == [None]
    finally:
        runtime.install(current)
    assert CollateralWrap.select().count() == 0


def test_a_sweep_pages_through_every_ready_account(make_trader, chain) -> None:
    dev = chain.contracts
    first, first_maker = _ready(make_trader)
    second, second_maker = _ready(make_trader)
    dev.mint(dev.pusd, first_maker, 3 * USDC)
    dev.mint(dev.usdce, second_maker, 4 * USDC)
    current = runtime.runtime()
    small = replace(current.settings, deposits=replace(current.settings.deposits, page_size=1))
    runtime.install(replace(current, settings=small))
    try:
        seen = {s["wallet"]: s for s in deposits.sweep()}  # one JSON-RPC batch per wallet
    finally:
        runtime.install(current)
    assert seen[str(first.wallet.id)]["refreshed"] is True
    assert seen[str(second.wallet.id)]["wrap"] is not None
    run_queued_jobs()
    assert _cached_pusd(first) == 3 and _cached_pusd(second) == 4


def test_auto_wrap_leaves_what_an_open_usdc_e_withdrawal_needs(make_trader, chain) -> None:
    from services.wallets import withdrawals

    dev = chain.contracts
    trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, 25 * USDC)
    dest = "0x" + secrets.token_hex(20)  # the dev chain outlives the test
    pending = withdrawals.request(trader.user, dest, Decimal("10"), "usdc_e")
    [seen] = deposits.sweep()
    assert CollateralWrap.get_by_id(seen["wrap"]).amount == Decimal(15)
    run_queued_jobs()
    assert withdrawals.send(pending.id) == "confirmed"  # its USDC.e was still there
    assert _held(chain, dev.usdce, dest) == 10 * USDC
    assert _held(chain, dev.pusd, maker) == 15 * USDC


def test_a_second_run_of_a_wrap_whose_answer_was_lost_follows_its_batch(
        make_trader, chain, chain_venue) -> None:  # noqa: F811
    dev = chain.contracts
    trader, maker = _ready(make_trader)
    dev.mint(dev.usdce, maker, 9 * USDC)
    row = collateral.request_wrap(trader.user, "9")
    chain_venue.call("POST", "/faults", {"path": "/relayer/submit", "method": "POST",
                                         "after": True, "status": 500}, expect=201)
    # ...and the relayer's list of our transactions (which would name it) does not answer.
    chain_venue.call("POST", "/faults", {"path": "/relayer/transactions", "method": "GET",
                                         "status": 500, "count": 50}, expect=201)
    # The relayer took the batch, its answer was lost: not failed, not sent again.
    assert collateral.run(row.id) == "ambiguous"
    chain_venue.call("DELETE", "/faults", expect=200)
    deadline = time.monotonic() + 20
    while (status := collateral.run(row.id)) != "confirmed" and time.monotonic() < deadline:
        time.sleep(0.3)
    assert status == "confirmed"
    assert _held(chain, dev.usdce, maker) == 0
    assert _held(chain, dev.pusd, maker) == 9 * USDC
