"""REST /api/trading-account: status with steps, onboarding, connecting an existing account
(session only, with a step-up; a bad key or address is a 400 naming its field)."""

from __future__ import annotations

import json
import uuid

from services.wallets import trading_accounts, wallets
from tests.conftest import app_settings, step_up_headers
from venue.accounts import uups_deposit_wallet_address
from venue.signing import OrderKey

KEY = "0x" + "51" * 32


def test_connect_is_session_only_and_names_the_bad_field(client, stepped_up_headers, api_key,
                                                         user) -> None:
    auth_headers = stepped_up_headers
    wallet = uups_deposit_wallet_address(OrderKey(KEY).address, trading_accounts.contracts())
    body = {"wallet_address": wallet, "private_key": KEY}
    keyed = {"Authorization": f"Bearer {api_key('wallet:write', 'read:account')}"}
    refused = client.post("/api/trading-account/connect", json=body, headers=keyed)
    assert refused.status_code == 403
    bad = client.post("/api/trading-account/connect", headers=auth_headers,
                      json={**body, "private_key": "0x" + "51" * 31})
    assert bad.status_code == 400
    assert bad.get_json()["code"] == "validation_failed"
    assert set(bad.get_json()["fields"]) == {"private_key"}
    zero = client.post("/api/trading-account/connect", headers=auth_headers,
                       json={**body, "private_key": "0x" + "00" * 32})  # 64 digits, no key
    assert zero.status_code == 400, zero.get_data(as_text=True)
    assert zero.get_json()["code"] == "validation_failed"
    assert set(zero.get_json()["fields"]) == {"private_key"}
    other = client.post("/api/trading-account/connect", headers=auth_headers,
                        json={**body, "wallet_address": "0x" + "77" * 20})
    assert other.status_code == 400 and set(other.get_json()["fields"]) == {"private_key"}
    assert wallets.for_user(user) is None

    connected = client.post("/api/trading-account/connect", json=body, headers=auth_headers)
    assert connected.status_code == 201, connected.get_data(as_text=True)
    answer = connected.get_json()
    assert answer["account"]["kind"] == "connected"
    assert answer["account"]["wallet_address"] == wallet
    assert answer["account"]["signature_type"] == 3
    assert KEY[2:] not in json.dumps(answer)
    assert [step["name"] for step in answer["steps"]] == [
        "deploy", "approvals", "credentials", "balance_update"]
    again = client.post("/api/trading-account/connect", json=body, headers=auth_headers)
    assert again.status_code == 409


def test_connect_with_a_session_needs_a_step_up(client, app, session_token, auth_headers,
                                                user) -> None:
    """Issue 26: a stolen session without the mailbox must not connect the thief's key and
    wallet to an account that has none yet (the victim's deposits would go to them)."""
    wallet = uups_deposit_wallet_address(OrderKey(KEY).address, trading_accounts.contracts())
    body = {"wallet_address": wallet, "private_key": KEY}
    refused = client.post("/api/trading-account/connect", json=body, headers=auth_headers)
    assert refused.status_code == 403, refused.get_data(as_text=True)
    assert refused.get_json()["code"] == "scope_required"
    assert "X-Step-Up-Token" in refused.get_json()["error"]
    assert wallets.for_user(user) is None
    stale = {**auth_headers, "X-Step-Up-Token": "not-a-step-up-token"}
    assert client.post("/api/trading-account/connect", json=body,
                       headers=stale).status_code == 403
    assert wallets.for_user(user) is None
    connected = client.post("/api/trading-account/connect", json=body,
                            headers=step_up_headers(app, session_token))
    assert connected.status_code == 201, connected.get_data(as_text=True)
    assert wallets.for_user(user).funder_address == wallet


def test_status_and_onboarding_of_a_new_user(client, auth_headers, user) -> None:
    empty = client.get("/api/trading-account", headers=auth_headers).get_json()
    assert empty["account"] is None and empty["ready"] is False
    started = client.post("/api/trading-account/onboarding", headers=auth_headers)
    assert started.status_code == 202
    account = started.get_json()["account"]
    assert account["kind"] == "deposit_wallet" and account["deposit_wallet"] is True
    wallet = wallets.for_user(user)
    assert account["wallet_address"] == wallet.funder_address != wallet.address
    status = client.get("/api/trading-account", headers=auth_headers).get_json()
    assert status["status"] == "pending" and status["progress"] == {"done": 0, "total": 4}


def test_wrap_needs_a_deposit_wallet_and_a_valid_amount(client, auth_headers, user) -> None:
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    bad = client.post("/api/trading-account/wrap", json={"amount": "-1"}, headers=headers)
    assert bad.status_code == 400 and bad.get_json()["code"] == "validation_failed"
    none = client.post("/api/trading-account/wrap", json={"amount": "5"},
                       headers={**auth_headers, "Idempotency-Key": str(uuid.uuid4())})
    assert none.status_code == 409 and none.get_json()["code"] == "wallet_error"
    wallets.get_or_create_deposit_wallet(user)
    early = client.post("/api/trading-account/wrap", json={"amount": "5"},
                        headers={**auth_headers, "Idempotency-Key": str(uuid.uuid4())})
    assert early.status_code == 409 and early.get_json()["code"] == "wallet_error"


def test_connect_refuses_an_oauth_token(client, app, user) -> None:
    from tests.api.oauth_flow import bearer, obtain_tokens

    # Every scope an OAuth client may be granted (wallet:write is not one of them).
    _, tokens = obtain_tokens(client, user, resource=app_settings(app).base_url + "/api")
    assert "trade:execute" in tokens["scope"].split()
    wallet = uups_deposit_wallet_address(OrderKey(KEY).address, trading_accounts.contracts())
    refused = client.post("/api/trading-account/connect", headers=bearer(tokens["access_token"]),
                          json={"wallet_address": wallet, "private_key": KEY})
    assert refused.status_code == 403, refused.get_data(as_text=True)
    assert "session token" in refused.get_json()["error"]
    assert wallets.for_user(user) is None
    # The same token may read the account: the refusal is about the key, not the scope.
    assert client.get("/api/trading-account",
                      headers=bearer(tokens["access_token"])).status_code == 200
