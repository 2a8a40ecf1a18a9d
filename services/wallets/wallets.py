"""Trading-wallet custody: one wallet per user (a deposit wallet whose owner key is generated
here), the key sealed at rest, balances read on chain.

The private key is generated here, sealed with AES-GCM under WALLET_ENCRYPTION_KEY (its key
id stored beside it for rotation; the seal bound to its table, row and column), and opened
only by ``signer`` in the process that signs.
It is never logged and never returned by any surface. Venue API credentials derived for
the wallet are sealed the same way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import peewee
import redis

from chain.errors import CryptoFailure
from chain.keys import (
    address_for_key,
    decrypt_secret,
    encrypt_secret,
    generate_keypair,
    is_current,
    reseal_secret,
)
from chain.tokens import native_balance, token_balance, token_decimals
from models.base import db
from models.prepared import Prepared
from models.user import User
from models.wallet import (
    KIND_DEPOSIT_WALLET,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    SIGNATURE_TYPE_EOA,
    ReplacedWallet,
    TradingWallet,
)
from services.platform import chain_access, errors, venue_access
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from services.wallets import onboarding_queue
from venue.accounts import beacon_deposit_wallet_address

log = logging.getLogger(__name__)

NATIVE_SYMBOL = "MATIC"


@dataclass(frozen=True)
class VenueCredentials:
    """The venue's L2 API credentials for a wallet (opened in-process, never returned)."""

    api_key: str
    secret: str
    passphrase: str

    def __repr__(self) -> str:
        return f"VenueCredentials(api_key={self.api_key!r}, secret=<hidden>, passphrase=<hidden>)"


SECRET_FIELDS = ("private_key_sealed", "venue_api_key_sealed", "venue_api_secret_sealed",
                 "venue_api_passphrase_sealed", "relayer_api_key_sealed")


def place(wallet_id: UUID | str, column: str) -> str:
    """Where a secret is stored (table, row, column), bound into its seal: it opens only there."""
    return f"{TradingWallet._meta.table_name}:{wallet_id}:{column}"


def seal(plaintext: bytes | str, context: str) -> tuple[str, str]:
    """Seal a secret stored at ``context`` under the current wallet key; (token, key id)."""
    keys = chain_access.current().sealing
    data = plaintext.encode() if isinstance(plaintext, str) else plaintext
    return encrypt_secret(data, keys.current, keys.current_id, context), keys.current_id


def unseal(token: str, context: str) -> bytes:
    """Open a secret stored at ``context``; CryptoError (500 crypto_error) when it cannot."""
    try:
        return decrypt_secret(token, chain_access.current().sealing.keys, context)
    except CryptoFailure as exc:
        raise errors.CryptoError() from exc


def _unseal_field(wallet: TradingWallet, column: str) -> bytes:
    return unseal(getattr(wallet, column), place(wallet.id, column))


def for_user(user: User | UUID | str) -> TradingWallet | None:
    """The user's trading wallet, if one was created."""
    return TradingWallet.get_or_none(TradingWallet.user == user_id_of(user))


# Two columns, not the sealed key's row, compiled once: every profile read runs it.
_ADDRESS_OF_USER = Prepared(
    lambda user_id: TradingWallet.select(TradingWallet.address, TradingWallet.funder_address)
    .where(TradingWallet.user == user_id).limit(1), TradingWallet.user)


def address_of(user: User | UUID | str) -> str | None:
    """The user's trading address (the maker: where funds go), or None before the wallet
    exists."""
    found = _ADDRESS_OF_USER.first_values(user_id_of(user))  # no model built: every /me reads it
    return (found[1] or found[0]) if found is not None else None  # as maker(): the funder first


def maker(wallet: TradingWallet) -> str:
    """The address holding the account's funds and positions: the deposit wallet (or the
    connected account's wallet), else the EOA itself."""
    return wallet.funder_address or wallet.address


def get_or_create(user: User | UUID | str) -> TradingWallet:
    """The user's trading wallet; the first time a deposit wallet (signature type 3): a
    generated owner key, sealed, the owner's deposit-wallet address as the maker, and its
    onboarding job (deploy, approvals, credentials, balance update) queued once.

    Plain EOAs exist only as connected, operator-allowlisted accounts
    (``trading_accounts.connect``). Two concurrent first calls make one wallet and queue
    one onboarding: only the request whose insert won queues it, under a job id of its own.
    """
    user_id = user_id_of(user)
    existing = for_user(user_id)
    if existing is not None:
        return existing
    wallet, created = _create_deposit_wallet(user_id)
    if created and not db.in_transaction():
        # Queued only once the row is committed, or the job could run before it is visible.
        # Inside a caller's transaction (or with Redis down) the onboarding stays pending:
        # readiness says ``onboarding_incomplete`` and the account page starts it.
        try:
            onboarding_queue.enqueue(wallet)
        except redis.exceptions.RedisError as exc:
            log.warning("wallet %s: onboarding not queued: %s", wallet.id, exc)
    return wallet


