"""The relayer's legacy ``PROXY`` and ``SAFE`` transactions (ACCOUNTS.md §5, §10): how a
grandfathered proxy wallet (type 1) or 1-of-1 Safe (type 2) runs calls gaslessly, built and
signed as the official SDK builds them (``polymarket-client`` relayer ``gasless.py``,
``calls.py``, ``signing/{proxy,safe}.py``); tests compare them byte for byte.

- PROXY: the proxy factory's ``proxy((uint8,address,uint256,bytes)[])`` (type code 1 =
  call) from the owner; the owner personal-signs
  ``keccak("rlx:" ‖ from ‖ to ‖ data ‖ relayerFee ‖ gasPrice ‖ gasLimit ‖ nonce ‖ relayHub ‖
  relay)``, the relay address and nonce coming from the relayer's ``/relay-payload``.
- SAFE: one call goes to its target (operation 0); several go as MultiSend's
  ``multiSend(bytes)`` by delegatecall (operation 1). The owner personal-signs the EIP-712
  ``SafeTx`` hash (domain: chainId and the Safe only) and ``v`` moves up by 4 (Safe's
  eth_sign marker).
"""

from __future__ import annotations

from typing import Any

from eth_hash.auto import keccak

from venue.accounts.approvals import selector
from venue.accounts.batch import Call
from venue.accounts.relayer_payloads import checked_metadata
from venue.accounts.words import address_bytes, address_word, dynamic_bytes, hex_bytes, uint_word
from venue.signing.keys import OrderKey

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
# What the SDK signs for a proxy transaction: no fee, no gas price, and the gas limit it
# falls back to when it cannot estimate (we never estimate: the relayer pays the gas).
PROXY_RELAYER_FEE = 0
PROXY_GAS_PRICE = 0
PROXY_GAS_LIMIT = 200_000
_PROXY = selector("proxy((uint8,address,uint256,bytes)[])")
_PROXY_CALL = 1  # the proxy factory's type code of a plain call
_PROXY_PREFIX = b"rlx:"
_MULTI_SEND = selector("multiSend(bytes)")
SAFE_CALL, SAFE_DELEGATECALL = 0, 1
_SAFE_TX_TYPE_HASH = keccak(
    b"SafeTx(address to,uint256 value,bytes data,uint8 operation,uint256 safeTxGas,"
    b"uint256 baseGas,uint256 gasPrice,address gasToken,address refundReceiver,"
    b"uint256 nonce)")
_SAFE_DOMAIN_TYPE_HASH = keccak(b"EIP712Domain(uint256 chainId,address verifyingContract)")


def _personal_digest(message_hash: bytes) -> bytes:
    return keccak(b"\x19Ethereum Signed Message:\n32" + message_hash)


# --- PROXY ---------------------------------------------------------------------------------


def proxy_calldata(calls: list[Call] | tuple[Call, ...]) -> str:
    """The proxy factory's ``proxy(calls)`` calldata, each call with type code 1."""
    if not calls:
        raise ValueError("a PROXY transaction needs at least one call")
    heads, tails = [], b""
    offset = 32 * len(calls)
    for call in calls:
        heads.append(uint_word(offset))
        data = hex_bytes(call.data)
        tail = (uint_word(_PROXY_CALL) + address_word(call.target) + uint_word(call.value)
                + uint_word(4 * 32) + dynamic_bytes(data))
        tails += tail
        offset += len(tail)
    array = uint_word(len(calls)) + b"".join(heads) + tails
    return "0x" + (_PROXY + uint_word(32) + array).hex()


def proxy_transaction_hash(*, signer: str, factory: str, data: str, gas_limit: int, nonce: int,
                           relay_hub: str, relay: str) -> bytes:
    """What the owner personal-signs for a PROXY transaction (the relay hub's hash)."""
    return keccak(_PROXY_PREFIX + address_bytes(signer) + address_bytes(factory)
                  + hex_bytes(data) + uint_word(PROXY_RELAYER_FEE) + uint_word(PROXY_GAS_PRICE)
                  + uint_word(gas_limit) + uint_word(nonce) + address_bytes(relay_hub)
                  + address_bytes(relay))


