"""REST: deposit address, balances, withdrawals and claims, with a real worker and anvil."""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import redis
import trio

from chain.keys import generate_keypair
from chain.tokens import native_balance_wei, token_balance_base
from models.wallet import Withdrawal
from services.platform import runtime
from services.wallets import wallets
from tests.conftest import RUN_ID, free_port, use_queue
from tests.http_helpers import json_body
from tests.wallet_fixtures import (
    ONE_MATIC,
    USDC,
    catalogue_market,
    chain_settings,
    legacy_eoa_wallet,
    list_on_venue,
    use_chain,
    wallet_with_position,
)
from worker import jobs as job_table
from worker.host import WorkerHost, WorkerSettings


@pytest.fixture
def worker(app, redis_url: str, wallet_chain) -> Iterator[WorkerHost]:
    """A real worker host (Trio, jobs in threads) serving this test's own queues."""
    prefix = f"ct-test-{RUN_ID}-wallets-{secrets.token_hex(3)}:"
    saved = use_queue(redis_url, prefix)
    job_table.load_modules("")
    settings = WorkerSettings(redis_url=redis_url, prefix=prefix, capacity=4, grace_seconds=2,
                              heartbeat_seconds=0.5, poll_seconds=0.05)
    started = threading.Event()
    box: dict[str, Any] = {}

    def serve() -> None:
        async def main() -> None:
            async with trio.open_nursery() as nursery:
                box["host"] = await nursery.start(WorkerHost(settings).run)
                box["token"] = trio.lowlevel.current_trio_token()
                started.set()

        trio.run(main)

    thread = threading.Thread(target=serve, name="test-worker", daemon=True)
    thread.start()
    assert started.wait(15), "the worker did not start"
    yield box["host"]
    trio.from_thread.run_sync(box["host"].request_shutdown, trio_token=box["token"])
    thread.join(15)
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
    keys += list(client.scan_iter(match=f"*{prefix.replace(':', '-')}*", count=1000))
    if keys:
        client.delete(*keys)
    runtime.install(saved)


@pytest.fixture
def no_worker(app, redis_url: str, wallet_chain) -> Iterator[str]:
    """Queues nobody serves: jobs stay queued."""
    prefix = f"ct-test-{RUN_ID}-idle-{secrets.token_hex(3)}:"
    saved = use_queue(redis_url, prefix)
    yield prefix
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
    keys += list(client.scan_iter(match=f"*{prefix.replace(':', '-')}*", count=1000))
    if keys:
        client.delete(*keys)
    runtime.install(saved)


