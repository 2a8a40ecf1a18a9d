"""The relayer: who may submit, the checks a submission passes, and its transactions' states.

Auth (ACCOUNTS.md §3): Builder HMAC headers (credentials registered through the control API,
plus the configured dev triple) or Relayer API key headers (a key operates only its own
address's wallet). ``POST /submit`` takes ``WALLET-CREATE`` and ``WALLET`` (§2.3, §2.5) and
refuses with the venue's texts. A transaction moves NEW → EXECUTED → MINED → CONFIRMED one
state per ``relayer_step_seconds``, or ends FAILED / INVALID (armed through the control API,
or when its calls revert). Grandfathered proxy wallets and Safes submit ``PROXY`` / ``SAFE``
(``legacy_relay``), checked against the owner the venue knows. Effects happen at MINED: the
wallet exists (``/deployed`` is true) before the relayer's registry update at CONFIRMED, as
on the venue. Session signers (§2.6):
``/v1/session-signers/{authorizations,revocations}`` queue the owner's signed one-call batch
under the caller's ``Idempotency-Key``; a revocation fences the key at once.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from eth_utils import is_address, to_checksum_address

from devstack.venue import auth, legacy_relay
from devstack.venue.accounts import AccountRegistry, DepositWallet
from devstack.venue.batch import WalletCall, batch_digest, batch_signer
from devstack.venue.config import SandboxConfig
from devstack.venue.rejections import VenueRejection
from devstack.venue.wallet_exec import ExecutionFailed, session_signer_call

STATES = ("STATE_NEW", "STATE_EXECUTED", "STATE_MINED", "STATE_CONFIRMED")
FAILED, INVALID = "STATE_FAILED", "STATE_INVALID"
TERMINAL = {"STATE_CONFIRMED", FAILED, INVALID}

ERR_AUTH = "invalid authorization"
ERR_QUOTA = "quota exceeded"
ERR_PAYLOAD = "invalid transaction request payload"
ERR_TO = "invalid 'to' field: must be deposit wallet factory"
ERR_PROXY_TO = "invalid 'to' field: must be proxy factory"
# The legacy submit types and the signature type of the wallet each runs from.
LEGACY_TYPES = {"PROXY": 1, "SAFE": 2}
ERR_IN_FLIGHT = "wallet has in-flight action"
# Relayer calls to the v1 NegRiskAdapter are refused since 2026-07-17 (ACCOUNTS.md §11; the
# venue's own words are not recorded, so these are ours).
ERR_V1_ADAPTER = ("calls to the v1 NegRiskAdapter are no longer relayed: use the "
                  "NegRiskCtfCollateralAdapter")
ERR_SIGNATURE = "invalid signature"
# The longest a batch's deadline may lie ahead: the SDKs sign now + 600 s against a node's
# clock (§2.5 item 4, §9.3), so a little slack on top.
MAX_DEADLINE_AHEAD = 900
# Builder HMAC timestamps (seconds, or milliseconds as in the docs' remote-signing sample,
# §9.5) must lie within this many seconds of the relayer's wall clock, either way: a
# replayed or stale signature is refused as the venue refuses it.
BUILDER_TIMESTAMP_WINDOW = 60
# Session signers (§2.6): the scopes the venue knows, and its fixed 180-day lifetime (the
# SDK asks for 4,315 h) plus an hour of clock slack.
SESSION_SCOPES = ("ALL", "CLOB", "COMBOSRFQ", "RFQ", "BLOCKTRADE")
MAX_SESSION_LIFETIME = 180 * 86400 + 3600


class WalletExecutor(Protocol):
    """Where wallet transactions take effect: the simulation, or a chain."""

    chain_id: int

    def create(self, owner: str) -> str: ...

    def execute(self, wallet: DepositWallet, signer: str, calls: list[WalletCall], *,
                nonce: int, deadline: int, signature: str) -> str | None:
        """Run the batch; the chain's hash of it when it ran on a chain."""
        ...

    def execute_legacy(self, wallet: str, calls: list[WalletCall]) -> None: ...


