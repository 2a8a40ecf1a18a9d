"""Polymarket's relayer (gasless wallet transactions, ACCOUNTS.md §2.3 to §2.5, §3).

Request builders in the shape of ``venue.clob``: ``RelayerApi`` describes each endpoint as a
``Call`` and hands it to a runner (so it returns the value on a blocking client and an
awaitable on an async one). The multi-step flows the SDKs run (fetch the nonce, sign,
submit, retry the documented transient rejections; poll a transaction to a final state) are
written once as generators of steps, which one runner drives (``run_steps`` with a
blocking transport, ``arun_steps`` with an async one).

Submits are never retried by the transport (a lost answer may still have been acted on),
and nothing here signs twice: quota and a busy wallet resubmit the same bytes, every other
refusal goes to the caller (services/wallets/wallet_batches.py decides, under the wallet's
lease, whether a stored batch can never run before it signs another).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import anyio.to_thread

from venue.accounts.batch import DEADLINE_SECONDS, Call, sign_batch
from venue.accounts.contracts import AccountContracts
from venue.accounts.legacy_relay import proxy_payload, safe_payload
from venue.accounts.relayer_payloads import wallet_batch_payload, wallet_create_payload
from venue.accounts.relayer_rules import (
    MAX_POLLS,
    POLL_INTERVAL_SECONDS,
    SUBMIT_RETRY_ATTEMPTS,
    TransactionState,
    resubmittable,
)
from venue.errors import (
    VenueError,
    VenueRateLimited,
    VenueRejected,
    VenueTimeout,
)
from venue.http import Call as HttpCall
from venue.http import VenueRequest, query
from venue.models import BuilderCreds, RelayerApiKey, RelayerTransaction
from venue.parse import relayer as parse
from venue.signing import compact_json
from venue.signing.auth import builder_headers
from venue.signing.keys import OrderKey

T = TypeVar("T")
RelayerAuth = BuilderCreds | RelayerApiKey
WALLET = "WALLET"


class RelayerTransactionFailed(VenueError):
    """The relayer ended a transaction as FAILED or INVALID (``transaction`` says why)."""

    def __init__(self, transaction: RelayerTransaction) -> None:
        reason = transaction.error or "no reason given"
        super().__init__(f"relayer transaction {transaction.transaction_id} ended "
                         f"{transaction.state}: {reason}")
        self.transaction = transaction


def auth_headers(auth: RelayerAuth, method: str, path: str, body: str | None = None
                 ) -> dict[str, str]:
    """Relayer auth headers: the operator's builder HMAC, or an account's static API key.

    ``path`` is relative to the relayer's base URL, without the query string.
    """
    if isinstance(auth, BuilderCreds):
        return builder_headers(auth, method, path, body)
    return {"RELAYER_API_KEY": auth.key, "RELAYER_API_KEY_ADDRESS": auth.address}


def _request(method: str, path: str, *, auth: RelayerAuth | None = None,
             params: tuple[tuple[str, str], ...] = (), body: str | None = None,
             retryable: bool = True) -> VenueRequest:
    headers = auth_headers(auth, method, path, body) if auth is not None else {}
    return VenueRequest("relayer", method, path, params, body=body, headers=headers,
                        retryable=retryable)


class RelayerApi:
    """Relayer endpoints; ``*_call`` build the Call, the plain names run it."""

    def __init__(self, run: Callable[[HttpCall[Any]], Any]) -> None:
        self._run = run

    # --- request builders (pure) -------------------------------------------------------

    @staticmethod
    def submit_call(auth: RelayerAuth, payload: Mapping[str, Any]
                    ) -> HttpCall[RelayerTransaction]:
        """``POST /submit`` (never resent by the transport: it may have been acted on)."""
        body = compact_json(dict(payload))
        return HttpCall(_request("POST", "/submit", auth=auth, body=body, retryable=False),
                        parse.parse_submit)

    @staticmethod
    def nonce_call(address: str, kind: str = WALLET) -> HttpCall[int]:
        """``GET /nonce?address&type`` (the first generation, unauthenticated)."""
        return HttpCall(_request("GET", "/nonce", params=query(address=address, type=kind)),
                        parse.parse_nonce)

    @staticmethod
    def execute_params_call(auth: RelayerAuth, address: str, kind: str = WALLET
                            ) -> HttpCall[int]:
        """``GET /v1/account/transactions/params?address&type`` → the nonce (current)."""
        path = "/v1/account/transactions/params"
        return HttpCall(_request("GET", path, auth=auth, params=query(address=address,
                                                                      type=kind)),
                        parse.parse_nonce)

    @staticmethod
    def relay_payload_call(auth: RelayerAuth, address: str, kind: str = "PROXY"
                           ) -> HttpCall[tuple[str, int]]:
        """``GET /relay-payload?address&type=PROXY`` → (relay address, nonce) a proxy
        transaction is signed with."""
        return HttpCall(_request("GET", "/relay-payload", auth=auth,
                                 params=query(address=address, type=kind)),
                        parse.parse_relay_payload)

    @staticmethod
    def transaction_call(transaction_id: str, auth: RelayerAuth | None = None
                         ) -> HttpCall[RelayerTransaction]:
        """One transaction: ``GET /v1/account/transactions/<id>`` with auth, else the first
        generation's ``GET /transaction?id=``."""
        if auth is None:
            return HttpCall(_request("GET", "/transaction", params=query(id=transaction_id)),
                            parse.parse_transaction)
        path = f"/v1/account/transactions/{quote(transaction_id, safe='')}"
        return HttpCall(_request("GET", path, auth=auth), parse.parse_transaction)

    @staticmethod
    def transactions_call(auth: RelayerAuth) -> HttpCall[list[RelayerTransaction]]:
        """``GET /transactions`` (relayer auth): the caller's transactions, camelCase, each
        with its signature and nonce (the builder-relayer-client's ``getTransactions``)."""
        return HttpCall(_request("GET", "/transactions", auth=auth), parse.parse_transactions)

    @staticmethod
    def deployed_call(wallet: str, kind: str = WALLET) -> HttpCall[bool]:
        """``GET /deployed?address&type``: whether the wallet has code (not yet that the
        relayer's registry knows it: wait for CONFIRMED for that)."""
        return HttpCall(_request("GET", "/deployed", params=query(address=wallet, type=kind)),
                        parse.parse_deployed)

    # --- runners -----------------------------------------------------------------------

    def submit(self, auth: RelayerAuth, payload: Mapping[str, Any]) -> Any:
        """Submit one signed (or ``WALLET-CREATE``) body as it is."""
        return self._run(self.submit_call(auth, payload))

    def nonce(self, address: str, kind: str = WALLET) -> Any:
        """The signer's next batch nonce (first generation)."""
        return self._run(self.nonce_call(address, kind))

    def execute_params(self, auth: RelayerAuth, address: str, kind: str = WALLET) -> Any:
        """The signer's next batch nonce (current generation)."""
        return self._run(self.execute_params_call(auth, address, kind))

    def transaction(self, transaction_id: str, auth: RelayerAuth | None = None) -> Any:
        """The transaction's state now."""
        return self._run(self.transaction_call(transaction_id, auth))

    def transactions(self, auth: RelayerAuth) -> Any:
        """The caller's transactions."""
        return self._run(self.transactions_call(auth))

    def deployed(self, wallet: str, kind: str = WALLET) -> Any:
        """Whether the wallet is deployed."""
        return self._run(self.deployed_call(wallet, kind))


