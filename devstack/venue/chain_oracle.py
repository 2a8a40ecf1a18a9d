"""A sandbox resolution reported on the attached dev chain, as Polymarket's oracles report it.

On Polygon a market's resolution is a payout report: UMA's adapter calls the CTF's
``reportPayouts`` for a plain market, the NegRiskAdapter reports a neg-risk question (and
reports its payouts to the CTF itself), and protocol-v2 markets are resolved on their Router.
Claims then read those payouts on chain. The sandbox does the same on the dev chain when it
settles there (``ChainSettlement``): each report is sent as the address the dev contracts
accept it from (the condition's oracle, the adapter's admin, the Router's oracle), through
anvil's impersonation, so no key of theirs is needed. A condition already reported (a reset
venue resolving it again) is left as it is: payouts never change.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from typing import Any

from web3 import Web3

from devstack.chain.transact import address_of, checksum
from devstack.ctf import condition_id
from devstack.venue.catalog import Market
from devstack.venue.chain_settlement import ChainSettlement, SettlementFailed


def _view(name: str, inputs: list[str], output: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "stateMutability": "view",
            "inputs": [{"name": f"a{i}", "type": t} for i, t in enumerate(inputs)],
            "outputs": [{"name": "", "type": output}]}


def _write(name: str, inputs: list[str]) -> dict[str, Any]:
    return {"type": "function", "name": name, "stateMutability": "nonpayable",
            "inputs": [{"name": f"a{i}", "type": t} for i, t in enumerate(inputs)],
            "outputs": []}


_ABI: list[dict[str, Any]] = [
    _write("reportPayouts", ["bytes32", "uint256[]"]),  # ConditionalTokens
    _view("payoutDenominator", ["bytes32"], "uint256"),
    _write("reportOutcome", ["bytes32", "bool"]),  # NegRiskAdapter
]
_ROUTER_ABI: list[dict[str, Any]] = [
    _view("router", [], "address"),  # PositionManager
    _view("oracle", [], "address"),  # ProtocolV2Router
    _view("payoutDenominator", ["bytes31"], "uint256"),
    _write("reportPayouts", ["bytes31", "uint256[2]"]),
]


def _bytes32(hex_text: str) -> bytes:
    return Web3.to_bytes(hexstr=hex_text).rjust(32, b"\x00")


def report_resolution(settlement: ChainSettlement, market: Market, winner: int) -> bool:
    """Report on chain that outcome ``winner`` of ``market`` won (payouts 1 and 0); False
    when its payouts were reported already. Raises SettlementFailed when it cannot."""
    if market.position_ids:
        return _report_v2(settlement, market, winner)
    w3, config = settlement.w3, settlement.config
    ctf = w3.eth.contract(address=checksum(config.conditional_tokens), abi=_ABI)
    settlement.prepare(market)  # a condition nobody traded may not be on chain yet
    if ctf.functions.payoutDenominator(_bytes32(market.condition_id)).call():
        return False
    question = _bytes32(market.question_id)
    adapter = settlement.neg_risk_adapter() if market.neg_risk else None
    if adapter is not None and condition_id(adapter.adapter, market.question_id,
                                            2) == market.condition_id:
        contract = w3.eth.contract(address=adapter.adapter, abi=_ABI)
        settlement.act_as(adapter.admin, adapter.adapter,
                          contract.encode_abi("reportOutcome", args=[question, winner == 0]))
        return True
    oracle = _oracle_of(settlement, market)
    payouts = [int(winner == 0), int(winner == 1)]
    settlement.act_as(oracle, config.conditional_tokens,
                      ctf.encode_abi("reportPayouts", args=[question, payouts]))
    return True


def _oracle_of(settlement: ChainSettlement, market: Market) -> str:
    """The address the market's condition was prepared with as oracle: the venue's (its own
    markets) or the operator's (conditions the dev chain's deployer prepared and listed)."""
    for oracle in (settlement.oracle, address_of(settlement.operator_key)):
        if condition_id(oracle, market.question_id, 2) == market.condition_id:
            return checksum(oracle)
    raise SettlementFailed(f"no known oracle prepared condition {market.condition_id}")


def _report_v2(settlement: ChainSettlement, market: Market, winner: int) -> bool:
    """A protocol-v2 market resolves on the Router (the PositionManager's), as its oracle."""
    w3 = settlement.w3
    manager = w3.eth.contract(address=checksum(settlement.config.position_manager),
                              abi=_ROUTER_ABI)
    try:
        router = checksum(manager.functions.router().call())
    except Exception as exc:  # no dev PositionManager at that address
        raise SettlementFailed(f"no Router behind {settlement.config.position_manager}") from exc
    contract = w3.eth.contract(address=router, abi=_ROUTER_ABI)
    condition = (int(market.token_ids[0]) >> 8).to_bytes(31, "big")  # position id: 31 + 1
    if contract.functions.payoutDenominator(condition).call():
        return False
    payouts = [int(winner == 0), int(winner == 1)]
    settlement.act_as(checksum(contract.functions.oracle().call()), router,
                      contract.encode_abi("reportPayouts", args=[condition, payouts]))
    return True
