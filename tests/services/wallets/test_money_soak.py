"""The soak (issue 26, item 4): withdrawals, claims and wraps on the same deposit wallets,
run by two real worker processes (``python -m cli worker``) that are SIGKILLed at random
points and started again, while the sandbox relayer loses answers at random (its fault
switches: a submit it ran whose answer is lost, status reads whose answers are lost). The
random choices come from a seeded RNG whose seed is printed (SOAK_SEED=... replays them).

At the end, after maintenance has run (``resume_chain_work`` re-queues what a killed worker
left), no row is open or ambiguous, and every balance reconciles to the base unit with the
rows: each wallet's pUSD and USDC.e, and each destination's pUSD.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import redis

from models.wallet import (
    CONFIRMED,
    FAILED,
    OPEN_STATES,
    Claim,
    CollateralWrap,
    TradingWallet,
    Withdrawal,
)
from services.platform import errors, runtime
from services.wallets import claims, collateral, wallets, withdrawals
from tests.conftest import RUN_ID, use_queue
from tests.operations.stack import WorkerProcess, stack_env
from tests.worker.conftest import delete_prefixed_keys
from worker import maintenance

CHAOS_SECONDS = 45.0  # kills and lost answers
SETTLE_SECONDS = 110.0  # then, at most: a dead worker's lease runs out, maintenance, the rest
# A killed worker's signing lease holds this long before the other worker takes the wallet
# over (60 s by default): the settle waits for it, once per kill that held one. Short, so the
# settle is short; still several renewals' worth, as a lease that lapses under a live holder
# only makes it retry (its renewal is refused before anything leaves).
SIGNING_LEASE_SECONDS = "15"
WALLETS = 2
PUSD, USDC_E, WINNINGS = Decimal("40"), Decimal("12"), Decimal("5")
SUBMIT_PATH = "/relayer/submit"
READ_PATH = "/relayer/v1/account/transactions/"


def _env(app: Any, redis_url: str, prefix: str, venue_server: Any, instance: Path
         ) -> dict[str, str]:
    """The deployment's environment, with the sandbox relayer and its builder key, a quick
    maintenance tick, a short signing lease, and no deposit sweep (nothing wraps but what
    the soak asks)."""
    from devstack.stack import sandbox_builder_env

    return {**stack_env(app, redis_url, prefix, venue_server, instance),
            **sandbox_builder_env({}), "POLYMARKET_RELAYER_URL": f"{venue_server.url}/relayer",
            "WORKER_GRACE_SECONDS": "2", "COPYTRADE_MAINTENANCE_SECONDS": "3",
            "DEPOSIT_SWEEP_SECONDS": "0", "WALLET_SIGNING_LEASE_SECONDS": SIGNING_LEASE_SECONDS}


def _usdc_e(venue_control: Any, address: str) -> Decimal:
    return Decimal(venue_control.call("GET", f"/accounts/{address}", expect=200)["usdc_e"])


def _pusd(venue_control: Any, address: str) -> Decimal:
    return Decimal(venue_control.balances(address)["pusd"])


def _open_rows() -> list[Any]:
    return [*Withdrawal.select().where(Withdrawal.status.in_(OPEN_STATES)),
            *Claim.select().where(Claim.status.in_(OPEN_STATES)),
            *CollateralWrap.select().where(CollateralWrap.status.in_(OPEN_STATES))]


def _rows_of(wallet: TradingWallet) -> list[tuple[Any, ...]]:
    """The wallet's rows, for a failure's message."""
    return [(type(r).__name__, getattr(r, "amount", None) or getattr(r, "payout", None),
             r.status, getattr(r, "relayer_nonce", getattr(r, "nonce", None)), r.error)
            for model in (Withdrawal, Claim, CollateralWrap)
            for r in model.select().where(model.wallet == wallet.id)]


def _request_money(rng: random.Random, traders: list[Any], dests: dict[Any, str]) -> None:
    """One more withdrawal or wrap on a random wallet (a wrap when none is in flight)."""
    trader = rng.choice(traders)
    if rng.random() < 0.25:
        with contextlib.suppress(errors.Conflict):  # one wrap in flight per wallet
            collateral.request_wrap(trader.user, str(rng.choice((1, 2, 3))))
        return
    dest = "0x" + secrets.token_hex(20)
    try:
        row = withdrawals.request(trader.user, dest, Decimal(rng.choice((1, 2, 3))), "usdc")
    except errors.InsufficientBalance:
        return
    dests[row.id] = dest
    withdrawals.enqueue(row)


def test_money_moves_once_through_kills_and_lost_answers(
        app, bound_db, venue_server, venue_control, make_trader, make_sandbox_market,
        redis_url, tmp_path) -> None:
    seed = int(os.environ.get("SOAK_SEED") or secrets.randbits(32))
    print(f"soak seed: SOAK_SEED={seed}")
    rng = random.Random(seed)
    prefix = f"ct-test-{RUN_ID}-soak{secrets.token_hex(3)}:"
    previous = use_queue(redis_url, prefix)
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    traders = [make_trader(str(PUSD), deposit_wallet=True) for _ in range(WALLETS)]
    venue_control.call("POST", "/relayer", {"step_seconds": "0.3"}, expect=200)
    makers = {t.wallet.id: wallets.maker(t.wallet) for t in traders}
    for trader in traders:
        venue_control.call("POST", "/fund", {"address": makers[trader.wallet.id],
                                             "usdc_e": str(USDC_E)}, expect=200)
        for _ in range(2):  # two resolved markets' winnings to claim
            market = make_sandbox_market()
            venue_control.grant(makers[trader.wallet.id], market.yes, str(WINNINGS))
            venue_control.call("POST", f"/markets/{market.condition_id}/resolve",
                               {"winner": 0}, expect=200)
    dests: dict[Any, str] = {}
    env = _env(app, redis_url, prefix, venue_server, tmp_path / "instance")
    workers = [WorkerProcess(env, tmp_path) for _ in range(2)]
    kills = 0
    try:
        for trader in traders:
            for row in claims.request(trader.user):
                claims.enqueue(row)
        for _ in range(8):
            _request_money(rng, traders, dests)
        started = time.monotonic()
        while time.monotonic() - started < CHAOS_SECONDS:
            time.sleep(rng.uniform(0.5, 2.5))
            roll = rng.random()
            if roll < 0.3:  # a worker dies at a random point, another takes its place
                index = rng.randrange(len(workers))
                workers[index].close()  # SIGKILL: its leases and jobs stay behind
                kills += 1
                workers[index] = WorkerProcess(env, tmp_path)
            elif roll < 0.55:  # the relayer runs a batch and its answer is lost
                venue_control.call("POST", "/faults", {
                    "path": SUBMIT_PATH, "method": "POST", "count": 1, "after": True,
                    "status": 500}, expect=201)
            elif roll < 0.7:  # status reads whose answers are lost
                venue_control.call("POST", "/faults", {
                    "path": READ_PATH, "method": "GET", "count": rng.randint(1, 12),
                    "after": True, "status": 500}, expect=201)
            else:
                _request_money(rng, traders, dests)
        venue_control.call("DELETE", "/faults", expect=200)
        print(f"soak: {kills} kills, {len(dests)} withdrawals")
        # Maintenance (the workers tick it too, for rows older than a minute): re-queue what
        # a killed worker left, once the wallet's lease has run out, until nothing is open.
        deadline = time.monotonic() + SETTLE_SECONDS
        while _open_rows() and time.monotonic() < deadline:
            maintenance.resume_chain_work(0)
            time.sleep(2)
        stuck = [(type(r).__name__, r.id, r.status, r.error) for r in _open_rows()]
        assert not stuck, (seed, stuck, workers[0].text()[-3000:])
    finally:
        for worker in workers:
            worker.close()
        venue_control.call("DELETE", "/faults", expect=200)
        delete_prefixed_keys(redis.Redis.from_url(redis_url), prefix)
        runtime.install(previous)

    for trader in traders:
        wallet = TradingWallet.get_by_id(trader.wallet.id)
        out = sum((Decimal(w.amount) for w in Withdrawal.select().where(
            (Withdrawal.wallet == wallet.id) & (Withdrawal.status == CONFIRMED))), Decimal(0))
        wrapped = sum((Decimal(w.amount) for w in CollateralWrap.select().where(
            (CollateralWrap.wallet == wallet.id) & (CollateralWrap.status == CONFIRMED))),
            Decimal(0))
        won = sum((Decimal(c.payout) for c in Claim.select().where(
            (Claim.wallet == wallet.id) & (Claim.status == CONFIRMED))), Decimal(0))
        maker = makers[wallet.id]
        rows = _rows_of(wallet)
        assert (seed, _pusd(venue_control, maker)) == (seed, PUSD + wrapped + won - out), rows
        assert (seed, _usdc_e(venue_control, maker)) == (seed, USDC_E - wrapped), rows
        assert Claim.select().where((Claim.wallet == wallet.id)
                                    & (Claim.status == FAILED)).count() == 0
    for row in Withdrawal.select():
        expected = Decimal(row.amount) if row.status == CONFIRMED else Decimal(0)
        assert (seed, row.id, _pusd(venue_control, dests[row.id])) == (seed, row.id, expected)
