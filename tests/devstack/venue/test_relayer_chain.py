"""The sandbox relayer with a dev chain attached: WALLET-CREATE deploys through the factory
from the operator key, WALLET batches run through the factory's ``execute`` (the wallet
contract checks them), and the registry mirrors the chain's nonce and approvals."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
from eth_account import Account
from web3 import Web3

from config import POLYGON_CONTRACTS
from tests.chain_venue import attachment
from tests.devstack.venue.test_session_signers import Clob
from venue.accounts.approvals import MAX_UINT256, Approval
from venue.accounts.batch import sign_batch
from venue.accounts.relayer_payloads import wallet_batch_payload, wallet_create_payload
from venue.accounts.wallet_calls import transfer_call
from venue.models import Side
from venue.order_signer import OrderSigner
from venue.signing.keys import OrderKey

_VIEWS = [
    {"type": "function", "name": "allowance", "stateMutability": "view",
     "inputs": [{"name": "o", "type": "address"}, {"name": "s", "type": "address"}],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "nonce", "stateMutability": "view", "inputs": [],
     "outputs": [{"name": "", "type": "uint256"}]},
]


def _wait(http: httpx.Client, tx_id: str) -> dict:
    for _ in range(200):
        answer = http.get("/transaction", params={"id": tx_id}).json()[0]
        if answer["state"] in ("STATE_CONFIRMED", "STATE_FAILED", "STATE_INVALID"):
            return answer
        time.sleep(0.05)
    raise AssertionError(answer)


def test_wallets_deploy_and_batches_run_on_the_dev_chain(chain, sandbox_venue, control):
    dev = chain.contracts
    attached = control.call("POST", "/chain", {
        "rpc_url": dev.rpc_url, "ctf": dev.ctf,
        "deposit_wallet_factory": dev.deposit_wallet_factory,
        "deposit_wallet_beacon": dev.deposit_wallet_beacon, "operator_key": dev.deployer_key},
        expect=200)
    assert attached["wallets"]["operator"] == dev.deployer
    assert "operator_key" not in str(attached) and dev.deployer_key not in str(attached)
    control.call("POST", "/relayer", {"step_seconds": "0"}, expect=200)
    owner = OrderKey("0x" + Account.create().key.hex())
    key = control.call("POST", "/relayer", {"relayer_key_for": owner.address},
                       expect=200)["relayer_key"]
    http = httpx.Client(base_url=sandbox_venue.relayer_url, timeout=30, headers={
        "RELAYER_API_KEY": key, "RELAYER_API_KEY_ADDRESS": owner.address})
    w3 = Web3(Web3.HTTPProvider(dev.rpc_url))

    created = http.post("/submit", json=wallet_create_payload(owner.address,
                                                              dev.deposit_wallet_factory))
    assert created.status_code == 200, created.text
    assert _wait(http, created.json()["transactionID"])["state"] == "STATE_CONFIRMED"
    wallet = dev.deposit_wallet_address(owner.address)
    assert w3.eth.get_code(wallet) != b""
    assert http.get("/deployed", params={"address": wallet}).json() == {"deployed": True}

    def batch(calls, nonce):
        deadline = int(w3.eth.get_block("latest")["timestamp"]) + 600
        signature = sign_batch(owner, chain_id=chain.chain_id, wallet=wallet, nonce=nonce,
                               deadline=deadline, calls=calls)
        return wallet_batch_payload(signer=owner.address, factory=dev.deposit_wallet_factory,
                                    wallet=wallet, nonce=nonce, deadline=deadline,
                                    calls=calls, signature=signature)

    approve = Approval(dev.pusd, "approve", dev.ctf_exchange).call()
    sent = http.post("/submit", json=batch([approve], 0))
    assert sent.status_code == 200, sent.text
    assert _wait(http, sent.json()["transactionID"])["state"] == "STATE_CONFIRMED"
    pusd = w3.eth.contract(address=Web3.to_checksum_address(dev.pusd), abi=_VIEWS)
    assert pusd.functions.allowance(wallet, dev.ctf_exchange).call() == MAX_UINT256
    assert w3.eth.contract(address=wallet, abi=_VIEWS).functions.nonce().call() == 1
    account = control.call("GET", f"/accounts/{wallet}", expect=200)
    assert account["wallet"]["nonce"] == 1
    assert account["allowances"] == [{"token": dev.pusd.lower(),
                                      "spender": dev.ctf_exchange.lower(),
                                      "amount": str(MAX_UINT256)}]
    assert http.get("/nonce", params={"address": owner.address}).json() == {"nonce": "1"}

    # the wallet holds no pUSD: the token reverts, the transaction fails with its reason
    short = http.post("/submit", json=batch([transfer_call(dev.pusd, dev.deployer, 5)], 1))
    failed = _wait(http, short.json()["transactionID"])
    assert failed["state"] == "STATE_FAILED" and failed["errorMsg"]
    assert w3.eth.contract(address=wallet, abi=_VIEWS).functions.nonce().call() == 1
    stale = http.post("/submit", json=batch([approve], 0))
    assert stale.json()["error"] == "batch nonce 0 does not match on-chain nonce 1"


def test_the_cache_keys_on_the_dev_chains_contracts_and_indexes_its_pusd(
        chain, sandbox_venue, control):
    """With the dev chain's contracts attached, ``/balance-allowance`` names its exchanges,
    pUSD minted to or sent from the wallet on chain reaches the ledger at the next update
    (the difference since the last one), and an order signed for its exchange trades."""
    dev = chain.contracts
    control.call("POST", "/chain", attachment(dev), expect=200)
    bad = control.call("POST", "/chain", {
        "rpc_url": dev.rpc_url, "ctf": dev.ctf,
        "deposit_wallet_factory": dev.deposit_wallet_factory,
        "deposit_wallet_beacon": dev.deposit_wallet_beacon, "operator_key": dev.deployer_key,
        "contracts": {"exchnage": dev.ctf_exchange}}, expect=400)
    assert bad["error"].startswith("unknown contract 'exchnage'")
    control.call("POST", "/relayer", {"step_seconds": "0"}, expect=200)
    owner = OrderKey("0x" + Account.create().key.hex())
    key = control.call("POST", "/relayer", {"relayer_key_for": owner.address},
                       expect=200)["relayer_key"]
    http = httpx.Client(base_url=sandbox_venue.relayer_url, timeout=30, headers={
        "RELAYER_API_KEY": key, "RELAYER_API_KEY_ADDRESS": owner.address})
    created = http.post("/submit", json=wallet_create_payload(owner.address,
                                                              dev.deposit_wallet_factory))
    assert _wait(http, created.json()["transactionID"])["state"] == "STATE_CONFIRMED"
    wallet = dev.deposit_wallet_address(owner.address)
    w3 = Web3(Web3.HTTPProvider(dev.rpc_url))
    clob = Clob(sandbox_venue, owner)

    def cached() -> dict:
        return clob.get("/balance-allowance", asset_type="COLLATERAL",
                        signature_type="3").json()

    def update() -> None:
        assert clob.get("/balance-allowance/update", asset_type="COLLATERAL",
                        signature_type="3").status_code == 200

    # ...and Exchange V3 (protocol-v2 markets' orders settle there), which the dev chain does
    # not deploy: the venue's own address
    spenders = (dev.ctf_exchange, dev.neg_risk_exchange, dev.ctf_collateral_adapter,
                dev.neg_risk_collateral_adapter, POLYGON_CONTRACTS["EXCHANGE_V3_ADDRESS"])
    assert cached() == {"balance": "0", "allowances": dict.fromkeys(spenders, "0")}
    dev.mint(dev.pusd, wallet, 50_000_000)
    dev.mint(dev.usdce, wallet, 7_000_000)
    assert cached()["balance"] == "0"  # on chain, not yet seen by the CLOB
    update()
    assert cached()["balance"] == "50000000"
    assert control.balances(wallet)["pusd"] == "50"
    assert control.call("GET", f"/accounts/{wallet}", expect=200)["usdc_e"] == "7"

    deadline = int(w3.eth.get_block("latest")["timestamp"]) + 600
    calls = [Approval(dev.pusd, "approve", dev.ctf_exchange).call(),
             transfer_call(dev.pusd, dev.deployer, 20_000_000)]
    signature = sign_batch(owner, chain_id=chain.chain_id, wallet=wallet, nonce=0,
                           deadline=deadline, calls=calls)
    sent = http.post("/submit", json=wallet_batch_payload(
        signer=owner.address, factory=dev.deposit_wallet_factory, wallet=wallet, nonce=0,
        deadline=deadline, calls=calls, signature=signature))
    assert _wait(http, sent.json()["transactionID"])["state"] == "STATE_CONFIRMED"
    assert cached()["balance"] == "50000000"
    assert cached()["allowances"][dev.ctf_exchange] == "0"
    update()  # the transfer out is debited, the approval read from the chain
    assert cached() == {"balance": "30000000", "allowances": dict.fromkeys(spenders, "0") | {
        dev.ctf_exchange: str(MAX_UINT256)}}
    update()  # nothing moved since: nothing credited twice
    assert control.balances(wallet)["pusd"] == "30"

    assert control.state()["strict_accounts"] is True  # the default: the venue's rules
    token = control.add_market("chain-cache")["token_ids"][0]
    signer = OrderSigner(owner, 137, signature_type=3, funder=wallet,
                         exchange_address=dev.ctf_exchange,
                         neg_risk_exchange_address=dev.neg_risk_exchange)
    order = signer.limit(token, Side.BUY, Decimal("0.5"), Decimal("10"),
                         tick_size=Decimal("0.01"), neg_risk=False)
    placed = clob.post_order(order.body(clob.creds.api_key))
    assert placed.status_code == 200 and placed.json()["status"] == "live", placed.text
