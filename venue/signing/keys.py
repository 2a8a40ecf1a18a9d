"""Opened signing keys: secp256k1 through libsecp256k1 (coincurve), the address derived once.

``OrderKey`` holds an opened key with its address, so a copy burst does not re-derive it
per order; it never shows the key in a repr.
"""

from __future__ import annotations

from coincurve import PrivateKey
from coincurve.utils import GROUP_ORDER_INT
from eth_account import Account
from eth_hash.auto import keccak
from eth_utils import to_checksum_address


class OrderKey:
    """An opened signing key with its address derived once (never log or repr the key)."""

    __slots__ = ("_key", "_private_key", "address")

    def __init__(self, private_key: str | bytes) -> None:
        raw = (bytes.fromhex(private_key.removeprefix("0x")) if isinstance(private_key, str)
               else bytes(private_key))
        self._key = PrivateKey(raw)
        self._private_key = "0x" + raw.hex()
        public = self._key.public_key.format(compressed=False)[1:]
        self.address: str = to_checksum_address(keccak(public)[-20:])

    @property
    def private_key(self) -> str:
        """The hex key, for the library's L1 signer (API-key derivation only)."""
        return self._private_key

    def sign_digest(self, digest: bytes) -> bytes:
        """65-byte Ethereum signature (r, s, v = 27/28) of a 32-byte digest."""
        raw = self._key.sign_recoverable(digest, hasher=None)
        return raw[:64] + bytes([raw[64] + 27])

    def __repr__(self) -> str:
        return f"OrderKey(address={self.address!r}, key=<hidden>)"


def is_private_key(raw: bytes) -> bool:
    """Whether ``raw`` is a secp256k1 private key: 32 bytes, above 0 and below the group order."""
    return len(raw) == 32 and 0 < int.from_bytes(raw, "big") < GROUP_ORDER_INT


def order_key(private_key: str | OrderKey) -> OrderKey:
    """``private_key`` as an OrderKey (opened now when given as hex)."""
    return private_key if isinstance(private_key, OrderKey) else OrderKey(private_key)


def address_of(private_key: str) -> str:
    """Checksummed address of a private key."""
    return Account.from_key(private_key).address
