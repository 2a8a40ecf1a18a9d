"""Trading-wallet keys: EOA generation and sealing private keys at rest (AES-256-GCM).

A sealed secret is a self-describing text token, `v1:<key id>:<nonce>:<ciphertext>` with
url-safe base64 parts. The key id names the encryption key, so keys can be rotated: new
secrets use the current key, old ones still open with the retired key until re-sealed.
The version and key id are bound into the GCM tag, so they cannot be swapped unnoticed.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eth_account import Account

from chain.errors import CryptoFailure

VERSION = "v1"
KEY_BYTES = 32
NONCE_BYTES = 12
_KEY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Keypair:
    """A fresh externally owned account."""

    address: str
    private_key: bytes

    def __repr__(self) -> str:
        # never let a key reach a log line through repr()
        return f"Keypair(address={self.address!r}, private_key=<hidden>)"


def generate_keypair() -> Keypair:
    """Create a new EOA from the operating system's CSPRNG."""
    account = Account.create()
    return Keypair(address=account.address, private_key=bytes(account.key))


def address_for_key(private_key: bytes | str) -> str:
    """Return the checksummed address of a private key."""
    return Account.from_key(private_key).address


def generate_encryption_key() -> bytes:
    """Return a new random 32-byte AES-256 key."""
    return os.urandom(KEY_BYTES)


def parse_encryption_key(text: str) -> bytes:
    """Read a 32-byte key written as 64 hex digits or base64 (standard or url-safe)."""
    text = text.strip()
    candidates: list[bytes] = []
    if re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", text):
        candidates.append(bytes.fromhex(text.removeprefix("0x")))
    for decode in (base64.urlsafe_b64decode, base64.standard_b64decode):
        with contextlib.suppress(binascii.Error, ValueError):
            candidates.append(decode(text + "=" * (-len(text) % 4)))
    for key in candidates:
        if len(key) == KEY_BYTES:
            return key
    raise CryptoFailure("encryption key must be 32 bytes, as 64 hex digits or base64")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise CryptoFailure("sealed secret is malformed")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _aad(key_id: str) -> bytes:
    return f"{VERSION}:{key_id}".encode("ascii")


def encrypt_secret(plaintext: bytes, key: bytes, key_id: str) -> str:
    """Seal plaintext under a 32-byte key; the token names the key by key_id."""
    if len(key) != KEY_BYTES:
        raise CryptoFailure("encryption key must be 32 bytes")
    if not _KEY_ID.match(key_id):
        raise CryptoFailure("key id must be 1-64 characters of [A-Za-z0-9_-]")
    nonce = os.urandom(NONCE_BYTES)
    ciphertext = AESGCM(key).encrypt(nonce, plaintext, _aad(key_id))
    return f"{VERSION}:{key_id}:{_b64(nonce)}:{_b64(ciphertext)}"


def key_id_of(token: str) -> str:
    """Return the id of the key a token was sealed with (to find secrets due for re-sealing)."""
    parts = token.split(":")
    if len(parts) != 4 or parts[0] != VERSION or not _KEY_ID.match(parts[1]):
        raise CryptoFailure("sealed secret is malformed or of an unknown version")
    return parts[1]


def decrypt_secret(token: str, keys: Mapping[str, bytes]) -> bytes:
    """Open a sealed secret with the key its id names; CryptoFailure if it cannot be opened."""
    key_id = key_id_of(token)
    key = keys.get(key_id)
    if key is None:
        raise CryptoFailure(f"no encryption key with id {key_id!r}")
    if len(key) != KEY_BYTES:
        raise CryptoFailure("encryption key must be 32 bytes")
    _, _, nonce_text, ciphertext_text = token.split(":")
    nonce, ciphertext = _unb64(nonce_text), _unb64(ciphertext_text)
    if len(nonce) != NONCE_BYTES:
        raise CryptoFailure("sealed secret is malformed")
    try:
        return AESGCM(key).decrypt(nonce, ciphertext, _aad(key_id))
    except InvalidTag as exc:
        raise CryptoFailure("sealed secret failed authentication (tampered or wrong key)") from exc


def reseal_secret(token: str, keys: Mapping[str, bytes], key: bytes, key_id: str) -> str:
    """Re-seal a secret under the current key (rotation); unchanged if already under key_id."""
    if key_id_of(token) == key_id:
        return token
    return encrypt_secret(decrypt_secret(token, keys), key, key_id)
