"""Helpers for the OAuth tests: PKCE pairs, registration, a signed-in browser, consent."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from blueprints.dashboard.session import CSRF_KEY, JWT_KEY
from services.identity import auth

REDIRECT_URI = "http://127.0.0.1:9/callback"
RECOMMENDED = ["read:account", "read:positions", "read:trades", "read:markets",
               "trade:execute", "trade:cancel"]


def pkce() -> tuple[str, str]:
    """A (code_verifier, S256 code_challenge) pair."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def register(client: Any, **metadata: Any) -> dict[str, Any]:
    """Register a public client (unless overridden) and return the registration response."""
    body = {"client_name": "Test Agent", "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], **metadata}
    response = client.post("/oauth/register", json=body)
    assert response.status_code == 201, response.data
    return response.get_json()


def sign_in(client: Any, user: Any) -> str:
    """Sign ``user`` in to the test client's browser session as the dashboard's sign-in does
    (a real session JWT in the cookie); returns its CSRF token. Tests that go through the
    sign-in page itself are in test_oauth_login.py."""
    csrf = secrets.token_urlsafe(16)
    signed = auth.issue_session(user)
    with client.session_transaction() as session:
        session[JWT_KEY] = signed.token
        session[CSRF_KEY] = csrf
    return csrf


def authorize_params(client_id: str, challenge: str, **extra: Any) -> dict[str, str]:
    """A valid authorization request for ``client_id``."""
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
              "scope": " ".join(RECOMMENDED), "state": secrets.token_urlsafe(8),
              "code_challenge": challenge, "code_challenge_method": "S256"}
    params.update(extra)
    return {k: v for k, v in params.items() if v is not None}


def csrf_from(html: str) -> str:
    """The CSRF token of a rendered form."""
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def page_csrf(html: str) -> str:
    """The CSRF token a dashboard page carries for its htmx forms (its csrf-token meta)."""
    return re.search(r'<meta name="csrf-token" content="([^"]+)"', html).group(1)


def consent(client: Any, params: dict[str, str], scopes: list[str] | None = None,
            decision: str = "approve", csrf: str | None = None,
            step_up_code: Any = None) -> Any:
    """Load the consent page and post a decision; returns the POST response.

    Allowing ``wallet:write`` asks for an emailed code: ``step_up_code`` is a function that
    reads it once the page has sent it (e.g. from the test inbox).
    """
    url = "/oauth/authorize?" + urlencode(params)
    page = client.get(url)
    assert page.status_code == 200, page.data
    token = csrf if csrf is not None else csrf_from(page.get_data(as_text=True))
    form: dict[str, Any] = {"csrf_token": token, "decision": decision,
                            "approved_scope": scopes if scopes is not None else RECOMMENDED}
    answer = client.post(url, data=form)
    if step_up_code is not None and answer.status_code == 403:
        answer = client.post(url, data={**form, "step_up_code": step_up_code()})
    return answer


def redirect_params(response: Any) -> dict[str, str]:
    """The query parameters of a redirect to the client."""
    assert response.status_code == 302, response.data
    location = response.headers["Location"]
    assert location.startswith(REDIRECT_URI), location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def exchange(client: Any, client_id: str, code: str, verifier: str, **extra: Any) -> Any:
    """POST the code to the token endpoint."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
            "client_id": client_id, "code_verifier": verifier, **extra}
    return client.post("/oauth/token", data={k: v for k, v in form.items() if v is not None})


def refresh(client: Any, client_id: str, refresh_token: str, **extra: Any) -> Any:
    """POST a refresh token to the token endpoint."""
    return client.post("/oauth/token", data={"grant_type": "refresh_token",
                                             "refresh_token": refresh_token,
                                             "client_id": client_id, **extra})


def obtain_tokens(client: Any, user: Any, scopes: list[str] | None = None,
                  **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Register, consent and exchange: returns (registration, token response)."""
    registration = register(client)
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge, **extra)
    back = redirect_params(consent(client, params, scopes))
    resource = extra.get("resource")
    response = exchange(client, registration["client_id"], back["code"], verifier,
                        resource=resource)
    assert response.status_code == 200, response.data
    return registration, response.get_json()


def bearer(token: str) -> dict[str, str]:
    """Authorization header for ``token``."""
    return {"Authorization": f"Bearer {token}"}
