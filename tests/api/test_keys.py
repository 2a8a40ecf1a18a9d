"""API keys: mint, list, use, revoke, expiry, validation and the tier's key quota."""

from __future__ import annotations

import hashlib
import hmac
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from models import ApiKey, User
from services.identity import auth, keys
from services.platform import credential_generation, keyring
from tests.conftest import app_settings


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.data
    body = response.get_json()
    assert body["code"] == code
    return body


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client, headers, **body):
    body.setdefault("name", "agent")
    body.setdefault("scopes", ["read:account"])
    return client.post("/api/keys", json=body, headers=headers)


def test_create_returns_the_secret_once_and_stores_only_a_keyed_hash(client, app, auth_headers):
    before = datetime.now(UTC)
    response = create(client, auth_headers, name="monitor",
                      scopes=["read:trades", "read:account"])
    assert response.status_code == 201, response.data
    body = response.get_json()
    assert set(body) == {"id", "name", "prefix", "scopes", "created_at", "last_used_at",
                         "expires_at", "revoked_at", "secret"}
    secret = body["secret"]
    assert re.fullmatch(r"svck_live_[A-Za-z0-9_-]{43,}", secret)
    assert secret.startswith(body["prefix"]) and len(body["prefix"]) < 20
    assert body["scopes"] == ["read:account", "read:trades"]
    assert body["last_used_at"] is None and body["revoked_at"] is None
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(days=89, hours=23) < expires - before <= timedelta(days=90, seconds=5)

    row = ApiKey.get_by_id(uuid.UUID(body["id"]))
    stored = " ".join(str(v) for v in row.__data__.values())
    assert secret not in stored and secret[10:] not in stored
    expected = hmac.new(keyring.derive_key(app_settings(app).secret_key, "api-key"),
                        secret.encode(), hashlib.sha256).hexdigest()
    assert row.key_hash == expected

    listed = client.get("/api/keys", headers=auth_headers).get_json()
    assert [k["id"] for k in listed] == [body["id"]]
    assert "secret" not in listed[0] and secret not in str(listed)


def test_list_is_newest_first_and_includes_revoked(client, auth_headers):
    ids = [create(client, auth_headers, name=f"k{i}").get_json()["id"] for i in range(3)]
    client.delete(f"/api/keys/{ids[0]}", headers=auth_headers)
    listed = client.get("/api/keys", headers=auth_headers).get_json()
    assert [k["id"] for k in listed] == ids[::-1]
    assert listed[-1]["revoked_at"] is not None


@pytest.mark.parametrize("days,never", [(0, True), (1, False), (365, False), (None, False)])
def test_expiry_choices(client, auth_headers, days, never):
    body = create(client, auth_headers, expires_in_days=days).get_json()
    if never:
        assert body["expires_at"] is None
    else:
        expected = timedelta(days=days if days is not None else 90)
        got = datetime.fromisoformat(body["expires_at"]) - datetime.fromisoformat(
            body["created_at"])
        assert abs(got - expected) < timedelta(seconds=2)


@pytest.mark.parametrize("body,field", [
    ({"name": ""}, "name"), ({"name": "x" * 81}, "name"), ({"name": "   "}, "name"),
    ({"name": None}, "name"), ({"scopes": []}, "scopes"),
    ({"scopes": ["read:everything"]}, "scopes"),
    ({"scopes": ["read:account", "read:account"]}, "scopes"),
    ({"scopes": "read:account"}, "scopes"),
    ({"expires_in_days": -1}, "expires_in_days"), ({"expires_in_days": 366}, "expires_in_days"),
    ({"expires_in_days": "30"}, "expires_in_days"), ({"expires_in_days": 1.5}, "expires_in_days"),
    ({"expires_in_days": True}, "expires_in_days"), ({"colour": "red"}, "colour"),
])
def test_create_validation(client, auth_headers, body, field):
    response = create(client, auth_headers, **body)
    assert field in assert_error(response, 400, "validation_failed")["fields"]


