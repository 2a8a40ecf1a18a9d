"""Who may trade as whom: API keys issued at L1 and their L2 checks (deposit wallets and
their owners live in ``accounts``).

Writes take the sandbox state's lock (shared, re-entrant); reads run without it, as
dictionary lookups are atomic.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from eth_utils import to_checksum_address

from devstack.venue import auth
from devstack.venue.rejections import ERR_CREATE_KEY, ERR_UNAUTHORIZED, VenueRejection


@dataclass
class ApiKeyRecord:
    """API credentials the venue issued to an address (L1-created)."""

    api_key: str
    secret: str
    passphrase: str
    address: str
    nonce: int


class ApiKeyRegistry:
    """Issued API keys by key."""

    def __init__(self, server_secret: bytes, lock: threading.RLock) -> None:
        self.server_secret = server_secret
        self.lock = lock
        self.api_keys: dict[str, ApiKeyRecord] = {}

    def create(self, address: str, nonce: int) -> ApiKeyRecord:
        """Issue the creds of (address, nonce); 400 ``Could not create api key`` when they
        exist already, as the venue (ACCOUNTS.md §4: clients then derive them)."""
        creds = auth.derive_credentials(self.server_secret, address, nonce)
        record = ApiKeyRecord(
            api_key=creds["apiKey"], secret=creds["secret"], passphrase=creds["passphrase"],
            address=to_checksum_address(address), nonce=nonce,
        )
        with self.lock:
            if record.api_key in self.api_keys:
                raise VenueRejection(ERR_CREATE_KEY, 400)
            self.api_keys[record.api_key] = record
        return record

    def derive(self, address: str, nonce: int) -> ApiKeyRecord:
        """The creds of (address, nonce) if they were created, else VenueRejection."""
        creds = auth.derive_credentials(self.server_secret, address, nonce)
        record = self.api_keys.get(creds["apiKey"])
        if record is None:
            raise VenueRejection("Could not derive api key!", 400)
        return record

    def delete(self, record: ApiKeyRecord) -> None:
        """Revoke an API key."""
        with self.lock:
            self.api_keys.pop(record.api_key, None)

    def keys_of(self, address: str) -> list[str]:
        """Every API key issued to an address."""
        return [k.api_key for k in self.api_keys.values() if k.address == address]

    def authenticate_l2(
        self, headers: dict[str, str], method: str, path: str, body: str
    ) -> ApiKeyRecord:
        """Check the five L2 headers and the HMAC; returns the key's record or raises 401."""
        record = self.api_keys.get(headers.get("POLY_API_KEY", ""))
        if record is None:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        if headers.get("POLY_PASSPHRASE", "") != record.passphrase:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        if headers.get("POLY_ADDRESS", "").lower() != record.address.lower():
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        ok = auth.verify_hmac(
            record.secret,
            headers.get("POLY_SIGNATURE", ""),
            headers.get("POLY_TIMESTAMP", ""),
            method,
            path,
            body,
        )
        if not ok:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        return record
