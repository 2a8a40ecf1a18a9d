"""Following the venue's order version: ``GET /version``, and a rebuild on a bump.

The venue announces the order version it accepts; orders signed for another are refused
with ``order_version_mismatch``. The version is read once per process (before the first
order is signed) and again on such a refusal; the refused order is then signed again for
the new version, its record re-stamped with the new hash and body (before it is sent, so
a lost answer is still reconciled by the hash that went out), and sent once more.
"""

from __future__ import annotations

import logging

from models.trading import ORDER_PENDING, Order
from services.platform import venues
from venue.client import VenueClient
from venue.clob import ClobApi
from venue.errors import VenueError, VenueRejected
from venue.order_versions import is_version_mismatch
from venue.relayer import Steps
from venue.signing import SignedOrder

log = logging.getLogger(__name__)


def is_stale(refused: VenueRejected | None) -> bool:
    """True when a refusal says the order was signed for an order version the venue left."""
    return refused is not None and (is_version_mismatch(refused)
                                    or is_version_mismatch(refused.body))


def _announce(version: int) -> int:
    if venues.order_version().update(version):
        log.warning("the venue now accepts order version %s", version)
    return version


def ensure_read(client: VenueClient | None = None) -> None:
    """Read ``GET /version`` once per process; a failure leaves the version as it was."""
    if venues.order_version().read_at is not None:
        return
    try:
        _announce((client or venues.client()).clob.version())
    except VenueError as exc:  # the order itself will tell (order_version_mismatch)
        log.warning("could not read the venue's order version: %s", exc)


def refresh_steps(clob: ClobApi) -> Steps[int]:
    """Read the venue's order version again (after a mismatch): the version now in force.

    Venue steps (``clob``: described calls), run by a blocking or an async client alike."""
    return _announce((yield clob.version()))


def restamp(old_hash: str, signed: SignedOrder, body: str) -> None:
    """Point a pending order's record at its rebuilt form (new hash, new signed body)."""
    Order.update(order_hash=signed.order_hash, signed_body=body).where(
        (Order.order_hash == old_hash) & (Order.status == ORDER_PENDING)).execute()