def test_required_fields(client, auth_headers):
    body = assert_error(client.post("/api/keys", json={}, headers=auth_headers),
                        400, "validation_failed")
    assert set(body["fields"]) == {"name", "scopes"}


def test_name_of_80_and_every_scope_are_accepted(client, stepped_up_headers):
    scopes = ["read:account", "read:positions", "read:trades", "read:markets",
              "trade:execute", "trade:cancel", "wallet:write"]
    # wallet:write needs a step-up (tests/api/test_sessions.py shows it refused without).
    response = create(client, stepped_up_headers, name="n" * 80, scopes=scopes[::-1])
    assert response.status_code == 201
    assert response.get_json()["scopes"] == scopes


def test_keys_routes_take_a_session_only(client, auth_headers, api_key):
    secret = api_key("read:account", "read:trades", "trade:execute", "wallet:write")
    for method, path in (("get", "/api/keys"), ("post", "/api/keys"),
                         ("delete", f"/api/keys/{uuid.uuid4()}")):
        response = getattr(client, method)(path, headers=bearer(secret),
                                           json={"name": "x", "scopes": ["read:account"]}
                                           if method == "post" else None)
        assert_error(response, 403, "scope_required")
    assert_error(client.get("/api/keys"), 401, "unauthorized")


def test_a_key_authenticates_with_its_scopes(client, api_key):
    secret = api_key("read:account")
    me = client.get("/api/users/me", headers=bearer(secret))
    assert me.status_code == 200


def test_last_used_at_is_written_at_most_once_a_minute(client, api_key):
    secret = api_key("read:account")
    key = ApiKey.get()
    assert key.last_used_at is None
    client.get("/api/users/me", headers=bearer(secret))
    first = ApiKey.get_by_id(key.id).last_used_at
    assert first is not None
    # Within the minute: no write (a marker in the row survives), whether the key is read
    # again (the generation moved, as after any change) or used as verified a moment ago.
    marker = first - timedelta(seconds=30)
    ApiKey.update(last_used_at=marker).where(ApiKey.id == key.id).execute()
    client.get("/api/users/me", headers=bearer(secret))
    credential_generation.bump()
    client.get("/api/users/me", headers=bearer(secret))
    assert ApiKey.get_by_id(key.id).last_used_at == marker
    # Older than a minute: written again (the row changed behind the services' back, so the
    # generation is moved as a service's change would).
    ApiKey.update(last_used_at=first - timedelta(minutes=2)).where(ApiKey.id == key.id).execute()
    credential_generation.bump()
    client.get("/api/users/me", headers=bearer(secret))
    assert ApiKey.get_by_id(key.id).last_used_at > first - timedelta(seconds=1)


def test_revoked_and_expired_keys_are_invalid(client, auth_headers, api_key):
    revoked, expired = api_key("read:account"), api_key("read:account")
    keys = list(ApiKey.select().order_by(ApiKey.created_at))
    assert client.delete(f"/api/keys/{keys[0].id}", headers=auth_headers).status_code == 204
    ApiKey.update(expires_at=datetime.now(UTC) - timedelta(seconds=1)).where(
        ApiKey.id == keys[1].id).execute()
    for secret in (revoked, expired):
        response = client.get("/api/users/me", headers=bearer(secret))
        assert_error(response, 401, "invalid_token")
    # Revoking twice is harmless.
    assert client.delete(f"/api/keys/{keys[0].id}", headers=auth_headers).status_code == 204


def test_unknown_or_malformed_keys_are_invalid(client):
    for token in ("svck_live_" + "A" * 43, "svck_test_abc", "svck_", "svco_anything"):
        assert_error(client.get("/api/users/me", headers=bearer(token)), 401, "invalid_token")


