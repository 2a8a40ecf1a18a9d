"""The sandbox settles its trades on the attached dev chain, as the venue settles on Polygon
(issue 29): a fill moves pUSD (its fee included) and outcome tokens between the wallets on
chain through the stand-in exchange, which emits the V2 exchange's ``OrderFilled``; the
venue's keyless accounts (the house, whales, injected wallets) are provisioned first; a
trade whose settlement fails moves nothing on chain and its fills are undone."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from eth_account import Account
from web3 import Web3
from web3.logs import DISCARD

from devstack.chain.devchain import _artifacts
from tests.chain_venue import attachment
from tests.devstack.venue.test_session_signers import Clob
from venue.accounts.approvals import Approval
from venue.models import Side
from venue.order_signer import OrderSigner
from venue.signing.keys import OrderKey

USDC = 10**6
FEE_MARKET = "sbx-fc-exu-match-sbx"  # seeded, taker fee rate 0.05


class OnChain:
    """Balances and exchange logs read straight from the dev chain."""

    def __init__(self, dev: Any) -> None:
        self.dev = dev
        w3 = dev.web3()
        self.w3 = w3
        self.pusd = w3.eth.contract(address=dev.pusd, abi=_artifacts()["DevToken"].abi)
        self.ctf = w3.eth.contract(address=dev.ctf, abi=_artifacts()["ConditionalTokens"].abi)
        self.exchange = w3.eth.contract(address=dev.ctf_exchange,
                                        abi=_artifacts()["CTFExchange"].abi)

    def usdc(self, owner: str) -> int:
        return int(self.pusd.functions.balanceOf(Web3.to_checksum_address(owner)).call())

    def shares(self, owner: str, token: str) -> int:
        return int(self.ctf.functions.balanceOf(Web3.to_checksum_address(owner),
                                                int(token)).call())

    def filled(self, tx_hash: str) -> list[dict]:
        """The OrderFilled events of a settlement transaction."""
        receipt = self.w3.eth.get_transaction_receipt(tx_hash)
        events = self.exchange.events.OrderFilled().process_receipt(receipt, errors=DISCARD)
        return [dict(e["args"]) for e in events]


def _attached(control: Any, dev: Any) -> dict:
    control.call("POST", "/chain", attachment(dev), expect=200)
    return control.state()


def test_injected_fills_and_whale_trades_move_pusd_and_tokens_on_chain(
        chain, sandbox_venue, control) -> None:
    dev = chain.contracts
    state = _attached(control, dev)
    assert state["collateral"] == dev.pusd  # the catalog was listed again on the chain's pUSD
    assert state["chain_settlement"]["exchange"] == dev.ctf_exchange
    on_chain = OnChain(dev)
    market = control.market(FEE_MARKET)
    yes, no = market["token_ids"]
    wallet = Account.create().address

    bought = control.call("POST", "/trades", {"wallet": wallet, "token_id": yes, "side": "BUY",
                                              "price": "0.6", "size": "10"}, expect=201)
    [taker] = [f for f in bought["fills"] if f["proxyWallet"] == wallet]
    cost = 6 * USDC + int(Decimal(taker["fee"]) * USDC)  # 10 x 0.05 x 0.6 x 0.4 = 0.12 fee
    assert cost == 6_120_000
    # provisioned with exactly what it paid, holding the tokens now; the house bought the
    # complement (a mint: both buyers' pUSD split into a full set)
    assert on_chain.usdc(wallet) == 0 and on_chain.shares(wallet, yes) == 10 * USDC
    assert on_chain.shares(state["house"], no) == 10 * USDC
    # the Data API lists what the ledger and the chain both hold once, not twice
    [row] = control.get("/data/positions", user=wallet)
    assert row["size"] == Decimal(10)

    # the fill's transaction is the settlement: the V2 exchange's OrderFilled, maker first
    maker_event, taker_event = on_chain.filled(taker["transactionHash"])
    assert (taker_event["maker"], taker_event["taker"]) == (wallet, dev.ctf_exchange)
    assert (taker_event["side"], str(taker_event["tokenId"])) == (0, yes)
    assert (taker_event["makerAmountFilled"], taker_event["takerAmountFilled"],
            taker_event["fee"]) == (6 * USDC, 10 * USDC, 120_000)
    assert (maker_event["maker"], maker_event["taker"]) == (state["house"], wallet)
    assert (maker_event["side"], str(maker_event["tokenId"])) == (0, no)

    sold = control.call("POST", "/trades", {"wallet": wallet, "token_id": yes, "side": "SELL",
                                            "price": "0.5", "size": "10"}, expect=201)
    [taker] = [f for f in sold["fills"] if f["proxyWallet"] == wallet]
    assert Decimal(taker["fee"]) == Decimal("0.125")  # 10 x 0.05 x 0.25
    assert on_chain.shares(wallet, yes) == 0
    assert on_chain.usdc(wallet) == 5 * USDC - 125_000  # proceeds less the taker fee
    assert control.balances(wallet)["pusd"] == "4.875"
    assert control.get("/data/positions", user=wallet) == []

    # a scripted whale trade settles the same way: what the ledger says each holds is on chain
    control.call("POST", "/whales/tick", expect=201)
    for whale in state["whales"]:
        held = control.balances(whale)["positions"]
        for token, shares in held.items():
            assert on_chain.shares(whale, token) == int(Decimal(shares) * USDC), (whale, token)


def _send_as(dev: Any, key: OrderKey, to: str, data: str) -> None:
    """A transaction from ``key`` (an EOA paying its own gas), required to succeed."""
    w3 = dev.web3()
    tx = {"to": to, "data": data, "chainId": int(w3.eth.chain_id), "gas": 200_000,
          "nonce": w3.eth.get_transaction_count(key.address), "maxFeePerGas": 10**10,
          "maxPriorityFeePerGas": 10**9}
    signed = Account.sign_transaction(tx, key.private_key)
    receipt = w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(
        signed.raw_transaction))
    assert receipt["status"] == 1


def _eoa_trader(control: Any, dev: Any, sandbox_venue: Any,
                funds: str) -> tuple[Clob, OrderSigner, OrderKey]:
    """An allowlisted EOA holding ``funds`` pUSD on chain and the exchange approved there,
    with CLOB credentials; the CLOB's cache has seen both."""
    key = OrderKey("0x" + Account.create().key.hex())
    control.allow_eoa(key.address)
    control.fund(key.address, funds, seen=False)  # minted on chain: the chain is the truth
    dev.fund_native(key.address, 10**18)
    for approval in (Approval(dev.pusd, "approve", dev.ctf_exchange),
                     Approval(dev.ctf, "setApprovalForAll", dev.ctf_exchange)):
        call = approval.call()
        _send_as(dev, key, call.target, call.data)
    clob = Clob(sandbox_venue, key)
    assert clob.get("/balance-allowance/update", asset_type="COLLATERAL",
                    signature_type="0").status_code == 200
    signer = OrderSigner(key, 137, signature_type=0, funder=key.address,
                         exchange_address=dev.ctf_exchange,
                         neg_risk_exchange_address=dev.neg_risk_exchange)
    return clob, signer, key


