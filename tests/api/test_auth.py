"""Sign-in over a real SMTP server: the code and the link read from the delivered email."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from models import LoginCode, User
from services.identity import auth
from services.platform import runtime
from tests.conftest import free_port


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.data
    body = response.get_json()
    assert body["code"] == code
    return body


def test_login_with_emailed_code(client, inbox, bound_db):
    sent = client.post("/api/auth/magic", json={"email": "  Ada.Lovelace@Example.COM "})
    assert sent.status_code == 202
    assert len(inbox.messages) == 1
    rcpt, message = inbox.messages[0]
    assert rcpt == ["ada.lovelace@example.com"]
    assert message["Subject"].startswith("Your copytrade sign-in code")
    assert User.select().count() == 0  # the account comes with the first verification

    code, _ = inbox.last_for("ada.lovelace@example.com")
    before = datetime.now(UTC)
    verified = client.post("/api/auth/verify-code",
                           json={"email": "ADA.lovelace@example.com ", "code": code})
    assert verified.status_code == 200, verified.data
    body = verified.get_json()
    assert body["token_type"] == "Bearer"
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(hours=23, minutes=59) < expires - before <= timedelta(hours=24, seconds=1)
    assert body["user"]["email"] == "ada.lovelace@example.com"
    assert body["user"]["tier"] == "self-hosted"  # the configured default tier
    assert body["user"]["limits"] == {"max_active_configs": None, "max_api_keys": None}
    assert body["user"]["trading_wallet_address"] is None
    assert User.select().count() == 1

    me = client.get("/api/users/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200
    assert me.get_json() == body["user"]

    # Single use: the same code never works twice.
    again = client.post("/api/auth/verify-code",
                        json={"email": "ada.lovelace@example.com", "code": code})
    assert_error(again, 401, "invalid_token")


def test_login_with_emailed_link_reuses_the_account(client, inbox, bound_db):
    client.post("/api/auth/magic", json={"email": "grace@example.com"})
    code, _ = inbox.last_for("grace@example.com")
    first = client.post("/api/auth/verify-code", json={"email": "grace@example.com", "code": code})
    user_id = first.get_json()["user"]["id"]

    assert client.post("/api/auth/magic", json={"email": "grace@example.com"}).status_code == 202
    code, token = inbox.last_for("grace@example.com")
    redeemed = client.post("/api/auth/magic", json={"token": token})
    assert redeemed.status_code == 200, redeemed.data
    body = redeemed.get_json()
    assert body["token_type"] == "Bearer" and body["user"]["id"] == user_id
    assert User.select().count() == 1
    # The link is single use, and the code of the same email died with it.
    assert_error(client.post("/api/auth/magic", json={"token": token}), 401, "invalid_token")
    assert_error(client.post("/api/auth/verify-code",
                             json={"email": "grace@example.com", "code": code}),
                 401, "invalid_token")


def test_codes_and_links_are_stored_hashed(client, inbox, bound_db):
    client.post("/api/auth/magic", json={"email": "hash@example.com"})
    code, token = inbox.last_for("hash@example.com")
    row = LoginCode.get(LoginCode.email == "hash@example.com")
    assert code not in row.code_hash and token not in row.link_hash
    assert len(row.code_hash) == 64 and len(row.link_hash) == 64


def test_a_new_code_leaves_the_old_one_valid_until_one_is_used(client, inbox, bound_db):
    # Issue 18, finding 10: a new email used to void the pending code (anyone could keep
    # the owner out by asking for emails). Both work now, until one of them is used.
    client.post("/api/auth/magic", json={"email": "twice@example.com"})
    old, _ = inbox.last_for("twice@example.com")
    client.post("/api/auth/magic", json={"email": "twice@example.com"})
    new, _ = inbox.last_for("twice@example.com")
    ok = client.post("/api/auth/verify-code", json={"email": "twice@example.com", "code": old})
    assert ok.status_code == 200
    if old != new:
        assert_error(client.post("/api/auth/verify-code",
                                 json={"email": "twice@example.com", "code": new}),
                     401, "invalid_token")


def test_code_locks_after_five_wrong_tries(client, inbox, bound_db):
    client.post("/api/auth/magic", json={"email": "guess@example.com"})
    code, token = inbox.last_for("guess@example.com")
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for _ in range(5):
        assert_error(client.post("/api/auth/verify-code",
                                 json={"email": "guess@example.com", "code": wrong}),
                     401, "invalid_token")
    locked = assert_error(client.post("/api/auth/verify-code",
                                      json={"email": "guess@example.com", "code": code}),
                          401, "invalid_token")
    assert "Too many" in locked["error"]
    assert_error(client.post("/api/auth/magic", json={"token": token}), 401, "invalid_token")
    assert User.select().count() == 0


def test_codes_expire_after_ten_minutes(client, inbox, bound_db):
    client.post("/api/auth/magic", json={"email": "late@example.com"})
    code, token = inbox.last_for("late@example.com")
    row = LoginCode.get(LoginCode.email == "late@example.com")
    assert timedelta(minutes=9) < row.expires_at - row.created_at <= timedelta(minutes=10)
    LoginCode.update(expires_at=datetime.now(UTC) - timedelta(seconds=1)).execute()
    assert_error(client.post("/api/auth/verify-code",
                             json={"email": "late@example.com", "code": code}),
                 401, "invalid_token")
    assert_error(client.post("/api/auth/magic", json={"token": token}), 401, "invalid_token")


@pytest.mark.parametrize("body", [
    {"email": "not-an-email"}, {"email": ""}, {"email": "a@b"}, {"email": "a b@example.com"},
    {"email": 42},
])
def test_magic_refuses_bad_addresses(client, body):
    assert_error(client.post("/api/auth/magic", json=body), 400, "validation_failed")


def test_magic_needs_exactly_one_of_email_and_token(client):
    assert client.post("/api/auth/magic", json={}).status_code == 400
    both = client.post("/api/auth/magic", json={"email": "a@example.com", "token": "x"})
    assert both.status_code == 400


@pytest.mark.parametrize("body", [
    {"email": "a@example.com", "code": "12345"}, {"email": "a@example.com", "code": "abcdef"},
    {"email": "a@example.com"}, {"code": "123456"}, {"email": "nope", "code": "123456"},
])
def test_verify_code_validates_input(client, body):
    assert_error(client.post("/api/auth/verify-code", json=body), 400, "validation_failed")


def test_without_smtp_the_code_is_logged(client, caplog, set_settings, bound_db):
    set_settings(smtp_url=None)
    with caplog.at_level(logging.WARNING, logger="services.identity.auth"):
        assert client.post("/api/auth/magic", json={"email": "log@example.com"}).status_code == 202
    code = re.search(r"sign-in code for log@example.com: (\d{6})", caplog.text).group(1)
    ok = client.post("/api/auth/verify-code", json={"email": "log@example.com", "code": code})
    assert ok.status_code == 200


def test_with_smtp_the_code_is_never_logged(client, inbox, caplog, bound_db):
    with caplog.at_level(logging.DEBUG):
        client.post("/api/auth/magic", json={"email": "quiet@example.com"})
    code, token = inbox.last_for("quiet@example.com")
    ours = " ".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail.log"))
    assert ours is not None and code not in ours and token not in ours


def test_smtp_down_answers_503(client, set_settings, bound_db):
    set_settings(smtp_url=f"smtp://127.0.0.1:{free_port()}")
    response = client.post("/api/auth/magic", json={"email": "down@example.com"})
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) > 0


def test_session_tokens_are_checked(client, settings, user):
    good = auth.issue_session(user).token
    assert client.get("/api/users/me", headers={"Authorization": f"Bearer {good}"}
                      ).status_code == 200
    expired = auth.issue_session(user,
                                 now=datetime.now(UTC) - timedelta(hours=24, seconds=5)).token
    with runtime.replaced(settings=replace(settings, secret_key="another")):
        forged = auth.issue_session(user).token
    tampered = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    for token in (expired, forged, tampered, "garbage", "a.b.c"):
        response = client.get("/api/users/me", headers={"Authorization": f"Bearer {token}"})
        assert_error(response, 401, "invalid_token")
        assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_session_of_a_deleted_user_is_invalid(client, app, user):
    token = auth.issue_session(user).token
    user.delete_instance()
    assert_error(client.get("/api/users/me", headers={"Authorization": f"Bearer {token}"}),
                 401, "invalid_token")


def test_missing_or_non_bearer_credential_is_unauthorized(client):
    response = client.get("/api/users/me")
    assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert_error(client.get("/api/users/me", headers={"Authorization": "Basic YTpi"}),
                 401, "unauthorized")
    assert_error(client.get("/api/users/me", headers={"Authorization": "Bearer "}),
                 401, "unauthorized")


def _sign_in(client, inbox, email: str):
    assert client.post("/api/auth/magic", json={"email": email}).status_code == 202
    code, _ = inbox.last_for(email)
    return client.post("/api/auth/verify-code", json={"email": email, "code": code})


def test_a_new_account_gets_ten_keys_and_configs_on_the_default_tier(client, inbox, bound_db):
    from services.platform import tiers

    body = _sign_in(client, inbox, "household@example.com").get_json()
    headers = {"Authorization": f"Bearer {body['token']}"}
    for number in range(10):
        minted = client.post("/api/keys", headers=headers,
                             json={"name": f"agent {number}", "scopes": ["read:account"]})
        assert minted.status_code == 201, minted.data
    user = User.get(User.email == "household@example.com")
    tiers.check_active_config_quota(user, 10)  # an eleventh config may start too


def test_a_disabled_account_cannot_sign_in(client, inbox, bound_db):
    from services.identity import users

    assert _sign_in(client, inbox, "gone@example.com").status_code == 200
    users.disable("gone@example.com")
    assert_error(_sign_in(client, inbox, "gone@example.com"), 401, "invalid_token")
    assert client.post("/api/auth/magic", json={"email": "gone@example.com"}).status_code == 202
    _, link = inbox.last_for("gone@example.com")
    assert_error(client.post("/api/auth/magic", json={"token": link}), 401, "invalid_token")
    users.enable("gone@example.com")
    assert _sign_in(client, inbox, "gone@example.com").status_code == 200
