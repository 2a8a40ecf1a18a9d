"""On-chain settlement of the sandbox's trades, when a dev chain with its exchanges is attached.

The venue matches off chain and settles on Polygon: its operator sends the exchange's
``matchOrders``, which moves pUSD and outcome tokens between the wallets and emits
``OrderFilled``. Attached to a dev chain whose exchange is the stand-in ``CTFExchange``
(devstack/chain/contracts), the sandbox does the same for each match, in one transaction
from the operator key: ``settleMatch`` pulls what each side gives (pUSD and its fee from
buyers, tokens from sellers, approved to the market's exchange as the venue requires),
splits full sets for a mint or merges them for a merge, pays out, and emits the V2
exchange's ``OrderFilled`` / ``OrdersMatched``. A revert (a wallet short of pUSD, tokens or
approvals on chain) raises ``SettlementFailed``: the trade then ends FAILED and nothing moved.

The venue's own keyless accounts (the house, the scripted whales, wallets a test injects a
fill for) are provisioned: pUSD and tokens their settlement needs are minted to them first
(tokens split from new pUSD), and their approvals made by impersonating them (anvil's
``anvil_impersonateAccount``), so they settle on chain as any wallet does.

A market's condition is prepared on the CTF before its first split or merge (anyone may
prepare a condition; the venue's own neg-risk questions, the adapter's, are prepared there as
its admin); protocol-v2 markets (position ids, Exchange V3) are not settled on
chain. Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from web3 import Web3

from devstack.chain.transact import address_of, checksum, connect, send_and_wait
from devstack.ctf import condition_id
from devstack.venue.catalog import Market, NegRiskAdapterIds
from devstack.venue.chain_wallets import revert_reason
from devstack.venue.config import SandboxConfig
from devstack.venue.matching import BookOrder
from devstack.venue.tape import ClobTrade, Fill

MAX_UINT = 2**256 - 1
PUSD = 0  # a leg's token id for pUSD
# what an impersonated account is given to pay for its approvals (anvil_setBalance)
GAS_MONEY_WEI = 10**18

_MATCH = {"name": "m", "type": "tuple", "components": [
    {"name": "conditionId", "type": "bytes32"}, {"name": "positionCollateral", "type": "address"},
    {"name": "mint", "type": "uint256"}, {"name": "merge", "type": "uint256"}]}
_LEGS = [{"name": "account", "type": "address"}, {"name": "tokenId", "type": "uint256"},
         {"name": "amount", "type": "uint256"}]
_FILLED = [{"name": "orderHash", "type": "bytes32"}, {"name": "maker", "type": "address"},
           {"name": "taker", "type": "address"}, {"name": "side", "type": "uint8"},
           {"name": "tokenId", "type": "uint256"}, {"name": "makerAmountFilled", "type": "uint256"},
           {"name": "takerAmountFilled", "type": "uint256"}, {"name": "fee", "type": "uint256"},
           {"name": "builder", "type": "bytes32"}, {"name": "metadata", "type": "bytes32"}]


def _view(name: str, inputs: list[tuple[str, str]], output: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "stateMutability": "view",
            "inputs": [{"name": n, "type": t} for n, t in inputs],
            "outputs": [{"name": "", "type": output}]}


def _write(name: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "function", "name": name, "stateMutability": "nonpayable",
            "inputs": inputs, "outputs": []}


_ABI: list[dict[str, Any]] = [
    _write("settleMatch", [_MATCH, {"name": "pulls", "type": "tuple[]", "components": _LEGS},
                           {"name": "pushes", "type": "tuple[]", "components": _LEGS},
                           {"name": "makerFills", "type": "tuple[]", "components": _FILLED},
                           {"name": "takerFill", "type": "tuple", "components": _FILLED}]),
    _write("provision", [_MATCH, {"name": "to", "type": "address"},
                         {"name": "pusd", "type": "uint256"},
                         {"name": "tokenId", "type": "uint256"},
                         {"name": "amount", "type": "uint256"}]),
    _write("prepareCondition", [{"name": "oracle", "type": "address"},
                                {"name": "questionId", "type": "bytes32"},
                                {"name": "outcomeSlotCount", "type": "uint256"}]),
    _write("approve", [{"name": "spender", "type": "address"},
                       {"name": "amount", "type": "uint256"}]),
    _write("setApprovalForAll", [{"name": "operator", "type": "address"},
                                 {"name": "approved", "type": "bool"}]),
    _view("getOutcomeSlotCount", [("conditionId", "bytes32")], "uint256"),
    _view("balanceOf", [("owner", "address")], "uint256"),
    _view("allowance", [("owner", "address"), ("spender", "address")], "uint256"),
    _view("isApprovedForAll", [("owner", "address"), ("operator", "address")], "bool"),
    _view("isOperator", [("operator", "address")], "bool"),
    # the dev neg-risk exchange's NegRiskAdapter, and the adapter's own questions
    _view("negRiskAdapter", [], "address"),
    _view("admin", [], "address"),
    _view("wcol", [], "address"),
    _view("questionCount", [("marketId", "bytes32")], "uint256"),
    _write("prepareMarket", [{"name": "feeBips", "type": "uint256"},
                             {"name": "data", "type": "bytes"}]),
    _write("prepareQuestion", [{"name": "marketId", "type": "bytes32"},
                               {"name": "data", "type": "bytes"}]),
]
_ERC1155_BALANCE = _view("balanceOf", [("owner", "address"), ("id", "uint256")], "uint256")


# told of each amount the venue moves on chain: (account, token id or PUSD, signed amount)
Moved = Callable[[str, int, int], None]
ZERO_ADDRESS = "0x" + "00" * 20


class SettlementFailed(Exception):
    """The settlement transaction reverted (or could not be sent): nothing moved."""


@dataclass
class Legs:
    """What one trade moves: (account, token id or 0 for pUSD) -> amount, each way."""

    pulls: dict[tuple[str, int], int] = field(default_factory=dict)
    pushes: dict[tuple[str, int], int] = field(default_factory=dict)

    def add(self, side: dict[tuple[str, int], int], account: str, token: int,
            amount: int) -> None:
        """Add ``amount`` to one leg (nothing for zero)."""
        if amount > 0:
            key = (checksum(account), token)
            side[key] = side.get(key, 0) + amount

    def net(self, token: int) -> int:
        """What the exchange pays out of ``token`` beyond what it takes in."""
        out = sum(a for (_, t), a in self.pushes.items() if t == token)
        return out - sum(a for (_, t), a in self.pulls.items() if t == token)

    def report(self, moved: Moved) -> None:
        """Tell ``moved`` each account's net change per token (pushes minus pulls)."""
        change: dict[tuple[str, int], int] = dict(self.pushes)
        for key, amount in self.pulls.items():
            change[key] = change.get(key, 0) - amount
        for (account, token), amount in change.items():
            if amount:
                moved(account, token, amount)


