"""Simulated execution of deposit-wallet transactions when no chain is attached.

``WALLET-CREATE`` records the wallet; a ``WALLET`` batch (or a grandfathered proxy's or
Safe's ``PROXY`` / ``SAFE`` transaction) runs its calls against the ledger
and the account registry: pUSD / USDC.e ``approve`` and ``transfer``, CTF and PositionManager
``setApprovalForAll``, the onramp's ``wrap`` (USDC.e in, pUSD out), ``redeemPositions``
through the collateral adapters (paying pUSD), and the wallet's own session-signer calls.
Calldata is decoded with the ABI; anything else fails the batch with a reason, and a failed
batch changes nothing (as a reverted transaction).

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eth_abi import decode as abi_decode
from eth_abi import encode as abi_encode
from eth_utils import keccak, to_checksum_address

from devstack.venue.accounts import AccountRegistry, DepositWallet
from devstack.venue.amounts import to_base
from devstack.venue.batch import WalletCall
from devstack.venue.catalog import Catalog
from devstack.venue.config import SandboxConfig
from devstack.venue.ledger import Ledger
from devstack.venue.rejections import VenueRejection
from devstack.venue.settlement import Settlement


class ExecutionFailed(Exception):
    """A transaction reverted; ``message`` becomes the relayer's ``errorMsg``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class _Function:
    name: str
    types: tuple[str, ...]


_FUNCTIONS = {
    keccak(text=f"{name}({','.join(types)})")[:4]: _Function(name, types)
    for name, types in (
        ("approve", ("address", "uint256")),
        ("transfer", ("address", "uint256")),
        ("setApprovalForAll", ("address", "bool")),
        ("wrap", ("address", "address", "uint256")),
        ("redeemPositions", ("address", "bytes32", "bytes32", "uint256[]")),
        ("authorizeSessionSigner", ("address", "uint256")),
        ("revokeSessionSigner", ("address",)),
    )
}


_SELECTORS = {function.name: selector for selector, function in _FUNCTIONS.items()}


def session_signer_call(wallet: str, signer: str, valid_until: int | None) -> WalletCall:
    """The wallet's own ``authorizeSessionSigner(signer, validUntil)`` or, without
    ``valid_until``, ``revokeSessionSigner(signer)``."""
    if valid_until is None:
        data = _SELECTORS["revokeSessionSigner"] + abi_encode(["address"], [signer])
    else:
        data = _SELECTORS["authorizeSessionSigner"] + abi_encode(
            ["address", "uint256"], [signer, valid_until])
    return WalletCall(to_checksum_address(wallet), 0, data)


def decode_call(call: WalletCall) -> tuple[str, tuple[Any, ...]]:
    """(function name, arguments) of a call's calldata, or ExecutionFailed."""
    function = _FUNCTIONS.get(call.data[:4])
    if function is None:
        raise ExecutionFailed(
            f"unsupported call to {call.target}: selector 0x{call.data[:4].hex()}")
    try:
        return function.name, tuple(abi_decode(list(function.types), call.data[4:]))
    except Exception as exc:  # short or malformed arguments revert, as the ABI decoder does
        raise ExecutionFailed(f"malformed {function.name} calldata") from exc