@dataclass
class Principal:
    """Who called: a builder (any wallet), or a relayer key bound to one address."""

    kind: str  # "builder" | "relayer_key"
    name: str
    address: str = ""  # the relayer key's address, lower-case

    def may_operate(self, *addresses: str) -> bool:
        """A builder operates any wallet; a relayer key only its own address's."""
        return self.kind == "builder" or self.address in {a.lower() for a in addresses}


@dataclass
class RelayerTransaction:
    """One submitted transaction and where it stands."""

    id: str
    type: str
    sender: str
    to: str
    wallet: str  # the deposit wallet (for a create: the one it will deploy)
    nonce: str
    signature: str
    metadata: str
    calls: list[WalletCall]
    created_at: float
    owner: str  # the principal's name (builder key or relayer key)
    deadline: int = 0
    step: int = 0
    state: str = "STATE_NEW"
    updated_at: float = 0.0
    transaction_hash: str = ""
    error: str = ""
    armed: tuple[str, str] | None = None  # (terminal state, message) chosen by the control API


WRONG_NONCE_MODES = ("two_wallets", "always", "off")


@dataclass
class RelayerSwitches:
    """What the control API sets on the relayer."""

    quota_exceeded: bool = False
    down: bool = False
    # ACCOUNTS.md §12: ``/v1/account/transactions/params`` can hand out the wrong nonce when
    # one owner key has two deposit wallets (py-sdk PR #213, ts-sdk PR #247). "two_wallets"
    # (the venue's way, the default): such an owner gets its other wallet's nonce;
    # "always": every owner gets its wallet's nonce plus one; "off": never wrong.
    wrong_nonce: str = "two_wallets"
    fail_next: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class SessionSignerRequest:
    """One ``/v1/session-signers/*`` operation, kept under its ``Idempotency-Key``."""

    kind: str  # "authorization" | "revocation"
    body: str  # the request as canonical JSON: a replay must match it
    transaction: RelayerTransaction
    signer: str  # the session signer, lower-case


