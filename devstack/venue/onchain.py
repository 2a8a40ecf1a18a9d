"""The chain the sandbox indexes: outcome-token balances and resolutions from ConditionalTokens.

The real Data API indexes on-chain positions, so tokens that reach a wallet from outside
the venue (a transfer, a split) are listed too. Attached to a chain, the sandbox does the
same for the tokens of its markets: ``/positions`` adds what the wallet holds on chain to
what it holds in the sandbox's own ledger, and a market whose condition has payouts on
chain is redeemable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from web3 import Web3

from devstack.chain.transact import checksum, connect

_CTF_READS: list[dict[str, Any]] = [
    {"type": "function", "name": "balanceOfBatch", "stateMutability": "view",
     "inputs": [{"name": "owners", "type": "address[]"}, {"name": "ids", "type": "uint256[]"}],
     "outputs": [{"name": "", "type": "uint256[]"}]},
    {"type": "function", "name": "payoutDenominator", "stateMutability": "view",
     "inputs": [{"name": "conditionId", "type": "bytes32"}],
     "outputs": [{"name": "", "type": "uint256"}]},
]


class ChainHoldings:
    """Reads one ConditionalTokens contract over JSON-RPC (no signing, no writes)."""

    def __init__(self, rpc_url: str, ctf: str) -> None:
        self.rpc_url = rpc_url
        self.ctf = checksum(ctf)
        self._contract = connect(rpc_url).eth.contract(address=self.ctf, abi=_CTF_READS)

    def balances(self, owner: str, token_ids: Sequence[str]) -> dict[str, int]:
        """Base-unit balance of each token id held by ``owner`` (only those above zero)."""
        if not token_ids:
            return {}
        owners = [checksum(owner)] * len(token_ids)
        amounts = self._contract.functions.balanceOfBatch(
            owners, [int(t) for t in token_ids]).call()
        return {t: int(a) for t, a in zip(token_ids, amounts, strict=True) if a}

    def resolved(self, condition_id: str) -> bool:
        """Whether the condition's payouts are reported on chain."""
        denominator = self._contract.functions.payoutDenominator(
            Web3.to_bytes(hexstr=condition_id)).call()
        return int(denominator) > 0

    def describe(self) -> dict[str, str]:
        """What the control API shows about the attachment."""
        return {"rpc_url": self.rpc_url, "ctf": self.ctf}
