"""Balances and amounts: decimals come from the contract, amounts are Decimal."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chain.abi import CONDITIONAL_TOKENS, ERC20, NEG_RISK_ADAPTER, load_abi
from chain.errors import ChainError, ChainUnavailable
from chain.rpc import connect
from chain.tokens import (
    from_base_units,
    native_balance,
    outcome_balances_base,
    to_base_units,
    token_balance,
    token_balance_base,
    token_decimals,
)
from devstack.chain.compile import compile_contracts
from tests.conftest import free_port


def test_decimals_are_read_from_the_contract(chain) -> None:
    w3 = chain.web3()
    assert token_decimals(w3, chain.contracts.pusd) == 6
    assert token_decimals(w3, chain.contracts.usdce) == 6


def test_balances_are_decimal_amounts(chain) -> None:
    w3 = chain.web3()
    wallet = chain.new_wallet(native_wei=1_500_000_000_000_000_000)
    chain.contracts.mint(chain.contracts.pusd, wallet.address, 12_345_678)
    assert token_balance_base(w3, chain.contracts.pusd, wallet.address) == 12_345_678
    assert token_balance(w3, chain.contracts.pusd, wallet.address) == Decimal("12.345678")
    assert token_balance(w3, chain.contracts.usdce, wallet.address) == Decimal(0)
    assert native_balance(w3, wallet.address) == Decimal("1.5")


def test_base_unit_conversions() -> None:
    assert to_base_units(Decimal("1.25"), 6) == 1_250_000
    assert to_base_units(Decimal("0.000001"), 6) == 1
    assert from_base_units(1, 6) == Decimal("0.000001")
    with pytest.raises(ValueError, match="decimal places"):
        to_base_units(Decimal("0.0000001"), 6)
    with pytest.raises(TypeError):
        to_base_units(1.5, 6)  # type: ignore[arg-type]


def test_outcome_balances_in_one_batch(chain) -> None:
    condition = chain.contracts.prepare_condition()
    wallet = chain.new_wallet(native_wei=0)
    chain.contracts.split_position(wallet.address, condition, 3_000_000, outcomes=[1])
    balances = outcome_balances_base(
        chain.web3(), chain.contracts.ctf, wallet.address, condition.token_ids
    )
    assert balances == {condition.token_ids[0]: 0, condition.token_ids[1]: 3_000_000}


def test_reading_a_non_contract_is_a_chain_error(chain) -> None:
    with pytest.raises(ChainError):
        token_decimals(chain.web3(), chain.accounts[5].address)


def test_unreachable_rpc_is_chain_unavailable() -> None:
    w3 = connect(f"http://127.0.0.1:{free_port()}", timeout=2)
    with pytest.raises(ChainUnavailable):
        native_balance(w3, "0x0000000000000000000000000000000000000001")
    with pytest.raises(ChainUnavailable):
        connect(f"http://127.0.0.1:{free_port()}", timeout=2, check=True)


@pytest.mark.parametrize(
    ("committed", "contract"),
    [(ERC20, "DevToken"), (CONDITIONAL_TOKENS, "ConditionalTokens"),
     (NEG_RISK_ADAPTER, "NegRiskAdapter")],
)  # fmt: skip
def test_committed_abis_match_the_contracts(committed: str, contract: str) -> None:
    def signature(entry: dict) -> tuple:
        kinds = tuple(i["type"] for i in entry.get("inputs", []))
        outs = tuple(o["type"] for o in entry.get("outputs", []))
        return entry["type"], entry.get("name"), kinds, outs, entry.get("stateMutability")

    compiled = {signature(e) for e in compile_contracts()[contract].abi}
    for entry in load_abi(committed):
        assert signature(entry) in compiled, entry["name"]
