"""The chain as the services see it: one Web3, the contract addresses and the sealing keys.

Built once from settings (``configure``), by the app factory, the worker or a test, and
read lazily from the environment on first use otherwise, so no Flask is needed. Services
ask ``web3()`` and ``contracts()``; nothing else reads POLYGON_RPC_URL or the addresses.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from web3 import Web3

import config as settings_module
from chain.errors import CryptoFailure
from chain.keys import parse_encryption_key
from chain.rpc import connect
from chain.tokens import checksum
from services import errors

DEFAULT_RPC_TIMEOUT = 10.0
DEFAULT_WITHDRAW_WAIT_SECONDS = 5.0
DEFAULT_RECEIPT_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class Contracts:
    """Checksummed addresses of the contracts the wallets use."""

    pusd: str
    usdce: str
    ctf: str
    neg_risk_adapter: str


@dataclass(frozen=True)
class SealingKeys:
    """The wallet encryption key in use (by id) and retired keys that still open old secrets."""

    current_id: str
    keys: Mapping[str, bytes] = field(repr=False)

    @property
    def current(self) -> bytes:
        """The key new secrets are sealed with."""
        return self.keys[self.current_id]

    def __repr__(self) -> str:
        return f"SealingKeys(current_id={self.current_id!r}, ids={sorted(self.keys)!r})"


@dataclass(frozen=True)
class ChainSettings:
    """Everything the wallet services need to know about the chain."""

    rpc_url: str | None
    chain_id: int
    contracts: Contracts
    sealing: SealingKeys
    rpc_timeout: float = DEFAULT_RPC_TIMEOUT
    withdraw_wait_seconds: float = DEFAULT_WITHDRAW_WAIT_SECONDS
    receipt_timeout_seconds: float = DEFAULT_RECEIPT_TIMEOUT_SECONDS


def encryption_key(text: str) -> bytes:
    """The 32-byte AES key for a WALLET_ENCRYPTION_KEY value.

    64 hex digits or base64 of 32 bytes are used as they are; any other non-empty text
    (a passphrase) is stretched with SHA-256, so a hand-written setting still works.
    """
    text = (text or "").strip()
    if not text:
        raise CryptoFailure("WALLET_ENCRYPTION_KEY is empty")
    try:
        return parse_encryption_key(text)
    except CryptoFailure:
        return hashlib.sha256(b"copytrade/wallet-encryption-key/" + text.encode()).digest()


def key_id_for(key: bytes) -> str:
    """A stable, non-secret name for a key: a short hash, stored next to each sealed secret."""
    return "k" + hashlib.sha256(b"copytrade/key-id/" + key).hexdigest()[:16]


def sealing_keys(current: str, previous: str | None = None) -> SealingKeys:
    """The current key and any retired ones (comma-separated), each named by its key id."""
    key = encryption_key(current)
    keys = {key_id_for(key): key}
    for text in (previous or "").split(","):
        if text.strip():
            old = encryption_key(text)
            keys.setdefault(key_id_for(old), old)
    return SealingKeys(current_id=key_id_for(key), keys=keys)


def _setting(settings: Mapping[str, Any], name: str, default: Any = None) -> Any:
    # Optional knobs may come from the settings dict or straight from the environment.
    value = settings.get(name)
    if value in (None, ""):
        value = os.environ.get(name)
    return default if value in (None, "") else value


def from_settings(settings: Mapping[str, Any]) -> ChainSettings:
    """Build ChainSettings from a settings mapping (config.load() or app.config)."""
    return ChainSettings(
        rpc_url=settings.get("POLYGON_RPC_URL") or None,
        chain_id=int(settings.get("CHAIN_ID") or 137),
        contracts=Contracts(
            pusd=checksum(settings["PUSD_ADDRESS"]),
            usdce=checksum(settings["USDCE_ADDRESS"]),
            ctf=checksum(settings["CTF_ADDRESS"]),
            neg_risk_adapter=checksum(settings["NEG_RISK_ADAPTER_ADDRESS"]),
        ),
        sealing=sealing_keys(settings["WALLET_ENCRYPTION_KEY"],
                             _setting(settings, "WALLET_ENCRYPTION_KEY_PREVIOUS")),
        rpc_timeout=float(_setting(settings, "POLYGON_RPC_TIMEOUT", DEFAULT_RPC_TIMEOUT)),
        withdraw_wait_seconds=float(_setting(settings, "WITHDRAW_WAIT_SECONDS",
                                             DEFAULT_WITHDRAW_WAIT_SECONDS)),
        receipt_timeout_seconds=float(_setting(settings, "RECEIPT_TIMEOUT_SECONDS",
                                               DEFAULT_RECEIPT_TIMEOUT_SECONDS)),
    )


_lock = threading.Lock()
_settings: ChainSettings | None = None
_web3: Web3 | None = None


def configure(settings: Mapping[str, Any] | ChainSettings, *, web3: Web3 | None = None) -> None:
    """Point the wallet services at a chain; ``web3`` overrides the connection (fault tests)."""
    global _settings, _web3
    built = settings if isinstance(settings, ChainSettings) else from_settings(settings)
    with _lock:
        _settings = built
        _web3 = web3


def current() -> ChainSettings:
    """The configured settings, read from the environment on first use."""
    global _settings
    with _lock:
        if _settings is None:
            _settings = from_settings(settings_module.load())
        return _settings


def web3() -> Web3:
    """The shared Web3 (thread-safe for calls); FeatureNotEnabled when no RPC is configured."""
    global _web3
    chain = current()
    with _lock:
        if _web3 is None:
            if not chain.rpc_url:
                raise errors.FeatureNotEnabled(
                    "No chain is configured: set POLYGON_RPC_URL (and the contract addresses).")
            _web3 = connect(chain.rpc_url, timeout=chain.rpc_timeout)
        return _web3


def contracts() -> Contracts:
    """The contract addresses."""
    return current().contracts


def chain_id() -> int:
    """The chain id transactions are signed for."""
    return current().chain_id
