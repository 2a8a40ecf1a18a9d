"""Trading readiness: can this user copy-trade live right now, and if not, what blocks it.

One answer for the dashboard and the MCP ``get_trading_readiness`` tool: the trading
wallet, its venue balance (pUSD the venue will let orders spend), gas (MATIC on chain,
needed for claims and withdrawals), venue API credentials, the allowance the venue
reports, active configs against the tier's limit, and a list of blockers, each with a
code and a sentence. Every check degrades to a blocker rather than an error, so a page
can always show the whole picture.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.copying import CopyConfig
from models.user import User
from services import errors, tiers, venue_accounts, wallets
from services.principal import user_id_of

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
    """Wallet, balance, gas, credentials, allowance, configs and blockers for live copying."""
    user = User.get_by_id(user_id_of(user))
    blockers: list[dict[str, str]] = []
    wallet = wallets.for_user(user.id)
    result: dict[str, Any] = {
        "wallet_address": wallet.address if wallet else None,
        "balance_usdc": None, "gas_matic": None, "venue_credentials": False,
        "allowance_ok": None,
    }
    if wallet is None:
        blockers.append(_blocker("no_wallet", "No trading wallet yet: open the deposit "
                                 "address to create one, then fund it."))
    else:
        result["venue_credentials"] = wallets.venue_credentials(wallet) is not None
        try:
            balance = available_usdc(user.id)
            result["balance_usdc"] = balance
            result["venue_credentials"] = True  # deriving them was part of asking
            result["allowance_ok"] = True
            if balance < MIN_TRADE_USDC:
                blockers.append(_blocker("no_balance", f"The venue sees {balance} pUSD; fund "
                                         f"at least {MIN_TRADE_USDC} pUSD to place orders."))
        except errors.CopytradeError as exc:
            blockers.append(_blocker("venue_unreachable" if isinstance(exc, errors.Unavailable)
                                     else "venue_account", exc.message))
        try:
            gas = wallets.balance_of(wallet, "matic")
            result["gas_matic"] = gas
            if gas < MIN_GAS_MATIC:
                blockers.append(_blocker("no_gas", f"{gas} MATIC is not enough gas for claims "
                                         "and withdrawals (orders need none)."))
        except Exception as exc:  # no chain configured, or the RPC is down
            translated = errors.from_external(exc)
            result["gas_matic"] = None
            blockers.append(_blocker("chain_unavailable", translated.message if translated
                                     else "The chain could not be read."))
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
    trade_blockers = [b for b in blockers if b["code"] not in ("no_gas", "chain_unavailable",
                                                                 "tier_limit")]
    result["ready_to_trade"] = not trade_blockers
    result["blockers"] = blockers
    return result
