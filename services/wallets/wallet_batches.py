"""Money out of a relayer-operated wallet as one relayer transaction, sent at most once: a
deposit wallet's ``WALLET`` batch, a grandfathered proxy's ``PROXY`` or Safe's ``SAFE``
transaction (``signed_steps``; those have no deadline: a stored one can run until the
wallet's nonce moves, so it is only ever resent, never signed afresh).

The row (a Withdrawal) holds the signed batch (``relayer_nonce``, ``relayer_deadline``,
``relayer_payload``) before it is submitted, and ``relayer_transaction_id`` as soon as the
relayer answers. A run that finds a stored batch without an id (a crash, a lost answer, a
relayer that was down) never signs a second batch while the first could still run: the
wallet runs one batch per nonce, so it resends the same bytes (at most one of the two can
ever execute), and signs afresh only once the stored batch provably cannot run (its
deadline passed while the wallet's nonce still equals the stored one). When the nonce has
moved on, the stored batch can never run again, but whether it ran once is not known
without its id: the row fails saying so, for a person to check, and nothing is resent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import peewee

from models.base import utcnow
from models.wallet import (
    BROADCAST,
    CONFIRMED,
    FAILED,
    QUEUED,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    SIGNATURE_TYPE_GNOSIS_SAFE,
    SIGNATURE_TYPE_POLY_PROXY,
    SIGNED,
    TradingWallet,
)
from services.platform import venues
from services.wallets import trading_accounts, wallets
from venue.accounts.batch import Call
from venue.accounts.relayer_rules import wallet_occupied
from venue.errors import VenueError, VenueRateLimited, VenueRejected, VenueUnavailable
from venue.models import RelayerTransaction
from venue.relayer import (
    RelayerApi,
    RelayerAuth,
    RelayerTransactionFailed,
    Steps,
    await_final,
    legacy_batch,
    wallet_batch,
)
from venue.signing import OrderKey

# A stored batch whose deadline passed this long ago, with the wallet's nonce unmoved, did
# not run and never will (the wallet refuses an expired batch); the slack covers a relayer
# that reports the nonce a little late.
DEADLINE_SLACK_SECONDS = 60


class BatchRefused(Exception):
    """The relayer refused the batch: nothing was sent (``reason`` is the relayer's)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BatchPending(Exception):
    """No final answer yet (relayer unreachable, slow or busy): the stored batch is kept and
    the next run resumes it."""


class BatchAmbiguous(Exception):
    """The stored batch's nonce was used by the wallet, but it is not known whether by this
    batch: it can never run again, and it may have run once."""


@dataclass(frozen=True)
class BatchRow:
    """The durable record of one batch: the model and the row's id."""

    model: type[peewee.Model]
    row_id: Any

    def _fresh(self) -> Any:
        return self.model.get_by_id(self.row_id)

    def store_signed(self, payload: Mapping[str, Any]) -> None:
        """Write the signed body before it leaves (only while no id is recorded)."""
        model = self.model
        # a PROXY / SAFE transaction has no deadline: it stays valid until its nonce is used
        deadline = payload.get("depositWalletParams", {}).get("deadline")
        written = (model.update(relayer_nonce=int(payload["nonce"]),
                                relayer_deadline=None if deadline is None else int(deadline),
                                relayer_payload=json.dumps(payload), updated_at=utcnow())
                   .where((model.id == self.row_id)
                          & model.relayer_transaction_id.is_null()).execute())
        if written != 1:
            raise BatchPending("Another run recorded this batch meanwhile.")

    def store_id(self, transaction_id: str) -> None:
        """Record the relayer's id of the submitted batch."""
        self.model.update(relayer_transaction_id=transaction_id, updated_at=utcnow()).where(
            self.model.id == self.row_id).execute()

    def forget_signed(self) -> None:
        """Drop a stored batch that provably never ran and never can."""
        self.model.update(relayer_nonce=None, relayer_deadline=None, relayer_payload=None,
                          updated_at=utcnow()).where(
            (self.model.id == self.row_id)
            & self.model.relayer_transaction_id.is_null()).execute()


def signed_steps(auth: RelayerAuth, wallet: TradingWallet, key: OrderKey, calls: list[Call],
                 metadata: str, *, on_signed: Callable[[Mapping[str, Any]], None] | None = None,
                 clock: Callable[[], float] = time.time) -> Steps[RelayerTransaction]:
    """The relayer steps running ``calls`` from the account's maker wallet, signed by
    ``key``: a ``WALLET`` batch from a deposit wallet, a ``PROXY`` / ``SAFE`` transaction
    from a grandfathered proxy or Safe."""
    contracts = trading_accounts.contracts()
    maker = wallets.maker(wallet)
    if wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET:
        return wallet_batch(auth, key, chain_id=contracts.chain_id,
                            factory=contracts.deposit_wallet_factory, wallet=maker,
                            calls=calls, session_signer=wallet.session_signer,
                            metadata=metadata, on_signed=on_signed, clock=clock)
    return legacy_batch(auth, key, signature_type=wallet.signature_type, contracts=contracts,
                        wallet=maker, calls=calls, metadata=metadata, on_signed=on_signed)


def _nonce_now(auth: RelayerAuth, wallet: TradingWallet, signer: str) -> Steps[int]:
    """The relayer's nonce of the account's wallet now (by the wallet's kind)."""
    if wallet.signature_type == SIGNATURE_TYPE_POLY_PROXY:
        _relay, nonce = yield RelayerApi.relay_payload_call(auth, signer)
        return nonce
    kind = "SAFE" if wallet.signature_type == SIGNATURE_TYPE_GNOSIS_SAFE else "WALLET"
    return (yield RelayerApi.execute_params_call(auth, signer, kind))


def _status(exc: VenueError) -> int:
    return 429 if isinstance(exc, VenueRateLimited) else getattr(exc, "status", 0)


def submit(row: BatchRow, wallet: TradingWallet, calls: list[Call], metadata: str,
           clock: Callable[[], float] = time.time) -> str:
    """The relayer's transaction id of the row's batch, submitting it (once) if needed.

    BatchRefused: refused, nothing sent. BatchPending: try again later. BatchAmbiguous:
    see the module docstring.
    """
    record = row._fresh()
    if record.relayer_transaction_id:
        return str(record.relayer_transaction_id)
    auth = trading_accounts.relayer_auth(wallet)
    if auth is None:
        raise BatchRefused("Builder credentials not configured: the operator must set "
                           "POLYMARKET_BUILDER_API_KEY, _SECRET and _PASSPHRASE.")
    client = venues.client()
    key = OrderKey(wallets.signer(wallet))
    if record.relayer_payload:
        if not _resend_needed(client, auth, wallet, key.address, record, clock):
            row.forget_signed()
        else:
            return _resend(client, auth, row, json.loads(record.relayer_payload))
    try:
        sent = client.run_steps(signed_steps(auth, wallet, key, calls, metadata,
                                             on_signed=row.store_signed, clock=clock))
    except VenueUnavailable as exc:
        if _status(exc) == 429:
            raise BatchRefused(f"The relayer refused: {exc}") from exc
        raise BatchPending(f"The relayer did not answer ({exc}); the signed batch is kept "
                           "and resent when the job runs again.") from exc
    except VenueRejected as exc:
        raise BatchRefused(f"The relayer refused: {exc}") from exc
    row.store_id(sent.transaction_id)
    return sent.transaction_id


def _resend_needed(client: Any, auth: Any, wallet: TradingWallet, signer: str, record: Any,
                   clock: Callable[[], float]) -> bool:
    """Whether the stored batch could still run (resend it) rather than provably not."""
    try:
        nonce_now = client.run_steps(_nonce_now(auth, wallet, signer))
    except VenueError as exc:
        raise BatchPending(f"The relayer did not answer ({exc}).") from exc
    if nonce_now > record.relayer_nonce:
        raise BatchAmbiguous(
            f"Interrupted between submitting and recording the relayer's answer; the "
            f"wallet has since used this batch's nonce {record.relayer_nonce}, so it can "
            "never run again, but it may have run once: check the wallet's balance before "
            "trying again.")
    if record.relayer_deadline is None:
        return True  # a PROXY / SAFE transaction: runnable until its nonce is used
    return clock() <= record.relayer_deadline + DEADLINE_SLACK_SECONDS


def _resend(client: Any, auth: Any, row: BatchRow, payload: Mapping[str, Any]) -> str:
    """Submit the stored bytes again, once, never re-signed."""
    try:
        sent = client.run_steps(_one(RelayerApi.submit_call(auth, payload)))
    except VenueRejected as exc:
        if wallet_occupied(str(exc)):
            # ours (or another) may be running: the next run looks at the nonce again
            raise BatchPending(f"The relayer is busy with this wallet ({exc}).") from exc
        raise BatchRefused(f"The relayer refused: {exc}") from exc
    except VenueError as exc:
        raise BatchPending(f"The relayer did not answer ({exc}).") from exc
    row.store_id(sent.transaction_id)
    return sent.transaction_id


def _one(call: Any) -> Any:
    return (yield call)


def follow(wallet: TradingWallet, transaction_id: str, max_polls: int | None = None) -> None:
    """Wait for the batch's final state: returns at CONFIRMED; RelayerTransactionFailed
    (FAILED or INVALID, with the relayer's reason); BatchPending while it is not final."""
    auth = trading_accounts.relayer_auth(wallet)
    kwargs = {} if max_polls is None else {"max_polls": max_polls}
    try:
        venues.client().run_steps(await_final(transaction_id, auth, **kwargs))
    except RelayerTransactionFailed:
        raise
    except VenueError as exc:
        raise BatchPending(f"The relayer has not finished the batch yet ({exc}).") from exc


def _move(row: BatchRow, record: Any, expected: str, **changes: Any) -> bool:
    """Change the row only if it is still in ``expected`` (one runner wins)."""
    changes["updated_at"] = utcnow()
    model = row.model
    moved = model.update(**changes).where((model.id == row.row_id)
                                          & (model.status == expected)).execute()
    if moved:
        for name, value in changes.items():
            setattr(record, name, value)
    return moved == 1


def run(row: BatchRow, wallet: TradingWallet, calls: Callable[[Any], list[Call]],
        metadata: str, noun: str, max_polls: int | None = None) -> str:
    """Drive a row (with ``status`` and ``error``) through one batch: queued -> signed ->
    broadcast -> confirmed, or failed with the relayer's reason; returns the status (an
    open one means: run again later). ``calls(record)`` builds the batch's calls."""
    record = row._fresh()
    if record.status == QUEUED and not _move(row, record, QUEUED, status=SIGNED):
        return str(row._fresh().status)  # another run has it
    if record.status == SIGNED:
        try:
            transaction_id = submit(row, wallet, calls(record), metadata)
        except BatchRefused as exc:
            _move(row, record, SIGNED, status=FAILED,
                  error=f"{exc.reason} Nothing was sent; try again.")
            return str(record.status)
        except BatchAmbiguous as exc:
            _move(row, record, SIGNED, status=FAILED, error=str(exc))
            return str(record.status)
        except BatchPending as exc:
            _move(row, record, SIGNED, error=str(exc))
            return str(record.status)
        _move(row, record, SIGNED, status=BROADCAST, error=None,
              relayer_transaction_id=transaction_id)
    if record.status != BROADCAST:
        return str(record.status)
    try:
        follow(wallet, record.relayer_transaction_id, max_polls)
    except RelayerTransactionFailed as exc:
        _move(row, record, BROADCAST, status=FAILED, error=(
            f"The relayer ended the {noun} {exc.transaction.state}: "
            f"{exc.transaction.error or 'no reason given'}. Nothing was sent; try again."))
        return str(record.status)
    except BatchPending:
        return str(record.status)
    _move(row, record, BROADCAST, status=CONFIRMED, error=None)
    return str(record.status)


__all__ = ["BatchAmbiguous", "BatchPending", "BatchRefused", "BatchRow", "follow", "run",
           "signed_steps", "submit"]
