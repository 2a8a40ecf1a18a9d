"""Signed transactions with explicit nonces, for exactly-once sending.

Callers allocate the nonce, build and sign here, persist the returned hash, and only then
send: resending the same raw bytes is harmless (send_raw recognises its own transaction),
so a crash between persisting and sending is recovered by sending again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.typed_transactions import TypedTransaction
from hexbytes import HexBytes
from web3 import Web3
from web3.exceptions import ContractLogicError, TransactionNotFound, Web3Exception, Web3RPCError

from chain.abi import CONDITIONAL_TOKENS, ERC20, NEG_RISK_ADAPTER, load_abi
from chain.errors import (
    ChainError,
    ChainUnavailable,
    InsufficientGas,
    NonceConflict,
    ReceiptTimeout,
    TransactionRejected,
)
from chain.tokens import checksum, native_balance_wei, read

NATIVE_TRANSFER_GAS = 21_000
ZERO_BYTES32 = b"\x00" * 32
# Polygon PoS rejects tips below its floor (~25-30 gwei); Amoy has the same rule.
POLYGON_CHAIN_IDS = frozenset({137, 80002})
POLYGON_MIN_PRIORITY_WEI = 30 * 10**9
# headroom over eth_estimateGas: state can move between estimate and inclusion
GAS_MARGIN_NUM, GAS_MARGIN_DEN = 6, 5


@dataclass(frozen=True)
class Fees:
    """EIP-1559 fee caps, in wei per gas."""

    max_fee_per_gas: int
    max_priority_fee_per_gas: int


@dataclass(frozen=True)
class SignedTx:
    """A signed, not yet sent transaction; persist tx_hash before sending raw."""

    raw: bytes
    tx_hash: str
    sender: str
    to: str
    nonce: int
    value: int
    gas: int
    max_fee_per_gas: int
    max_priority_fee_per_gas: int
    chain_id: int

    @property
    def max_cost_wei(self) -> int:
        """The most this transaction can take from the sender: gas at the fee cap, plus value."""
        return self.gas * self.max_fee_per_gas + self.value

    @property
    def raw_hex(self) -> str:
        """The raw transaction as 0x hex (storable as text)."""
        return "0x" + self.raw.hex()


@dataclass(frozen=True)
class Receipt:
    """What a mined transaction did."""

    tx_hash: str
    succeeded: bool
    block_number: int
    gas_used: int
    effective_gas_price: int

    @property
    def fee_wei(self) -> int:
        """The gas fee actually paid."""
        return self.gas_used * self.effective_gas_price


def _hex(value: bytes) -> str:
    return "0x" + bytes(value).hex()


def _b32(value: bytes | str) -> bytes:
    raw = Web3.to_bytes(hexstr=value) if isinstance(value, str) else bytes(value)
    if len(raw) != 32:
        raise ValueError(f"expected 32 bytes, got {len(raw)}")
    return raw


def address_of(private_key: bytes | str) -> str:
    """Return the checksummed address of a private key."""
    return Account.from_key(private_key).address


def next_nonce(w3: Web3, address: str) -> int:
    """Return the next nonce the node expects from address, counting pending transactions."""
    return int(read(lambda: w3.eth.get_transaction_count(checksum(address), "pending"), "nonce"))


def mined_nonce(w3: Web3, address: str) -> int:
    """Return how many of address's transactions are mined (the latest block's nonce)."""
    return int(read(lambda: w3.eth.get_transaction_count(checksum(address), "latest"),
                    "mined nonce"))


def suggest_fees(w3: Web3, *, min_priority_wei: int | None = None) -> Fees:
    """Return fee caps that survive a doubling of the base fee; Polygon's tip floor applies."""
    block = read(lambda: w3.eth.get_block("latest"), "latest block")
    base_fee = int(block.get("baseFeePerGas") or 0)
    tip = int(read(lambda: w3.eth.max_priority_fee, "max priority fee"))
    if min_priority_wei is None:
        chain = int(read(lambda: w3.eth.chain_id, "chain id"))
        min_priority_wei = POLYGON_MIN_PRIORITY_WEI if chain in POLYGON_CHAIN_IDS else 0
    tip = max(tip, min_priority_wei)
    return Fees(max_fee_per_gas=2 * base_fee + tip, max_priority_fee_per_gas=tip)


def estimate_gas(w3: Web3, *, sender: str, to: str, data: bytes = b"", value: int = 0) -> int:
    """Estimate gas with a safety margin; TransactionRejected if the call would revert."""
    params: dict[str, Any] = {"from": checksum(sender), "to": checksum(to), "value": value}
    if data:
        params["data"] = _hex(data)
    try:
        estimate = int(w3.eth.estimate_gas(params))  # type: ignore[arg-type]
    except ChainUnavailable:
        raise
    except ContractLogicError as exc:
        raise TransactionRejected(f"transaction would revert: {exc}") from exc
    except (Web3Exception, ValueError) as exc:
        raise TransactionRejected(f"gas estimation failed: {exc}") from exc
    if estimate <= NATIVE_TRANSFER_GAS:
        return estimate
    return estimate * GAS_MARGIN_NUM // GAS_MARGIN_DEN


