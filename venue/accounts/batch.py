"""A deposit wallet's ``Batch`` of calls, as its owner (or a session key) signs it for the
relayer's ``WALLET`` transaction (ACCOUNTS.md §2.5).

EIP-712 under the wallet's own domain (``DepositWallet``, version ``1``, the chain, the
wallet): ``Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)`` over
``Call(address target,uint256 value,bytes data)``. Hashed by hand here; tests compare the
digest and the signature with the official SDK's (which goes through eth_account).
"""

from __future__ import annotations

from dataclasses import dataclass

from eth_hash.auto import keccak

from venue.accounts.words import address_word, hex_bytes, uint_word
from venue.signing.eip712 import session_signer_envelope
from venue.signing.keys import OrderKey

_CALL_TYPE = b"Call(address target,uint256 value,bytes data)"
_CALL_TYPE_HASH = keccak(_CALL_TYPE)
# EIP-712 appends referenced struct types, sorted by name, to the primary type's string.
_BATCH_TYPE_HASH = keccak(
    b"Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)" + _CALL_TYPE)
_DOMAIN_TYPE_HASH = keccak(
    b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
_NAME_HASH = keccak(b"DepositWallet")
_VERSION_HASH = keccak(b"1")
# The official SDKs sign batches valid for ten minutes (§2.5 item 4, §9.3).
DEADLINE_SECONDS = 600


@dataclass(frozen=True, slots=True)
class Call:
    """One call the wallet makes: ``target`` with ``value`` wei and calldata ``data`` (hex)."""

    target: str
    data: str
    value: int = 0

    def as_json(self) -> dict[str, str]:
        """The call as the relayer's ``depositWalletParams.calls`` entry."""
        return {"target": self.target, "value": str(self.value), "data": self.data}


def wallet_domain_separator(chain_id: int, wallet: str) -> bytes:
    """The EIP-712 domain separator of the deposit wallet at ``wallet``."""
    return keccak(_DOMAIN_TYPE_HASH + _NAME_HASH + _VERSION_HASH + uint_word(chain_id)
                  + address_word(wallet))


def call_hash(call: Call) -> bytes:
    """hashStruct(Call)."""
    return keccak(_CALL_TYPE_HASH + address_word(call.target) + uint_word(call.value)
                  + keccak(hex_bytes(call.data)))


def batch_digest(*, chain_id: int, wallet: str, nonce: int, deadline: int,
                 calls: list[Call] | tuple[Call, ...]) -> bytes:
    """What the signer signs: keccak(0x1901 ‖ wallet domain ‖ hashStruct(Batch))."""
    calls_hash = keccak(b"".join(call_hash(call) for call in calls))
    struct = keccak(_BATCH_TYPE_HASH + address_word(wallet) + uint_word(nonce)
                    + uint_word(deadline) + calls_hash)
    return keccak(b"\x19\x01" + wallet_domain_separator(chain_id, wallet) + struct)


def sign_batch(key: OrderKey, *, chain_id: int, wallet: str, nonce: int, deadline: int,
               calls: list[Call] | tuple[Call, ...], session_signer: bool = False) -> str:
    """The hex signature for the relayer's ``WALLET`` payload: 65 bytes from the owner, or
    wrapped in the session-signer envelope when ``key`` is an authorized session key."""
    digest = batch_digest(chain_id=chain_id, wallet=wallet, nonce=nonce, deadline=deadline,
                          calls=calls)
    signature = key.sign_digest(digest)
    if session_signer:
        signature = session_signer_envelope(key.address, signature)
    return "0x" + signature.hex()


__all__ = [
    "DEADLINE_SECONDS",
    "Call",
    "batch_digest",
    "call_hash",
    "sign_batch",
    "wallet_domain_separator",
]
