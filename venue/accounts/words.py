"""ABI words and bytes of addresses and integers (the few encodings account calls need)."""

from __future__ import annotations

from eth_utils import is_hex_address


def address_bytes(address: str) -> bytes:
    """The 20 bytes of a hex address (any case); ValueError when it is not one."""
    if not isinstance(address, str) or not is_hex_address(address):
        raise ValueError(f"not a hex address: {address!r}")
    return bytes.fromhex(address[2:] if address[:2] in ("0x", "0X") else address)


def address_word(address: str) -> bytes:
    """An address as its 32-byte ABI word (left-padded; also ``bytes32(address)``)."""
    return address_bytes(address).rjust(32, b"\x00")


def uint_word(value: int) -> bytes:
    """A uint256 as its 32-byte ABI word; ValueError outside uint256."""
    if type(value) is not int or not 0 <= value < 1 << 256:
        raise ValueError(f"not a uint256: {value!r}")
    return value.to_bytes(32, "big")


def dynamic_bytes(data: bytes) -> bytes:
    """The tail of an ABI ``bytes`` value: its length word, then the data right-padded."""
    return uint_word(len(data)) + data + b"\x00" * (-len(data) % 32)


def hex_bytes(value: str) -> bytes:
    """Bytes of a 0x-prefixed (or bare) hex string."""
    return bytes.fromhex(value[2:] if value[:2] in ("0x", "0X") else value)


__all__ = ["address_bytes", "address_word", "dynamic_bytes", "hex_bytes", "uint_word"]
