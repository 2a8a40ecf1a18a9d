"""Venue authentication as Polymarket does it: L1 ClobAuth signatures, API creds, L2 HMAC."""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from functools import lru_cache

from coincurve import PublicKey
from eth_abi import encode as abi_encode
from eth_utils import keccak, to_checksum_address

CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet"

_DOMAIN_TYPE_HASH = keccak(text="EIP712Domain(string name,string version,uint256 chainId)")
_CLOB_AUTH_TYPE_HASH = keccak(
    text="ClobAuth(address address,string timestamp,uint256 nonce,string message)"
)


def clob_auth_digest(chain_id: int, address: str, timestamp: str, nonce: int) -> bytes:
    """Return the EIP-712 digest a wallet signs for L1 (ClobAuthDomain, version 1)."""
    domain = keccak(
        abi_encode(
            ["bytes32", "bytes32", "bytes32", "uint256"],
            [_DOMAIN_TYPE_HASH, keccak(text="ClobAuthDomain"), keccak(text="1"), chain_id],
        )
    )
    struct = keccak(
        abi_encode(
            ["bytes32", "address", "bytes32", "uint256", "bytes32"],
            [
                _CLOB_AUTH_TYPE_HASH,
                to_checksum_address(address),
                keccak(text=timestamp),
                nonce,
                keccak(text=CLOB_AUTH_MESSAGE),
            ],
        )
    )
    return keccak(b"\x19\x01" + domain + struct)


@lru_cache(maxsize=8192)
def _address_of(public_key: bytes) -> str:
    return to_checksum_address(keccak(public_key[1:])[-20:])


def recover_digest_signer(digest: bytes, signature: str) -> str | None:
    """Return the checksummed address that signed digest, or None if the signature is bad."""
    try:
        raw = bytes.fromhex(signature.removeprefix("0x"))
        if len(raw) != 65 or raw[64] not in (0, 1, 27, 28):
            return None
        recovery_id = raw[64] - 27 if raw[64] >= 27 else raw[64]
        # libsecp256k1 directly (what eth_account uses underneath, minus its layers).
        public = PublicKey.from_signature_and_message(raw[:64] + bytes([recovery_id]),
                                                      digest, hasher=None)
        return _address_of(public.format(compressed=False))
    except Exception:  # malformed r/s/v: treat as an invalid signature, never a 500
        return None


def verify_l1(chain_id: int, address: str, signature: str, timestamp: str, nonce: str) -> bool:
    """True when signature is address's ClobAuth signature over timestamp and nonce."""
    try:
        nonce_int = int(nonce or "0")
        digest = clob_auth_digest(chain_id, address, timestamp, nonce_int)
    except (ValueError, TypeError):
        return False
    signer = recover_digest_signer(digest, signature)
    return signer is not None and signer.lower() == address.lower()


def derive_credentials(server_secret: bytes, address: str, nonce: int) -> dict[str, str]:
    """Deterministic creds for (address, nonce): same pair, same key, like the venue."""
    seed = hmac.new(
        server_secret, f"{address.lower()}:{nonce}".encode(), hashlib.sha256
    ).digest()
    api_key = str(uuid.UUID(bytes=seed[:16], version=4))
    secret_bytes = hashlib.sha256(seed + b"secret").digest()
    passphrase = hashlib.sha256(seed + b"passphrase").hexdigest()
    return {
        "apiKey": api_key,
        "secret": base64.urlsafe_b64encode(secret_bytes).decode(),
        "passphrase": passphrase,
    }


def hmac_signature(secret: str, timestamp: str, method: str, path: str, body: str) -> str:
    """URL-safe base64 HMAC-SHA256 of timestamp+METHOD+path+body, as py-clob-client-v2 signs."""
    key = base64.urlsafe_b64decode(secret)
    message = f"{timestamp}{method}{path}{body}"
    digest = hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()


def verify_hmac(
    secret: str, signature: str, timestamp: str, method: str, path: str, body: str
) -> bool:
    """Constant-time check of an L2 POLY_SIGNATURE header."""
    try:
        expected = hmac_signature(secret, timestamp, method, path, body)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(expected, signature or "")
