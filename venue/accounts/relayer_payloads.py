"""The relayer's ``POST /submit`` bodies for deposit wallets, key for key as the SDK builds
them (ACCOUNTS.md §2.3, §2.5 item 3): ``WALLET-CREATE`` (no signature) and ``WALLET``."""

from __future__ import annotations

from typing import Any

from venue.accounts.batch import Call

# The relayer's limit on the free-text metadata (the SDKs refuse longer).
METADATA_MAX_LENGTH = 500


def checked_metadata(metadata: str) -> str:
    """``metadata`` when the relayer takes it (at most 500 characters), else ValueError."""
    if len(metadata) > METADATA_MAX_LENGTH:
        raise ValueError(f"metadata must be at most {METADATA_MAX_LENGTH} characters")
    return metadata


def wallet_create_payload(owner: str, factory: str, metadata: str = "") -> dict[str, Any]:
    """Deploy ``owner``'s deposit wallet through ``factory`` (any relayer-auth holder may)."""
    return {"type": "WALLET-CREATE", "from": owner, "to": factory,
            "metadata": checked_metadata(metadata)}


def wallet_batch_payload(*, signer: str, factory: str, wallet: str, nonce: int, deadline: int,
                         calls: list[Call] | tuple[Call, ...], signature: str,
                         metadata: str = "") -> dict[str, Any]:
    """Run ``calls`` from ``wallet``; ``signer`` is the owner or session key that signed."""
    return {
        "type": "WALLET",
        "from": signer,
        "to": factory,
        "nonce": str(nonce),
        "signature": signature,
        "metadata": checked_metadata(metadata),
        "depositWalletParams": {
            "depositWallet": wallet,
            "deadline": str(deadline),
            "calls": [call.as_json() for call in calls],
        },
    }


__all__ = ["METADATA_MAX_LENGTH", "checked_metadata", "wallet_batch_payload",
           "wallet_create_payload"]