def build_transaction(
    w3: Web3,
    *,
    private_key: bytes | str,
    to: str,
    nonce: int,
    data: bytes = b"",
    value: int = 0,
    gas: int | None = None,
    fees: Fees | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign an EIP-1559 transaction with the given nonce; nothing is sent."""
    sender = address_of(private_key)
    if chain_id is None:
        chain_id = int(read(lambda: w3.eth.chain_id, "chain id"))
    if fees is None:
        fees = suggest_fees(w3)
    if gas is None:
        gas = estimate_gas(w3, sender=sender, to=to, data=data, value=value)
    tx = {
        "type": 2,
        "chainId": chain_id,
        "nonce": nonce,
        "to": checksum(to),
        "value": value,
        "data": _hex(data),
        "gas": gas,
        "maxFeePerGas": fees.max_fee_per_gas,
        "maxPriorityFeePerGas": fees.max_priority_fee_per_gas,
    }
    signed = Account.sign_transaction(tx, private_key)
    return SignedTx(
        raw=bytes(signed.raw_transaction),
        tx_hash=_hex(signed.hash),
        sender=sender,
        to=checksum(to),
        nonce=nonce,
        value=value,
        gas=gas,
        max_fee_per_gas=fees.max_fee_per_gas,
        max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
        chain_id=chain_id,
    )


def _calldata(w3: Web3, abi_name: str, function: str, args: Sequence[Any]) -> bytes:
    contract = w3.eth.contract(abi=load_abi(abi_name))
    return bytes(HexBytes(contract.encode_abi(function, args=list(args))))


def build_native_transfer(
    w3: Web3,
    *,
    private_key: bytes | str,
    to: str,
    value_wei: int,
    nonce: int,
    fees: Fees | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign a native (MATIC) transfer."""
    # to a plain account the cost is fixed; estimating would fail on a wallet that cannot
    # pay, and callers want a signed transaction to ask has_gas_for() about
    has_code = bool(read(lambda: w3.eth.get_code(checksum(to)), "recipient code"))
    return build_transaction(
        w3, private_key=private_key, to=to, nonce=nonce, value=value_wei, fees=fees,
        gas=None if has_code else NATIVE_TRANSFER_GAS, chain_id=chain_id,
    )


def build_erc20_transfer(
    w3: Web3,
    *,
    private_key: bytes | str,
    token: str,
    to: str,
    amount_base: int,
    nonce: int,
    fees: Fees | None = None,
    gas: int | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign an ERC-20 transfer(to, amount_base) from the key's address."""
    data = _calldata(w3, ERC20, "transfer", [checksum(to), amount_base])
    return build_transaction(
        w3, private_key=private_key, to=token, nonce=nonce, data=data, fees=fees, gas=gas,
        chain_id=chain_id,
    )


def build_erc20_approve(
    w3: Web3,
    *,
    private_key: bytes | str,
    token: str,
    spender: str,
    amount_base: int,
    nonce: int,
    fees: Fees | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign an ERC-20 approve(spender, amount_base)."""
    data = _calldata(w3, ERC20, "approve", [checksum(spender), amount_base])
    return build_transaction(
        w3, private_key=private_key, to=token, nonce=nonce, data=data, fees=fees,
        chain_id=chain_id,
    )


def build_ctf_approval(
    w3: Web3,
    *,
    private_key: bytes | str,
    ctf: str,
    operator: str,
    nonce: int,
    approved: bool = True,
    fees: Fees | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign CTF setApprovalForAll(operator): the neg-risk adapter needs it to take tokens."""
    data = _calldata(w3, CONDITIONAL_TOKENS, "setApprovalForAll", [checksum(operator), approved])
    return build_transaction(
        w3, private_key=private_key, to=ctf, nonce=nonce, data=data, fees=fees,
        chain_id=chain_id,
    )


def build_ctf_redeem(
    w3: Web3,
    *,
    private_key: bytes | str,
    ctf: str,
    collateral: str,
    condition_id: bytes | str,
    index_sets: Sequence[int],
    nonce: int,
    parent_collection_id: bytes | str = ZERO_BYTES32,
    fees: Fees | None = None,
    gas: int | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign CTF redeemPositions(collateral, parent, condition, index_sets) for a resolved market."""
    data = _calldata(
        w3,
        CONDITIONAL_TOKENS,
        "redeemPositions",
        [checksum(collateral), _b32(parent_collection_id), _b32(condition_id), list(index_sets)],
    )
    return build_transaction(
        w3, private_key=private_key, to=ctf, nonce=nonce, data=data, fees=fees, gas=gas,
        chain_id=chain_id,
    )


def build_neg_risk_redeem(
    w3: Web3,
    *,
    private_key: bytes | str,
    adapter: str,
    condition_id: bytes | str,
    amounts: Sequence[int],
    nonce: int,
    fees: Fees | None = None,
    gas: int | None = None,
    chain_id: int | None = None,
) -> SignedTx:
    """Sign NegRiskAdapter redeemPositions(condition, [yes_amount, no_amount])."""
    data = _calldata(
        w3, NEG_RISK_ADAPTER, "redeemPositions", [_b32(condition_id), [int(a) for a in amounts]]
    )
    return build_transaction(
        w3, private_key=private_key, to=adapter, nonce=nonce, data=data, fees=fees, gas=gas,
        chain_id=chain_id,
    )


def gas_needed(tx: SignedTx) -> int:
    """Return the native balance (wei) the sender needs for this transaction in the worst case."""
    return tx.max_cost_wei


def has_gas_for(w3: Web3, tx: SignedTx) -> bool:
    """Tell whether the sender can pay this transaction's gas (and value) right now."""
    return native_balance_wei(w3, tx.sender) >= gas_needed(tx)


def require_gas_for(w3: Web3, tx: SignedTx) -> None:
    """Raise InsufficientGas unless the sender can pay this transaction's gas (and value)."""
    available = native_balance_wei(w3, tx.sender)
    if available < gas_needed(tx):
        raise InsufficientGas(needed_wei=gas_needed(tx), available_wei=available)


def sendable_native_wei(balance_wei: int, fees: Fees, gas: int = NATIVE_TRANSFER_GAS) -> int:
    """Return the most native value a plain transfer can carry after reserving its gas."""
    return max(0, balance_wei - gas * fees.max_fee_per_gas)


# how nodes say "I have this exact transaction already": bor/geth, anvil, others
_ALREADY_KNOWN = ("already known", "known transaction", "already imported", "alreadyknown")


def _rpc_message(exc: Exception) -> str:
    if isinstance(exc, Web3RPCError) and isinstance(exc.rpc_response, dict):
        error = exc.rpc_response.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc)


def is_known(w3: Web3, tx_hash: str) -> bool:
    """Tell whether the node knows the transaction (pending or mined)."""
    try:
        w3.eth.get_transaction(tx_hash)  # type: ignore[arg-type]
    except TransactionNotFound:
        return False
    return True


def send_raw(w3: Web3, raw: bytes | str) -> str:
    """Broadcast a signed transaction; sending the same bytes again is a no-op that succeeds."""
    raw_bytes = Web3.to_bytes(hexstr=raw) if isinstance(raw, str) else bytes(raw)
    tx_hash = _hex(Web3.keccak(raw_bytes))
    try:
        w3.eth.send_raw_transaction(raw_bytes)
        return tx_hash
    except ChainUnavailable:
        raise
    except (Web3Exception, ValueError) as exc:
        message = _rpc_message(exc).lower()
        if any(marker in message for marker in _ALREADY_KNOWN):
            return tx_hash
        if "nonce too low" in message or "nonce has already been used" in message:
            # either our own transaction was mined already, or another one took the nonce
            if read(lambda: is_known(w3, tx_hash), "transaction lookup"):
                return tx_hash
            raise NonceConflict(f"nonce already used by another transaction: {message}") from exc
        if "insufficient funds" in message:
            sender = Account.recover_transaction(raw_bytes)
            decoded = _decode_cost(raw_bytes)
            raise InsufficientGas(decoded, native_balance_wei(w3, sender)) from exc
        raise TransactionRejected(f"transaction rejected: {_rpc_message(exc)}") from exc


def _decode_cost(raw: bytes) -> int:
    tx = TypedTransaction.from_bytes(HexBytes(raw)).as_dict()
    fee_cap = int(tx.get("maxFeePerGas", tx.get("gasPrice", 0)))
    return int(tx["gas"]) * fee_cap + int(tx.get("value", 0))


def lookup_receipt(w3: Web3, tx_hash: str) -> Receipt | None:
    """Return the receipt of a mined transaction, or None while it is pending or unknown."""
    try:
        r = w3.eth.get_transaction_receipt(tx_hash)  # type: ignore[arg-type]
    except TransactionNotFound:
        return None
    except ChainUnavailable:
        raise
    except (Web3Exception, ValueError) as exc:
        raise ChainError(f"receipt lookup failed: {exc}") from exc
    return Receipt(
        tx_hash=_hex(r["transactionHash"]),
        succeeded=int(r["status"]) == 1,
        block_number=int(r["blockNumber"]),
        gas_used=int(r["gasUsed"]),
        effective_gas_price=int(r.get("effectiveGasPrice") or 0),
    )


def wait_receipt(
    w3: Web3, tx_hash: str, timeout: float = 120.0, *, poll_interval: float = 0.25
) -> Receipt:
    """Block until the transaction is mined and return its receipt; ReceiptTimeout if not."""
    deadline = time.monotonic() + timeout
    while True:
        receipt = lookup_receipt(w3, tx_hash)
        if receipt is not None:
            return receipt
        if time.monotonic() >= deadline:
            raise ReceiptTimeout(tx_hash, timeout)
        time.sleep(poll_interval)