def trade_legs(fills: Iterable[Fill]) -> Legs:
    """A trade's pulls and pushes from its fills: a buyer gives pUSD (and its taker fee) for
    the tokens, a seller gives the tokens for pUSD less its fee, as the exchange settles."""
    legs = Legs()
    for fill in fills:
        token = int(fill.asset)
        if fill.side == "BUY":
            legs.add(legs.pulls, fill.proxy_wallet, PUSD, fill.usdc + fill.fee)
            legs.add(legs.pushes, fill.proxy_wallet, token, fill.size)
        else:
            legs.add(legs.pulls, fill.proxy_wallet, token, fill.size)
            legs.add(legs.pushes, fill.proxy_wallet, PUSD, max(0, fill.usdc - fill.fee))
    return legs


def sets_needed(market: Market, legs: Legs) -> tuple[int, int]:
    """(mint, merge): full sets to split where buyers of both outcomes met, or merge where
    sellers of both did; the rest of each token's flow must balance."""
    first, second = (legs.net(int(t)) for t in market.token_ids)
    mint = max(0, min(first, second))
    merge = max(0, min(-first, -second))
    if first - mint + merge or second - mint + merge:
        raise SettlementFailed(f"unbalanced token flows in {market.slug}: {first}, {second}")
    return mint, merge


def _bytes32(text: str) -> bytes:
    raw = bytes.fromhex(text.removeprefix("0x")) if text else b""
    return raw.rjust(32, b"\x00")[-32:]