def test_an_orders_fill_moves_pusd_and_tokens_and_a_failed_one_moves_nothing(
        chain, sandbox_venue, control) -> None:
    dev = chain.contracts
    _attached(control, dev)
    on_chain = OnChain(dev)
    clob, signer, key = _eoa_trader(control, dev, sandbox_venue, "20")
    wallet = key.address
    assert on_chain.usdc(wallet) == 20 * USDC
    assert clob.get("/balance-allowance", asset_type="COLLATERAL",
                    signature_type="0").json()["balance"] == str(20 * USDC)
    yes = control.market(FEE_MARKET)["token_ids"][0]

    def buy(size: str) -> dict:
        order = signer.limit(yes, Side.BUY, Decimal("0.60"), Decimal(size),
                             tick_size=Decimal("0.01"), neg_risk=False)
        placed = clob.post_order(order.body(clob.creds.api_key))
        assert placed.status_code == 200, placed.text
        return placed.json()

    answer = buy("10")
    assert answer["status"] == "matched"
    [fill] = [f for f in control.get("/data/activity", user=wallet) if f["type"] == "TRADE"]
    paid = int(Decimal(fill["usdcSize"]) * USDC)
    fee = 10 * USDC * 5 // 100 * 56 * 44 // 10_000  # 10 x 0.05 x 0.56 x 0.44 at the best ask
    assert on_chain.usdc(wallet) == 20 * USDC - paid - fee
    assert on_chain.shares(wallet, yes) == 10 * USDC
    assert answer["transactionsHashes"] == [fill["transactionHash"]]
    assert [e["maker"] for e in on_chain.filled(fill["transactionHash"])][-1] == wallet
    # the CLOB's balance (the ledger) and the chain agree, and indexing adds nothing twice
    assert clob.get("/balance-allowance/update", asset_type="COLLATERAL",
                    signature_type="0").status_code == 200
    cached = clob.get("/balance-allowance", asset_type="COLLATERAL", signature_type="0").json()
    assert int(cached["balance"]) == on_chain.usdc(wallet)
    [row] = control.get("/data/positions", user=wallet)
    assert row["size"] == Decimal(10)

    # a trade whose settlement fails (the fault switch) moves nothing on chain, and the
    # venue undoes its fills when it reports FAILED
    before = on_chain.usdc(wallet)
    control.call("POST", "/lifecycle", {"fail_next": 1, "mined_after": "0",
                                        "confirmed_after": "0.2"}, expect=200)
    failed = buy("5")
    assert failed["status"] == "matched"
    assert on_chain.usdc(wallet) == before and on_chain.shares(wallet, yes) == 10 * USDC
    time.sleep(0.3)
    [trade] = [t for t in clob.get("/data/trades").json()["data"]
               if t["id"] == failed["tradeIDs"][0]]
    assert trade["status"] == "FAILED"
    assert int(Decimal(control.balances(wallet)["pusd"]) * USDC) == before
    [row] = control.get("/data/positions", user=wallet)
    assert row["size"] == Decimal(10)