def _wait_status(client, headers, url: str, wanted: str, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = json_body(client.get(url, headers=headers))
        if body["status"] == wanted or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def test_deposit_address_and_balances_after_funding(client, auth_headers, user, fund,
                                                    wallet_chain) -> None:
    assert json_body(client.get("/api/users/me", headers=auth_headers))[
        "trading_wallet_address"] is None
    response = client.get("/api/wallets/deposit-address", headers=auth_headers)
    assert response.status_code == 200
    deposit = json_body(response)
    assert deposit["chain_id"] == wallet_chain.chain_id
    tokens = {t["token"]: t for t in deposit["tokens"]}
    assert tokens["usdc"]["contract_address"] == wallet_chain.contracts.pusd
    assert tokens["usdc_e"]["contract_address"] == wallet_chain.contracts.usdce
    # A deposit wallet (the default) spends no MATIC: none is asked for, the note says so.
    assert "matic" not in tokens and "No MATIC is needed" in deposit["note"]
    assert json_body(client.get("/api/users/me", headers=auth_headers))[
        "trading_wallet_address"] == deposit["address"]

    wallet = wallets.for_user(user)  # a deposit wallet: its owner key signs, pays no gas
    assert deposit["address"] == wallet.funder_address != wallet.address
    fund(deposit["address"], pusd=7_250_000, usdce=1, matic_wei=5 * ONE_MATIC)
    fund(wallet.address, matic_wei=ONE_MATIC // 2)  # the owner key's, not the deposit's
    balance = json_body(client.get("/api/wallets/balance", headers=auth_headers))
    assert balance["address"] == deposit["address"]
    assert (balance["usdc"], balance["pusd"], balance["usdc_e"], balance["matic"],
            balance["total_usdc"]) == ("7.25", "7.25", "0.000001", "5", "7.250001")
    assert balance["gas_matic"] is None  # the relayer pays this account's gas


def test_scopes_gate_reads_and_writes(client, api_key, user, wallet_chain) -> None:
    reader = {"Authorization": f"Bearer {api_key('read:account')}"}
    assert client.get("/api/wallets/balance", headers=reader).status_code == 200
    assert client.get("/api/wallets/deposit-address", headers=reader).status_code == 200
    body = {"to_address": "0x" + "ab" * 20, "amount": "1", "token": "usdc"}
    denied = client.post("/api/trading-wallet/withdraw", json=body, headers=reader)
    assert denied.status_code == 403 and json_body(denied)["code"] == "scope_required"
    denied = client.post("/api/positions/claim", json={}, headers=reader)
    assert denied.status_code == 403 and json_body(denied)["code"] == "scope_required"
    writer = {"Authorization": f"Bearer {api_key('wallet:write')}"}
    assert client.get("/api/wallets/balance", headers=writer).status_code == 403
    assert client.get("/api/wallets/balance").status_code == 401


@pytest.mark.parametrize(("token", "amount", "base"), [
    ("usdc", "1.5", 1_500_000), ("usdc_e", "0.25", 250_000), ("matic", "0.01", 10**16)])
def test_withdraw_each_token_returns_the_real_hash(client, auth_headers, stepped_up_headers,
                                                   user, fund, worker,
                                                   wallet_chain, token, amount, base) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=2 * USDC, usdce=2 * USDC, matic_wei=ONE_MATIC)
    to = generate_keypair().address
    response = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers,
                           json={"to_address": to, "amount": amount, "token": token})
    assert response.status_code == 200, response.get_data(as_text=True)
    body = json_body(response)
    assert body["success"] is True and body["tx_hash"].startswith("0x")
    receipt = wallet_chain.web3().eth.wait_for_transaction_receipt(body["tx_hash"], timeout=10)
    assert receipt["status"] == 1
    w3, dev = wallet_chain.web3(), wallet_chain.contracts
    received = (native_balance_wei(w3, to) if token == "matic" else
                token_balance_base(w3, dev.pusd if token == "usdc" else dev.usdce, to))
    assert received == base
    followed = _wait_status(client, auth_headers, body["status_url"], "confirmed")
    assert followed["status"] == "confirmed" and followed["tx_hash"] == body["tx_hash"]
    assert followed["amount"] == amount and Decimal(followed["gas_fee"]) > 0
    assert followed["relayer_transaction_id"] is None  # an EOA's own transaction


