"""Trading readiness: can this user copy-trade live right now, and if not, what blocks it.

One answer for the REST account status, the dashboard and the MCP ``get_trading_readiness``
tool: the trading account (kind, maker wallet), its onboarding steps, its venue balance
(pUSD the venue will let orders spend), USDC.e waiting to be wrapped, gas (POL, only for an
account that pays its own), venue API credentials, the allowances the venue reports (read,
never assumed), active configs against the tier's limit, native USDC the venue cannot
trade, and a list of blockers, each with a code and a sentence: ``no_wallet``,
``eoa_not_allowlisted``, ``onboarding_incomplete``, ``builder_credentials_missing``,
``wallet_not_deployed``, ``approval_missing``, ``no_balance``, ``usdce_to_wrap``,
``native_usdc``, ``no_gas``, ``venue_unreachable``, ``chain_unavailable``, ``tier_limit``,
``session_key_not_authorized`` (a session key the wallet no longer accepts)
(``usdce_to_wrap``, ``native_usdc``, ``no_gas``, ``chain_unavailable`` and ``tier_limit``
are warnings: they never stop trading by themselves). Every check degrades to a blocker
rather than an error, so a page can always show the whole picture.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from chain.tokens import read, token_balance
from models.copying import CopyConfig
from models.user import User
from models.wallet import SIGNATURE_TYPE_DEPOSIT_WALLET, TradingWallet
from schemas.fields import format_decimal
from services.platform import chain_access, errors, tiers, venues
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from services.wallets import onboarding, session_keys, trading_accounts, venue_accounts, wallets

log = logging.getLogger(__name__)

MIN_GAS_MATIC = Decimal("0.01")
MIN_TRADE_USDC = Decimal(1)


def available_usdc(user_id: UUID) -> Decimal:
    """pUSD the venue reports for the user's trading wallet (0 without a wallet)."""
    if wallets.for_user(user_id) is None:
        return Decimal(0)
    try:
        return venue_accounts.collateral_balance(venue_accounts.account(user_id))
    except Exception as exc:
        translated = errors.from_external(exc)
        if translated is None:
            raise
        raise translated from exc


