"""The interleaving matrix (issue 26, item 3): money moves once on every transport.

For each transport (an on-chain EOA transaction on anvil; a relayer ``WALLET`` batch from a
deposit wallet; a relayer ``PROXY`` and ``SAFE`` transaction, simulated by the sandbox
relayer), on SQLite and PostgreSQL (the db fixtures), one withdrawal's job runs twice: the
first run meets a fault at one step, the second (and, as maintenance re-queues an open row,
the following ones) runs clean. The fault is a crash (the process dies there: SystemExit)
or a lost answer (the step's work is done, or not, and the caller only sees an error), at
each step: before signing, after signing before persisting, after persisting before
sending, after sending before the answer, and while following.

The property: the destination received the amount exactly once (anvil's token balance; the
sandbox's ledger, where its relayer ran the transactions), the source paid it once, and the
row ends in the state that says so. Faults are injected by the sandbox's fault switches
(/_sandbox/faults), a faulty RPC connection, or a step function replaced to raise.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import peewee
import pytest

from chain.errors import ChainUnavailable
from chain.keys import generate_keypair
from chain.rpc import connect
from models.wallet import AMBIGUOUS, CONFIRMED, FAILED, OPEN_STATES, Withdrawal
from services.wallets import wallet_batches, wallet_transactions, wallets, withdrawals
from tests.services.wallets.test_relayer_legacy_accounts import _legacy_trader
from tests.services.wallets.test_withdrawals import _received
from tests.wallet_fixtures import USDC, chain_settings, legacy_eoa_wallet, use_chain
from venue import relayer

TRANSPORTS = ("chain", "wallet", "proxy", "safe")
STEPS = ("before_signing", "after_signing", "after_persisting", "after_sending", "following")
FAULTS = ("crash", "lost")

AMOUNT = Decimal("3")
SUBMIT_PATH = "/relayer/submit"
TRANSACTION_PATH = "/relayer/v1/account/transactions/"
# the relayer read that precedes signing: a WALLET / SAFE batch's nonce, a PROXY's relay
NONCE_PATHS = {"wallet": "/relayer/v1/account/transactions/params",
               "safe": "/relayer/v1/account/transactions/params",
               "proxy": "/relayer/relay-payload"}

# What the row ends as when it is not confirmed. The chain path fails a withdrawal whose RPC
# answer was lost before anything was signed: nothing was sent, and the user is told so. (A
# relayer transaction whose send was answered by nobody is found in the relayer's list of
# ours, ``GET /transactions``, by its stored signature, and followed: confirmed; what stays
# ambiguous when nothing proves it is in tests/services/wallets/test_relayer_legacy_accounts.py.)
NOT_CONFIRMED = {
    ("chain", "before_signing", "lost"): FAILED,
}


class Crash(SystemExit):
    """The process dies at the step (nothing after it runs; ``finally`` blocks do, as a
    lease's release does after a real death once the lease runs out)."""


def _lost(what: str) -> peewee.OperationalError:
    return peewee.OperationalError(f"injected: the answer of {what} was lost")


@dataclass
class Setup:
    """One withdrawal ready to send, and how to read the money."""

    row: Withdrawal
    received: Callable[[], Decimal]  # what the destination holds
    source: Callable[[], Decimal]  # what the paying wallet holds
    clean: Callable[[], None]  # put the transport back as it was (no fault)


def _chain_setup(request: pytest.FixtureRequest, user: Any) -> Setup:
    app, chain = request.getfixturevalue("app"), request.getfixturevalue("wallet_chain")
    fund = request.getfixturevalue("fund")
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=10 * USDC)
    to = generate_keypair().address
    row = withdrawals.request(user, to, AMOUNT, "usdc")
    return Setup(row, lambda: Decimal(_received(chain, "usdc", to)) / USDC,
                 lambda: Decimal(_received(chain, "usdc", wallet.address)) / USDC,
                 lambda: use_chain(chain_settings(app, chain)))


