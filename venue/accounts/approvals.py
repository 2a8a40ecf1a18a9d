"""The approvals a maker wallet needs before the venue will fill its orders (ACCOUNTS.md §5).

The official SDK's ``_required_trading_approvals``, in its order: pUSD ``approve`` (max) to
seven spenders, then CTF and PositionManager ``setApprovalForAll`` to ten operators. Each
approval encodes its own calldata, and the read that tells whether it is already in place
(``allowance`` / ``isApprovedForAll``), so a caller can send only what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from eth_hash.auto import keccak

from venue.accounts.batch import Call
from venue.accounts.contracts import POLYGON, AccountContracts
from venue.accounts.words import address_word, uint_word

MAX_UINT256 = (1 << 256) - 1


def selector(signature: str) -> bytes:
    """The 4-byte function selector of a Solidity signature."""
    return keccak(signature.encode("ascii"))[:4]


_APPROVE = selector("approve(address,uint256)")
_ALLOWANCE = selector("allowance(address,address)")
_SET_APPROVAL_FOR_ALL = selector("setApprovalForAll(address,bool)")
_IS_APPROVED_FOR_ALL = selector("isApprovedForAll(address,address)")

Method = Literal["approve", "setApprovalForAll"]


@dataclass(frozen=True, slots=True)
class Approval:
    """``token`` lets ``spender`` move the wallet's funds (ERC-20) or positions (ERC-1155)."""

    token: str
    method: Method
    spender: str

    def calldata(self) -> str:
        """Hex calldata granting it: ``approve(spender, max)`` / ``setApprovalForAll(op, true)``."""
        if self.method == "approve":
            return "0x" + (_APPROVE + address_word(self.spender) + uint_word(MAX_UINT256)).hex()
        return "0x" + (_SET_APPROVAL_FOR_ALL + address_word(self.spender) + uint_word(1)).hex()

    def call(self) -> Call:
        """The wallet call granting it (for a ``WALLET`` batch, or an EOA's own transaction)."""
        return Call(target=self.token, data=self.calldata())

    def read_calldata(self, owner: str) -> str:
        """Hex calldata of the view that tells whether ``owner`` has granted it already."""
        head = _ALLOWANCE if self.method == "approve" else _IS_APPROVED_FOR_ALL
        return "0x" + (head + address_word(owner) + address_word(self.spender)).hex()

    def granted(self, read_result: int) -> bool:
        """Whether the view's uint256 answer means granted (max allowance, or true)."""
        return read_result >= MAX_UINT256 if self.method == "approve" else read_result != 0


def required_approvals(contracts: AccountContracts = POLYGON) -> tuple[Approval, ...]:
    """Every approval a maker wallet needs, ERC-20 first, in the SDK's order."""
    c = contracts
    collateral_spenders = (c.standard_exchange, c.neg_risk_exchange, c.collateral_adapter,
                           c.neg_risk_collateral_adapter, c.protocol_v2_router, c.exchange_v3,
                           c.perps_deposit_contract)
    ctf_operators = (c.standard_exchange, c.neg_risk_exchange, c.collateral_adapter,
                     c.neg_risk_collateral_adapter, c.auto_redeem_operator, c.binary_module,
                     c.neg_risk_module)
    position_operators = (c.protocol_v2_router, c.exchange_v3, c.auto_redeem_operator)
    return (
        *(Approval(c.collateral_token, "approve", s) for s in collateral_spenders),
        *(Approval(c.conditional_tokens, "setApprovalForAll", o) for o in ctf_operators),
        *(Approval(c.position_manager, "setApprovalForAll", o) for o in position_operators),
    )


__all__ = ["MAX_UINT256", "Approval", "Method", "required_approvals", "selector"]
