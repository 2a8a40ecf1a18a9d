"""Balances read from the chain: ERC-20 tokens (decimals read from the contract), native
currency (MATIC, 18 decimals) and CTF outcome tokens. Amounts are Decimal, never float.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from web3 import Web3
from web3.contract import Contract
from web3.exceptions import BadFunctionCallOutput, ContractLogicError, Web3Exception

from chain.abi import CONDITIONAL_TOKENS, ERC20, load_abi
from chain.checksums import checksum
from chain.errors import ChainError, ChainUnavailable

NATIVE_DECIMALS = 18

T = TypeVar("T")

# decimals() never changes for a deployed token: remember it per endpoint and address
_decimals_cache: dict[tuple[str, str], int] = {}


def from_base_units(value: int, decimals: int) -> Decimal:
    """Convert an integer amount of base units into a Decimal amount of whole tokens."""
    return Decimal(value).scaleb(-decimals)


def to_base_units(amount: Decimal, decimals: int) -> int:
    """Convert a Decimal token amount to base units; ValueError if it has finer precision."""
    if not isinstance(amount, Decimal):
        raise TypeError("amount must be a Decimal")
    if not amount.is_finite():
        raise ValueError(f"amount is not finite: {amount}")
    scaled = amount.scaleb(decimals)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{amount} has more than {decimals} decimal places")
    return int(scaled)


def read(call: Callable[[], T], what: str) -> T:
    """Run one chain read, turning web3's failures into ChainError (ChainUnavailable passes)."""
    try:
        return call()
    except ChainUnavailable:
        raise
    except BadFunctionCallOutput as exc:
        raise ChainError(f"{what}: no contract answered at that address ({exc})") from exc
    except ContractLogicError as exc:
        raise ChainError(f"{what}: call reverted ({exc})") from exc
    except (Web3Exception, ValueError) as exc:
        raise ChainError(f"{what}: {exc}") from exc


def erc20(w3: Web3, token: str) -> Contract:
    """Return an ERC-20 contract handle for a token address."""
    return w3.eth.contract(address=checksum(token), abi=load_abi(ERC20))


def conditional_tokens(w3: Web3, ctf: str) -> Contract:
    """Return a Conditional Tokens (ERC-1155) contract handle."""
    return w3.eth.contract(address=checksum(ctf), abi=load_abi(CONDITIONAL_TOKENS))


def _endpoint(w3: Web3) -> str:
    return str(getattr(w3.provider, "endpoint_uri", id(w3.provider)))


def token_decimals(w3: Web3, token: str) -> int:
    """Return a token's decimals() as reported by its contract."""
    key = (_endpoint(w3), checksum(token))
    if key not in _decimals_cache:
        value = read(lambda: erc20(w3, token).functions.decimals().call(), f"decimals of {token}")
        _decimals_cache[key] = int(value)
    return _decimals_cache[key]


def token_balance_base(w3: Web3, token: str, owner: str) -> int:
    """Return an owner's balance of an ERC-20 token in base units."""
    contract = erc20(w3, token)
    return int(
        read(lambda: contract.functions.balanceOf(checksum(owner)).call(), f"balance of {token}")
    )


def token_balances_base(w3: Web3, pairs: Sequence[tuple[str, str]]) -> list[int]:
    """Base-unit balances of many (token, owner) pairs in ONE JSON-RPC batch request (a
    sweep over thousands of wallets costs one round trip per page, not two per wallet)."""
    if not pairs:
        return []
    contracts: dict[str, Contract] = {}

    def reads() -> list[int]:
        with w3.batch_requests() as batch:
            for token, owner in pairs:
                contract = contracts.get(token) or contracts.setdefault(token, erc20(w3, token))
                batch.add(contract.functions.balanceOf(checksum(owner)))
            return [int(value) for value in batch.execute()]

    return read(reads, f"balances of {len(pairs)} (token, owner) pairs")


def token_balance(w3: Web3, token: str, owner: str) -> Decimal:
    """Return an owner's balance of an ERC-20 token in whole tokens."""
    return from_base_units(token_balance_base(w3, token, owner), token_decimals(w3, token))


def native_balance_wei(w3: Web3, owner: str) -> int:
    """Return an address's native (MATIC) balance in wei."""
    return int(read(lambda: w3.eth.get_balance(checksum(owner)), "native balance"))


def native_balance(w3: Web3, owner: str) -> Decimal:
    """Return an address's native (MATIC) balance in whole units."""
    return from_base_units(native_balance_wei(w3, owner), NATIVE_DECIMALS)


def outcome_balances_base(
    w3: Web3, ctf: str, owner: str, token_ids: Sequence[int | str]
) -> dict[int, int]:
    """Return an owner's CTF balance of each token id (base units), in one balanceOfBatch call."""
    ids = [int(t) for t in token_ids]
    if not ids:
        return {}
    contract = conditional_tokens(w3, ctf)
    owners = [checksum(owner)] * len(ids)
    values: list[Any] = read(
        lambda: contract.functions.balanceOfBatch(owners, ids).call(), "outcome balances"
    )
    return {token_id: int(v) for token_id, v in zip(ids, values, strict=True)}


def payout_fractions(w3: Web3, ctf: str, condition_id: str) -> list[Decimal] | None:
    """Return each outcome's payout share of a resolved condition, or None if unresolved."""
    contract = conditional_tokens(w3, ctf)
    cid = Web3.to_bytes(hexstr=condition_id)
    den = int(read(lambda: contract.functions.payoutDenominator(cid).call(), "payoutDenominator"))
    if den == 0:
        return None
    count = int(
        read(lambda: contract.functions.getOutcomeSlotCount(cid).call(), "getOutcomeSlotCount")
    )
    numerators = [
        int(read(lambda i=i: contract.functions.payoutNumerators(cid, i).call(), "payouts"))
        for i in range(count)
    ]
    return [Decimal(n) / Decimal(den) for n in numerators]
