"""Trading accounts the venue accepts (issue 16): deposit wallets, connected existing
accounts and allowlisted plain EOAs.

- A **deposit wallet** (signature type 3) is what every new wallet is: the server generates
  and seals the owner key (``services.wallets.wallets``), the maker is the owner's deposit wallet
  (ACCOUNTS.md §2.2), deployed and approved by onboarding (``services.wallets.onboarding``).
- A **connected account** is an existing polymarket.com account: its wallet address and the
  signer key that controls it (plus, optionally, its own Relayer API key), classified as the
  official SDK does; a key that does not control the wallet is refused.
- A **plain EOA** (type 0) trades live only when the operator allowlists its address
  (``TRADING_EOA_ALLOWLIST``): the venue refuses other EOA makers.

Taking in a private key is for the session-JWT surfaces only (REST with a session, the
dashboard); never API keys, OAuth or MCP. Every secret is sealed, never returned or logged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from uuid import UUID, uuid4

import peewee

from models.base import db
from models.user import User
from models.wallet import (
    KIND_CONNECTED,
    KIND_DEPOSIT_WALLET,
    KIND_EOA,
    ONBOARDING_FAILED,
    ONBOARDING_READY,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    SIGNATURE_TYPE_EOA,
    AccountOnboarding,
    TradingWallet,
)
from services.platform import errors, venue_access
from services.platform.addresses import checked_address
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from services.wallets import account_setup, generated_wallets, session_keys, wallets
from venue.accounts import (
    MAX_UINT256,
    WalletType,
    beacon_deposit_wallet_address,
    classify_wallet,
)
from venue.accounts.contracts import AccountContracts
from venue.models import BuilderCreds, RelayerApiKey
from venue.relayer import RelayerAuth
from venue.signing import OrderKey, is_private_key

_HEX_KEY = re.compile(r"^[0-9a-fA-F]{64}$")
# A Relayer API key as polymarket.com issues it: a UUID, 8-4-4-4-12 hex digits (ACCOUNTS.md §3).
_RELAYER_KEY = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# The venue's own answer to an EOA maker it does not allow (ACCOUNTS.md §1).
EOA_REFUSED = "maker address not allowed, please use the deposit wallet flow"


def contracts() -> AccountContracts:
    """The contract table of this deployment (settings, or the dev chain's)."""
    return venue_access.account_contracts(runtime().settings)


def deposit_wallet_of(owner: str) -> str:
    """The deposit wallet ``owner`` has or gets from the current factory (beacon clone)."""
    return beacon_deposit_wallet_address(owner, contracts())


def builder_credentials() -> BuilderCreds | None:
    """The operator's builder key (relayer auth for deposit wallets), when configured."""
    relayer = runtime().settings.relayer
    if not relayer.has_builder_credentials:
        return None
    return BuilderCreds(api_key=relayer.builder_api_key or "",
                        secret=relayer.builder_secret or "",
                        passphrase=relayer.builder_passphrase or "")


def relayer_auth(wallet: TradingWallet) -> RelayerAuth | None:
    """How this account talks to the relayer: its own Relayer API key when it brought one,
    else the operator's builder key; None when neither exists."""
    if wallet.relayer_api_key_sealed and wallet.relayer_api_key_address:
        key = wallets.unseal(wallet.relayer_api_key_sealed,
                             wallets.place(wallet.id, "relayer_api_key_sealed")).decode()
        return RelayerApiKey(key=key, address=wallet.relayer_api_key_address)
    return builder_credentials()


def exchanges_not_approved(allowances: Mapping[str, int]) -> list[str]:
    """The exchanges (by name) the venue does not see approved to spend the maker's pUSD,
    from ``/balance-allowance``'s ``allowances`` (spender → amount, lower-case)."""
    table = contracts()
    spenders = {"CTF Exchange": table.standard_exchange,
                "Neg-Risk CTF Exchange": table.neg_risk_exchange}
    return [name for name, spender in spenders.items()
            if allowances.get(spender.lower(), 0) < MAX_UINT256 // 2]


def is_allowlisted(address: str) -> bool:
    """Whether the operator lets ``address`` trade as a plain EOA (type 0)."""
    return address.lower() in runtime().settings.eoa_allowlist


def uses_relayer(wallet: TradingWallet) -> bool:
    """Whether wallet transactions go through the relayer (no POL) rather than on chain."""
    return wallet.signature_type != SIGNATURE_TYPE_EOA


# --- input -----------------------------------------------------------------------------


def _key(text: str | None) -> str:
    """A private key as pasted (spaces, newlines, with or without 0x) → ``0x`` + 64 hex."""
    cleaned = "".join((text or "").split()).removeprefix("0x").removeprefix("0X")
    if not _HEX_KEY.match(cleaned):
        raise errors.ValidationFailed(fields={"private_key": [
            "Must be a private key: 64 hexadecimal digits, with or without 0x."]})
    if not is_private_key(bytes.fromhex(cleaned)):
        # 64 digits, but zero or past the curve's order: no key signs with that number.
        raise errors.ValidationFailed(fields={"private_key": [
            "Not a private key: the number must be above 0 and below the secp256k1 curve "
            "order. Check that the whole key was pasted."]})
    return "0x" + cleaned.lower()


# --- connecting an existing account -------------------------------------------------------


def connect(user: User | UUID | str, *, wallet_address: str, private_key: str,
            relayer_api_key: str | None = None,
            relayer_api_key_address: str | None = None) -> TradingWallet:
    """Connect the user's existing polymarket.com account as their trading account.

    The key must control the wallet (the wallet is the key's EOA, deposit wallet, proxy or
    Safe, or the deposit wallet accepts the key as a session signer: ``session_keys``); a
    plain EOA only when allowlisted. A wallet the user already has is replaced only while
    it is the generated one, never used (``generated_wallets``); else Conflict (409).
    """
    user_id = user_id_of(user)
    key = _key(private_key)
    wallet = checked_address(wallet_address, "wallet_address")
    signer = OrderKey(key).address
    kind = classify_wallet(signer, wallet, contracts())
    session_key = kind is None and session_keys.accepts(wallet, OrderKey(key), contracts())
    if session_key:
        kind = WalletType.DEPOSIT_WALLET  # only deposit wallets have session signers
    if kind is None:
        why = session_keys.unprovable_reason() or (
            "nor does the wallet accept it as a session signer in force")
        raise errors.ValidationFailed(fields={"private_key": [
            f"This key ({signer}) does not control wallet {wallet}: it is not the account's "
            f"signer key, {why}. Paste the signer key of that account (profile menu → export "
            "private key) or a session key its owner authorized."]})
    if kind is WalletType.EOA and not is_allowlisted(wallet):
        raise errors.ValidationFailed(fields={"wallet_address": [
            f"{EOA_REFUSED} (a plain EOA trades only when the operator allowlists it)."]})
    relayer_key = _relayer_key(relayer_api_key, relayer_api_key_address, signer)
    # A wallet generated at sign-in and never used gives way (its funds checked on chain
    # here, its records again under the transaction below).
    existing = wallets.for_user(user_id)
    if existing is not None:
        generated_wallets.require_unused(existing)
    wallet_id = uuid4()
    sealed, key_id = wallets.seal(bytes.fromhex(key[2:]),
                                  wallets.place(wallet_id, "private_key_sealed"))
    row = {"id": wallet_id, "user": user_id, "address": signer, "private_key_sealed": sealed,
           "key_id": key_id, "signature_type": kind.signature_type,
           "funder_address": None if kind is WalletType.EOA else wallet,
           "account_kind": KIND_EOA if kind is WalletType.EOA else KIND_CONNECTED,
           "session_signer": session_key}
    if relayer_key is not None:
        row["relayer_api_key_sealed"] = wallets.seal(
            relayer_key.key, wallets.place(wallet_id, "relayer_api_key_sealed"))[0]
        row["relayer_api_key_address"] = relayer_key.address
    try:
        with db.atomic():
            if existing is not None:
                generated_wallets.retire(existing)
            return TradingWallet.create(**row)
    except peewee.IntegrityError:
        raise errors.Conflict("This signer key or account is already connected, or this "
                              "account already has a trading wallet.") from None


def _relayer_key(key: str | None, address: str | None, signer: str) -> RelayerApiKey | None:
    key = (key or "").strip()
    if not key and not (address or "").strip():
        return None
    if not key:
        raise errors.ValidationFailed(fields={"relayer_api_key": [
            "Give the Relayer API key together with its address."]})
    if not (address or "").strip():
        raise errors.ValidationFailed(fields={"relayer_api_key_address": [
            "Give the Relayer API key's address (its \"Signer Address\") too."]})
    owner = checked_address(address, "relayer_api_key_address")
    if owner != signer:
        raise errors.ValidationFailed(fields={"relayer_api_key_address": [
            f"A Relayer API key belongs to the account's signer ({signer}), not {owner}."]})
    if not _RELAYER_KEY.match(key):
        raise errors.ValidationFailed(fields={"relayer_api_key": [
            "Must be a Relayer API key as polymarket.com shows it (Settings → API Keys → "
            "Relayer API Keys): a UUID such as 01967c03-b8c8-7000-8f68-8b8eaec6fd3d."]})
    return RelayerApiKey(key=key, address=owner)


def live_blockers(wallet: TradingWallet | None) -> list[dict[str, str]]:
    """What keeps the account from live trading, from the database alone (cheap enough for
    every live order): no wallet, an EOA not allowlisted, onboarding not finished."""
    if wallet is None:
        return [{"code": "no_wallet", "message": "No trading wallet yet: open the account "
                 "page to create one."}]
    if wallet.signature_type == SIGNATURE_TYPE_EOA and not is_allowlisted(wallet.address):
        return [{"code": "eoa_not_allowlisted", "message": f"{EOA_REFUSED} (this wallet is "
                 "a plain EOA the operator has not allowlisted)."}]
    row = AccountOnboarding.get_or_none(AccountOnboarding.wallet == wallet.id)
    if row is None or row.status != ONBOARDING_READY:
        return [{"code": "onboarding_incomplete", "message": _not_set_up(row)}]
    return []


def _not_set_up(row: AccountOnboarding | None) -> str:
    """What is happening to an account not yet set up for the venue, and what to do."""
    follow = "GET /api/trading-account (or the account page) follows it"
    if row is None:
        return ("The account is not set up for the venue yet. Its setup starts by itself "
                "at sign-in, at a live trade or when its deposit address is first asked for, "
                f"or with POST /api/trading-account/onboarding; {follow}.")
    if row.status == ONBOARDING_FAILED:
        return (f"The account's setup for the venue stopped at {row.step}: {row.error}. "
                "POST /api/trading-account/onboarding (or the account page) retries it.")
    return ("The account is being set up for the venue (its deposit wallet deployed, "
            "approvals, API credentials: usually within a minute); try again once it is "
            f"ready: {follow}.")


def require_live(user: User | UUID | str) -> None:
    """AccountNotReady (409) unless the user's account may trade live now.

    Deposit-wallet and connected accounts must have finished onboarding. A plain EOA is
    left to the venue, which refuses a maker it does not allow with its own message (the
    order's reason, shown to the user); readiness lists it as ``eoa_not_allowlisted``.
    An account whose setup nobody started has it started here, and the 409 says so.
    """
    wallet = account_setup.start(user)
    if wallet is None or wallet.signature_type == SIGNATURE_TYPE_EOA:
        return
    blockers = live_blockers(wallet)
    if blockers:
        raise errors.AccountNotReady(blockers[0]["message"], blockers=blockers)


def refuse_session_key(wallet: TradingWallet, action: str = "withdraw") -> None:
    """AccountNotReady (409) for an account connected with a session key: a session key is
    authorized for trading only (ACCOUNTS.md §2.6: it never withdraws; moving the wallet's
    money otherwise, as a wrap does, is left to the owner as well)."""
    if wallet.session_signer:
        message = ("This account is connected with a session key, which can trade but cannot "
                   f"{action}: {action} from the account on polymarket.com with its owner.")
        raise errors.AccountNotReady(message, blockers=[
            {"code": f"session_key_cannot_{action}", "message": message}])


def describe(wallet: TradingWallet) -> dict[str, object]:
    """The account as surfaces show it (no secret): kind, type, maker and signer."""
    return {"kind": wallet.account_kind, "signature_type": wallet.signature_type,
            "wallet_address": wallets.maker(wallet), "signer_address": wallet.address,
            "relayer": ("own_key" if wallet.relayer_api_key_address
                        else "builder" if uses_relayer(wallet) else "none"),
            "deposit_wallet": wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET,
            "session_key": bool(wallet.session_signer)}


__all__ = [
    "EOA_REFUSED",
    "KIND_CONNECTED",
    "KIND_DEPOSIT_WALLET",
    "KIND_EOA",
    "builder_credentials",
    "connect",
    "contracts",
    "deposit_wallet_of",
    "describe",
    "exchanges_not_approved",
    "is_allowlisted",
    "live_blockers",
    "refuse_session_key",
    "relayer_auth",
    "require_live",
    "uses_relayer",
]
