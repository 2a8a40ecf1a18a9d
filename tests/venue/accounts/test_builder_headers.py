"""Builder HMAC headers: our one HMAC (py-clob-client-v2's, shared with L2) under the builder
names gives the SDK's headers byte for byte."""

from __future__ import annotations

import json

import pytest

from tests.sdk_env import sdk_result
from venue.models import BuilderCreds
from venue.signing.auth import builder_headers

SDK_HEADERS = """
import time
from polymarket.auth import BuilderApiKey
from polymarket._internal.actions.relayer.auth import build_builder_key_headers
result = []
for secret, method, path, body, ts in payload["cases"]:
    time.time = lambda ts=ts: ts + 0.75  # the SDK reads the clock; pin it
    creds = BuilderApiKey(key="builder-key", secret=secret, passphrase="builder-pass")
    result.append(build_builder_key_headers(creds=creds, method=method, path=path, body=body))
"""

PADDED = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
SECRETS = [PADDED, PADDED.rstrip("="), "c2VjcmV0LWZvci1idWlsZGVyLWtleS0xMjM0NTY3OA==",
           "c2VjcmV0LWZvci1idWlsZGVyLWtleS0xMjM0NTY3OA", "-_-_YWJjZA"]
BODIES = [None, "", json.dumps({"type": "WALLET-CREATE", "from": "0xabc", "to": "0xdef",
                                "metadata": "ü \\u0027"}, separators=(",", ":")),
          json.dumps({"type": "WALLET", "nonce": "31", "metadata": "a b"})]


def test_builder_headers_match_the_sdk() -> None:
    cases = [[secret, method, path, body, 1_790_000_000 + i]
             for i, (secret, (method, path), body) in enumerate(
                 (s, mp, b) for s in SECRETS
                 for mp in (("POST", "/submit"), ("GET", "/v1/account/transactions/params"))
                 for b in BODIES)]
    theirs = sdk_result(SDK_HEADERS, {"cases": cases})
    mine = [builder_headers(BuilderCreds("builder-key", secret, "builder-pass"), method, path,
                            body, timestamp=ts)
            for secret, method, path, body, ts in cases]
    assert mine == theirs


def test_a_single_quote_in_the_body_is_refused() -> None:
    """The shared HMAC would sign ' as "; the relayer signs the text as sent."""
    with pytest.raises(ValueError, match="u0027"):
        builder_headers(BuilderCreds("k", PADDED, "p"), "POST", "/submit", '{"metadata":"it\'s"}')


def test_builder_creds_never_show_their_secret() -> None:
    creds = BuilderCreds("builder-key", "top-secret", "pass-phrase")
    assert "top-secret" not in repr(creds) and "pass-phrase" not in repr(creds)
