"""Ethereum addresses people type: one check for every field that takes one."""

from __future__ import annotations

import re
from typing import Any

from eth_utils import to_checksum_address

from services.platform import errors

ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")


def checked_address(text: Any, field: str) -> str:
    """The checksummed address; ValidationFailed naming ``field`` for anything else.

    All-lower and all-upper hex are accepted as they are; mixed case must carry its EIP-55
    checksum, since a wrong one is most likely a typo (a copy of nobody, funds lost).
    """
    cleaned = text.strip() if isinstance(text, str) else ""
    if not ADDRESS_RE.match(cleaned):
        raise errors.ValidationFailed(fields={field: [
            "Must be a 0x address of 40 hex digits (^0x[0-9a-fA-F]{40}$)."]})
    digits = cleaned[2:]
    checksummed = to_checksum_address(cleaned)
    if digits not in (digits.lower(), digits.upper()) and cleaned != checksummed:
        raise errors.ValidationFailed(fields={field: [
            "The address's letter case does not match its EIP-55 checksum: check for a "
            "typo, or paste it all in lower case."]})
    return checksummed


def short_address(address: str | None) -> str:
    """An address shortened for a sentence: ``0x1234…abcd``."""
    if not address:
        return "—"
    return f"{address[:6]}…{address[-4:]}" if len(address) > 12 else address


def trader_name(name: str | None, address: str | None) -> str:
    """A trader as a message names them: ``Name (0x1234…abcd)``, or the short address alone."""
    short = short_address(address) if address else ""
    if name and name.strip():
        return f"{name.strip()} ({short})" if short else name.strip()
    return short or "—"