class SimulatedWallets:
    """Deposit wallets deployed and operated without a chain."""

    def __init__(self, config: SandboxConfig, now: Callable[[], float], catalog: Catalog,
                 ledger: Ledger, accounts: AccountRegistry, settlement: Settlement) -> None:
        self.config = config
        self.now = now
        self.catalog = catalog
        self.ledger = ledger
        self.accounts = accounts
        self.settlement = settlement

    def create(self, owner: str) -> str:
        """Deploy ``owner``'s wallet (not yet in the relayer's registry); returns it."""
        wallet = self.accounts.derive(owner)
        if self.accounts.wallet(wallet) is not None:
            raise ExecutionFailed(f"deposit wallet {wallet} already deployed")
        self.accounts.register_deposit_wallet(wallet, owner, registered=False)
        return wallet

    @property
    def chain_id(self) -> int:
        """The chain batches are signed for."""
        return self.config.chain_id

    def execute(self, wallet: DepositWallet, signer: str, calls: list[WalletCall], *,
                nonce: int, deadline: int, signature: str) -> str | None:
        """Run a batch atomically: every call, or (ExecutionFailed) none (the relayer has
        checked ``nonce``, ``deadline`` and ``signature`` already); no chain, no hash."""
        self._atomically(wallet.address, wallet, signer, calls)
        wallet.nonce += 1
        return None

    def execute_legacy(self, wallet: str, calls: list[WalletCall]) -> None:
        """Run a proxy's or Safe's calls atomically (the relayer has checked owner, nonce
        and signature): token calls only, as the wallet itself has none we simulate."""
        self._atomically(wallet.lower(), None, "", calls)

    def _atomically(self, address: str, wallet: DepositWallet | None, signer: str,
                    calls: list[WalletCall]) -> None:
        decoded = [(call, *decode_call(call)) for call in calls]
        saved = self._snapshot(wallet)
        try:
            for call, name, args in decoded:
                if call.value:
                    raise ExecutionFailed("deposit wallet holds no POL to send"
                                          if wallet is not None else
                                          "the wallet holds no POL to send")
                if wallet is not None and call.target.lower() == address:
                    self._own_call(wallet, signer, name, args)
                else:
                    self._token_call(address, call.target.lower(), name, args)
        except ExecutionFailed:
            self._restore(wallet, saved)
            raise

    # -- calls --

    def _own_call(self, wallet: DepositWallet, signer: str, name: str, args: tuple) -> None:
        if signer.lower() not in wallet.owners:
            raise ExecutionFailed("DepositWallet: owner only")
        if name == "authorizeSessionSigner":
            session, valid_until = args[0].lower(), int(args[1])
            if session in wallet.owners or valid_until <= self.now():
                raise ExecutionFailed("DepositWallet: invalid session signer")
            wallet.session_signers[session] = valid_until
            wallet.fenced.discard(session)
        elif name == "revokeSessionSigner":
            wallet.session_signers.pop(args[0].lower(), None)
            wallet.fenced.discard(args[0].lower())
        else:
            raise ExecutionFailed(f"unsupported call to the wallet itself: {name}")

    def _token_call(self, wallet: str, target: str, name: str, args: tuple) -> None:
        config = self.config
        pusd, usdc_e = config.collateral.lower(), config.usdc_e.lower()
        erc1155 = {config.conditional_tokens.lower(), config.position_manager.lower()}
        adapters = {config.ctf_collateral_adapter.lower(): False,
                    config.neg_risk_collateral_adapter.lower(): True}
        if name == "approve" and target in (pusd, usdc_e):
            self.accounts.approve(wallet, target, args[0], int(args[1]))
        elif name == "transfer" and target in (pusd, usdc_e):
            self._transfer(wallet, target == pusd, args[0], int(args[1]))
        elif name == "setApprovalForAll" and target in erc1155:
            self.accounts.set_approval_for_all(wallet, target, args[0], bool(args[1]))
        elif name == "wrap" and target == config.collateral_onramp.lower():
            self._wrap(wallet, args[0], args[1], int(args[2]))
        elif name == "redeemPositions" and target in adapters:
            self._redeem(wallet, target, adapters[target], args)
        else:
            raise ExecutionFailed(f"unsupported call to {to_checksum_address(target)}: {name}")

    def _transfer(self, wallet: str, is_pusd: bool, recipient: str, amount: int) -> None:
        if is_pusd:
            if self.ledger.balance(wallet) - self.ledger.reserved(wallet)[0] < amount:
                raise ExecutionFailed("ERC20: transfer amount exceeds balance")
            self.ledger.credit(wallet, -amount)
            self.accounts.moved_on_chain(wallet, -amount)
            self.ledger.credit(recipient, amount)
            self.accounts.moved_on_chain(recipient, amount)
            return
        if self.accounts.usdc_e_balance(wallet) < amount:
            raise ExecutionFailed("ERC20: transfer amount exceeds balance")
        self.accounts.credit_usdc_e(wallet, -amount)
        self.accounts.credit_usdc_e(recipient, amount)

    def _wrap(self, wallet: str, asset: str, recipient: str, amount: int) -> None:
        onramp = self.config.collateral_onramp
        if asset.lower() != self.config.usdc_e.lower():
            raise ExecutionFailed("CollateralOnramp: unsupported asset")
        if self.accounts.usdc_e_balance(wallet) < amount:
            raise ExecutionFailed("ERC20: transfer amount exceeds balance")
        if not self.accounts.spend_allowance(wallet, self.config.usdc_e, onramp, amount):
            raise ExecutionFailed("ERC20: insufficient allowance")
        self.accounts.credit_usdc_e(wallet, -amount)
        self.ledger.credit(recipient, amount)
        self.accounts.moved_on_chain(recipient, amount)

    def _redeem(self, wallet: str, adapter: str, neg_risk: bool, args: tuple) -> None:
        collateral, _parent, condition, _index_sets = args
        if collateral.lower() != self.config.collateral.lower():
            raise ExecutionFailed("CollateralAdapter: collateral must be pUSD")
        if not self.accounts.approved_for_all(wallet, self.config.conditional_tokens, adapter):
            raise ExecutionFailed("ERC1155: caller is not owner nor approved")
        condition_id = "0x" + condition.hex()
        try:
            market = self.catalog.market(condition_id)
            if market.neg_risk != neg_risk:
                raise ExecutionFailed("CollateralAdapter: wrong adapter for this market")
            paid = self.settlement.redeem(wallet, condition_id)
        except VenueRejection as exc:
            raise ExecutionFailed(exc.message) from exc
        self.accounts.moved_on_chain(wallet, to_base(paid))

    # -- revert --

    def _snapshot(self, wallet: DepositWallet | None) -> tuple:
        ledger, accounts = self.ledger, self.accounts
        return (dict(ledger.collateral), copy.deepcopy(ledger.positions),
                copy.deepcopy(ledger.stats), dict(accounts.allowances), set(accounts.operators),
                dict(accounts.usdc_e), dict(accounts.unseen),
                dict(wallet.session_signers) if wallet is not None else None,
                len(self.settlement.tape.redemptions))

    def _restore(self, wallet: DepositWallet | None, saved: tuple) -> None:
        ledger, accounts = self.ledger, self.accounts
        (ledger.collateral, ledger.positions, ledger.stats, accounts.allowances,
         accounts.operators, accounts.usdc_e, accounts.unseen, session_signers,
         redemptions) = saved
        if wallet is not None:
            wallet.session_signers = session_signers
        del self.settlement.tape.redemptions[redemptions:]
