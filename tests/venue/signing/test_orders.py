"""The order body's string encoder and its public stand-in write the same JSON."""

from __future__ import annotations

import json

import pytest

from venue.signing.orders import public_json_string


@pytest.mark.parametrize("text", [
    "", "owner-key", "0x" + "ab" * 32, 'clé "quoted" \\ \n\t\r\b\f', "\u2028\u2029 ✓ \x00\x1f",
    "\ud83d", "😀 emoji", "GTC",
])
def test_public_json_string_equals_the_encoder_json_dumps_uses(text: str) -> None:
    """What the body writes with json.encoder's encoder equals the public fallback's text."""
    assert public_json_string(text) == json.encoder.encode_basestring(text)  # type: ignore[attr-defined]
