"""Polymarket's relayer (gasless wallet transactions, ACCOUNTS.md §2.3 to §2.5, §3).

Request builders in the shape of ``venue.clob``: ``RelayerApi`` describes each endpoint as a
``Call`` and hands it to a runner (so it returns the value on a blocking client and an
awaitable on an async one). The multi-step flows the SDKs run (fetch the nonce, sign,
submit, retry the documented transient rejections; poll a transaction to a final state) are
written once as generators of steps, which ``run_steps`` drives with a blocking runner and
``arun_steps`` with an async one.

Submits are never retried by the transport (a lost answer may still have been acted on);
only the rejections the SDKs retry (``relayer_rules``) are resubmitted, re-signed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import anyio

from venue.accounts.batch import DEADLINE_SECONDS, Call, sign_batch
from venue.accounts.contracts import AccountContracts
from venue.accounts.legacy_relay import proxy_payload, safe_payload
from venue.accounts.relayer_payloads import wallet_batch_payload, wallet_create_payload
from venue.accounts.relayer_rules import (
    MAX_POLLS,
    POLL_INTERVAL_SECONDS,
    SUBMIT_RETRY_ATTEMPTS,
    TransactionState,
    onchain_nonce,
    retryable_submit_rejection,
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

    def deployed(self, wallet: str, kind: str = WALLET) -> Any:
        """Whether the wallet is deployed."""
        return self._run(self.deployed_call(wallet, kind))


# --- multi-step flows, written once --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sleep:
    """A step asking the driver to wait."""

    seconds: float


Step = HttpCall[Any] | Sleep
Steps = Generator[Step, Any, T]


def _advance(steps: Steps[T], reply: Any, error: BaseException | None
             ) -> tuple[bool, Any]:
    """Hand ``steps`` the last reply (or throw it the last error): (True, the result) when
    they are done, else (False, the next step)."""
    try:
        return False, (steps.throw(error) if error is not None else steps.send(reply))
    except StopIteration as done:
        return True, done.value


def run_steps(steps: Steps[T], run: Callable[[HttpCall[Any]], Any],
              sleep: Callable[[float], None] = time.sleep) -> T:
    """Drive ``steps`` with a blocking runner; a call's error is thrown back into them."""
    reply, error = None, None
    while True:
        finished, step = _advance(steps, reply, error)
        if finished:
            return step
        reply, error = None, None
        try:
            reply = sleep(step.seconds) if isinstance(step, Sleep) else run(step)
        except VenueError as exc:
            error = exc


async def arun_steps(steps: Steps[T], run: Callable[[HttpCall[Any]], Awaitable[Any]]) -> T:
    """Drive ``steps`` with an async runner (trio or asyncio)."""
    reply, error = None, None
    while True:
        finished, step = _advance(steps, reply, error)
        if finished:
            return step
        reply, error = None, None
        try:
            reply = await (anyio.sleep(step.seconds) if isinstance(step, Sleep) else run(step))
        except VenueError as exc:
            error = exc


def _rejection(exc: VenueError) -> tuple[int, str]:
    status = 429 if isinstance(exc, VenueRateLimited) else getattr(exc, "status", 0)
    return status, str(exc)


def submit_with_retry(auth: RelayerAuth, build: Callable[[int | None], Mapping[str, Any]],
                      *, attempts: int = SUBMIT_RETRY_ATTEMPTS,
                      interval: float = POLL_INTERVAL_SECONDS
                      ) -> Steps[RelayerTransaction]:
    """Submit ``build(nonce)``'s body, as the SDKs do: a nonce mismatch is re-signed at once
    with the chain's nonce; quota, a busy wallet or a stale nonce wait ``interval`` and start
    over (``build(None)`` fetches a fresh nonce), at most ``attempts`` more times."""
    for attempt in range(attempts + 1):
        payload = yield from _built(build, None)
        try:
            return (yield RelayerApi.submit_call(auth, payload))
        except (VenueRejected, VenueRateLimited) as exc:
            status, message = _rejection(exc)
            chain_nonce = onchain_nonce(status, message)
            if chain_nonce is not None:
                payload = yield from _built(build, chain_nonce)
                try:
                    return (yield RelayerApi.submit_call(auth, payload))
                except (VenueRejected, VenueRateLimited) as again:
                    exc = again
                    status, message = _rejection(again)
            if attempt == attempts or not retryable_submit_rejection(status, message):
                raise exc from None
        yield Sleep(interval)
    raise AssertionError("unreachable")