def _relayer_setup(transport: str, request: pytest.FixtureRequest, venue_control: Any
                   ) -> Setup:
    if transport == "wallet":
        trader = request.getfixturevalue("make_trader")("10", deposit_wallet=True)
        user, maker = trader.user, wallets.maker(trader.wallet)
    else:
        trader, maker = _legacy_trader(venue_control, 1 if transport == "proxy" else 2, "10")
        user = trader.user
    to = "0x" + secrets.token_hex(20)  # the sandbox is shared: a recipient of its own
    row = withdrawals.request(user, to, AMOUNT, "usdc")
    return Setup(row, lambda: Decimal(venue_control.balances(to)["pusd"]),
                 lambda: Decimal(venue_control.balances(maker)["pusd"]),
                 lambda: venue_control.call("DELETE", "/faults", expect=200))


def _arm_fault(venue_control: Any, path: str, **rule: Any) -> None:
    venue_control.call("POST", "/faults", {"path": path, "count": 1, **rule}, expect=201)


def _relayer_fault(transport: str, step: str, kind: str, monkeypatch: pytest.MonkeyPatch,
                   venue_control: Any) -> None:
    """Arm the fault for the first run of a relayer transport."""
    crash = kind == "crash"
    if step == "before_signing":
        if crash:
            monkeypatch.setattr(wallet_batches, "sign_steps", _raiser(Crash("before signing")))
        else:  # the relayer answered the nonce read, the answer never arrived
            # (more answers lost than the transport retries a read)
            _arm_fault(venue_control, NONCE_PATHS[transport], after=True, status=500,
                       count=20)
    elif step == "after_signing":
        real_store = wallet_batches.BatchRow.store_signed

        def store(self: Any, *args: Any) -> None:
            if crash:
                raise Crash("signed, not stored")
            real_store(self, *args)
            raise _lost("storing the signed batch")

        monkeypatch.setattr(wallet_batches.BatchRow, "store_signed", store)
    elif step == "after_persisting":
        if crash:
            monkeypatch.setattr(relayer, "submit_with_retry", _raiser(Crash("stored, not sent")))
        else:  # the request never reached the relayer's work: it answers 503, does nothing
            _arm_fault(venue_control, SUBMIT_PATH, method="POST", status=503, count=3)
    elif step == "after_sending":
        if crash:
            monkeypatch.setattr(wallet_batches.BatchRow, "store_id",
                                _raiser(Crash("sent, the answer not stored")))
        else:  # the relayer took the batch; its answer was lost
            _arm_fault(venue_control, SUBMIT_PATH, method="POST", after=True, status=500)
    else:
        real_follow = wallet_batches.follow

        def follow(wallet: Any, transaction_id: str, *args: Any, **kwargs: Any) -> Any:
            if crash:
                raise Crash("died while following")
            # the relayer's answers about this transaction are lost while it is followed
            _arm_fault(venue_control, TRANSACTION_PATH + transaction_id, method="GET",
                       after=True, status=500, count=50)
            return real_follow(wallet, transaction_id, *args, **kwargs)

        monkeypatch.setattr(wallet_batches, "follow", follow)


def _chain_fault(step: str, kind: str, monkeypatch: pytest.MonkeyPatch,
                 request: pytest.FixtureRequest) -> None:
    """Arm the fault for the first run of an on-chain transaction."""
    crash = kind == "crash"
    if step == "before_signing":
        if crash:
            monkeypatch.setattr(withdrawals, "_sign", _raiser(Crash("before signing")))
        else:  # the node answered the nonce read; the answer was lost
            real_next = wallet_transactions.next_nonce

            def next_nonce(*args: Any) -> int:
                real_next(*args)
                raise ChainUnavailable("injected: the nonce read's answer was lost")

            monkeypatch.setattr(wallet_transactions, "next_nonce", next_nonce)
    elif step == "after_signing":
        if crash:  # signed, then the process died before the store's transaction
            monkeypatch.setattr(wallet_transactions, "renew_lease",
                                _raiser(Crash("signed, not stored")))
        else:  # stored and committed, the commit's answer lost
            monkeypatch.setattr(wallet_transactions, "broadcast",
                                _raiser(_lost("storing the signed transaction")))
    elif step == "after_persisting":
        if crash:
            monkeypatch.setattr(wallet_transactions, "broadcast",
                                _raiser(Crash("stored, not sent")))
        else:
            _faulty_send(request, before=True, error=ChainUnavailable("injected: not sent"))
    elif step == "after_sending":
        _faulty_send(request, before=False, error=Crash("sent, then died") if crash
                     else ChainUnavailable("injected: the send's answer was lost"))
    else:
        monkeypatch.setattr(wallet_transactions, "wait_receipt", _raiser(
            Crash("died while following") if crash
            else ChainUnavailable("injected: the receipt's answer was lost")))