def test_a_trade_the_chain_refuses_fails_and_moves_nothing(chain, sandbox_venue,
                                                           control) -> None:
    dev = chain.contracts
    _attached(control, dev)
    control.strict_accounts(False)
    on_chain = OnChain(dev)
    clob, signer, key = _eoa_trader(control, dev, sandbox_venue, "20")
    wallet = key.address
    # the wallet takes its approval back on chain: the venue's cache does not know, the
    # exchange does
    _send_as(dev, key, dev.pusd, on_chain.pusd.encode_abi("approve", args=[dev.ctf_exchange, 0]))
    assert on_chain.pusd.functions.allowance(wallet, dev.ctf_exchange).call() == 0
    control.call("POST", "/lifecycle", {"mined_after": "0", "confirmed_after": "0.2"},
                 expect=200)
    yes = control.market(FEE_MARKET)["token_ids"][0]
    order = signer.limit(yes, Side.BUY, Decimal("0.60"), Decimal("10"),
                         tick_size=Decimal("0.01"), neg_risk=False)
    placed = clob.post_order(order.body(clob.creds.api_key)).json()
    assert placed["status"] == "matched"
    time.sleep(0.3)
    [trade] = [t for t in clob.get("/data/trades").json()["data"]
               if t["id"] == placed["tradeIDs"][0]]
    assert trade["status"] == "FAILED"
    assert on_chain.usdc(wallet) == 20 * USDC and on_chain.shares(wallet, yes) == 0
    assert control.balances(wallet)["pusd"] == "20"
    assert control.get("/data/positions", user=wallet) == []
