"""A user's trading identity at the venue: signing key, signature type, funder, L2 credentials.

Built from the user's trading wallet (services/wallets/wallets.py). The venue's API credentials
are derived once through L1 (``create_or_derive_api_key``) and stored sealed on the
wallet, so later orders cost no extra round trip. Signature type 0 makes the EOA the
maker; type 3 makes the wallet's deposit wallet (``funder_address``) maker and signer.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from uuid import UUID

from chain.tokens import token_balance
from models.user import User
from models.wallet import SIGNATURE_TYPE_EOA, TradingWallet
from services.platform import chain_access, errors, order_versions, venues
from services.wallets import wallets
from venue.errors import VenueNotFound, VenueRejected
from venue.models import ApiCreds
from venue.order_signer import OrderSigner
from venue.signing import OrderKey


@dataclass(frozen=True)
class VenueAccount:
    """Everything needed to sign and send orders for one wallet (never log it)."""

    wallet: TradingWallet
    private_key: str
    signature_type: int
    creds: ApiCreds
    key: OrderKey  # the opened key with its address derived once (what orders are signed with)
    signer: OrderSigner  # the key with the venue's exchange settings: signs, asks nothing

    @property
    def funder(self) -> str | None:
        """The funder handed to the order builder: the deposit wallet, proxy or Safe that
        makes the orders (None: the EOA itself)."""
        if self.signature_type != SIGNATURE_TYPE_EOA:
            return self.wallet.funder_address
        return None

    @property
    def maker(self) -> str:
        """The address that holds the collateral and the positions at the venue."""
        return self.funder or self.wallet.address

    def __repr__(self) -> str:
        return (f"VenueAccount(address={self.wallet.address!r}, "
                f"signature_type={self.signature_type}, key=<hidden>)")


def _credentials(wallet: TradingWallet, private_key: str) -> ApiCreds:
    stored = wallets.venue_credentials(wallet)
    if stored is None:
        try:
            derived = venues.client().create_or_derive_api_key(private_key)
        except VenueRejected as exc:
            raise errors.WalletError(
                f"The venue refused to issue API credentials for the wallet: {exc}") from exc
        wallets.store_venue_credentials(wallet, derived.api_key, derived.secret,
                                        derived.passphrase)
        return derived
    return ApiCreds(api_key=stored.api_key, secret=stored.secret,
                    passphrase=stored.passphrase, address=wallet.address)


def account(user: User | UUID | str) -> VenueAccount:
    """The user's venue account, creating the wallet and deriving credentials when needed."""
    order_versions.ensure_read()  # once per process: what the signer signs for
    wallet = wallets.get_or_create(user)
    if wallet.signature_type != SIGNATURE_TYPE_EOA and not wallet.funder_address:
        raise errors.WalletError(f"Signature type {wallet.signature_type} needs the account "
                                 "wallet's address (the funder).")
    key = wallets.signer(wallet)
    private_key = "0x" + bytes(key).hex()
    order_key = OrderKey(private_key)
    funder = wallet.funder_address if wallet.signature_type != SIGNATURE_TYPE_EOA else None
    signer = OrderSigner.for_venue(venues.client().config, order_key,
                                   signature_type=wallet.signature_type, funder=funder,
                                   session_key=wallet.session_signer,
                                   versions=venues.order_version())
    return VenueAccount(wallet=wallet, private_key=private_key,
                        signature_type=wallet.signature_type,
                        creds=_credentials(wallet, private_key), key=order_key, signer=signer)


def maker_address(user: User | UUID | str) -> str:
    """The address holding the user's collateral and positions at the venue."""
    wallet = wallets.get_or_create(user)
    return wallets.maker(wallet)


def refresh_balance(acct: VenueAccount, token_id: str | None = None) -> None:
    """Have the CLOB re-read the account's balance and allowances (``/balance-allowance/
    update``): it caches them, so a deposit, a wrap or approvals show only after this.

    With ``token_id``, the outcome token's instead of pUSD's, asked as ``CONDITIONAL`` or,
    for a protocol-v2 position, ``CONDITIONAL-V2`` (ACCOUNTS.md §11)."""
    venues.client().clob.update_balance_allowance(acct.creds, token_id=token_id,
                                                  signature_type=acct.signature_type)


def outcome_balance(acct: VenueAccount, token_id: str) -> Decimal:
    """Shares of ``token_id`` the CLOB's cache shows for the account's funder (the asset
    type follows the id: ``CONDITIONAL-V2`` for a protocol-v2 position)."""
    return venues.client().clob.balance_allowance(acct.creds, token_id=token_id,
                                                  signature_type=acct.signature_type)


def collateral_balance(acct: VenueAccount) -> Decimal:
    """pUSD the venue sees for the account's funder.

    The CLOB's ``/balance-allowance`` is asked first (the venue's own view; the sandbox
    serves it from its ledger). Where a venue does not serve it and a chain is configured,
    the funder's on-chain pUSD balance is read instead.
    """
    try:
        return venues.client().clob.balance_allowance(
            acct.creds, asset_type="COLLATERAL", signature_type=acct.signature_type)
    except VenueNotFound:
        if not chain_access.current().rpc_url:
            raise errors.FeatureNotEnabled(
                "The venue does not report balances and no chain is configured.") from None
        return token_balance(chain_access.web3(), chain_access.contracts().pusd, acct.maker)
