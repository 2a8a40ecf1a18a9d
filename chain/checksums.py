"""EIP-55 address checksums, with eth_utils alone: light enough for any process to import
(web3 costs a second)."""

from __future__ import annotations

from eth_utils import is_address, to_checksum_address


def checksum(address: str) -> str:
    """Return the EIP-55 form of an address; ValueError if it is not one."""
    if not is_address(address):
        raise ValueError(f"not an address: {address!r}")
    return to_checksum_address(address)
