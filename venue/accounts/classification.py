"""Which kind of account wallet a signer's key controls: EOA, deposit wallet, proxy or Safe.

The official SDK's ``try_classify_wallet_type``: the wallet is the signer itself (EOA), or
the signer's beacon or UUPS deposit wallet, or its proxy, or its Safe, tried in that order.
Anything else is not derivable from the key: the SDK then assumes a session key of a
deposit wallet; we return None and leave that decision (and its proof) to the caller.
"""

from __future__ import annotations

from enum import StrEnum

from eth_utils import to_checksum_address

from venue.accounts.contracts import POLYGON, AccountContracts
from venue.accounts.derivation import (
    beacon_deposit_wallet_address,
    proxy_wallet_address,
    safe_wallet_address,
    uups_deposit_wallet_address,
)
from venue.accounts.words import address_bytes


class WalletType(StrEnum):
    """An account wallet's kind, named as the SDK names it; ``signature_type`` is the CLOB's."""

    EOA = "EOA"
    POLY_PROXY = "POLY_PROXY"
    GNOSIS_SAFE = "GNOSIS_SAFE"
    DEPOSIT_WALLET = "DEPOSIT_WALLET"

    @property
    def signature_type(self) -> int:
        """The order's ``signatureType`` for a maker of this kind (0-3)."""
        return _SIGNATURE_TYPES[self]


_SIGNATURE_TYPES = {WalletType.EOA: 0, WalletType.POLY_PROXY: 1, WalletType.GNOSIS_SAFE: 2,
                    WalletType.DEPOSIT_WALLET: 3}


def checksum(address: str, field: str) -> str:
    """``address`` checksummed; ValueError naming ``field`` when it is not an address."""
    try:
        address_bytes(address)
    except ValueError:
        raise ValueError(f"{field} is not a hex address") from None
    return to_checksum_address(address)


def classify_wallet(signer: str, wallet: str,
                    contracts: AccountContracts = POLYGON) -> WalletType | None:
    """The kind of ``wallet`` if ``signer`` owns it, else None (not the key's wallet)."""
    owner = checksum(signer, "signer")
    target = checksum(wallet, "wallet")
    if target == owner:
        return WalletType.EOA
    candidates = (
        (beacon_deposit_wallet_address, WalletType.DEPOSIT_WALLET),
        (uups_deposit_wallet_address, WalletType.DEPOSIT_WALLET),
        (proxy_wallet_address, WalletType.POLY_PROXY),
        (safe_wallet_address, WalletType.GNOSIS_SAFE),
    )
    for derive, kind in candidates:
        if derive(owner, contracts) == target:
            return kind
    return None


__all__ = ["WalletType", "checksum", "classify_wallet"]
