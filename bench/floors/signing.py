"""Floor of signing: an EIP-712 order digest (keccak of the struct, then of the envelope)
and one recoverable ECDSA signature with coincurve.

    .venv/bin/python bench/floors/signing.py
"""

from __future__ import annotations

import os

from coincurve import PrivateKey
from Crypto.Hash import keccak
from floor_clock import cpu_ms

KEY = PrivateKey(os.urandom(32))
TYPE_HASH = keccak.new(data=b"Order(...)", digest_bits=256).digest()
DOMAIN = keccak.new(data=b"domain", digest_bits=256).digest()
FIXED = os.urandom(32 * 6)  # maker, signer, taker, token, side, signature type


def sign() -> bytes:
    """One order signed: salt and amounts vary, the rest is the same words."""
    words = (TYPE_HASH + int.from_bytes(os.urandom(6), "big").to_bytes(32, "big") + FIXED
             + (5_000_000).to_bytes(32, "big") + (10_000_000).to_bytes(32, "big"))
    struct = keccak.new(data=words, digest_bits=256).digest()
    digest = keccak.new(data=b"\x19\x01" + DOMAIN + struct, digest_bits=256).digest()
    return KEY.sign_recoverable(digest, hasher=None)


def measure(copies: int) -> float:
    """ms of CPU per copy order (one signature per copy)."""
    return cpu_ms(sign, calls=1000)


if __name__ == "__main__":
    print(f"sign: {measure(1):.4f} ms per copy")