def proxy_payload(key: OrderKey, *, factory: str, wallet: str, calls: list[Call] | tuple[Call, ...],
                  nonce: int, relay: str, relay_hub: str, gas_limit: int = PROXY_GAS_LIMIT,
                  metadata: str = "") -> dict[str, Any]:
    """The signed ``PROXY`` submit body running ``calls`` from the proxy ``wallet``."""
    data = proxy_calldata(calls)
    digest = proxy_transaction_hash(signer=key.address, factory=factory, data=data,
                                    gas_limit=gas_limit, nonce=nonce, relay_hub=relay_hub,
                                    relay=relay)
    signature = "0x" + key.sign_digest(_personal_digest(digest)).hex()
    return {
        "type": "PROXY", "from": key.address, "to": factory, "proxyWallet": wallet,
        "data": data, "nonce": str(nonce), "signature": signature,
        "metadata": checked_metadata(metadata),
        "signatureParams": {"gasLimit": str(gas_limit), "gasPrice": str(PROXY_GAS_PRICE),
                            "relay": relay, "relayHub": relay_hub,
                            "relayerFee": str(PROXY_RELAYER_FEE)},
    }


# --- SAFE ----------------------------------------------------------------------------------


def multisend_calldata(calls: list[Call] | tuple[Call, ...]) -> str:
    """MultiSend's ``multiSend(packed)``: each call as operation ‖ to ‖ value ‖ length ‖ data."""
    if not calls:
        raise ValueError("a SAFE transaction needs at least one call")
    packed = b"".join(bytes([SAFE_CALL]) + address_bytes(call.target) + uint_word(call.value)
                      + uint_word(len(hex_bytes(call.data))) + hex_bytes(call.data)
                      for call in calls)
    return "0x" + (_MULTI_SEND + uint_word(32) + dynamic_bytes(packed)).hex()


def safe_transaction(calls: list[Call] | tuple[Call, ...], multisend: str
                     ) -> tuple[str, str, int, int]:
    """(to, data, value, operation) of the Safe's one transaction running ``calls``."""
    if len(calls) == 1:
        return calls[0].target, calls[0].data, calls[0].value, SAFE_CALL
    return multisend, multisend_calldata(calls), 0, SAFE_DELEGATECALL


def safe_tx_hash(*, chain_id: int, safe: str, to: str, data: str, value: int, operation: int,
                 nonce: int) -> bytes:
    """The EIP-712 ``SafeTx`` digest (no gas refund: the relayer pays)."""
    domain = keccak(_SAFE_DOMAIN_TYPE_HASH + uint_word(chain_id) + address_word(safe))
    struct = keccak(_SAFE_TX_TYPE_HASH + address_word(to) + uint_word(value)
                    + keccak(hex_bytes(data)) + uint_word(operation) + uint_word(0)
                    + uint_word(0) + uint_word(0) + address_word(ZERO_ADDRESS)
                    + address_word(ZERO_ADDRESS) + uint_word(nonce))
    return keccak(b"\x19\x01" + domain + struct)


def safe_payload(key: OrderKey, *, chain_id: int, multisend: str, wallet: str,
                 calls: list[Call] | tuple[Call, ...], nonce: int, metadata: str = ""
                 ) -> dict[str, Any]:
    """The signed ``SAFE`` submit body running ``calls`` from the Safe ``wallet``."""
    to, data, value, operation = safe_transaction(calls, multisend)
    digest = safe_tx_hash(chain_id=chain_id, safe=wallet, to=to, data=data, value=value,
                          operation=operation, nonce=nonce)
    raw = key.sign_digest(_personal_digest(digest))
    signature = "0x" + (raw[:64] + bytes([raw[64] + 4])).hex()
    payload: dict[str, Any] = {
        "type": "SAFE", "from": key.address, "to": to, "proxyWallet": wallet, "data": data,
        "nonce": str(nonce), "signature": signature, "metadata": checked_metadata(metadata),
        "signatureParams": {"baseGas": "0", "gasPrice": "0", "gasToken": ZERO_ADDRESS,
                            "operation": str(operation), "refundReceiver": ZERO_ADDRESS,
                            "safeTxnGas": "0"},
    }
    if value > 0:
        payload["value"] = str(value)
    return payload


__all__ = [
    "PROXY_GAS_LIMIT",
    "SAFE_CALL",
    "SAFE_DELEGATECALL",
    "multisend_calldata",
    "proxy_calldata",
    "proxy_payload",
    "proxy_transaction_hash",
    "safe_payload",
    "safe_transaction",
    "safe_tx_hash",
]
