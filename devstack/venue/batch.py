"""A deposit wallet's signed ``Batch`` as the relayer checks it (ACCOUNTS.md §2.5).

EIP-712 under the wallet's domain (``DepositWallet``, version ``1``, chain, wallet):
``Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)`` over
``Call(address target,uint256 value,bytes data)``. The signature is 65 bytes from the owner,
or a session signer's 65 bytes in the envelope
``abi.encode(bytes32(signer), bytes32(0), bytes sig) ‖ 0x6492…6492`` (§2.5 item 5).
"""

from __future__ import annotations

from dataclasses import dataclass

from eth_abi import decode as abi_decode
from eth_abi import encode as abi_encode
from eth_utils import keccak, to_checksum_address

from devstack.venue.auth import recover_digest_signer

_CALL_TYPE = "Call(address target,uint256 value,bytes data)"
_CALL_TYPE_HASH = keccak(text=_CALL_TYPE)
_BATCH_TYPE_HASH = keccak(
    text="Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)" + _CALL_TYPE)
_DOMAIN_TYPE_HASH = keccak(
    text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
SESSION_MAGIC = bytes.fromhex("64926492" * 8)


@dataclass(frozen=True)
class WalletCall:
    """One call of a batch: ``target`` with ``value`` wei and calldata ``data``."""

    target: str
    value: int
    data: bytes


def batch_digest(chain_id: int, wallet: str, nonce: int, deadline: int,
                 calls: list[WalletCall]) -> bytes:
    """keccak(0x1901 ‖ wallet domain ‖ hashStruct(Batch)): what the signer signed."""
    domain = keccak(abi_encode(
        ["bytes32", "bytes32", "bytes32", "uint256", "address"],
        [_DOMAIN_TYPE_HASH, keccak(text="DepositWallet"), keccak(text="1"), chain_id,
         to_checksum_address(wallet)]))
    call_hashes = b"".join(
        keccak(abi_encode(["bytes32", "address", "uint256", "bytes32"],
                          [_CALL_TYPE_HASH, to_checksum_address(c.target), c.value,
                           keccak(c.data)]))
        for c in calls)
    struct = keccak(abi_encode(
        ["bytes32", "address", "uint256", "uint256", "bytes32"],
        [_BATCH_TYPE_HASH, to_checksum_address(wallet), nonce, deadline, keccak(call_hashes)]))
    return keccak(b"\x19\x01" + domain + struct)


def open_session_envelope(raw: bytes) -> tuple[str, bytes] | None:
    """(the session signer it names, the signature inside) of a session-signer envelope;
    None when ``raw`` is not one (or is malformed)."""
    if len(raw) < 32 * 4 or raw[-32:] != SESSION_MAGIC:
        return None
    try:
        named, _zero, inner = abi_decode(["bytes32", "bytes32", "bytes"], raw[:-32])
    except Exception:  # a malformed envelope is a bad signature, never a 500
        return None
    return to_checksum_address(named[-20:]), bytes(inner)


def batch_signer(digest: bytes, signature: str) -> tuple[str | None, bool]:
    """(who signed, whether through the session-signer envelope); (None, …) when bad.

    An envelope names its signer; the inner signature must recover to that same address.
    """
    try:
        raw = bytes.fromhex(signature.removeprefix("0x"))
    except ValueError:
        return None, False
    if len(raw) == 65:
        return recover_digest_signer(digest, "0x" + raw.hex()), False
    opened = open_session_envelope(raw)
    if opened is None:
        return None, True
    claimed, inner = opened
    signer = recover_digest_signer(digest, "0x" + inner.hex()) if len(inner) == 65 else None
    return (claimed if signer == claimed else None), True