def test_two_concurrent_withdrawals_both_land(app, auth_headers, stepped_up_headers,
                                              user, fund, worker,
                                             wallet_chain) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    to = generate_keypair().address
    answers: list[dict] = []

    def post(amount: str) -> None:
        with app.test_client() as own:
            answers.append(json_body(own.post("/api/trading-wallet/withdraw",
                                          headers=stepped_up_headers,
                                          json={"to_address": to, "amount": amount,
                                                "token": "usdc"})))

    threads = [threading.Thread(target=post, args=(a,)) for a in ("1", "2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(a["success"] and a["tx_hash"] for a in answers), answers
    assert answers[0]["tx_hash"] != answers[1]["tx_hash"]
    w3 = wallet_chain.web3()
    for answer in answers:
        w3.eth.wait_for_transaction_receipt(answer["tx_hash"], timeout=10)
    nonces = {w3.eth.get_transaction(a["tx_hash"])["nonce"] for a in answers}
    assert nonces == {0, 1}
    assert token_balance_base(w3, wallet_chain.contracts.pusd, to) == 3 * USDC


def test_queued_when_not_broadcast_in_time(app, client, auth_headers, stepped_up_headers,
                                           user, fund,
                                           no_worker, wallet_chain) -> None:
    use_chain(chain_settings(app, wallet_chain, WITHDRAW_WAIT_SECONDS="0.2"))
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=2 * USDC)
    response = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers,
                           json={"to_address": "0x" + "cd" * 20, "amount": "1",
                                 "token": "usdc"})
    body = json_body(response)
    assert response.status_code == 200
    assert body["success"] is True and body["tx_hash"] is None and body["status"] == "queued"
    assert body["status_url"] in body["message"]
    followed = json_body(client.get(body["status_url"], headers=auth_headers))
    assert followed["status"] == "queued" and followed["tx_hash"] is None
    assert followed["to_address"] == "0x" + "Cd" * 20 or followed["to_address"].lower() == (
        "0x" + "cd" * 20)


def test_withdraw_with_a_bare_session_is_refused(app, client, auth_headers, stepped_up_headers,
                                                user, fund, no_worker, wallet_chain) -> None:
    # Issue 18, finding 11: a stolen session cookie alone must not move money.
    use_chain(chain_settings(app, wallet_chain, WITHDRAW_WAIT_SECONDS="0.2"))
    fund(legacy_eoa_wallet(user).address, pusd=2 * USDC)
    body = {"to_address": "0x" + "cd" * 20, "amount": "1", "token": "usdc"}
    refused = client.post("/api/trading-wallet/withdraw", headers=auth_headers, json=body)
    assert refused.status_code == 403 and json_body(refused)["code"] == "scope_required"
    assert "X-Step-Up-Token" in json_body(refused)["error"]
    assert Withdrawal.select().count() == 0
    sent = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers, json=body)
    assert sent.status_code == 200 and json_body(sent)["success"] is True
    assert Withdrawal.select().count() == 1


@pytest.mark.parametrize(("body", "field"), [
    ({"to_address": "0x1234", "amount": "1", "token": "usdc"}, "to_address"),
    ({"to_address": "0x" + "zz" * 20, "amount": "1", "token": "usdc"}, "to_address"),
    ({"to_address": "0x" + "ab" * 20, "amount": "0", "token": "usdc"}, "amount"),
    ({"to_address": "0x" + "ab" * 20, "amount": "-1", "token": "usdc"}, "amount"),
    ({"to_address": "0x" + "ab" * 20, "amount": "1.0000001", "token": "usdc"}, "amount"),
    ({"to_address": "0x" + "ab" * 20, "amount": "1e3", "token": "usdc"}, "amount"),
    ({"to_address": "0x" + "ab" * 20, "amount": "1", "token": "dai"}, "token"),
    ({"to_address": "0x" + "ab" * 20, "token": "usdc"}, "amount"),
])
def test_bad_withdrawals_are_validation_failed(client, auth_headers, stepped_up_headers,
                                               user, wallet_chain, body,
                                               field) -> None:
    response = client.post("/api/trading-wallet/withdraw", json=body, headers=stepped_up_headers)
    error = json_body(response)
    assert response.status_code == 400 and error["code"] == "validation_failed", error
    assert field in error["fields"]
    assert Withdrawal.select().count() == 0


def test_a_withdrawal_to_the_accounts_own_signer_is_validation_failed(
        client, stepped_up_headers, user, make_trader) -> None:
    # A deposit wallet's owner key signs for it but holds nothing: nothing in the product
    # moves money out of the owner address again, so sending there strands the funds.
    trader = make_trader("10", user=user, deposit_wallet=True)
    for to in (trader.wallet.address, trader.wallet.address.lower()):
        response = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers,
                               json={"to_address": to, "amount": "1", "token": "usdc"})
        error = json_body(response)
        assert response.status_code == 400 and error["code"] == "validation_failed", error
        assert set(error["fields"]) == {"to_address"}
    assert Withdrawal.select().count() == 0