def get_or_create_deposit_wallet(user: User | UUID | str) -> TradingWallet:
    """The user's trading wallet, a deposit wallet when new (``get_or_create``); an existing
    wallet is returned as it is."""
    return get_or_create(user)


def _create_deposit_wallet(user_id: UUID) -> tuple[TradingWallet, bool]:
    """A new deposit wallet row for the user (committed), or the one a concurrent request
    created first; (wallet, whether this call created it)."""
    keypair = generate_keypair()
    wallet_id = uuid4()  # known before the insert: the sealed key is bound to this row
    sealed, key_id = seal(keypair.private_key, place(wallet_id, "private_key_sealed"))
    funder = beacon_deposit_wallet_address(keypair.address,
                                           venue_access.account_contracts(runtime().settings))
    try:
        with db.atomic():
            return TradingWallet.create(
                id=wallet_id, user=user_id, address=keypair.address, private_key_sealed=sealed,
                key_id=key_id, signature_type=SIGNATURE_TYPE_DEPOSIT_WALLET,
                account_kind=KIND_DEPOSIT_WALLET, funder_address=funder), True
    except peewee.IntegrityError:
        # a concurrent request created it first: theirs is the wallet (and its onboarding)
        existing = for_user(user_id)
        if existing is None:
            raise
        return existing, False


def signer(wallet: TradingWallet) -> bytes:
    """The wallet's private key, opened in this process for signing; never log or return it."""
    key = _unseal_field(wallet, "private_key_sealed")
    try:
        matches = address_for_key(key) == wallet.address
    except ValueError as exc:
        raise errors.CryptoError() from exc
    if not matches:
        # a sealed key swapped between rows would open fine: refuse to sign with it
        raise errors.CryptoError("The stored wallet key does not match the wallet address.")
    return key


def store_venue_credentials(wallet: TradingWallet, api_key: str, secret: str,
                            passphrase: str) -> TradingWallet:
    """Seal and store the venue API credentials derived for the wallet."""
    for column, value in (("venue_api_key_sealed", api_key), ("venue_api_secret_sealed", secret),
                          ("venue_api_passphrase_sealed", passphrase)):
        setattr(wallet, column, seal(value, place(wallet.id, column))[0])
    wallet.save(only=[TradingWallet.venue_api_key_sealed, TradingWallet.venue_api_secret_sealed,
                      TradingWallet.venue_api_passphrase_sealed])
    return wallet


def venue_credentials(wallet: TradingWallet) -> VenueCredentials | None:
    """The wallet's venue API credentials, opened in-process; None until derived."""
    if not (wallet.venue_api_key_sealed and wallet.venue_api_secret_sealed
            and wallet.venue_api_passphrase_sealed):
        return None
    return VenueCredentials(api_key=_unseal_field(wallet, "venue_api_key_sealed").decode(),
                            secret=_unseal_field(wallet, "venue_api_secret_sealed").decode(),
                            passphrase=_unseal_field(wallet,
                                                     "venue_api_passphrase_sealed").decode())


def set_signature_type(wallet: TradingWallet, signature_type: int,
                       funder_address: str | None = None) -> TradingWallet:
    """Record how the venue should see the wallet: 0 EOA, 3 deposit wallet (with its funder)."""
    if signature_type not in (SIGNATURE_TYPE_EOA, SIGNATURE_TYPE_DEPOSIT_WALLET):
        raise errors.ValidationFailed(fields={"signature_type": ["Must be 0 or 3."]})
    wallet.signature_type = signature_type
    wallet.funder_address = funder_address
    wallet.save(only=[TradingWallet.signature_type, TradingWallet.funder_address])
    return wallet


def _needs_reseal(wallet: TradingWallet, key_id: str) -> bool:
    tokens = [getattr(wallet, name) for name in SECRET_FIELDS]
    try:
        return wallet.key_id != key_id or not all(
            is_current(token, key_id) for token in tokens if token)
    except CryptoFailure as exc:
        raise errors.CryptoError() from exc