def _built(build: Callable[[int | None], Any], nonce: int | None) -> Steps[Mapping[str, Any]]:
    # ``build`` may itself be steps (fetching the nonce) or a plain body.
    made = build(nonce)
    if isinstance(made, Generator):
        return (yield from made)
    return made


def wallet_batch(auth: RelayerAuth, key: OrderKey, *, chain_id: int, factory: str,
                 wallet: str, calls: tuple[Call, ...] | list[Call],
                 session_signer: bool = False, metadata: str = "",
                 clock: Callable[[], float] = time.time,
                 attempts: int = SUBMIT_RETRY_ATTEMPTS,
                 interval: float = POLL_INTERVAL_SECONDS,
                 on_signed: Callable[[Mapping[str, Any]], None] | None = None
                 ) -> Steps[RelayerTransaction]:
    """Run ``calls`` from the deposit wallet ``wallet`` as one signed ``WALLET`` batch:
    nonce (current generation), sign, submit, with the SDKs' retries. Returns the
    submitted transaction (follow it with ``await_final``). ``on_signed`` sees each signed
    body before it is submitted (to store it durably first)."""
    if not calls:
        raise ValueError("a WALLET batch needs at least one call")

    def build(nonce: int | None) -> Steps[Mapping[str, Any]]:
        if nonce is None:
            nonce = yield RelayerApi.execute_params_call(auth, key.address)
        deadline = int(clock()) + DEADLINE_SECONDS
        signature = sign_batch(key, chain_id=chain_id, wallet=wallet, nonce=nonce,
                               deadline=deadline, calls=calls, session_signer=session_signer)
        payload = wallet_batch_payload(signer=key.address, factory=factory, wallet=wallet,
                                       nonce=nonce, deadline=deadline, calls=calls,
                                       signature=signature, metadata=metadata)
        if on_signed is not None:
            on_signed(payload)
        return payload

    return (yield from submit_with_retry(auth, build, attempts=attempts, interval=interval))


def legacy_batch(auth: RelayerAuth, key: OrderKey, *, signature_type: int,
                 contracts: AccountContracts, wallet: str,
                 calls: tuple[Call, ...] | list[Call], metadata: str = "",
                 attempts: int = SUBMIT_RETRY_ATTEMPTS,
                 interval: float = POLL_INTERVAL_SECONDS,
                 on_signed: Callable[[Mapping[str, Any]], None] | None = None
                 ) -> Steps[RelayerTransaction]:
    """Run ``calls`` from a grandfathered proxy (signature type 1, a ``PROXY`` transaction,
    nonce and relay from ``/relay-payload``) or Safe (type 2, ``SAFE``, nonce from
    ``/v1/account/transactions/params``), signed by the owner ``key``, with the SDKs'
    retries; the submitted transaction (follow it with ``await_final``)."""
    if signature_type not in (1, 2):
        raise ValueError("legacy relayer transactions are for proxy (1) or Safe (2) wallets")
    if not calls:
        raise ValueError("a relayer transaction needs at least one call")

    def build(nonce: int | None) -> Steps[Mapping[str, Any]]:
        if signature_type == 1:
            relay, fresh = yield RelayerApi.relay_payload_call(auth, key.address, "PROXY")
            payload = proxy_payload(key, factory=contracts.proxy_factory, wallet=wallet,
                                    calls=calls, nonce=fresh if nonce is None else nonce,
                                    relay=relay, relay_hub=contracts.relay_hub,
                                    metadata=metadata)
        else:
            if nonce is None:
                nonce = yield RelayerApi.execute_params_call(auth, key.address, "SAFE")
            payload = safe_payload(key, chain_id=contracts.chain_id,
                                   multisend=contracts.safe_multisend, wallet=wallet,
                                   calls=calls, nonce=nonce, metadata=metadata)
        if on_signed is not None:
            on_signed(payload)
        return payload

    return (yield from submit_with_retry(auth, build, attempts=attempts, interval=interval))


def create_wallet(auth: RelayerAuth, *, owner: str, factory: str, metadata: str = "",
                  attempts: int = SUBMIT_RETRY_ATTEMPTS,
                  interval: float = POLL_INTERVAL_SECONDS) -> Steps[RelayerTransaction]:
    """Submit ``WALLET-CREATE`` for ``owner``'s deposit wallet (retried on quota only)."""
    payload = wallet_create_payload(owner, factory, metadata)
    return (yield from submit_with_retry(auth, lambda _nonce: payload, attempts=attempts,
                                         interval=interval))


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
    "run_steps",
    "submit_with_retry",
    "wallet_batch",
]