def _blocker(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


def readiness(user: User | UUID | str) -> dict[str, Any]:
    """Wallet, balance, gas, credentials, allowances, onboarding steps, configs and blockers
    for live copying; each missing step is its own blocker, named."""
    user = User.get_by_id(user_id_of(user))
    blockers: list[dict[str, str]] = []
    wallet = wallets.for_user(user.id)
    result: dict[str, Any] = {
        "wallet_address": wallets.maker(wallet) if wallet else None,
        "account": trading_accounts.describe(wallet) if wallet else None,
        "onboarding": onboarding.status(user.id),
        "balance_usdc": None, "usdc_e": None, "usdc_native": None, "gas_matic": None,
        "venue_credentials": False,
        "allowance_ok": None, "missing_approvals": [],
    }
    blockers.extend(trading_accounts.live_blockers(wallet))
    if wallet is not None:
        if (trading_accounts.uses_relayer(wallet)
                and trading_accounts.relayer_auth(wallet) is None):
            blockers.append(_blocker("builder_credentials_missing", onboarding.BUILDER_MISSING))
        result["venue_credentials"] = wallets.venue_credentials(wallet) is not None
        _venue_checks(wallet, result, blockers)
        if result["onboarding"]["ready"] and any(b["code"] == "wallet_not_deployed"
                                                 for b in blockers):
            # the record says deployed, the venue says not: the venue's word is shown
            result["onboarding"] = onboarding.lost_by_venue(result["onboarding"])
            blockers[:] = [_blocker("wallet_not_deployed", onboarding.LOST_BY_VENUE)
                           if b["code"] == "wallet_not_deployed" else b for b in blockers]
        _chain_checks(wallet, result, blockers)
    active = CopyConfig.select().where(CopyConfig.user == user.id, CopyConfig.is_active,
                                       CopyConfig.deleted_at.is_null())
    limits = tiers.limits_for(user.tier)
    live_active = active.where(~CopyConfig.paper_trading).count()
    result.update({
        "tier": limits.tier,
        "active_configs": active.count(),
        "active_live_configs": live_active,
        "max_active_configs": limits.max_active_configs,
    })
    if (limits.max_active_configs is not None
            and result["active_configs"] >= limits.max_active_configs):
        blockers.append(_blocker("tier_limit", f"The {limits.tier} plan runs "
                                 f"{limits.max_active_configs} active configs at once."))
    # Gas only matters for on-chain work; live copying needs a wallet, funds and the venue.
    # USDC.e and native USDC are warnings: they block nothing while pUSD is there.
    trade_blockers = [b for b in blockers if b["code"] not in (
        "no_gas", "chain_unavailable", "tier_limit", "usdce_to_wrap", "native_usdc")]
    result["ready_to_trade"] = not trade_blockers
    result["blockers"] = blockers
    return result


def _venue_checks(wallet: TradingWallet, result: dict[str, Any],
                  blockers: list[dict[str, str]]) -> None:
    """What the venue sees: deployment, pUSD, and the exchanges' allowances (read, never
    assumed)."""
    maker = wallets.maker(wallet)
    try:
        if (wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET
                and not venues.client().relayer.deployed(maker)):
            blockers.append(_blocker("wallet_not_deployed", "The deposit wallet is not "
                                     "deployed yet: onboarding deploys it."))
            return
        account = venue_accounts.account(wallet.user_id)  # derives the credentials once
        venue_accounts.refresh_balance(account)  # the CLOB caches: see deposits and approvals
        seen = venues.client().clob.balance_allowances(
            account.creds, signature_type=account.signature_type)
    except Exception as exc:
        translated = errors.from_external(exc)
        if translated is None:
            raise
        blockers.append(_blocker("venue_unreachable" if isinstance(translated,
                                                                   errors.Unavailable)
                                 else "venue_account", translated.message))
        return
    result["balance_usdc"] = seen.balance
    result["venue_credentials"] = True
    missing = trading_accounts.exchanges_not_approved(seen.allowances)
    result["allowance_ok"] = not missing
    for name in missing:
        result["missing_approvals"].append(name)
        blockers.append(_blocker("approval_missing", f"Approval missing: pUSD for the {name} "
                                 "(onboarding sends it)."))
    if seen.balance < MIN_TRADE_USDC:
        blockers.append(_blocker("no_balance", f"The venue sees {seen.balance} pUSD; fund at "
                                 f"least {MIN_TRADE_USDC} pUSD to place orders."))


def _chain_checks(wallet: TradingWallet, result: dict[str, Any],
                  blockers: list[dict[str, str]]) -> None:
    """What the chain holds: USDC.e to wrap, and gas for an account that pays its own."""
    try:
        lapsed = session_keys.lapsed(wallet)
        if lapsed:
            blockers.append(_blocker("session_key_not_authorized", lapsed))
        usdce = wallets.balance_of(wallet, "usdc_e")
        result["usdc_e"] = usdce
        if usdce > 0:
            blockers.append(_blocker("usdce_to_wrap", _usdce_message(wallet, usdce)))
        _native_usdc_check(wallet, result, blockers)
        if not trading_accounts.uses_relayer(wallet):
            gas = wallets.balance_of(wallet, "matic")
            result["gas_matic"] = gas
            if gas < MIN_GAS_MATIC:
                blockers.append(_blocker("no_gas", f"{gas} POL is not enough gas for claims "
                                         "and withdrawals (orders need none)."))
    except Exception as exc:  # no chain configured, or the RPC is down
        translated = errors.from_external(exc)
        blockers.append(_blocker("chain_unavailable", translated.message if translated
                                 else "The chain could not be read."))


def _usdce_message(wallet: TradingWallet, usdce: Decimal) -> str:
    """What the user reads about USDC.e waiting: only pUSD trades; who wraps it."""
    amount = f"{format_decimal(usdce)} USDC.e is in the wallet; only pUSD trades."
    settings = runtime().settings.deposits
    if wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET:
        return f"{amount} Wrap it to pUSD on polymarket.com to trade with it."
    if settings.auto_wrap and usdce >= settings.wrap_minimum:
        return f"{amount} It is being wrapped into pUSD by itself (within a few minutes)."
    return f"{amount} Wrap it into pUSD on the account page to trade with it."


def _native_usdc_check(wallet: TradingWallet, result: dict[str, Any],
                       blockers: list[dict[str, str]]) -> None:
    """Native USDC sent to the maker: the venue trades only pUSD, so it must be swapped."""
    token = chain_access.contracts().native_usdc
    w3 = chain_access.web3()
    if not token or not read(lambda: w3.eth.get_code(token), "get_code"):
        return  # not configured, or not on this chain: nothing can have been sent
    native = token_balance(w3, token, wallets.maker(wallet))
    result["usdc_native"] = native
    if native > 0:
        blockers.append(_blocker("native_usdc", f"{format_decimal(native)} USDC (native) "
                                 "cannot be traded; swap it to USDC.e or pUSD (on "
                                 "polymarket.com or any DEX) to trade with it."))
