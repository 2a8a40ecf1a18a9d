"""Replacing a generated wallet that was never used (issue 44), so that connecting an
existing polymarket.com account still works after the first sign-in made one.

A wallet is replaced only when it is the server-generated deposit wallet and it has never
moved anything: no order from its maker, no withdrawal, claim, wrap or own transaction, no
deposit ever seen, no live copy config of its user running, and nothing on chain now (pUSD,
USDC.e or MATIC at its deposit wallet, deployed or not, nor MATIC at its owner key). Its
setup may have run (a deployed, approved deposit wallet holding nothing strands nothing);
a setup still running stops at its next step once the wallet is gone. The replaced wallet
is kept whole in ``replaced_wallets`` (its sealed key too), so funds that reach its address
after the check can still be recovered by the operator.
"""

from __future__ import annotations

from chain.tokens import native_balance
from models.base import db
from models.copying import CopyConfig
from models.trading import Order
from models.wallet import (
    KIND_DEPOSIT_WALLET,
    Claim,
    CollateralWrap,
    DepositWatch,
    ReplacedWallet,
    TradingWallet,
    WalletTransaction,
    Withdrawal,
)
from services.platform import chain_access, errors
from services.wallets import onboarding_queue, wallets

STRANDED = "connecting another one would strand its funds"


def _recorded_use(wallet: TradingWallet) -> str | None:
    """What the database says the wallet did, in words; None when it did nothing."""
    maker = wallets.maker(wallet)
    checks = (
        (Order.select().where(Order.maker_address == maker), "placed orders"),
        (Withdrawal.select().where(Withdrawal.wallet == wallet.id), "made withdrawals"),
        (Claim.select().where(Claim.wallet == wallet.id), "made claims"),
        (CollateralWrap.select().where(CollateralWrap.wallet == wallet.id), "wrapped USDC.e"),
        (
            WalletTransaction.select().where(WalletTransaction.wallet == wallet.id),
            "sent transactions",
        ),
        (
            CopyConfig.select().where(
                (CopyConfig.user == wallet.user_id)
                & CopyConfig.is_active
                & ~CopyConfig.paper_trading
            ),
            "live copy configs running",
        ),
    )
    found = next((f"has {what}" for query, what in checks if query.exists()), None)
    watch = DepositWatch.get_or_none(DepositWatch.wallet == wallet.id)
    if found is None and watch is not None and (watch.pusd_seen or watch.usdce_seen):
        found = "has received deposits"  # seen once: spent or not, the wallet was used
    return found


def _held_on_chain(wallet: TradingWallet) -> str | None:
    """What the wallet holds on chain now, in words; None when it holds nothing."""
    for token in ("usdc", "usdc_e", "matic"):
        if wallets.balance_of(wallet, token) > 0:
            return "holds " + {"usdc": "pUSD", "usdc_e": "USDC.e", "matic": "MATIC"}[token]
    if native_balance(chain_access.web3(), wallet.address) > 0:
        return "holds MATIC at its owner key"
    return None


def in_use(wallet: TradingWallet) -> str | None:
    """Why the user's wallet cannot be replaced by a connected account, in words (``has
    placed orders``, ``holds pUSD``, ...); None when it is a generated wallet never used.

    Reads the chain: without one configured nothing can be shown empty, so it is in use."""
    if wallet.account_kind != KIND_DEPOSIT_WALLET or wallet.session_signer:
        return "is a connected account"
    recorded = _recorded_use(wallet)
    if recorded is not None:
        return recorded
    if not onboarding_queue.chain_configured():
        return "cannot be checked for funds without a chain"
    return _held_on_chain(wallet)


def require_unused(wallet: TradingWallet) -> None:
    """Conflict (409) naming why, unless ``in_use`` finds the wallet replaceable."""
    why = in_use(wallet)
    if why is not None:
        raise errors.Conflict(
            f"This account already has a trading wallet, which {why}; {STRANDED}."
        )


def retire(wallet: TradingWallet) -> ReplacedWallet:
    """Move an unused generated wallet to ``replaced_wallets`` and delete it (its setup's
    rows go with it), inside the caller's transaction, which then creates the new wallet.

    The database's half of ``in_use`` is checked again under the transaction (what the
    chain said was read before it): Conflict (409) if the wallet was used or replaced
    meanwhile."""
    if not db.in_transaction():
        raise RuntimeError("retire runs inside the transaction that creates the new wallet")
    query = TradingWallet.select().where(TradingWallet.id == wallet.id)
    current = (query.for_update() if db.for_update else query).first()
    if current is None:
        raise errors.Conflict("The trading wallet changed meanwhile; try again.")
    recorded = _recorded_use(current)
    if recorded is not None:
        raise errors.Conflict(
            f"This account already has a trading wallet, which {recorded}; {STRANDED}."
        )
    kept = ReplacedWallet.create(
        id=current.id,
        user=current.user_id,
        address=current.address,
        funder_address=current.funder_address,
        private_key_sealed=current.private_key_sealed,
        key_id=current.key_id,
        created_at=current.created_at,
    )
    TradingWallet.delete().where(TradingWallet.id == current.id).execute()
    return kept


__all__ = ["in_use", "require_unused", "retire"]
