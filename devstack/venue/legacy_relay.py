"""The relayer's legacy ``PROXY`` and ``SAFE`` transactions as the relayer checks them
(ACCOUNTS.md §5, §10): grandfathered proxy wallets (type 1) and 1-of-1 Safes (type 2) run
calls gaslessly, signed by their owner.

- PROXY: ``to`` is the proxy factory, ``data`` its ``proxy((uint8,address,uint256,bytes)[])``
  (type code 1 = call); the owner personal-signs ``keccak("rlx:" ‖ from ‖ to ‖ data ‖
  relayerFee ‖ gasPrice ‖ gasLimit ‖ nonce ‖ relayHub ‖ relay)``. The relay and the nonce
  come from ``GET /relay-payload?address&type=PROXY``.
- SAFE: ``to``/``data`` is one call (operation 0) or MultiSend's ``multiSend(bytes)`` by
  delegatecall (operation 1); the owner signs the EIP-712 ``SafeTx`` hash (domain: chainId,
  the Safe), personal-signed with ``v`` + 4 (Safe's eth_sign marker) or plainly (v 27/28).

Written from the contracts' rules, not from the product's code (the devstack imports none).
"""

from __future__ import annotations

from eth_abi import decode as abi_decode
from eth_utils import keccak, to_checksum_address

from devstack.venue.auth import recover_digest_signer
from devstack.venue.batch import WalletCall

# Polygon's addresses (the SDK's environment): the proxy factory and relay hub a PROXY
# transaction names, and the MultiSend a Safe may delegatecall.
PROXY_FACTORY = "0xaB45c5A4B0c941a2F231C04C3f49182e1A254052"
RELAY_HUB = "0xD216153c06E857cD7f72665E0aF1d7D82172F494"
SAFE_MULTISEND = "0xA238CBeb142c10Ef7Ad8442C6D1f9E89e07e7761"
# The relay address ``/relay-payload`` hands out (the venue's relay node; any fixed one).
RELAY_ADDRESS = to_checksum_address("0x7a2ba8f0c2f4b8b9e2c17d1d6a8a4d0b1b0b4c1e")
_ZERO = "0x" + "00" * 20
_PROXY_SELECTOR = keccak(text="proxy((uint8,address,uint256,bytes)[])")[:4]
_MULTI_SEND_SELECTOR = keccak(text="multiSend(bytes)")[:4]
_SAFE_TX_TYPE_HASH = keccak(
    text="SafeTx(address to,uint256 value,bytes data,uint8 operation,uint256 safeTxGas,"
         "uint256 baseGas,uint256 gasPrice,address gasToken,address refundReceiver,"
         "uint256 nonce)")
_SAFE_DOMAIN_TYPE_HASH = keccak(text="EIP712Domain(uint256 chainId,address verifyingContract)")


class Malformed(ValueError):
    """The payload cannot be what the SDK builds (the relayer's ``invalid … payload``)."""


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _address(value: str) -> bytes:
    raw = bytes.fromhex(value.removeprefix("0x"))
    if len(raw) != 20:
        raise Malformed(f"not an address: {value!r}")
    return raw


def _personal(message_hash: bytes) -> bytes:
    return keccak(b"\x19Ethereum Signed Message:\n32" + message_hash)


def proxy_calls(data: bytes) -> list[WalletCall]:
    """The calls of a proxy factory ``proxy(...)`` calldata (every one a plain call)."""
    if data[:4] != _PROXY_SELECTOR:
        raise Malformed("data is not the proxy factory's proxy(calls)")
    try:
        (entries,) = abi_decode(["(uint8,address,uint256,bytes)[]"], data[4:])
    except Exception as exc:  # malformed calldata is a bad payload, never a 500
        raise Malformed("malformed proxy calldata") from exc
    if not entries or any(code != 1 for code, *_ in entries):
        raise Malformed("proxy calls must be plain calls (type code 1)")
    return [WalletCall(to_checksum_address(to), int(value), bytes(payload))
            for _code, to, value, payload in entries]


def proxy_signer(*, sender: str, to: str, data: bytes, relayer_fee: int, gas_price: int,
                 gas_limit: int, nonce: int, relay_hub: str, relay: str,
                 signature: str) -> str | None:
    """Who personal-signed the relay hub's hash of a PROXY transaction (None when bad)."""
    digest = keccak(b"rlx:" + _address(sender) + _address(to) + data + _word(relayer_fee)
                    + _word(gas_price) + _word(gas_limit) + _word(nonce) + _address(relay_hub)
                    + _address(relay))
    return recover_digest_signer(_personal(digest), signature)


def safe_calls(to: str, data: bytes, value: int, operation: int) -> list[WalletCall]:
    """The calls a Safe transaction makes: itself (operation 0), or MultiSend's packed calls
    (operation 1, only to MultiSend: a Safe delegatecalls nothing else here)."""
    if operation == 0:
        return [WalletCall(to_checksum_address(to), value, data)]
    if operation != 1 or to.lower() != SAFE_MULTISEND.lower():
        raise Malformed("a Safe delegatecalls only the MultiSend contract")
    if data[:4] != _MULTI_SEND_SELECTOR:
        raise Malformed("data is not MultiSend's multiSend(bytes)")
    try:
        (packed,) = abi_decode(["bytes"], data[4:])
    except Exception as exc:
        raise Malformed("malformed multiSend calldata") from exc
    calls, at = [], 0
    while at < len(packed):
        if len(packed) < at + 85:
            raise Malformed("truncated multiSend entry")
        if packed[at] != 0:
            raise Malformed("multiSend entries must be calls (operation 0)")
        target = to_checksum_address(packed[at + 1:at + 21])
        amount = int.from_bytes(packed[at + 21:at + 53], "big")
        length = int.from_bytes(packed[at + 53:at + 85], "big")
        if len(packed) < at + 85 + length:
            raise Malformed("truncated multiSend entry")
        calls.append(WalletCall(target, amount, bytes(packed[at + 85:at + 85 + length])))
        at += 85 + length
    if not calls:
        raise Malformed("multiSend with no calls")
    return calls


def safe_signer(*, chain_id: int, safe: str, to: str, value: int, data: bytes,
                operation: int, nonce: int, signature: str) -> str | None:
    """Who signed a SafeTx (no gas refund) for ``safe``: eth_sign (v 31/32) or plain
    (v 27/28), as the Safe's ``checkSignatures`` reads a single owner's signature."""
    domain = keccak(_SAFE_DOMAIN_TYPE_HASH + _word(chain_id) + bytes(12) + _address(safe))
    struct = keccak(_SAFE_TX_TYPE_HASH + bytes(12) + _address(to) + _word(value) + keccak(data)
                    + _word(operation) + _word(0) * 3 + bytes(32) * 2 + _word(nonce))
    digest = keccak(b"\x19\x01" + domain + struct)
    try:
        raw = bytes.fromhex(signature.removeprefix("0x"))
    except ValueError:
        return None
    if len(raw) != 65:
        return None
    if raw[64] in (31, 32):
        return recover_digest_signer(_personal(digest), "0x" + (raw[:64] + bytes(
            [raw[64] - 4])).hex())
    return recover_digest_signer(digest, signature)


def zero_address(value: object) -> bool:
    """Whether ``value`` is the zero address (a Safe refund field the relayer leaves empty)."""
    return str(value).lower() == _ZERO


__all__ = ["PROXY_FACTORY", "RELAY_ADDRESS", "RELAY_HUB", "SAFE_MULTISEND", "Malformed",
           "proxy_calls", "proxy_signer", "safe_calls", "safe_signer", "zero_address"]
