"""Issue 16, items 2-3: native USDC at the maker address is reported (a warning, never a
trade blocker), and an allowlisted plain EOA's missing approvals are sent from the EOA
itself, on chain, exactly once."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from services import readiness

ONE_USDC = 10**6


def test_native_usdc_is_reported_and_blocks_nothing_while_pusd_is_there(
        trader: Any, wallet_chain: Any) -> None:
    dev = wallet_chain.contracts
    before = readiness.readiness(trader.user)
    assert before["usdc_native"] == 0
    assert "native_usdc" not in [b["code"] for b in before["blockers"]]
    dev.mint(dev.native_usdc, trader.wallet.address, 7 * ONE_USDC + 250_000)
    ready = readiness.readiness(trader.user)
    assert ready["usdc_native"] == Decimal("7.25")
    native = [b for b in ready["blockers"] if b["code"] == "native_usdc"]
    assert native and native[0]["message"].startswith("7.25 USDC (native) cannot be traded; "
                                                      "swap it to USDC.e or pUSD")
    # A warning: the same trade blockers with and without it.
    assert ready["ready_to_trade"] == before["ready_to_trade"]
    assert ready["balance_usdc"] == 1000