class ChainSettlement:
    """Settles the sandbox's matches on a dev chain's stand-in exchanges."""

    def __init__(self, rpc_url: str, operator_key: str, config: SandboxConfig,
                 oracle: str) -> None:
        self.rpc_url = rpc_url
        self.w3: Web3 = connect(rpc_url)
        self.operator_key = operator_key
        self.config = config
        self.oracle = oracle
        self._ready_conditions: set[str] = set()
        self._approved: set[tuple[str, str]] = set()  # (account, exchange)

    @classmethod
    def attach(cls, rpc_url: str, operator_key: str, config: SandboxConfig,
               oracle: str) -> ChainSettlement | None:
        """The settlement on ``rpc_url`` when the configured exchanges are deployed there
        (the dev chain's stand-ins) and take the operator key; else None (ledger only)."""
        settlement = cls(rpc_url, operator_key, config, oracle)
        operator = address_of(operator_key)
        for exchange in (config.exchange, config.neg_risk_exchange):
            if not settlement.w3.eth.get_code(checksum(exchange)):
                return None
            if not settlement._contract(exchange).functions.isOperator(operator).call():
                return None
        return settlement

    def describe(self) -> dict[str, str]:
        """What the control API shows about it (never the key)."""
        return {"exchange": self.config.exchange,
                "neg_risk_exchange": self.config.neg_risk_exchange,
                "operator": address_of(self.operator_key)}

    def settles(self, market: Market) -> bool:
        """Whether this market's trades settle on chain (not protocol-v2 position ids)."""
        return not market.position_ids

    # -- plumbing --

    def _contract(self, address: str) -> Any:
        return self.w3.eth.contract(address=checksum(address), abi=_ABI)

    def _send(self, to: str, data: str) -> str:
        try:
            receipt = send_and_wait(self.w3, self.operator_key, {"to": checksum(to), "data": data})
        except Exception as exc:  # a revert, at estimation or mining
            raise SettlementFailed(revert_reason(exc)) from exc
        return "0x" + bytes(receipt["transactionHash"]).hex()

    def _exchange(self, market: Market) -> str:
        return self.config.exchange_for(market.neg_risk)

    def _match(self, market: Market | None, mint: int = 0, merge: int = 0) -> tuple:
        if market is None:  # pUSD only: no condition involved
            return (bytes(32), ZERO_ADDRESS, 0, 0)
        return (_bytes32(market.condition_id), checksum(market.collateral), mint, merge)

    def neg_risk_adapter(self) -> NegRiskAdapterIds | None:
        """The NegRiskAdapter the neg-risk exchange splits through (None: it has none)."""
        try:
            address = self._contract(self.config.neg_risk_exchange).functions.negRiskAdapter(
                ).call()
            if int(address, 16) == 0:
                return None
            adapter = self._contract(address)
            return NegRiskAdapterIds(checksum(address), checksum(adapter.functions.admin().call()),
                                     checksum(adapter.functions.wcol().call()))
        except Exception:  # not the dev exchange and adapter
            return None

    def prepare(self, market: Market) -> None:
        """Prepare the market's condition on the CTF if it is not (once per market)."""
        if market.condition_id in self._ready_conditions:
            return
        ctf = self._contract(self.config.conditional_tokens)
        if not ctf.functions.getOutcomeSlotCount(_bytes32(market.condition_id)).call():
            if market.neg_risk_request:
                self._prepare_question(market)
            elif condition_id(self.oracle, market.question_id, 2) == market.condition_id:
                self._send(self.config.conditional_tokens, ctf.encode_abi(
                    "prepareCondition",
                    args=[checksum(self.oracle), _bytes32(market.question_id), 2]))
            else:
                raise SettlementFailed(f"condition {market.condition_id} is not on chain")
        self._ready_conditions.add(market.condition_id)

    def _prepare_question(self, market: Market) -> None:
        """Prepare a neg-risk question the venue made on the adapter, as its admin: its market
        first, then its questions up to this one's index (they are numbered in order)."""
        ids = self.neg_risk_adapter()
        if ids is None or condition_id(ids.adapter, market.question_id, 2) != market.condition_id:
            raise SettlementFailed(f"{market.slug} is no question of this chain's adapter")
        adapter = self._contract(ids.adapter)
        question = _bytes32(market.question_id)
        parent = question[:31] + b"\x00"
        count = int(adapter.functions.questionCount(parent).call())
        if count == 0:
            self.act_as(ids.admin, ids.adapter, adapter.encode_abi(
                "prepareMarket", args=[0, market.neg_risk_request]))
        for _ in range(count, question[31] + 1):
            self.act_as(ids.admin, ids.adapter, adapter.encode_abi(
                "prepareQuestion", args=[parent, b""]))

    # -- the venue's keyless accounts --

    def act_as(self, account: str, to: str, data: str) -> None:
        """Send a transaction as ``account`` (anvil impersonation; it gets gas money)."""
        provider = self.w3.provider
        provider.make_request("anvil_impersonateAccount", [account])  # type: ignore[arg-type]
        try:
            if self.w3.eth.get_balance(account) < GAS_MONEY_WEI // 2:
                provider.make_request("anvil_setBalance",  # type: ignore[arg-type]
                                      [account, hex(GAS_MONEY_WEI)])
            tx = self.w3.eth.send_transaction({"from": account, "to": checksum(to),
                                               "data": data})
            receipt = self.w3.eth.wait_for_transaction_receipt(tx, timeout=60,
                                                               poll_latency=0.05)
            if int(receipt["status"]) != 1:
                raise SettlementFailed(f"a transaction from {account} reverted")
        except SettlementFailed:
            raise
        except Exception as exc:  # not anvil, or the call failed
            raise SettlementFailed(f"cannot act for {account}: {revert_reason(exc)}") from exc
        finally:
            provider.make_request("anvil_stopImpersonatingAccount",  # type: ignore[arg-type]
                                  [account])

    def _approve(self, account: str, exchange: str) -> None:
        """Approve ``exchange`` for ``account``'s pUSD and outcome tokens (once)."""
        if (account, exchange) in self._approved:
            return
        pusd = self._contract(self.config.collateral)
        ctf = self._contract(self.config.conditional_tokens)
        if pusd.functions.allowance(account, exchange).call() < MAX_UINT // 2:
            self.act_as(account, self.config.collateral,
                               pusd.encode_abi("approve", args=[exchange, MAX_UINT]))
        if not ctf.functions.isApprovedForAll(account, exchange).call():
            self.act_as(account, self.config.conditional_tokens,
                               ctf.encode_abi("setApprovalForAll", args=[exchange, True]))
        self._approved.add((account, exchange))

    def _shortfalls(self, legs: Legs, accounts: set[str]) -> dict[tuple[str, int], int]:
        """What ``accounts`` lack on chain of what the trade pulls from them."""
        pusd = self._contract(self.config.collateral)
        ctf = self.w3.eth.contract(address=checksum(self.config.conditional_tokens),
                                   abi=[_ERC1155_BALANCE])
        short: dict[tuple[str, int], int] = {}
        for (account, token), amount in legs.pulls.items():
            if account not in accounts:
                continue
            held = (pusd.functions.balanceOf(account).call() if token == PUSD
                    else ctf.functions.balanceOf(account, token).call())
            if int(held) < amount:
                short[(account, token)] = amount - int(held)
        return short

    def provision(self, account: str, market: Market | None, *, pusd: int = 0,
                  token: str = "", amount: int = 0, moved: Moved) -> None:
        """Mint ``pusd`` and ``amount`` of ``token`` (split from new pUSD) to ``account``."""
        if amount:
            assert market is not None
            self.prepare(market)
        exchange = self.config.exchange if market is None else self._exchange(market)
        data = self._contract(exchange).encode_abi("provision", args=[
            self._match(market), checksum(account), pusd, int(token or 0), amount])
        self._send(exchange, data)
        if pusd:
            moved(checksum(account), PUSD, pusd)
        if amount:
            moved(checksum(account), int(token), amount)

    # -- trades --

    def settle(self, trade: ClobTrade, fills: list[Fill], moved: Moved) -> str:
        """Settle one match on chain (telling ``moved`` what moved, the provisioning of the
        venue's keyless accounts too); its transaction hash."""
        market = trade.market
        exchange = checksum(self._exchange(market))
        legs = trade_legs(fills)
        mint, merge = sets_needed(market, legs)
        if mint or merge:
            self.prepare(market)
        keyless = {checksum(o.maker) for o in _orders(trade) if not o.owner}
        for (account, token), amount in self._shortfalls(legs, keyless).items():
            if token == PUSD:
                self.provision(account, None, pusd=amount, moved=moved)
            else:
                self.provision(account, market, token=str(token), amount=amount, moved=moved)
        for account in keyless & {a for a, _ in legs.pulls}:
            self._approve(account, exchange)
        maker_events = [_filled(resting, checksum(trade.taker_order.maker), fills)
                        for resting, _, _ in trade.maker_fills]
        taker_event = _filled(trade.taker_order, exchange, fills)
        data = self._contract(exchange).encode_abi("settleMatch", args=[
            self._match(market, mint, merge),
            [(a, t, n) for (a, t), n in legs.pulls.items()],
            [(a, t, n) for (a, t), n in legs.pushes.items()],
            maker_events, taker_event])
        tx_hash = self._send(exchange, data)
        legs.report(moved)
        return tx_hash


def _orders(trade: ClobTrade) -> list[BookOrder]:
    return [trade.taker_order, *(resting for resting, _, _ in trade.maker_fills)]


def _filled(order: BookOrder, counterparty: str, fills: list[Fill]) -> tuple:
    """The OrderFilled fields of one order in this trade (its fills summed): what it gave
    and got before the fee, which is its own field."""
    mine = [f for f in fills if f.order_id == order.order_id]
    shares, usdc = sum(f.size for f in mine), sum(f.usdc for f in mine)
    fee = sum(f.fee for f in mine)
    made, taken = (usdc, shares) if order.side == "BUY" else (shares, usdc)
    return (_bytes32(order.order_id), checksum(order.maker), counterparty,
            0 if order.side == "BUY" else 1, int(order.token_id), made, taken, fee,
            _bytes32(order.builder), _bytes32(order.metadata))
