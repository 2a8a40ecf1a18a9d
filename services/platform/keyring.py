"""Purpose-bound keys derived from SECRET_KEY, and the keyed hash used for stored secrets.

One SECRET_KEY signs sessions and keys every stored hash; each use gets its own
derived key so a value made for one purpose is useless for another.
"""

from __future__ import annotations

import hashlib
import hmac


def derive_key(secret_key: str, purpose: str) -> bytes:
    """A 32-byte key for ``purpose`` derived from the server's SECRET_KEY."""
    return hmac.new(secret_key.encode(), b"copytrade/" + purpose.encode(),
                    hashlib.sha256).digest()


def keyed_hash(secret_key: str, purpose: str, value: str) -> str:
    """HMAC-SHA256 of ``value`` under the ``purpose`` key, as 64 hex characters."""
    return hmac.new(derive_key(secret_key, purpose), value.encode(), hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time string comparison."""
    return hmac.compare_digest(a.encode(), b.encode())