def test_more_than_the_balance_and_no_gas_are_402(client, auth_headers, stepped_up_headers,
                                                  user, fund,
                                                  wallet_chain) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=1 * USDC, matic_wei=0)
    too_much = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers,
                           json={"to_address": "0x" + "ab" * 20, "amount": "2", "token": "usdc"})
    assert too_much.status_code == 402 and json_body(too_much)["code"] == "insufficient_balance"
    no_gas = client.post("/api/trading-wallet/withdraw", headers=stepped_up_headers,
                         json={"to_address": "0x" + "ab" * 20, "amount": "1", "token": "usdc"})
    error = json_body(no_gas)
    assert no_gas.status_code == 402 and error["code"] == "insufficient_balance"
    assert "MATIC" in error["error"] and "gas" in error["error"]
    assert Withdrawal.select().count() == 0


def test_rpc_unreachable_is_503_with_retry_after(app, client, auth_headers, stepped_up_headers,
                                                 user,
                                                 wallet_chain) -> None:
    condition = wallet_chain.contracts.prepare_condition()
    catalogue_market(condition)
    # something to look up on chain: the venue lists a redeemable position
    wallet_with_position(wallet_chain, user, condition, USDC, [0])
    wallet_chain.contracts.resolve_condition(condition.question_id, [1, 0])
    use_chain(chain_settings(app, wallet_chain, POLYGON_RPC_TIMEOUT="1",
                                          POLYGON_RPC_URL=f"http://127.0.0.1:{free_port()}"))
    for method, url, body in (
            ("get", "/api/wallets/balance", None),
            ("post", "/api/trading-wallet/withdraw",
             {"to_address": "0x" + "ab" * 20, "amount": "1", "token": "usdc"}),
            ("post", "/api/positions/claim", {})):
        response = getattr(client, method)(url, headers=stepped_up_headers, json=body)
        assert response.status_code == 503, (url, response.get_data(as_text=True))
        assert response.get_json()["code"] == "wallet_error"
        assert int(response.headers["Retry-After"]) > 0
    assert Withdrawal.select().count() == 0


def test_idempotency_key_replays_one_withdrawal(client, auth_headers, stepped_up_headers,
                                                user, fund, worker,
                                                wallet_chain) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=3 * USDC)
    headers = {**stepped_up_headers, "Idempotency-Key": str(uuid.uuid4())}
    body = {"to_address": "0x" + "ef" * 20, "amount": "1", "token": "usdc"}
    first = client.post("/api/trading-wallet/withdraw", headers=headers, json=body)
    again = client.post("/api/trading-wallet/withdraw", headers=headers, json=body)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replay") == "true"
    assert json_body(again)["withdrawal_id"] == json_body(first)["withdrawal_id"]
    assert Withdrawal.select().count() == 1


def test_someone_elses_withdrawal_is_404(client, auth_headers, user, fund, no_worker,
                                         wallet_chain) -> None:
    from models.user import User
    from services.wallets import withdrawals

    other = User.create(email=f"{secrets.token_hex(4)}@example.com")
    fund(legacy_eoa_wallet(other).address, pusd=2 * USDC)
    theirs = withdrawals.request(other, "0x" + "ab" * 20, Decimal("1"), "usdc")
    response = client.get(f"/api/trading-wallet/withdrawals/{theirs.id}", headers=auth_headers)
    assert response.status_code == 404 and json_body(response)["code"] == "not_found"


