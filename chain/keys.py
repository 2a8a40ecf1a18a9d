"""Trading-wallet keys: EOA generation and sealing private keys at rest (AES-256-GCM).

A sealed secret is a self-describing text token, `v2:<key id>:<nonce>:<ciphertext>` with
url-safe base64 parts. The key id names the encryption key, so keys can be rotated: new
secrets use the current key, old ones still open with the retired key until re-sealed.
The version, the key id and the secret's place (its context: table, row id, column) are bound
into the GCM tag, so none can be swapped unnoticed: a token copied to another row fails to
open. `v1` tokens (no context bound) still open; re-sealing moves them to `v2`.
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
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from chain.errors import CryptoFailure

VERSION = "v2"
LEGACY_VERSION = "v1"  # no context in the associated data; opened, never written
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
    from eth_account import Account  # a second of imports, for the few who make keys

    account = Account.create()
    return Keypair(address=account.address, private_key=bytes(account.key))


def address_for_key(private_key: bytes | str) -> str:
    """Return the checksummed address of a private key."""
    from eth_account import Account

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


# scrypt cost for passphrases: 2**15 x 8 x 128 bytes = 32 MiB and ~0.1 s per guess.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
DEFAULT_PASSPHRASE_SALT = b"copytrade/wallet-encryption-key/scrypt"


def passphrase_key(passphrase: str, salt: str = "") -> bytes:
    """Stretch a passphrase into a 32-byte key with scrypt.

    The salt is deterministic (a fixed label plus the operator's optional salt setting), so
    the web and worker machines derive the same key from the same settings; nothing is
    stored per machine.
    """
    full_salt = DEFAULT_PASSPHRASE_SALT + (b"/" + salt.encode() if salt else b"")
    return Scrypt(salt=full_salt, length=KEY_BYTES, n=SCRYPT_N, r=SCRYPT_R,
                  p=SCRYPT_P).derive(passphrase.encode())


def _aad(version: str, key_id: str, context: str) -> bytes:
    if version == LEGACY_VERSION:
        return f"{LEGACY_VERSION}:{key_id}".encode("ascii")
    return f"{version}:{key_id}:{context}".encode()


def encrypt_secret(plaintext: bytes, key: bytes, key_id: str, context: str = "") -> str:
    """Seal plaintext under a 32-byte key, bound to ``context`` (where it is stored)."""
    if len(key) != KEY_BYTES:
        raise CryptoFailure("encryption key must be 32 bytes")
    if not _KEY_ID.match(key_id):
        raise CryptoFailure("key id must be 1-64 characters of [A-Za-z0-9_-]")
    nonce = os.urandom(NONCE_BYTES)
    ciphertext = AESGCM(key).encrypt(nonce, plaintext, _aad(VERSION, key_id, context))
    return f"{VERSION}:{key_id}:{_b64(nonce)}:{_b64(ciphertext)}"


def _parts(token: str) -> list[str]:
    parts = token.split(":")
    if (len(parts) != 4 or parts[0] not in (VERSION, LEGACY_VERSION)
            or not _KEY_ID.match(parts[1])):
        raise CryptoFailure("sealed secret is malformed or of an unknown version")
    return parts


def key_id_of(token: str) -> str:
    """Return the id of the key a token was sealed with (to find secrets due for re-sealing)."""
    return _parts(token)[1]


def is_current(token: str, key_id: str) -> bool:
    """Whether a token is in the current format under ``key_id`` (nothing to re-seal)."""
    version, token_key_id = _parts(token)[:2]
    return version == VERSION and token_key_id == key_id


def decrypt_secret(token: str, keys: Mapping[str, bytes], context: str = "") -> bytes:
    """Open a sealed secret stored at ``context``; CryptoFailure if it cannot be opened."""
    version, key_id = _parts(token)[:2]
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
        return AESGCM(key).decrypt(nonce, ciphertext, _aad(version, key_id, context))
    except InvalidTag as exc:
        raise CryptoFailure("sealed secret failed authentication (tampered or wrong key)") from exc


def reseal_secret(token: str, keys: Mapping[str, bytes], key: bytes, key_id: str,
                  context: str = "") -> str:
    """Re-seal a secret under the current key and format; unchanged if already so."""
    if is_current(token, key_id):
        return token
    return encrypt_secret(decrypt_secret(token, keys, context), key, key_id, context)
