"""Account primitives the real venue requires, pure (no network): deposit-wallet and legacy
wallet addresses, wallet classification, the deposit wallet's signed ``Batch`` and the
relayer's ``/submit`` bodies, the required approvals. Each is checked byte for byte against
the official SDK (``polymarket-client``) in ``tests/venue/accounts/``.

- ``contracts``: ``AccountContracts``, the addresses (Polygon's by default);
- ``derivation``: CREATE2 addresses of deposit wallets (beacon, UUPS), proxies and Safes;
- ``classification``: ``classify_wallet`` (signer, wallet) → ``WalletType`` or None;
- ``batch``: the EIP-712 ``Batch`` digest and signature (owner or session key);
- ``relayer_payloads``: ``WALLET-CREATE`` and ``WALLET`` submit bodies;
- ``legacy_relay``: a grandfathered proxy's ``PROXY`` and a Safe's ``SAFE`` submit bodies;
- ``approvals``: the required approvals, their calldata and their checks;
- ``wallet_calls``: transfer, redeem through the adapters, wrap/unwrap, session keys;
- ``relayer_rules``: transaction states, which submit rejections to retry, the budgets;
- ``words``: ABI words of addresses and integers.
"""

from venue.accounts.approvals import MAX_UINT256, Approval, required_approvals
from venue.accounts.batch import DEADLINE_SECONDS, Call, batch_digest, sign_batch
from venue.accounts.classification import WalletType, checksum, classify_wallet
from venue.accounts.contracts import POLYGON, AccountContracts
from venue.accounts.derivation import (
    beacon_deposit_wallet_address,
    proxy_wallet_address,
    resolve_deposit_wallet_address,
    safe_wallet_address,
    uups_deposit_wallet_address,
)
from venue.accounts.relayer_payloads import wallet_batch_payload, wallet_create_payload

__all__ = [
    "DEADLINE_SECONDS",
    "MAX_UINT256",
    "POLYGON",
    "AccountContracts",
    "Approval",
    "Call",
    "WalletType",
    "batch_digest",
    "beacon_deposit_wallet_address",
    "checksum",
    "classify_wallet",
    "proxy_wallet_address",
    "required_approvals",
    "resolve_deposit_wallet_address",
    "safe_wallet_address",
    "sign_batch",
    "uups_deposit_wallet_address",
    "wallet_batch_payload",
    "wallet_create_payload",
]