def test_delete_of_unknown_or_foreign_key_is_not_found(client, app, auth_headers, api_key,
                                                       bound_db):
    stranger = User.create(email="stranger@example.com")
    api_key("read:account", owner=stranger)
    foreign = ApiKey.get(ApiKey.user == stranger)
    assert_error(client.delete(f"/api/keys/{foreign.id}", headers=auth_headers),
                 404, "not_found")
    assert ApiKey.get_by_id(foreign.id).revoked_at is None
    assert_error(client.delete(f"/api/keys/{uuid.uuid4()}", headers=auth_headers),
                 404, "not_found")
    assert client.delete("/api/keys/not-a-uuid", headers=auth_headers).status_code == 404
    stranger_session = auth.issue_session(stranger).token
    assert client.get("/api/keys", headers=bearer(stranger_session)).get_json()[0]["id"] == str(
        foreign.id)


def test_free_tier_key_quota(client, auth_headers, user):
    ids = [create(client, auth_headers, name=f"k{i}").get_json()["id"] for i in range(3)]
    body = assert_error(create(client, auth_headers), 403, "tier_limit_exceeded")
    assert "3" in body["error"]
    client.delete(f"/api/keys/{ids[0]}", headers=auth_headers)
    assert create(client, auth_headers).status_code == 201  # revoked keys do not count
    User.update(tier="pro").where(User.id == user.id).execute()
    assert create(client, auth_headers).status_code == 201


def switch(client, headers, key_id, body):
    return client.patch(f"/api/keys/{key_id}", json=body, headers=headers)


def test_turning_confirmations_off_needs_a_step_up_and_on_needs_none(
        client, auth_headers, stepped_up_headers, user):
    key_id = create(client, auth_headers, scopes=["trade:execute"]).get_json()["id"]
    off = {"confirm_money_tools": False}
    # A guard turned off lets an agent move money alone: a fresh confirmation code first.
    body = assert_error(switch(client, auth_headers, key_id, off), 403, "scope_required")
    assert "X-Step-Up-Token" in body["error"]
    assert ApiKey.get_by_id(key_id).confirm_money_tools is True
    done = switch(client, stepped_up_headers, key_id, off)
    assert done.status_code == 200, done.data
    assert done.get_json()["confirm_money_tools"] is False
    assert done.get_json()["id"] == key_id and "secret" not in done.get_json()
    assert ApiKey.get_by_id(key_id).confirm_money_tools is False
    listed = client.get("/api/keys", headers=auth_headers).get_json()
    assert [k["confirm_money_tools"] for k in listed if k["id"] == key_id] == [False]
    again = switch(client, auth_headers, key_id, {"confirm_money_tools": True})
    assert again.status_code == 200 and again.get_json()["confirm_money_tools"] is True
    assert ApiKey.get_by_id(key_id).confirm_money_tools is True


@pytest.mark.parametrize("body", [{}, {"confirm_money_tools": "maybe"},
                                  {"confirm_money_tools": None},
                                  {"confirm_money_tools": True, "name": "renamed"}])
def test_a_bad_switch_body_is_refused(client, auth_headers, stepped_up_headers, body):
    key_id = create(client, auth_headers).get_json()["id"]
    response = assert_error(switch(client, stepped_up_headers, key_id, body), 400,
                            "validation_failed")
    assert response["error"]
    assert ApiKey.get_by_id(key_id).confirm_money_tools is True
    assert ApiKey.get_by_id(key_id).name == "agent"


def test_switching_a_foreign_or_unknown_key_is_not_found_and_keys_cannot_switch(
        client, stepped_up_headers, api_key, bound_db):
    stranger = User.create(email="stranger2@example.com")
    api_key("read:account", owner=stranger)
    foreign = ApiKey.get(ApiKey.user == stranger)
    off = {"confirm_money_tools": False}
    assert_error(switch(client, stepped_up_headers, foreign.id, off), 404, "not_found")
    assert_error(switch(client, stepped_up_headers, uuid.uuid4(), off), 404, "not_found")
    assert ApiKey.get_by_id(foreign.id).confirm_money_tools is True
    # An agent's own key cannot switch its guard off (session only).
    secret = api_key("read:account", "trade:execute", "wallet:write")
    own = ApiKey.get_by_id(keys.resolve(secret).credential_id)
    assert_error(switch(client, bearer(secret), own.id, off), 403, "scope_required")
    assert ApiKey.get_by_id(own.id).confirm_money_tools is True