def test_claim_after_resolution_over_rest(client, auth_headers, user, worker,
                                          wallet_chain) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    plain, question = dev.prepare_condition(), dev.prepare_neg_risk_question()
    catalogue_market(plain)
    catalogue_market(question)
    wallet = legacy_eoa_wallet(user)
    dev.fund_native(wallet.address, ONE_MATIC)
    dev.split_position(wallet.address, plain, 2 * USDC, outcomes=[1])
    dev.split_position(wallet.address, question, 3 * USDC, outcomes=[0])

    nothing = json_body(client.post("/api/positions/claim", headers=auth_headers))
    assert nothing["claims"] == [] and "Nothing to claim" in nothing["message"]
    pusd_before = token_balance_base(w3, dev.pusd, wallet.address)

    dev.resolve_condition(plain.question_id, [0, 1])
    dev.resolve_neg_risk_question(question.question_id, True)
    response = client.post("/api/positions/claim", headers=auth_headers, json={})
    assert response.status_code == 200, response.get_data(as_text=True)
    body = json_body(response)
    assert body["expected_payout"] == "5"
    assert {c["condition_id"] for c in body["claims"]} == {plain.condition_id,
                                                            question.condition_id}
    for submitted in body["claims"]:
        url = f"/api/positions/claims/{submitted['id']}"
        done = _wait_status(client, auth_headers, url, "confirmed")
        assert done["status"] == "confirmed" and done["tx_hash"]
    # the plain market pays its USDC.e; the neg-risk one pays pUSD through the current
    # NegRiskCtfCollateralAdapter (the v1 NegRiskAdapter, paying USDC.e, is deprecated)
    assert token_balance_base(w3, dev.usdce, wallet.address) == 2 * USDC
    assert token_balance_base(w3, dev.pusd, wallet.address) - pusd_before == 3 * USDC


def test_a_deposit_wallets_winnings_are_claimed_as_pusd_over_rest(
        client, auth_headers, user, worker, make_trader, make_sandbox_market,
        venue_control) -> None:
    trader = make_trader("4", user=user, deposit_wallet=True)
    maker = trader.wallet.funder_address
    market = make_sandbox_market()
    venue_control.grant(maker, market.yes, "9")
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    body = json_body(client.post("/api/positions/claim", headers=auth_headers, json={}))
    [submitted] = body["claims"]
    assert body["expected_payout"] == "9" and submitted["condition_id"] == market.condition_id
    done = _wait_status(client, auth_headers, f"/api/positions/claims/{submitted['id']}",
                        "confirmed")
    assert done["status"] == "confirmed", done
    assert done["relayer_transaction_id"] and len(done["tx_hash"]) == 66  # the chain hash
    assert venue_control.balances(maker)["pusd"] == "13"
    again = json_body(client.post("/api/positions/claim", headers=auth_headers, json={}))
    assert again["claims"] == [] and venue_control.balances(maker)["pusd"] == "13"


def test_outside_positions_in_uncatalogued_markets_are_claimed_over_rest(
        client, auth_headers, user, worker, wallet_chain) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    first, second = dev.prepare_condition(), dev.prepare_condition()
    list_on_venue(first)  # listed by the venue, never catalogued here
    list_on_venue(second)
    # transferred in on chain by another address: never bought through copytrade
    wallet = wallet_with_position(wallet_chain, user, first, 2 * USDC, [0])
    dev.split_position(wallet.address, second, 3 * USDC, outcomes=[1])
    dev.resolve_condition(first.question_id, [1, 0])
    dev.resolve_condition(second.question_id, [0, 1])

    chosen = json_body(client.post("/api/positions/claim", headers=auth_headers,
                               json={"token_ids": [str(second.token_ids[1])]}))
    [one] = chosen["claims"]
    assert one["condition_id"] == second.condition_id and chosen["expected_payout"] == "3"
    _wait_status(client, auth_headers, f"/api/positions/claims/{one['id']}", "confirmed")
    rest = json_body(client.post("/api/positions/claim", headers=auth_headers, json={}))
    [other] = rest["claims"]
    assert other["condition_id"] == first.condition_id and rest["expected_payout"] == "2"
    _wait_status(client, auth_headers, f"/api/positions/claims/{other['id']}", "confirmed")
    assert token_balance_base(w3, dev.usdce, wallet.address) == 5 * USDC
    nothing = json_body(client.post("/api/positions/claim", headers=auth_headers, json={}))
    assert nothing["claims"] == [] and "Nothing to claim" in nothing["message"]


