"""Order versions as the venue enforces them: an order signed for another exchange version
than the one announced on ``GET /version`` is refused with ``order_version_mismatch``."""

from __future__ import annotations

from devstack.venue.config import SandboxConfig
from devstack.venue.order_signing import SIG_POLY_1271, SignedOrder, recover_order_signer

ERR_VERSION_MISMATCH = "order_version_mismatch"
VERSIONS = (2, 3)  # what the control API may announce


def signature_matches(signed: SignedOrder, authoriser: str | None) -> bool:
    """Whether a recovered authoriser can stand for the order (type 3: owners checked later).

    An ECDSA signature over another domain still recovers *an* address, just not the signer.
    """
    if authoriser is None:
        return False
    return (signed.signature_type == SIG_POLY_1271
            or authoriser.lower() == signed.signer.lower())


def stale_version_text(config: SandboxConfig, signed: SignedOrder, neg_risk: bool) -> str | None:
    """The venue's refusal when ``signed`` verifies for another exchange version, else None."""
    domains = {(config.exchange_for(neg_risk), "2"), (config.exchange_v3, "3")}
    for exchange, version in sorted(domains):
        authoriser = recover_order_signer(signed, config.chain_id, exchange, version=version)
        if signature_matches(signed, authoriser):
            return ERR_VERSION_MISMATCH
    return None
