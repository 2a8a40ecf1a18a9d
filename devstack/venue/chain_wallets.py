"""Chain-backed execution of deposit-wallet transactions (a dev chain is attached).

``WALLET-CREATE`` calls the factory's ``deploy(owner)`` from the relayer's operator key;
a ``WALLET`` batch goes through the factory's ``execute(wallet, batch, signature)``, so the
wallet contract itself checks the signature, nonce and deadline. Afterwards the registry
mirrors the chain: the wallet's ``nonce()``, and the ``allowance`` / ``isApprovedForAll``
of every approval the batch made, and the session signers it authorized or revoked. A
revert fails the transaction with its reason.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from typing import Any

from web3 import Web3

from devstack.chain.transact import address_of, checksum, connect, send_and_wait
from devstack.venue.accounts import COLLATERAL_ASSET, AccountRegistry, DepositWallet
from devstack.venue.batch import WalletCall
from devstack.venue.config import SandboxConfig
from devstack.venue.wallet_exec import ExecutionFailed, decode_call

_CALL = {"name": "calls", "type": "tuple[]", "components": [
    {"name": "target", "type": "address"}, {"name": "value", "type": "uint256"},
    {"name": "data", "type": "bytes"}]}
_BATCH = {"name": "batch", "type": "tuple", "components": [
    {"name": "wallet", "type": "address"}, {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"}, _CALL]}
_ABI: list[dict[str, Any]] = [
    {"type": "function", "name": "deploy", "stateMutability": "nonpayable",
     "inputs": [{"name": "owner", "type": "address"}],
     "outputs": [{"name": "wallet", "type": "address"}]},
    {"type": "function", "name": "execute", "stateMutability": "payable",
     "inputs": [{"name": "wallet", "type": "address"}, _BATCH,
                {"name": "signature", "type": "bytes"}], "outputs": []},
    {"type": "function", "name": "nonce", "stateMutability": "view", "inputs": [],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "allowance", "stateMutability": "view",
     "inputs": [{"name": "owner", "type": "address"}, {"name": "spender", "type": "address"}],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "sessionSignerValidUntil", "stateMutability": "view",
     "inputs": [{"name": "signer", "type": "address"}],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "balanceOf", "stateMutability": "view",
     "inputs": [{"name": "owner", "type": "address"}],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "isApprovedForAll", "stateMutability": "view",
     "inputs": [{"name": "owner", "type": "address"}, {"name": "operator", "type": "address"}],
     "outputs": [{"name": "", "type": "bool"}]},
]


def revert_reason(exc: Exception) -> str:
    """The revert reason of a failed call (web3 puts it in the exception's text)."""
    text = str(exc.args[0] if exc.args else exc)
    return text.removeprefix("execution reverted: ") or "execution reverted"


class ChainWallets:
    """Deposit wallets deployed and operated on a dev chain through its factory."""

    def __init__(self, rpc_url: str, factory: str, operator_key: str,
                 accounts: AccountRegistry) -> None:
        self.rpc_url = rpc_url
        self.w3: Web3 = connect(rpc_url)
        self.chain_id = int(self.w3.eth.chain_id)
        self.factory = checksum(factory)
        self.operator_key = operator_key
        self.accounts = accounts
        self._factory = self.w3.eth.contract(address=self.factory, abi=_ABI)

    def describe(self) -> dict[str, str]:
        """What the control API shows about it (never the key)."""
        return {"factory": self.factory, "operator": address_of(self.operator_key)}

    def _send(self, data: str) -> str:
        """Send from the operator and wait; the mined transaction's hash."""
        try:
            receipt = send_and_wait(self.w3, self.operator_key,
                                    {"to": self.factory, "data": data})
        except Exception as exc:  # a revert (at estimation or mining) fails the transaction
            raise ExecutionFailed(revert_reason(exc)) from exc
        return "0x" + bytes(receipt["transactionHash"]).hex()

    def create(self, owner: str) -> str:
        """``deploy(owner)`` from the operator; the wallet is registered at CONFIRMED."""
        self._send(self._factory.encode_abi("deploy", args=[checksum(owner)]))
        wallet = self.accounts.derive(owner)
        self.accounts.register_deposit_wallet(wallet, owner, registered=False)
        return wallet

    def nonce(self, wallet: str) -> int:
        """The wallet contract's ``nonce()``."""
        contract = self.w3.eth.contract(address=checksum(wallet), abi=_ABI)
        return int(contract.functions.nonce().call())

    def execute(self, wallet: DepositWallet, signer: str, calls: list[WalletCall], *,
                nonce: int, deadline: int, signature: str) -> str:
        """``execute`` through the factory; then mirror the nonce and the approvals made.
        The chain's hash of it (what the relayer reports)."""
        batch = (checksum(wallet.address), nonce, deadline,
                 [(checksum(c.target), c.value, c.data) for c in calls])
        tx_hash = self._send(self._factory.encode_abi(
            "execute", args=[checksum(wallet.address), batch,
                             bytes.fromhex(signature.removeprefix("0x"))]))
        wallet.nonce = self.nonce(wallet.address)
        for call in calls:
            self._mirror(wallet, call)
        return tx_hash

    def execute_legacy(self, wallet: str, calls: list[WalletCall]) -> None:
        """Proxy and Safe wallets exist only in the simulation (the dev chain deploys no
        proxy factory, Safe or MultiSend): their transactions fail with that reason."""
        raise ExecutionFailed("proxy and Safe wallets are not deployed on the dev chain: "
                              "their transactions run only without a chain attached")

    def _mirror(self, record: DepositWallet, call: WalletCall) -> None:
        try:
            name, args = decode_call(call)
        except ExecutionFailed:
            return  # a call the registry does not track
        wallet = record.address
        token = self.w3.eth.contract(address=checksum(call.target), abi=_ABI)
        if name in ("authorizeSessionSigner", "revokeSessionSigner"):
            signer = args[0].lower()
            until = int(token.functions.sessionSignerValidUntil(checksum(signer)).call())
            if until:
                record.session_signers[signer] = until
            else:
                record.session_signers.pop(signer, None)
            record.fenced.discard(signer)
            return
        if name == "approve":
            amount = token.functions.allowance(checksum(wallet), checksum(args[0])).call()
            self.accounts.approve(wallet, call.target, args[0], int(amount))
        elif name == "setApprovalForAll":
            approved = token.functions.isApprovedForAll(checksum(wallet),
                                                        checksum(args[0])).call()
            self.accounts.set_approval_for_all(wallet, call.target, args[0], bool(approved))

    # -- what ``/balance-allowance/update`` reads --

    def erc20_balance(self, token: str, owner: str) -> int:
        """``token.balanceOf(owner)`` on the chain."""
        contract = self.w3.eth.contract(address=checksum(token), abi=_ABI)
        return int(contract.functions.balanceOf(checksum(owner)).call())

    def read_approvals(self, owner: str, asset: str, config: SandboxConfig) -> None:
        """Copy ``owner``'s approvals of the reported spenders (pUSD ``allowance`` or the
        CTF's ``isApprovedForAll``) from the chain into the registry, however they were made."""
        for spender in self.accounts.cache_spenders():
            if asset == COLLATERAL_ASSET:
                token = self.w3.eth.contract(address=checksum(config.collateral), abi=_ABI)
                amount = token.functions.allowance(checksum(owner), checksum(spender)).call()
                self.accounts.approve(owner, config.collateral, spender, int(amount))
            else:
                ctf = self.w3.eth.contract(address=checksum(config.conditional_tokens), abi=_ABI)
                approved = ctf.functions.isApprovedForAll(checksum(owner),
                                                          checksum(spender)).call()
                self.accounts.set_approval_for_all(owner, config.conditional_tokens, spender,
                                                   bool(approved))
