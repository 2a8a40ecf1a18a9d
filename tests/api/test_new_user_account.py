"""A brand-new user, as the venue's rules want it (issue 16's "done when"): signed up through
REST, their deposit address is a deposit wallet, onboarding runs by itself (the queued job,
run as the worker runs it), and after pUSD arrives at that address the first live order is
accepted by the strict sandbox with no further step."""

from __future__ import annotations

import json
from decimal import Decimal

from models.wallet import SIGNATURE_TYPE_DEPOSIT_WALLET
from services.platform import jobs
from services.wallets import onboarding, wallets
from tests.mail_inbox import sign_in_over_rest
from worker import jobs as job_table


def _queued_onboardings() -> list:
    queue = jobs.queue("default")
    found = [queue.fetch_job(job_id) for job_id in queue.get_job_ids()]
    return [job for job in found if job is not None and job.func_name == onboarding.JOB_NAME]


def _run_as_the_worker(job) -> object:
    """Run a queued job's function from the worker's own job table, with its arguments."""
    job_table.load_modules()
    return job_table.resolve(job.func_name).function(*job.args)


def test_a_new_user_deposits_at_a_deposit_wallet_and_trades_live_with_no_other_step(
        client, inbox, wallet_chain, venue_control, market) -> None:
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    jobs.queue("default").empty()
    headers = sign_in_over_rest(client, inbox, "new-trader@example.com")

    shown = client.get("/api/wallets/deposit-address", headers=headers)
    assert shown.status_code == 200, shown.get_data(as_text=True)
    address = shown.get_json()["address"]
    me = client.get("/api/users/me", headers=headers).get_json()
    wallet = wallets.for_user(me["id"])
    assert wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET
    assert address == wallets.maker(wallet) == wallet.funder_address != wallet.address
    # Every surface that shows "the wallet" shows the deposit wallet.
    assert me["trading_wallet_address"] == address
    account = client.get("/api/trading-account", headers=headers).get_json()["account"]
    assert account["wallet_address"] == address and account["kind"] == "deposit_wallet"
    assert client.get("/api/wallets/balance", headers=headers).get_json()["address"] == address

    # Onboarding was queued once, by the wallet's creation; asking again queues nothing more.
    client.get("/api/wallets/deposit-address", headers=headers)
    [job] = _queued_onboardings()
    assert _run_as_the_worker(job) == "ready"
    status = client.get("/api/trading-account", headers=headers).get_json()
    assert status["ready"] is True and status["progress"] == {"done": 4, "total": 4}

    # The user sends pUSD to the address shown; the CLOB has not seen it yet (a fresh deposit).
    venue_control.fund(address, "100", seen=False)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    placed = client.post("/api/markets/order", headers=headers,
                         json={**body, "preview_id": quote.get_json()["preview_id"]})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    answer = json.loads(placed.get_data(as_text=True), parse_float=Decimal)
    assert answer["status"] == "filled" and answer["filled_size"] == "10"
    [received] = [e for e in venue_control.received_orders()
                  if e["order_id"] == answer["order_id"]]
    order = received["body"]["order"]
    assert order["maker"] == order["signer"] == address
    assert int(order["signatureType"]) == SIGNATURE_TYPE_DEPOSIT_WALLET
    assert Decimal(venue_control.balances(address)["pusd"]) < 100

