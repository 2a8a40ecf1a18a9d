"""Which exchange version an order is signed for: the venue's ``GET /version`` and the token.

The venue announces the order version it accepts (``{"version": N}``, 2 after the V2
cutover); a bump shows up as ``order_version_mismatch`` on every order signed for the old
one. Markets whose outcomes carry protocol-v2 *position ids* trade on Exchange V3 whatever
the announced version (the official SDK decides the same way, from the token id alone).
Pure: the holder is updated by whoever read ``/version``.
"""

from __future__ import annotations

import threading
import time

DEFAULT_ORDER_VERSION = 2
SUPPORTED_ORDER_VERSIONS = (2, 3)
VERSION_MISMATCH = "order_version_mismatch"  # the venue's error text on a stale version

# A position id leaves these 64 bits (40..103) zero; a CTF token id (a keccak) never does.
_POSITION_ID_RESERVED_BITS = ((1 << 64) - 1) << 40


def is_position_id(token_id: str | int) -> bool:
    """True when ``token_id`` is a protocol-v2 position id (a market traded on Exchange V3)."""
    text = str(token_id).strip()
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return False
    return 0 <= value < 2**256 and value & _POSITION_ID_RESERVED_BITS == 0


def balance_asset_type(token_id: str | int | None) -> str:
    """The ``asset_type`` of a ``/balance-allowance`` read: ``COLLATERAL`` for pUSD (no
    token), ``CONDITIONAL-V2`` for a protocol-v2 position, ``CONDITIONAL`` for a CTF token
    (ACCOUNTS.md §5, §11; the official SDK decides from the id alone, as here)."""
    if token_id is None or str(token_id) == "":
        return "COLLATERAL"
    return "CONDITIONAL-V2" if is_position_id(token_id) else "CONDITIONAL"


def exchange_version_for(token_id: str | int, venue_version: int) -> str:
    """The EIP-712 domain version ("2" or "3") an order for ``token_id`` is signed with."""
    if venue_version not in SUPPORTED_ORDER_VERSIONS:
        raise ValueError(f"the venue asks for order version {venue_version}; this build signs "
                         f"versions {', '.join(map(str, SUPPORTED_ORDER_VERSIONS))}")
    return "3" if venue_version >= 3 or is_position_id(token_id) else "2"


def is_version_mismatch(message: object) -> bool:
    """True when a venue refusal says the order was signed for a stale version."""
    return VERSION_MISMATCH in str(message)


class OrderVersion:
    """The order version the venue last announced (shared by one venue's signers)."""

    def __init__(self, value: int = DEFAULT_ORDER_VERSION) -> None:
        self._lock = threading.Lock()
        self.value = value
        self.read_at: float | None = None  # monotonic time of the last /version read

    def update(self, value: int) -> bool:
        """Record a freshly read version; True when it changed."""
        with self._lock:
            changed, self.value, self.read_at = value != self.value, value, time.monotonic()
        return changed


__all__ = ["DEFAULT_ORDER_VERSION", "SUPPORTED_ORDER_VERSIONS", "VERSION_MISMATCH",
           "OrderVersion", "balance_asset_type", "exchange_version_for", "is_position_id",
           "is_version_mismatch"]