class Relayer:
    """Relayer credentials, submissions and transaction states."""

    def __init__(self, config: SandboxConfig, now: Callable[[], float],
                 accounts: AccountRegistry, executor: WalletExecutor) -> None:
        self.config = config
        self.now = now
        self.accounts = accounts
        self.executor = executor
        key, secret, passphrase = config.dev_builder
        self.builders: dict[str, tuple[str, str]] = {key: (secret, passphrase)}
        self.relayer_keys: dict[str, tuple[str, float]] = {}  # key -> (address, created)
        self.transactions: dict[str, RelayerTransaction] = {}
        # by (caller, Idempotency-Key)
        self.session_requests: dict[tuple[str, str], SessionSignerRequest] = {}
        self.switches = RelayerSwitches()

    # -- credentials --

    def add_builder(self, key: str, secret: str, passphrase: str) -> None:
        """Accept Builder HMAC requests signed with these credentials."""
        self.builders[key] = (secret, passphrase)

    def mint_relayer_key(self, address: str) -> str:
        """A new Relayer API key for ``address`` (the venue mints them in its web UI)."""
        if not is_address(address):
            raise VenueRejection("address must be an address")
        key = str(uuid.uuid4())
        self.relayer_keys[key] = (address.lower(), self.now())
        return key

    def keys_of(self, address: str) -> list[dict[str, Any]]:
        """``GET /relayer/api/keys``: the keys of an address."""
        return [{"apiKey": key, "address": to_checksum_address(owner), "createdAt": _iso(created)}
                for key, (owner, created) in self.relayer_keys.items()
                if owner == address.lower()]

    def authenticate(self, headers: dict[str, str], method: str, path: str, body: str,
                     *, submitting: bool = False) -> Principal:
        """Who calls (Builder HMAC or Relayer API key headers): 401 ``invalid
        authorization``, 503 while down, 429 on a submission over the quota."""
        self.check_open()
        principal = self._principal(headers, method, path, body)
        self.check_open(quota=submitting)
        return principal

    def _principal(self, headers: dict[str, str], method: str, path: str,
                   body: str) -> Principal:
        key = headers.get("POLY_BUILDER_API_KEY", "")
        if key:
            secret, passphrase = self.builders.get(key, ("", ""))
            timestamp = headers.get("POLY_BUILDER_TIMESTAMP", "")
            ok = secret and headers.get("POLY_BUILDER_PASSPHRASE") == passphrase and \
                _fresh(timestamp) and auth.verify_hmac(
                    secret, headers.get("POLY_BUILDER_SIGNATURE", ""), timestamp, method, path,
                    body)
            if not ok:
                raise VenueRejection(ERR_AUTH, 401)
            return Principal("builder", key)
        relayer_key = headers.get("RELAYER_API_KEY", "")
        owner, _ = self.relayer_keys.get(relayer_key, ("", 0.0))
        if not owner or headers.get("RELAYER_API_KEY_ADDRESS", "").lower() != owner:
            raise VenueRejection(ERR_AUTH, 401)
        return Principal("relayer_key", relayer_key, owner)

    def check_open(self, *, quota: bool = False) -> None:
        """503 while switched down; 429 ``quota exceeded`` on submissions when switched on."""
        if self.switches.down:
            raise VenueRejection("relayer unavailable", 503)
        if quota and self.switches.quota_exceeded:
            raise VenueRejection(ERR_QUOTA, 429)

    # -- submissions --

    def submit(self, principal: Principal, body: Any) -> RelayerTransaction:
        """Check a ``POST /submit`` body and queue its transaction (STATE_NEW)."""
        self.advance()
        if not isinstance(body, dict) or not is_address(str(body.get("from", ""))):
            raise VenueRejection(ERR_PAYLOAD)
        kind = body.get("type")
        if kind not in ("WALLET-CREATE", "WALLET", *LEGACY_TYPES):
            raise VenueRejection(ERR_PAYLOAD)
        if kind not in LEGACY_TYPES and (
                str(body.get("to", "")).lower() != self.config.deposit_wallet_factory.lower()):
            raise VenueRejection(ERR_TO)
        metadata = body.get("metadata") or ""
        if not isinstance(metadata, str) or len(metadata) > 500:
            raise VenueRejection(ERR_PAYLOAD)
        sender = str(body["from"]).lower()
        if kind == "WALLET-CREATE":
            tx = self._create(principal, sender)
        elif kind == "WALLET":
            tx = self._batch(principal, sender, body)
        else:
            tx = self._legacy(principal, sender, body, kind)
        tx.metadata = metadata
        return self._queue(tx)

    def _queue(self, tx: RelayerTransaction) -> RelayerTransaction:
        if self.switches.fail_next:
            tx.armed = self.switches.fail_next.pop(0)
        self.transactions[tx.id] = tx
        return tx

    def _new(self, principal: Principal, kind: str, sender: str, wallet: str,
             **fields: Any) -> RelayerTransaction:
        now = self.now()
        return RelayerTransaction(
            id=str(uuid.uuid4()), type=kind, sender=sender, wallet=wallet, created_at=now,
            updated_at=now, owner=principal.name, to=self.config.deposit_wallet_factory,
            nonce=fields.pop("nonce", ""), signature=fields.pop("signature", ""), metadata="",
            calls=fields.pop("calls", []), **fields)

    def _create(self, principal: Principal, owner: str) -> RelayerTransaction:
        if not principal.may_operate(owner):
            raise VenueRejection(ERR_AUTH, 401)
        wallet = self.accounts.derive(owner).lower()
        self._refuse_in_flight(wallet)
        if self.accounts.wallet(wallet) is not None:
            raise VenueRejection(f"deposit wallet {to_checksum_address(wallet)} already deployed")
        return self._new(principal, "WALLET-CREATE", owner, wallet)

    def _batch(self, principal: Principal, sender: str, body: dict) -> RelayerTransaction:
        params = body.get("depositWalletParams")
        if not isinstance(params, dict) or not is_address(str(params.get("depositWallet", ""))):
            raise VenueRejection(ERR_PAYLOAD)
        try:
            nonce = int(str(body.get("nonce", "")))
            deadline = int(str(params.get("deadline", "")))
            calls = [WalletCall(to_checksum_address(c["target"]), int(str(c.get("value", 0))),
                                bytes.fromhex(str(c["data"]).removeprefix("0x")))
                     for c in params.get("calls") or []]
        except (KeyError, TypeError, ValueError) as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        if not calls:
            raise VenueRejection(ERR_PAYLOAD)
        self._refuse_retired(calls)
        wallet = self.accounts.wallet(str(params["depositWallet"]))
        if wallet is None or not wallet.registered:
            raise VenueRejection(
                f"wallet registration error: deposit wallet {params['depositWallet']} "
                "is not registered with the relayer")
        now = self.now()
        if sender not in wallet.owners | wallet.active_signers(now):
            raise VenueRejection(f"{to_checksum_address(sender)} is not a signer of "
                                 f"deposit wallet {to_checksum_address(wallet.address)}")
        if not principal.may_operate(sender, *wallet.owners):
            raise VenueRejection(ERR_AUTH, 401)
        if deadline <= now:
            raise VenueRejection("deadline expired")
        if deadline > now + MAX_DEADLINE_AHEAD:
            raise VenueRejection(f"deadline too far in the future (max {MAX_DEADLINE_AHEAD}s)")
        self._refuse_in_flight(wallet.address)
        if nonce != wallet.nonce:
            raise VenueRejection(
                f"batch nonce {nonce} does not match on-chain nonce {wallet.nonce}")
        digest = batch_digest(self.executor.chain_id, wallet.address, nonce, deadline, calls)
        signature = str(body.get("signature", ""))
        signer, enveloped = batch_signer(digest, signature)
        # as the wallet checks: a plain signature is the owner's, an envelope a session key's
        allowed = wallet.active_signers(now) if enveloped else wallet.owners
        if signer is None or signer.lower() != sender or sender not in allowed:
            raise VenueRejection(ERR_SIGNATURE)
        return self._new(principal, "WALLET", sender, wallet.address, nonce=str(nonce),
                         signature=signature, calls=calls, deadline=deadline)

    def _legacy(self, principal: Principal, sender: str, body: dict, kind: str
                ) -> RelayerTransaction:
        """A grandfathered proxy's ``PROXY`` or Safe's ``SAFE`` transaction: the wallet is
        one the venue knows of that kind, ``from`` is its owner and signed it, the nonce is
        the wallet's next; its calls are decoded now (a payload the SDK cannot have built is
        refused)."""
        signature_type = LEGACY_TYPES[kind]
        params = body.get("signatureParams")
        if not is_address(str(body.get("proxyWallet", ""))) or not isinstance(params, dict) \
                or not is_address(str(body.get("to", ""))):
            raise VenueRejection(ERR_PAYLOAD)
        wallet, to = str(body["proxyWallet"]).lower(), str(body["to"])
        known = self.accounts.legacy_wallets.get(wallet)
        if known is None or known[1] != signature_type:
            raise VenueRejection(f"{to_checksum_address(wallet)} is not a known "
                                 f"{kind.lower()} wallet")
        if known[0] != sender:
            raise VenueRejection(f"{to_checksum_address(sender)} is not the owner of "
                                 f"{kind.lower()} wallet {to_checksum_address(wallet)}")
        if not principal.may_operate(sender, wallet):
            raise VenueRejection(ERR_AUTH, 401)
        signature = str(body.get("signature", ""))
        try:
            nonce = int(str(body.get("nonce", "")))
            data = bytes.fromhex(str(body.get("data", "")).removeprefix("0x"))
            if kind == "PROXY":
                calls, signer = self._proxy_checked(sender, to, data, nonce, params, signature)
            else:
                calls, signer = self._safe_checked(wallet, to, data, nonce, body, params,
                                                   signature)
        except (legacy_relay.Malformed, TypeError, ValueError) as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        self._refuse_retired(calls)
        self._refuse_in_flight(wallet)
        expected = self.accounts.legacy_nonces.get(wallet, 0)
        if nonce != expected:
            raise VenueRejection(f"batch nonce {nonce} does not match on-chain nonce {expected}")
        if signer is None or signer.lower() != sender:
            raise VenueRejection(ERR_SIGNATURE)
        tx = self._new(principal, kind, sender, wallet, nonce=str(nonce), signature=signature,
                       calls=calls)
        tx.to = to_checksum_address(to)
        return tx

    @staticmethod
    def _proxy_checked(sender: str, to: str, data: bytes, nonce: int, params: dict,
                       signature: str) -> tuple[list[WalletCall], str | None]:
        if to.lower() != legacy_relay.PROXY_FACTORY.lower():
            raise VenueRejection(ERR_PROXY_TO)
        if str(params.get("relayHub", "")).lower() != legacy_relay.RELAY_HUB.lower() or \
                str(params.get("relay", "")).lower() != legacy_relay.RELAY_ADDRESS.lower():
            raise VenueRejection("invalid relay: ask /relay-payload for the relay to sign for")
        fee, price, limit = (int(str(params.get(name, ""))) for name in
                             ("relayerFee", "gasPrice", "gasLimit"))
        if fee or price or limit <= 0:
            raise legacy_relay.Malformed("the relayer takes no fee and needs a gas limit")
        calls = legacy_relay.proxy_calls(data)
        return calls, legacy_relay.proxy_signer(
            sender=sender, to=to, data=data, relayer_fee=fee, gas_price=price,
            gas_limit=limit, nonce=nonce, relay_hub=legacy_relay.RELAY_HUB,
            relay=legacy_relay.RELAY_ADDRESS, signature=signature)

    def _safe_checked(self, safe: str, to: str, data: bytes, nonce: int, body: dict,
                      params: dict, signature: str) -> tuple[list[WalletCall], str | None]:
        # the relayer pays the gas: a SafeTx asking for a refund is not one it runs
        if any(str(params.get(name, "")) != "0" for name in ("baseGas", "gasPrice",
                                                            "safeTxnGas")) or \
                not legacy_relay.zero_address(params.get("gasToken")) or \
                not legacy_relay.zero_address(params.get("refundReceiver")):
            raise legacy_relay.Malformed("a SafeTx through the relayer has no gas refund")
        operation, value = int(str(params.get("operation", ""))), int(str(body.get("value", 0)))
        calls = legacy_relay.safe_calls(to, data, value, operation)
        return calls, legacy_relay.safe_signer(
            chain_id=self.executor.chain_id, safe=safe, to=to, value=value, data=data,
            operation=operation, nonce=nonce, signature=signature)

    def _refuse_retired(self, calls: list[WalletCall]) -> None:
        """Refuse a transaction calling a contract the relayer no longer relays to."""
        retired = self.config.neg_risk_adapter_v1.lower()
        if any(call.target.lower() == retired for call in calls):
            raise VenueRejection(ERR_V1_ADAPTER)

    def _refuse_in_flight(self, wallet: str) -> None:
        if any(tx.wallet == wallet and tx.state not in TERMINAL
               for tx in self.transactions.values()):
            raise VenueRejection(ERR_IN_FLIGHT)

    # -- session signers (§2.6) --

    def session_signer(self, principal: Principal, kind: str, body: Any,
                       idempotency_key: str) -> SessionSignerRequest:
        """``POST /v1/session-signers/{authorizations,revocations}``: the owner's signed
        Batch of the one wallet call, submitted as a WALLET transaction. A replay of the same
        ``Idempotency-Key`` answers the first request's transaction (409 when its body
        differs). An authorization needs builder credentials; a revocation fences the key at
        once (out of use for batches and orders before the chain removes it)."""
        self.advance()
        if not idempotency_key.strip():
            raise VenueRejection("Idempotency-Key header is required")
        canonical = json.dumps(body, sort_keys=True)
        # keys are the caller's own: another caller's key is a new operation
        slot = (principal.name, idempotency_key)
        known = self.session_requests.get(slot)
        if known is not None:
            if known.kind != kind or known.body != canonical:
                raise VenueRejection("Idempotency-Key was used with a different request", 409)
            return known
        if kind == "authorization" and principal.kind != "builder":
            raise VenueRejection("session-signer authorization requires a builder API key",
                                 403)
        if not isinstance(body, dict) or not is_address(str(body.get("walletAddress", ""))) \
                or not is_address(str(body.get("sessionSignerAddress", ""))):
            raise VenueRejection(ERR_PAYLOAD)
        wallet, signer = str(body["walletAddress"]), str(body["sessionSignerAddress"])
        scopes: tuple[str, ...] = ()
        valid_until = 0
        if kind == "authorization":
            scopes, valid_until = self._session_grant(body)
        call = session_signer_call(wallet, signer, valid_until if kind == "authorization"
                                   else None)
        tx = self._owner_batch(principal, body, wallet, call)
        record = self.accounts.wallet(wallet)
        if record is None:  # _owner_batch refuses unknown wallets; never reached
            raise VenueRejection("wallet registration error")
        if kind == "authorization":
            record.scopes[signer.lower()] = scopes
            record.fenced.discard(signer.lower())
        else:
            record.fenced.add(signer.lower())
        request = SessionSignerRequest(kind, canonical, tx, signer.lower())
        self.session_requests[slot] = request
        return request

    def _session_grant(self, body: dict) -> tuple[tuple[str, ...], int]:
        scopes = body.get("scopes")
        if not isinstance(scopes, list) or not scopes or \
                any(scope not in SESSION_SCOPES for scope in scopes):
            raise VenueRejection(f"scopes must be a non-empty list of {list(SESSION_SCOPES)}")
        if "ALL" in scopes and len(scopes) > 1:
            raise VenueRejection("scope ALL cannot be combined with another scope")
        try:
            valid_until = int(str(body.get("validUntil", "")))
        except ValueError as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        now = self.now()
        if not now < valid_until <= now + MAX_SESSION_LIFETIME:
            raise VenueRejection("validUntil must lie in the future, at most 180 days ahead")
        return tuple(scopes), valid_until

    def _owner_batch(self, principal: Principal, body: dict, wallet: str,
                     call: WalletCall) -> RelayerTransaction:
        """Queue the one-call batch the owner signed (who signed is read off the signature
        and checked as ``/submit`` checks a WALLET body)."""
        try:
            nonce, deadline = int(str(body.get("nonce", ""))), int(str(body.get("deadline", "")))
        except ValueError as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        signature = str(body.get("signature", ""))
        digest = batch_digest(self.executor.chain_id, wallet, nonce, deadline, [call])
        signer, enveloped = batch_signer(digest, signature)
        record = self.accounts.wallet(wallet)
        # only the owner manages session signers (a session key's envelope is refused)
        if record is not None and record.registered and (
                signer is None or enveloped or signer.lower() not in record.owners):
            raise VenueRejection(ERR_SIGNATURE)
        submit = {"nonce": str(nonce), "signature": signature, "depositWalletParams": {
            "depositWallet": wallet, "deadline": str(deadline),
            "calls": [{"target": call.target, "value": "0", "data": "0x" + call.data.hex()}]}}
        return self._queue(self._batch(principal, (signer or "0x" + "00" * 20).lower(), submit))

    def session_signers_of(self, owner: str) -> dict[str, Any]:
        """``GET /v1/user/session-signers``: {wallet, signers} of the owner's deposit wallet,
        session signers in force only, or 404."""
        self.advance()
        now = self.now()
        for address in sorted(self.accounts.wallets_of(owner)):
            wallet = self.accounts.wallets[address]
            return {"wallet": to_checksum_address(wallet.address),
                    "signers": [{"address": to_checksum_address(s),
                                 "scopes": list(wallet.scopes_of(s)),
                                 "valid_until": wallet.session_signers[s]}
                                for s in sorted(wallet.active_signers(now))]}
        raise VenueRejection("deposit wallet not found", 404)

    # -- states --

    def advance(self) -> None:
        """Move every open transaction to where its age puts it."""
        now = self.now()
        step = self.config.relayer_step_seconds
        for tx in self.transactions.values():
            if tx.state in TERMINAL:
                continue
            target = 3 if step <= 0 else min(3, int((now - tx.created_at) / step))
            while tx.step < target and tx.state not in TERMINAL:
                self._step(tx, now)

    def _step(self, tx: RelayerTransaction, now: float) -> None:
        tx.step += 1
        tx.updated_at = now
        if tx.step == 1 and tx.armed is not None:
            tx.state, tx.error = tx.armed
            return
        if tx.step == 2:
            tx.transaction_hash = "0x" + secrets.token_bytes(32).hex()
            try:
                # the chain's own hash when the wallet ran on one (its receipt is there)
                tx.transaction_hash = self._apply(tx) or tx.transaction_hash
            except ExecutionFailed as exc:
                tx.state, tx.error = FAILED, exc.message
                return
        tx.state = STATES[tx.step]
        if tx.step == 3 and tx.type == "WALLET-CREATE":
            wallet = self.accounts.wallet(tx.wallet)
            if wallet is not None:
                wallet.registered = True

    def _apply(self, tx: RelayerTransaction) -> str | None:
        if tx.type == "WALLET-CREATE":
            self.executor.create(tx.sender)
            return None
        if tx.type in LEGACY_TYPES:
            self.executor.execute_legacy(tx.wallet, tx.calls)
            self.accounts.legacy_nonces[tx.wallet] = int(tx.nonce) + 1
            return None
        wallet = self.accounts.wallet(tx.wallet)
        if wallet is None:
            raise ExecutionFailed("wallet not deployed")
        if tx.deadline < self.now():
            raise ExecutionFailed("DepositWallet: expired deadline")
        return self.executor.execute(wallet, tx.sender, tx.calls, nonce=int(tx.nonce),
                                     deadline=tx.deadline, signature=tx.signature)

    def transaction(self, tx_id: str) -> RelayerTransaction:
        """A transaction by id (states brought up to date), or 404 (503 while down)."""
        self.check_open()
        self.advance()
        tx = self.transactions.get(tx_id)
        if tx is None:
            raise VenueRejection("transaction not found", 404)
        return tx

    def transactions_of(self, principal: Principal) -> list[RelayerTransaction]:
        """The transactions ``principal`` submitted (a relayer key: also those from its
        address), states brought up to date, newest first (503 while down)."""
        self.check_open()
        self.advance()
        mine = [tx for tx in self.transactions.values()
                if tx.owner == principal.name
                or (principal.kind == "relayer_key" and tx.sender == principal.address)]
        return sorted(mine, key=lambda tx: -tx.created_at)

    def nonce_of(self, address: str, kind: str = "WALLET") -> int:
        """The nonce of the wallet ``address`` owns or signs for (0 when none): a deposit
        wallet's Batch nonce, or (``kind`` PROXY or SAFE) its proxy's or Safe's (503 while
        down)."""
        self.check_open()
        self.advance()
        if kind in LEGACY_TYPES:
            legacy = self.accounts.legacy_wallet_of(address, LEGACY_TYPES[kind])
            return self.accounts.legacy_nonces.get(legacy, 0) if legacy else 0
        if kind != "WALLET":
            raise VenueRejection(f"invalid type {kind!r}: WALLET, PROXY or SAFE")
        wallet = self.accounts.wallet_controlled_by(address, self.now())
        if wallet is None:
            return 0
        return self._handed_out(address, wallet)

    def _handed_out(self, address: str, wallet: DepositWallet) -> int:
        """The nonce the execute-params route hands out for ``wallet`` (see
        ``RelayerSwitches.wrong_nonce``): the batch signed with a wrong one is refused with
        the real nonce named, as at the venue."""
        mode = self.switches.wrong_nonce
        if mode == "always":
            return wallet.nonce + 1
        if mode == "two_wallets":
            others = sorted(w for w in self.accounts.wallets_of(address) if w != wallet.address)
            if others:
                return self.accounts.wallets[others[-1]].nonce
        return wallet.nonce

    def deployed(self, wallet: str) -> bool:
        """Whether the factory deployed ``wallet`` (true from MINED on); a proxy or Safe
        polymarket.com made is deployed (503 while down)."""
        self.check_open()
        self.advance()
        record = self.accounts.wallet(wallet)
        return (record is not None and record.deployed) or (
            wallet.lower() in self.accounts.legacy_wallets)