def _faulty_send(request: pytest.FixtureRequest, *, before: bool, error: BaseException
                 ) -> None:
    """The runtime's chain connection raises ``error`` on eth_sendRawTransaction: before
    the node got it, or after."""
    app, chain = request.getfixturevalue("app"), request.getfixturevalue("wallet_chain")
    w3 = connect(chain.rpc_url)
    forward = w3.provider.make_request

    def make_request(method: Any, params: Any) -> Any:
        if method == "eth_sendRawTransaction":
            if not before:
                forward(method, params)
            raise error
        return forward(method, params)

    w3.provider.make_request = make_request  # type: ignore[method-assign]
    use_chain(chain_settings(app, chain), web3=w3)


def _raiser(error: BaseException) -> Callable[..., Any]:
    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise error

    return fail


def _run(row_id: Any) -> str | BaseException:
    """One run of the job as the worker runs it: its status, or what it raised."""
    try:
        return withdrawals.send(row_id)
    except BaseException as exc:  # a crash (SystemExit) is the point
        return exc


def _until_settled(row_id: Any, seconds: float = 30.0) -> Iterator[str | BaseException]:
    """Run the job again, as maintenance re-queues an open row, until it is final (an
    ambiguous row is run twice more: it must stay so, or settle)."""
    deadline = time.monotonic() + seconds
    ambiguous_runs = 0
    while time.monotonic() < deadline:
        outcome = _run(row_id)
        yield outcome
        status = Withdrawal.get_by_id(row_id).status
        if status == AMBIGUOUS:
            ambiguous_runs += 1
            if ambiguous_runs > 2:
                return
        elif status not in OPEN_STATES:
            return
        time.sleep(0.2)


@pytest.mark.parametrize("kind", FAULTS)
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_withdrawal_faulted_at_any_step_moves_the_money_once(
        request, bound_db, venue_control, user, monkeypatch, transport, step, kind) -> None:
    setup = (_chain_setup(request, user) if transport == "chain"
             else _relayer_setup(transport, request, venue_control))
    paid_before = setup.source()
    try:
        if transport == "chain":
            _chain_fault(step, kind, monkeypatch, request)
        else:
            _relayer_fault(transport, step, kind, monkeypatch, venue_control)
        first = _run(setup.row.id)
    finally:
        monkeypatch.undo()
        setup.clean()
    # the fault struck: the first run died, or ended without the final answer (a relayer's
    # answer lost after it took the batch is recovered in the same run from its list)
    recovered = transport != "chain" and (step, kind) == ("after_sending", "lost")
    assert isinstance(first, Crash) if kind == "crash" else (first != CONFIRMED) != recovered, \
        first
    outcomes = [first, *_until_settled(setup.row.id)]

    final = Withdrawal.get_by_id(setup.row.id)
    expected = NOT_CONFIRMED.get((transport, step, kind), CONFIRMED)
    assert final.status == expected, (outcomes, final.error)
    sent = Decimal(0) if expected == FAILED else AMOUNT
    assert setup.received() == sent  # exactly once (or, failed: never)
    assert paid_before - setup.source() == sent
    if expected == FAILED:
        assert "nothing was sent" in final.error.lower()
    if expected == AMBIGUOUS:
        # it stays so, and never sends again
        assert _run(setup.row.id) == AMBIGUOUS
        assert setup.received() == sent and "never sent again" in final.error