def reseal_all() -> int:
    """Re-seal every wallet secret (replaced wallets' keys too) under the current key and
    format; return how many wallets.

    Moves secrets sealed under a retired key (rotation) and those of the old format (v1, not
    bound to their row) to the current key, bound to their row and column.
    """
    keys = chain_access.current().sealing
    count = 0
    for wallet in TradingWallet.select():
        if not _needs_reseal(wallet, keys.current_id):
            continue
        with db.atomic():
            for name in SECRET_FIELDS:
                token = getattr(wallet, name)
                if token:
                    try:
                        setattr(wallet, name, reseal_secret(token, keys.keys, keys.current,
                                                            keys.current_id,
                                                            place(wallet.id, name)))
                    except CryptoFailure as exc:
                        raise errors.CryptoError() from exc
            wallet.key_id = keys.current_id
            wallet.save()
        count += 1
    return count + _reseal_replaced(keys)


def _reseal_replaced(keys: Any) -> int:
    """Re-seal the keys of replaced wallets (kept to recover late funds) like the others;
    each stays bound to the place it was sealed at, its old ``trading_wallets`` row."""
    count = 0
    for row in ReplacedWallet.select():
        if row.key_id == keys.current_id and is_current(row.private_key_sealed, keys.current_id):
            continue
        try:
            row.private_key_sealed = reseal_secret(row.private_key_sealed, keys.keys,
                                                   keys.current, keys.current_id,
                                                   place(row.id, "private_key_sealed"))
        except CryptoFailure as exc:
            raise errors.CryptoError() from exc
        row.key_id = keys.current_id
        row.save(only=[ReplacedWallet.private_key_sealed, ReplacedWallet.key_id])
        count += 1
    return count


def token_addresses() -> dict[str, str]:
    """The ERC-20 tokens the wallet accepts, by API name: usdc (pUSD) and usdc_e."""
    contracts = chain_access.contracts()
    return {"usdc": contracts.pusd, "usdc_e": contracts.usdce}


def deposit_address(user: User | UUID | str) -> dict[str, Any]:
    """Where to send funds: the trading wallet's address, the chain and the accepted tokens."""
    wallet = get_or_create(user)
    chain = chain_access.current()
    w3 = chain_access.web3()
    accepted = [
        {"token": "usdc", "symbol": "pUSD", "contract_address": chain.contracts.pusd,
         "decimals": token_decimals(w3, chain.contracts.pusd)},
        {"token": "usdc_e", "symbol": "USDC.e", "contract_address": chain.contracts.usdce,
         "decimals": token_decimals(w3, chain.contracts.usdce)},
    ]
    if wallet.signature_type == SIGNATURE_TYPE_EOA:
        # Only a plain EOA spends MATIC (its own gas); a relayer account spends none (MATIC
        # sent there by mistake can be withdrawn, but it is not asked for).
        accepted.append({"token": "matic", "symbol": NATIVE_SYMBOL, "contract_address": None,
                         "decimals": 18})
        gas = "MATIC pays the gas of withdrawals and claims."
    else:
        gas = ("No MATIC is needed, and none should be sent here: the relayer pays the gas "
               "of withdrawals and claims (MATIC sent here by mistake can be withdrawn).")
    return {"address": maker(wallet), "chain_id": chain.chain_id, "tokens": accepted,
            "note": f"Send only on this chain. {gas}"}


def balances(user: User | UUID | str) -> dict[str, Any]:
    """What sits at the deposit address (pUSD, USDC.e, MATIC), read from the chain now, and
    the MATIC that pays the account's own gas where it pays any (a plain EOA)."""
    wallet = get_or_create(user)
    contracts = chain_access.contracts()
    w3 = chain_access.web3()
    holder = maker(wallet)
    pusd = token_balance(w3, contracts.pusd, holder)
    usdce = token_balance(w3, contracts.usdce, holder)
    matic = native_balance(w3, holder)
    # A plain EOA's maker is its signer, which pays its gas; a relayer account's owner key
    # pays none, so its MATIC is nothing the account spends.
    gas = matic if wallet.signature_type == SIGNATURE_TYPE_EOA else None
    return {"address": holder, "chain_id": chain_access.chain_id(),
            "usdc": pusd, "pusd": pusd, "usdc_e": usdce, "matic": matic,
            "gas_matic": gas, "total_usdc": pusd + usdce}


def balance_of(wallet: TradingWallet, token: str) -> Decimal:
    """One balance at the wallet's maker (``usdc``, ``usdc_e`` or ``matic``), in whole
    units (a plain EOA's maker is its signer, so its ``matic`` is its gas)."""
    w3 = chain_access.web3()
    if token == "matic":
        return native_balance(w3, maker(wallet))
    return token_balance(w3, token_addresses()[token], maker(wallet))
