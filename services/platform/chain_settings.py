"""The chain's settings as the runtime holds them: contract addresses, sealing keys, and
``ChainAccess``, the runtime's chain part (one Web3, connected on first use).

Built from Settings by ``wiring.build_runtime``; services reach it through the accessors of
``services.platform.chain_access``, which read the installed runtime.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chain.checksums import checksum
from chain.errors import CryptoFailure
from chain.keys import parse_encryption_key, passphrase_key
from config import Settings
from services.platform import errors

if TYPE_CHECKING:  # web3 costs a second to import: connected (and imported) on first use
    from web3 import Web3


@dataclass(frozen=True)
class Contracts:
    """Checksummed addresses of the contracts the wallets use."""

    pusd: str
    usdce: str
    ctf: str
    neg_risk_adapter: str
    ctf_exchange: str = ""
    neg_risk_exchange: str = ""
    native_usdc: str = ""  # Circle's native USDC: reported, never traded
    # what an EOA's claims redeem through (ACCOUNTS.md §5, §11): the current neg-risk
    # adapter, and the protocol-v2 positions' PositionManager and Router
    neg_risk_collateral_adapter: str = ""
    position_manager: str = ""
    protocol_v2_router: str = ""

    def addresses(self) -> frozenset[str]:
        """Every configured contract address (checksummed): never a withdrawal's destination."""
        return frozenset(a for a in (self.pusd, self.usdce, self.ctf, self.neg_risk_adapter,
                                     self.ctf_exchange, self.neg_risk_exchange,
                                     self.neg_risk_collateral_adapter, self.position_manager,
                                     self.protocol_v2_router) if a)


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
    # Defaults live in config.ChainConfig (POLYGON_RPC_TIMEOUT and kin).
    rpc_timeout: float
    withdraw_wait_seconds: float
    withdraw_max_waiters: int
    receipt_timeout_seconds: float
    signing_lease_seconds: int = 60


def _legacy_passphrase_key(text: str) -> bytes:
    # Before scrypt a passphrase was stretched by one unsalted SHA-256; kept to open old secrets.
    return hashlib.sha256(b"copytrade/wallet-encryption-key/" + text.encode()).digest()


def encryption_keys(text: str, salt: str = "") -> list[bytes]:
    """The 32-byte AES keys for a WALLET_ENCRYPTION_KEY value: the one to seal with first.

    64 hex digits or base64 of 32 bytes are used as they are; any other non-empty text
    (a passphrase) is stretched with scrypt (salted by WALLET_ENCRYPTION_SALT), followed by
    the old SHA-256 stretching so secrets sealed before still open until re-sealed.
    """
    text = (text or "").strip()
    if not text:
        raise CryptoFailure("WALLET_ENCRYPTION_KEY is empty")
    try:
        return [parse_encryption_key(text)]
    except CryptoFailure:
        return [_passphrase_key(text, salt), _legacy_passphrase_key(text)]


@functools.lru_cache(maxsize=8)
def _passphrase_key(text: str, salt: str) -> bytes:
    # scrypt costs ~0.1 s: derive once per process, not per runtime built
    return passphrase_key(text, salt)


def encryption_key(text: str, salt: str = "") -> bytes:
    """The 32-byte AES key new secrets are sealed with for a WALLET_ENCRYPTION_KEY value."""
    return encryption_keys(text, salt)[0]


def key_id_for(key: bytes) -> str:
    """A stable, non-secret name for a key: a short hash, stored next to each sealed secret."""
    return "k" + hashlib.sha256(b"copytrade/key-id/" + key).hexdigest()[:16]


def sealing_keys(current: str, previous: str | None = None, salt: str = "") -> SealingKeys:
    """The current key and any retired ones (comma-separated), each named by its key id."""
    current_keys = encryption_keys(current, salt)
    keys = {key_id_for(key): key for key in current_keys}
    for text in (previous or "").split(","):
        if text.strip():
            for old in encryption_keys(text, salt):
                keys.setdefault(key_id_for(old), old)
    return SealingKeys(current_id=key_id_for(current_keys[0]), keys=keys)


def from_settings(settings: Settings) -> ChainSettings:
    """Build ChainSettings from the process's Settings."""
    addresses = settings.contracts
    return ChainSettings(
        rpc_url=settings.chain.rpc_url or None,
        chain_id=settings.chain.chain_id,
        contracts=Contracts(
            pusd=checksum(addresses.pusd),
            usdce=checksum(addresses.usdce),
            ctf=checksum(addresses.ctf),
            neg_risk_adapter=checksum(addresses.neg_risk_adapter),
            ctf_exchange=checksum(addresses.ctf_exchange),
            neg_risk_exchange=checksum(addresses.neg_risk_exchange),
            native_usdc=checksum(addresses.native_usdc) if addresses.native_usdc else "",
            neg_risk_collateral_adapter=checksum(addresses.neg_risk_collateral_adapter),
            position_manager=checksum(addresses.position_manager),
            protocol_v2_router=checksum(addresses.protocol_v2_router),
        ),
        sealing=sealing_keys(settings.wallet_encryption_key,
                             settings.wallet_encryption_key_previous,
                             settings.wallet_encryption_salt),
        rpc_timeout=settings.chain.rpc_timeout,
        withdraw_wait_seconds=settings.chain.withdraw_wait_seconds,
        withdraw_max_waiters=settings.chain.withdraw_max_waiters,
        receipt_timeout_seconds=settings.chain.receipt_timeout_seconds,
        signing_lease_seconds=settings.chain.signing_lease_seconds,
    )


class ChainAccess:
    """One chain's settings and its shared Web3, connected on first use."""

    def __init__(self, settings: ChainSettings, *, web3: Web3 | None = None) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._web3 = web3  # given: overrides the connection (fault tests)

    def web3(self) -> Web3:
        """The shared Web3 (thread-safe for calls); FeatureNotEnabled when no RPC is set."""
        with self._lock:
            if self._web3 is None:
                if not self.settings.rpc_url:
                    raise errors.FeatureNotEnabled(
                        "No chain is configured: set POLYGON_RPC_URL (and the contract "
                        "addresses).")
                from chain.rpc import connect

                self._web3 = connect(self.settings.rpc_url, timeout=self.settings.rpc_timeout)
            return self._web3
