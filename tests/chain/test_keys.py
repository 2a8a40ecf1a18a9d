"""Wallet keys: generation and AES-GCM sealing with key ids for rotation."""

from __future__ import annotations

import base64
import os
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from chain.errors import CryptoFailure
from chain.keys import (
    address_for_key,
    decrypt_secret,
    encrypt_secret,
    generate_encryption_key,
    generate_keypair,
    is_current,
    key_id_of,
    parse_encryption_key,
    passphrase_key,
    reseal_secret,
)


def test_generated_keypair_controls_its_address() -> None:
    first, second = generate_keypair(), generate_keypair()
    assert address_for_key(first.private_key) == first.address
    assert len(first.private_key) == 32
    assert first.address != second.address
    assert first.private_key.hex() not in repr(first)


def test_roundtrip() -> None:
    key = generate_encryption_key()
    secret = generate_keypair().private_key
    token = encrypt_secret(secret, key, "k1")
    assert token.startswith("v2:k1:")
    assert secret.hex() not in token
    assert decrypt_secret(token, {"k1": key}) == secret
    # a fresh nonce each time: the same secret never seals to the same token
    assert encrypt_secret(secret, key, "k1") != token


def _flip(text: str, index: int) -> str:
    replacement = "A" if text[index] != "A" else "B"
    return text[:index] + replacement + text[index + 1 :]


def test_tampering_is_detected() -> None:
    key = generate_encryption_key()
    token = encrypt_secret(b"private key bytes", key, "k1")
    version, key_id, nonce, ciphertext = token.split(":")
    for tampered in (
        f"{version}:{key_id}:{nonce}:{_flip(ciphertext, 3)}",
        f"{version}:{key_id}:{_flip(nonce, 2)}:{ciphertext}",
        f"{version}:{key_id}:{nonce}:{ciphertext[:-4]}",
        f"v1:{key_id}:{nonce}:{ciphertext}",  # downgraded to the legacy format
        f"v3:{key_id}:{nonce}:{ciphertext}",
        f"{version}:{key_id}:{nonce}",
        "not a token",
    ):
        with pytest.raises(CryptoFailure):
            decrypt_secret(tampered, {"k1": key})


def test_key_id_is_authenticated() -> None:
    # relabelling a token with another key's id must not open it, even if both keys are equal
    key = generate_encryption_key()
    token = encrypt_secret(b"secret", key, "k1")
    relabelled = token.replace("v2:k1:", "v2:k2:", 1)
    with pytest.raises(CryptoFailure):
        decrypt_secret(relabelled, {"k1": key, "k2": key})


def test_wrong_or_unknown_key_fails() -> None:
    token = encrypt_secret(b"secret", generate_encryption_key(), "k1")
    with pytest.raises(CryptoFailure, match="authentication"):
        decrypt_secret(token, {"k1": generate_encryption_key()})
    with pytest.raises(CryptoFailure, match="no encryption key"):
        decrypt_secret(token, {"k2": generate_encryption_key()})


def test_rotation_with_two_key_ids() -> None:
    old_key, new_key = generate_encryption_key(), generate_encryption_key()
    keys = {"2025-01": old_key, "2026-01": new_key}
    old_token = encrypt_secret(b"wallet one", old_key, "2025-01")
    new_token = encrypt_secret(b"wallet two", new_key, "2026-01")
    assert decrypt_secret(old_token, keys) == b"wallet one"
    assert decrypt_secret(new_token, keys) == b"wallet two"

    resealed = reseal_secret(old_token, keys, new_key, "2026-01")
    assert key_id_of(resealed) == "2026-01"
    assert reseal_secret(resealed, keys, new_key, "2026-01") == resealed
    # once re-sealed, the retired key can be dropped
    assert decrypt_secret(resealed, {"2026-01": new_key}) == b"wallet one"
    with pytest.raises(CryptoFailure):
        decrypt_secret(old_token, {"2026-01": new_key})


def test_bad_keys_and_key_ids_are_refused() -> None:
    with pytest.raises(CryptoFailure):
        encrypt_secret(b"x", b"short", "k1")
    with pytest.raises(CryptoFailure):
        encrypt_secret(b"x", generate_encryption_key(), "has:colon")


def test_parse_encryption_key_forms() -> None:
    key = generate_encryption_key()
    assert parse_encryption_key(key.hex()) == key
    assert parse_encryption_key(base64.b64encode(key).decode()) == key
    assert parse_encryption_key(base64.urlsafe_b64encode(key).decode().rstrip("=")) == key
    with pytest.raises(CryptoFailure):
        parse_encryption_key("too short")


def legacy_token(plaintext: bytes, key: bytes, key_id: str) -> str:
    """A secret sealed the way v1 did it: only the version and key id in the associated data."""
    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, plaintext, f"v1:{key_id}".encode())

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    return f"v1:{key_id}:{b64(nonce)}:{b64(sealed)}"


def test_secret_is_bound_to_its_place() -> None:
    key = generate_encryption_key()
    token = encrypt_secret(b"wallet key", key, "k1", "trading_wallets:a:private_key_sealed")
    assert decrypt_secret(token, {"k1": key}, "trading_wallets:a:private_key_sealed") == (
        b"wallet key")
    # the same token copied to another row, or another column, does not open
    for elsewhere in ("trading_wallets:b:private_key_sealed",
                      "trading_wallets:a:venue_api_secret_sealed", ""):
        with pytest.raises(CryptoFailure, match="authentication"):
            decrypt_secret(token, {"k1": key}, elsewhere)


def test_legacy_tokens_open_and_reseal_to_the_bound_format() -> None:
    key = generate_encryption_key()
    old = legacy_token(b"wallet key", key, "k1")
    assert not is_current(old, "k1")
    # v1 bound no place: it opens wherever it is read
    assert decrypt_secret(old, {"k1": key}, "trading_wallets:a:private_key_sealed") == (
        b"wallet key")
    resealed = reseal_secret(old, {"k1": key}, key, "k1", "trading_wallets:a:private_key_sealed")
    assert resealed.startswith("v2:k1:") and is_current(resealed, "k1")
    assert decrypt_secret(resealed, {"k1": key}, "trading_wallets:a:private_key_sealed") == (
        b"wallet key")
    with pytest.raises(CryptoFailure):
        decrypt_secret(resealed, {"k1": key}, "trading_wallets:b:private_key_sealed")


def test_passphrase_key_is_scrypt_and_deterministic() -> None:
    started = time.monotonic()
    key = passphrase_key("correct horse battery staple")
    # scrypt's cost, not one hash: a guess takes measurable time and memory
    assert time.monotonic() - started > 0.01
    assert len(key) == 32
    # web and worker on different machines derive the same key from the same settings
    assert passphrase_key("correct horse battery staple") == key
    assert passphrase_key("correct horse battery staple", "deployment-7") != key
    assert passphrase_key("correct horse battery stapler") != key