def _fresh(timestamp: str) -> bool:
    """Whether a builder timestamp (s or ms) is within the window of the wall clock (not the
    sandbox's clock, which tests may move: clients sign with their own wall clock)."""
    try:
        moment = int(timestamp)
    except ValueError:
        return False
    seconds = moment / 1000 if moment > 10**11 else moment
    return abs(time.time() - seconds) <= BUILDER_TIMESTAMP_WINDOW


def legacy_json(tx: RelayerTransaction) -> dict[str, Any]:
    """A transaction as ``GET /transaction?id=`` lists it (camelCase)."""
    data = json.dumps([{"target": c.target, "value": str(c.value), "data": "0x" + c.data.hex()}
                       for c in tx.calls])
    answer = {
        "transactionID": tx.id, "transactionHash": tx.transaction_hash,
        "from": to_checksum_address(tx.sender), "to": tx.to,
        "proxyAddress": to_checksum_address(tx.wallet), "data": data, "nonce": tx.nonce,
        "value": "0", "signature": tx.signature, "state": tx.state, "type": tx.type,
        "owner": tx.owner, "metadata": tx.metadata,
        "createdAt": _iso(tx.created_at), "updatedAt": _iso(tx.updated_at),
    }
    if tx.error:
        answer["errorMsg"] = tx.error
    return answer