def test_claim_without_gas_is_402(client, auth_headers, user, wallet_chain) -> None:
    dev = wallet_chain.contracts
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = legacy_eoa_wallet(user)
    dev.split_position(wallet.address, condition, 1 * USDC, outcomes=[0])
    dev.fund_native(wallet.address, 0)
    dev.resolve_condition(condition.question_id, [1, 0])
    response = client.post("/api/positions/claim", headers=auth_headers,
                           json={"token_ids": [str(condition.token_ids[0])]})
    error = json_body(response)
    assert response.status_code == 402
    assert error["code"] == "insufficient_balance" and "MATIC" in error["error"]
    bad = client.post("/api/positions/claim", headers=auth_headers, json={"token_ids": ["0xab"]})
    assert bad.status_code == 400 and json_body(bad)["code"] == "validation_failed"


def test_openapi_documents_the_wallet_routes(client) -> None:
    spec = client.get("/openapi.json").get_json()
    paths = spec["paths"]
    for path in ("/api/wallets/balance", "/api/wallets/deposit-address",
                 "/api/trading-wallet/withdraw", "/api/trading-wallet/withdrawals/{withdrawal_id}",
                 "/api/positions/claim", "/api/positions/claims/{claim_id}"):
        assert path in paths, path
    withdraw = paths["/api/trading-wallet/withdraw"]["post"]
    assert {"200", "400", "402", "503"} <= set(withdraw["responses"])
    claim = paths["/api/positions/claim"]["post"]
    assert "402" in claim["responses"]
    assert any(p["name"] == "Idempotency-Key" for p in withdraw.get("parameters", []))


def test_waiting_for_the_broadcast_never_takes_every_web_thread(
        app, stepped_up_headers, user, fund, no_worker, wallet_chain) -> None:
    from services.wallets import broadcast_wait

    # A 10 s wait: the three requests below answer well within it even on a starved
    # machine, while any one of them holding its thread for the wait would take all of it.
    use_chain(chain_settings(app, wallet_chain, WITHDRAW_WAIT_SECONDS="10",
                             WITHDRAW_MAX_WAITERS="1"))
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    body = {"to_address": "0x" + "cd" * 20, "amount": "1", "token": "usdc"}
    first: dict[str, Any] = {}

    def send_first() -> None:
        first["response"] = app.test_client().post("/api/trading-wallet/withdraw",
                                                   headers=stepped_up_headers, json=body)

    waiter = threading.Thread(target=send_first)
    waiter.start()
    deadline = time.monotonic() + 10
    while broadcast_wait.waiting() < 1:  # the first request holds the only waiting slot
        assert time.monotonic() < deadline and waiter.is_alive(), "the first never waited"
        time.sleep(0.01)
    # no worker runs the jobs: before, each of these held a web thread the full 10 s
    started = time.monotonic()
    for _ in range(3):
        response = app.test_client().post("/api/trading-wallet/withdraw",
                                          headers=stepped_up_headers, json=body)
        answer = json_body(response)
        assert response.status_code == 200
        assert (answer["success"], answer["tx_hash"], answer["status"]) == (True, None, "queued")
        assert answer["status_url"].endswith(answer["withdrawal_id"])
    assert time.monotonic() - started < 8.0
    assert waiter.is_alive()  # the first is still waiting its bounded turn
    waiter.join(30)
    assert not waiter.is_alive()
    assert json_body(first["response"])["status"] == "queued"
    assert broadcast_wait.waiting() == 0
    assert Withdrawal.select().count() == 4