# --- multi-step flows, written once --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sleep:
    """A step asking the driver to wait."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Blocking:
    """A step asking the driver to run blocking work (a database write) and hand back its
    result: at once on a blocking driver, in a worker thread on an async one."""

    work: Callable[[], Any]


Step = HttpCall[Any] | Sleep | Blocking
Steps = Generator[Step, Any, T]


def _advance(steps: Steps[T], reply: Any, error: BaseException | None
             ) -> tuple[bool, Any]:
    """Hand ``steps`` the last reply (or throw it the last error): (True, the result) when
    they are done, else (False, the next step)."""
    try:
        return False, (steps.throw(error) if error is not None else steps.send(reply))
    except StopIteration as done:
        return True, done.value


async def _drive(steps: Steps[T], run: Callable[[HttpCall[Any]], Awaitable[Any]],
                 sleep: Callable[[float], Awaitable[Any]],
                 block: Callable[[Callable[[], Any]], Awaitable[Any]]) -> T:
    """The one step runner: each call's reply (or its VenueError) goes back into ``steps``."""
    reply, error = None, None
    while True:
        finished, step = _advance(steps, reply, error)
        if finished:
            return step
        reply, error = None, None
        try:
            if isinstance(step, Sleep):
                reply = await sleep(step.seconds)
            elif isinstance(step, Blocking):
                reply = await block(step.work)
            else:
                reply = await run(step)
        except VenueError as exc:
            error = exc