def v1_json(tx: RelayerTransaction) -> dict[str, Any]:
    """A transaction as ``GET /v1/account/transactions/<id>`` answers it (snake_case)."""
    return {"transaction_id": tx.id, "transaction_hash": tx.transaction_hash or None,
            "state": tx.state, "error_msg": tx.error or None, "type": tx.type,
            "from": to_checksum_address(tx.sender),
            "deposit_wallet": to_checksum_address(tx.wallet)}


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


_AUTHORIZATION_STATUS = {"STATE_NEW": "SUBMITTED", "STATE_EXECUTED": "SUBMITTED",
                         "STATE_MINED": "REGISTRY_PENDING", "STATE_CONFIRMED": "REGISTERED",
                         FAILED: "FAILED", INVALID: "FAILED"}
_REVOCATION_STATUS = {"STATE_NEW": "FENCED", "STATE_EXECUTED": "CHAIN_SUBMITTED",
                      "STATE_MINED": "CHAIN_SUBMITTED", "STATE_CONFIRMED": "CONFIRMED",
                      FAILED: "FAILED", INVALID: "FAILED"}


def session_signer_json(request: SessionSignerRequest) -> dict[str, Any]:
    """A session-signer operation's answer: its status (the venue's vocabulary, from where
    its transaction stands) and transaction id."""
    tx = request.transaction
    if request.kind == "authorization":
        return {"status": _AUTHORIZATION_STATUS[tx.state], "transactionId": tx.id,
                "transactionHash": tx.transaction_hash or None}
    return {"status": _REVOCATION_STATUS[tx.state], "fenced": True, "transactionId": tx.id}
