"""Issue 18, finding 11: sign-out ends the JWT, "sign out everywhere" ends them all, and a
session moves money only with a fresh confirmation code (a step-up token)."""

from __future__ import annotations

import re

from models import ApiKey, User
from services.identity import auth
from tests.api.test_auth import assert_error
from tests.conftest import one_database

MONEY_KEY = {"name": "mover", "scopes": ["read:account", "wallet:write"]}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sign_in(client, inbox, email: str) -> str:
    """A session JWT through the real emailed-code flow."""
    client.post("/api/auth/magic", json={"email": email})
    code, _ = inbox.last_for(email)
    answer = client.post("/api/auth/verify-code", json={"email": email, "code": code})
    assert answer.status_code == 200, answer.data
    return answer.get_json()["token"]


def confirmation_code(inbox, email: str) -> str:
    """The newest step-up code mailed to ``email``."""
    for rcpt, message in reversed(inbox.messages):
        match = re.search(r"confirmation code is (\d{6})", message.get_content())
        if email in rcpt and match:
            return match.group(1)
    raise AssertionError(f"no confirmation code for {email}")


def step_up(client, inbox, token: str, email: str) -> dict:
    """Ask for a confirmation code and exchange it: the step-up answer."""
    sent = client.post("/api/auth/magic", json={"email": email, "purpose": "step_up"})
    assert sent.status_code == 202
    answer = client.post("/api/auth/step-up", headers=bearer(token),
                         json={"code": confirmation_code(inbox, email)})
    assert answer.status_code == 200, answer.data
    return answer.get_json()


def test_sign_out_ends_the_session(client, inbox, bound_db):
    token = sign_in(client, inbox, "leaver@example.com")
    assert client.get("/api/users/me", headers=bearer(token)).status_code == 200
    assert client.post("/api/auth/sign-out", headers=bearer(token)).status_code == 204
    assert_error(client.get("/api/users/me", headers=bearer(token)), 401, "invalid_token")
    # Nor can the old token mint a key that outlives it.
    assert_error(client.post("/api/keys", headers=bearer(token),
                             json={"name": "k", "scopes": ["read:account"]}),
                 401, "invalid_token")


def test_sign_out_everywhere_ends_every_session(client, inbox, bound_db):
    email = "everywhere@example.com"
    laptop = sign_in(client, inbox, email)
    stolen = sign_in(client, inbox, email)
    assert client.post("/api/auth/sign-out-everywhere", headers=bearer(laptop)
                       ).status_code == 204
    for token in (laptop, stolen):
        assert_error(client.get("/api/users/me", headers=bearer(token)), 401, "invalid_token")
    # Signing in again afterwards works.
    fresh = sign_in(client, inbox, email)
    assert client.get("/api/users/me", headers=bearer(fresh)).status_code == 200
    assert User.get(User.email == email).sessions_valid_after is not None


def test_minting_a_wallet_write_key_needs_a_step_up(client, inbox, bound_db):
    email = "minter@example.com"
    token = sign_in(client, inbox, email)
    refused = assert_error(client.post("/api/keys", headers=bearer(token), json=MONEY_KEY),
                           403, "scope_required")
    assert "confirmation code" in refused["error"]
    assert ApiKey.select().count() == 0
    # Keys that cannot move money need none.
    assert client.post("/api/keys", headers=bearer(token),
                       json={"name": "reader", "scopes": ["read:account"]}).status_code == 201
    proof = step_up(client, inbox, token, email)
    assert proof["step_up_token"] and proof["expires_at"]
    minted = client.post("/api/keys", json=MONEY_KEY,
                         headers={**bearer(token), "X-Step-Up-Token": proof["step_up_token"]})
    assert minted.status_code == 201, minted.data
    assert minted.get_json()["scopes"] == ["read:account", "wallet:write"]


def test_a_step_up_token_works_only_with_its_own_session(client, inbox, bound_db):
    email = "bound@example.com"
    first = sign_in(client, inbox, email)
    second = sign_in(client, inbox, email)
    proof = step_up(client, inbox, first, email)["step_up_token"]
    assert_error(client.post("/api/keys", json=MONEY_KEY,
                             headers={**bearer(second), "X-Step-Up-Token": proof}),
                 403, "scope_required")
    # Nor is a session JWT a step-up token.
    assert_error(client.post("/api/keys", json=MONEY_KEY,
                             headers={**bearer(second), "X-Step-Up-Token": second}),
                 403, "scope_required")


def test_a_wrong_step_up_code_is_refused_and_counted(client, inbox, bound_db):
    email = "wrong-step@example.com"
    token = sign_in(client, inbox, email)
    client.post("/api/auth/magic", json={"email": email, "purpose": "step_up"})
    code = confirmation_code(inbox, email)
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    assert_error(client.post("/api/auth/step-up", headers=bearer(token), json={"code": wrong}),
                 401, "invalid_token")
    # A sign-in code is not a step-up code, and the reverse.
    assert_error(client.post("/api/auth/verify-code", json={"email": email, "code": code}),
                 401, "invalid_token")


def test_expired_step_up_is_refused(app, client, inbox, bound_db):
    from datetime import timedelta

    from models.base import utcnow
    from services.identity import credentials

    token = sign_in(client, inbox, "stale-step@example.com")
    principal = credentials.resolve_token(token)
    stale = auth.issue_step_up(principal, now=utcnow() - timedelta(minutes=6))
    assert_error(client.post("/api/keys", json=MONEY_KEY,
                             headers={**bearer(token), "X-Step-Up-Token": stale.token}),
                 403, "scope_required")


@one_database
def test_openapi_documents_sign_out_and_step_up(client):
    spec = client.get("/openapi.json").get_json()
    for path in ("/api/auth/sign-out", "/api/auth/sign-out-everywhere", "/api/auth/step-up"):
        assert "post" in spec["paths"][path]
    withdraw = spec["paths"]["/api/trading-wallet/withdraw"]["post"]
    assert "X-Step-Up-Token" in withdraw["description"]