class _Done:
    """An awaitable already holding its value: lets a blocking runner drive ``_drive``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self.value
        yield  # a generator that never suspends


def _now(call: Callable[..., Any]) -> Callable[..., _Done]:
    return lambda *args: _Done(call(*args))


def run_steps(steps: Steps[T], run: Callable[[HttpCall[Any]], Any],
              sleep: Callable[[float], None] = time.sleep) -> T:
    """Drive ``steps`` with a blocking runner (``sleep`` may renew a lease while it waits)."""
    driving = _drive(steps, _now(run), _now(sleep), _now(_call))
    try:
        driving.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    driving.close()
    raise RuntimeError("a blocking step runner was asked to suspend")


def arun_steps(steps: Steps[T], run: Callable[[HttpCall[Any]], Awaitable[Any]]
               ) -> Awaitable[T]:
    """Drive ``steps`` with an async runner (trio or asyncio): the driver's coroutine itself,
    no wrapper around it (an order's send goes through here)."""
    return _drive(steps, run, anyio.sleep, anyio.to_thread.run_sync)


def _call(work: Callable[[], Any]) -> Any:
    return work()


def _rejection(exc: VenueError) -> tuple[int, str]:
    status = 429 if isinstance(exc, VenueRateLimited) else getattr(exc, "status", 0)
    return status, str(exc)


def submit_with_retry(auth: RelayerAuth, payload: Mapping[str, Any], *,
                      attempts: int = SUBMIT_RETRY_ATTEMPTS,
                      interval: float = POLL_INTERVAL_SECONDS
                      ) -> Steps[RelayerTransaction]:
    """Submit ``payload``; on quota or a busy wallet wait ``interval`` and submit the SAME
    bytes again, at most ``attempts`` more times. Never signs: a nonce that moved, like any
    other refusal, is raised for the caller, who alone knows whether an earlier batch of
    its own may still run (the SDKs' re-sign paid a withdrawal twice, issue 26)."""
    for attempt in range(attempts + 1):
        try:
            return (yield RelayerApi.submit_call(auth, payload))
        except (VenueRejected, VenueRateLimited) as exc:
            status, message = _rejection(exc)
            if attempt == attempts or not resubmittable(status, message):
                raise
        yield Sleep(interval)
    raise AssertionError("unreachable")


def sign_wallet_batch(auth: RelayerAuth, key: OrderKey, *, chain_id: int, factory: str,
                      wallet: str, calls: tuple[Call, ...] | list[Call],
                      session_signer: bool = False, metadata: str = "",
                      clock: Callable[[], float] = time.time) -> Steps[Mapping[str, Any]]:
    """The signed ``WALLET`` body running ``calls`` from the deposit wallet ``wallet``: the
    nonce (current generation), then the signature (deadline now + DEADLINE_SECONDS)."""
    if not calls:
        raise ValueError("a WALLET batch needs at least one call")
    nonce = yield RelayerApi.execute_params_call(auth, key.address)
    deadline = int(clock()) + DEADLINE_SECONDS
    signature = sign_batch(key, chain_id=chain_id, wallet=wallet, nonce=nonce,
                           deadline=deadline, calls=calls, session_signer=session_signer)
    return wallet_batch_payload(signer=key.address, factory=factory, wallet=wallet,
                                nonce=nonce, deadline=deadline, calls=calls,
                                signature=signature, metadata=metadata)


def resign_wallet_batch(payload: Mapping[str, Any], key: OrderKey, *, chain_id: int,
                        nonce: int, session_signer: bool = False) -> dict[str, Any]:
    """``payload`` (a signed ``WALLET`` body) signed again with ``nonce``: the same calls,
    deadline, wallet and metadata, as the SDKs re-sign once with the nonce a refusal names
    (ts-sdk ``resignDepositWalletExecuteRequest``, PR #247; py-sdk PR #213)."""
    params = payload["depositWalletParams"]
    wallet, deadline = str(params["depositWallet"]), int(str(params["deadline"]))
    calls = [Call(str(c["target"]), str(c["data"]), int(str(c.get("value", 0))))
             for c in params["calls"]]
    signature = sign_batch(key, chain_id=chain_id, wallet=wallet, nonce=nonce,
                           deadline=deadline, calls=calls, session_signer=session_signer)
    return wallet_batch_payload(signer=str(payload["from"]), factory=str(payload["to"]),
                                wallet=wallet, nonce=nonce, deadline=deadline, calls=calls,
                                signature=signature, metadata=str(payload.get("metadata", "")))


def sign_legacy_batch(auth: RelayerAuth, key: OrderKey, *, signature_type: int,
                      contracts: AccountContracts, wallet: str,
                      calls: tuple[Call, ...] | list[Call], metadata: str = ""
                      ) -> Steps[Mapping[str, Any]]:
    """The signed body running ``calls`` from a grandfathered proxy (signature type 1, a
    ``PROXY`` transaction, nonce and relay from ``/relay-payload``) or Safe (type 2,
    ``SAFE``, nonce from ``/v1/account/transactions/params``), signed by the owner ``key``."""
    if signature_type not in (1, 2):
        raise ValueError("legacy relayer transactions are for proxy (1) or Safe (2) wallets")
    if not calls:
        raise ValueError("a relayer transaction needs at least one call")
    if signature_type == 1:
        relay, nonce = yield RelayerApi.relay_payload_call(auth, key.address, "PROXY")
        return proxy_payload(key, factory=contracts.proxy_factory, wallet=wallet, calls=calls,
                             nonce=nonce, relay=relay, relay_hub=contracts.relay_hub,
                             metadata=metadata)
    nonce = yield RelayerApi.execute_params_call(auth, key.address, "SAFE")
    return safe_payload(key, chain_id=contracts.chain_id, multisend=contracts.safe_multisend,
                        wallet=wallet, calls=calls, nonce=nonce, metadata=metadata)


def wallet_batch(auth: RelayerAuth, key: OrderKey, *, chain_id: int, factory: str,
                 wallet: str, calls: tuple[Call, ...] | list[Call],
                 session_signer: bool = False, metadata: str = "",
                 clock: Callable[[], float] = time.time,
                 attempts: int = SUBMIT_RETRY_ATTEMPTS,
                 interval: float = POLL_INTERVAL_SECONDS) -> Steps[RelayerTransaction]:
    """Sign ``calls`` as one ``WALLET`` batch, once, and submit it (``submit_with_retry``);
    the submitted transaction (follow it with ``await_final``). For tools and tests: money
    goes through services/wallets/wallet_batches.py, which stores the bytes first."""
    payload = yield from sign_wallet_batch(auth, key, chain_id=chain_id, factory=factory,
                                           wallet=wallet, calls=calls,
                                           session_signer=session_signer, metadata=metadata,
                                           clock=clock)
    return (yield from submit_with_retry(auth, payload, attempts=attempts, interval=interval))


def legacy_batch(auth: RelayerAuth, key: OrderKey, *, signature_type: int,
                 contracts: AccountContracts, wallet: str,
                 calls: tuple[Call, ...] | list[Call], metadata: str = "",
                 attempts: int = SUBMIT_RETRY_ATTEMPTS,
                 interval: float = POLL_INTERVAL_SECONDS) -> Steps[RelayerTransaction]:
    """Sign a ``PROXY`` / ``SAFE`` transaction once (``sign_legacy_batch``) and submit it."""
    payload = yield from sign_legacy_batch(auth, key, signature_type=signature_type,
                                           contracts=contracts, wallet=wallet, calls=calls,
                                           metadata=metadata)
    return (yield from submit_with_retry(auth, payload, attempts=attempts, interval=interval))


def create_wallet(auth: RelayerAuth, *, owner: str, factory: str, metadata: str = "",
                  attempts: int = SUBMIT_RETRY_ATTEMPTS,
                  interval: float = POLL_INTERVAL_SECONDS) -> Steps[RelayerTransaction]:
    """Submit ``WALLET-CREATE`` for ``owner``'s deposit wallet (unsigned: the same body is
    resubmitted on quota or a busy wallet)."""
    payload = wallet_create_payload(owner, factory, metadata)
    return (yield from submit_with_retry(auth, payload, attempts=attempts, interval=interval))


def await_final(transaction_id: str, auth: RelayerAuth | None = None, *,
                max_polls: int = MAX_POLLS, interval: float = POLL_INTERVAL_SECONDS
                ) -> Steps[RelayerTransaction]:
    """Poll until CONFIRMED (returned); FAILED/INVALID raise ``RelayerTransactionFailed``;
    still pending after ``max_polls`` raises ``VenueTimeout`` (the id stays valid)."""
    last: RelayerTransaction | None = None
    for poll in range(max_polls):
        if poll:
            yield Sleep(interval)
        last = yield RelayerApi.transaction_call(transaction_id, auth)
        state = _state(last.state)
        if state is TransactionState.CONFIRMED:
            return last
        if state is not None and state.failed:
            raise RelayerTransactionFailed(last)
    where = last.state if last is not None else "unknown"
    raise VenueTimeout(f"relayer transaction {transaction_id} still {where} after "
                       f"{max_polls} polls", retry_after=int(interval) or 1)


def _state(text: str) -> TransactionState | None:
    try:
        return TransactionState(text)
    except ValueError:
        return None


__all__ = [
    "WALLET",
    "RelayerApi",
    "RelayerAuth",
    "RelayerTransactionFailed",
    "Sleep",
    "Steps",
    "arun_steps",
    "auth_headers",
    "await_final",
    "create_wallet",
    "legacy_batch",
    "resign_wallet_batch",
    "run_steps",
    "sign_legacy_batch",
    "sign_wallet_batch",
    "submit_with_retry",
    "wallet_batch",
]
