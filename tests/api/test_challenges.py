"""Every REST 401 points OAuth clients at the REST resource's metadata (RFC 9728 §5)."""

from __future__ import annotations

import re
import uuid

import pytest

from blueprints import access
from tests.conftest import one_database

REST_METADATA = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/api"
CHALLENGE = f'Bearer realm="copytrade", resource_metadata="{REST_METADATA}"'


def _guarded_requests(app) -> list[tuple[str, str]]:
    """(method, path) of every REST operation that asks for a credential."""
    found = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/") or rule.rule.startswith("/api/mcp"):
            continue
        if rule.endpoint.split(".")[0].endswith("_test"):
            continue
        path = re.sub(r"<(?:[^:>]+:)?[^>]+>", str(uuid.uuid4()), rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            policy = access.policy_for(app, rule.endpoint, method)
            if policy is not None and policy.kind != "public":
                found.append((method, path))
    return found


@pytest.mark.parametrize("credential, code", [
    (None, "unauthorized"),
    ("Bearer svck_live_" + "x" * 43, "invalid_token"),
    ("Bearer not-a-token", "invalid_token"),
])
def test_every_rest_401_names_the_rest_resource_metadata(app, client, credential, code):
    headers = {"Authorization": credential} if credential else {}
    guarded = _guarded_requests(app)
    assert len(guarded) > 20  # the walk found the API
    for method, path in guarded:
        response = client.open(path, method=method, headers=headers, json={})
        assert response.status_code == 401, (method, path, response.data)
        assert response.get_json()["code"] == code
        expected = CHALLENGE + (', error="invalid_token"' if code == "invalid_token" else "")
        assert response.headers["WWW-Authenticate"] == expected, (method, path)


def test_a_wrong_sign_in_code_is_challenged_too(client):
    response = client.post("/api/auth/verify-code",
                           json={"email": "nobody@example.com", "code": "000000"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE + ', error="invalid_token"'


@one_database
def test_the_named_metadata_describes_the_rest_resource(client):
    challenge = client.get("/api/users/me").headers["WWW-Authenticate"]
    url = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
    document = client.get(url.removeprefix("http://127.0.0.1:8000")).get_json()
    assert document["resource"] == "http://127.0.0.1:8000/api"
    assert document["authorization_servers"] == ["http://127.0.0.1:8000"]


@one_database
def test_mcp_keeps_its_own_challenge(client):
    response = client.post("/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"')
