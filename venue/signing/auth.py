"""CLOB auth headers: L1 (the key signs a ClobAuth message) and L2 (API-key HMAC); the
relayer's builder headers (the same HMAC under ``POLY_BUILDER_*`` names).

L1 headers use py-clob-client-v2's ClobAuth signer, L2 and builder headers its HMAC: the
official SDK's builder HMAC is the same algorithm (HMAC-SHA256 of timestamp, method, path and
body, URL-safe base64 key and digest), tests compare the two byte for byte.
"""

from __future__ import annotations

import time

from py_clob_client_v2.headers.headers import (
    POLY_ADDRESS,
    POLY_API_KEY,
    POLY_PASSPHRASE,
    POLY_SIGNATURE,
    POLY_TIMESTAMP,
    create_level_1_headers,
)
from py_clob_client_v2.signer import Signer
from py_clob_client_v2.signing.hmac import build_hmac_signature

from venue.models import ApiCreds, BuilderCreds


def l1_headers(
    private_key: str, chain_id: int, timestamp: int | None = None, nonce: int = 0
) -> dict[str, str]:
    """POLY_* headers proving control of the key (for creating/deriving API keys)."""
    ts = int(time.time()) if timestamp is None else timestamp
    return create_level_1_headers(Signer(private_key, chain_id), nonce=nonce, timestamp=ts)


def l2_headers(
    creds: ApiCreds,
    method: str,
    request_path: str,
    body: str | None = None,
    timestamp: int | None = None,
) -> dict[str, str]:
    """POLY_* API-key headers; ``method`` uppercase, ``body`` the exact text sent, path
    without the query string (and without any base-URL prefix such as the sandbox's /clob)."""
    ts = int(time.time()) if timestamp is None else timestamp
    signature = build_hmac_signature(creds.secret, str(ts), method, request_path, body)
    return {
        POLY_ADDRESS: creds.address,
        POLY_SIGNATURE: signature,
        POLY_TIMESTAMP: str(ts),
        POLY_API_KEY: creds.api_key,
        POLY_PASSPHRASE: creds.passphrase,
    }


def builder_headers(
    creds: BuilderCreds,
    method: str,
    request_path: str,
    body: str | None = None,
    timestamp: int | None = None,
) -> dict[str, str]:
    """POLY_BUILDER_* headers authenticating a relayer request as the operator's builder key
    (``body`` the exact text sent; path without the query string)."""
    if body and "'" in body:
        # The shared HMAC signs single quotes as double quotes (py-clob-client-v2's habit),
        # the relayer the text as sent: JSON can always say \u0027 instead.
        raise ValueError("builder-signed bodies must not contain ' (write it as \\u0027)")
    ts = int(time.time()) if timestamp is None else timestamp
    # The SDK accepts unpadded base64 secrets; the shared HMAC needs the padding.
    secret = creds.secret + "=" * (-len(creds.secret) % 4)
    return {
        "POLY_BUILDER_API_KEY": creds.api_key,
        "POLY_BUILDER_PASSPHRASE": creds.passphrase,
        "POLY_BUILDER_SIGNATURE": build_hmac_signature(secret, str(ts), method, request_path,
                                                       body),
        "POLY_BUILDER_TIMESTAMP": str(ts),
    }
