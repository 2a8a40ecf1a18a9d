"""Signing in for OAuth consent on the dashboard's sign-in page: the emailed code (over a
real SMTP server) or link, back to the consent page through ``next=``, one browser session
for both, CSRF, and no open redirect."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from blueprints.dashboard.session import JWT_KEY
from models.base import utcnow
from services.identity import auth
from tests.api.oauth_flow import (
    RECOMMENDED,
    authorize_params,
    csrf_from,
    exchange,
    page_csrf,
    pkce,
    redirect_params,
    register,
    sign_in,
)

HOME = "/dashboard"




def _authorization_request(client) -> tuple[str, str, str]:
    """(client_id, code_verifier, the /oauth/authorize URL) of a fresh registration."""
    registration = register(client)
    verifier, challenge = pkce()
    url = "/oauth/authorize?" + urlencode(authorize_params(registration["client_id"],
                                                           challenge))
    return registration["client_id"], verifier, url


def _login_path(response) -> str:
    """Where a redirect to the sign-in page points, checked to be the dashboard's."""
    assert response.status_code == 302, response.data
    location = response.headers["Location"]
    assert urlsplit(location).path == "/dashboard/login"
    return location


def _ask_for_code(client, login_path: str, email: str, target: str | None) -> str:
    """Load the sign-in page and post the email as its form does; the code step's HTML."""
    page = client.get(login_path)
    assert page.status_code == 200
    form = {"csrf_token": page_csrf(page.get_data(as_text=True)), "email": email}
    if target is not None:
        form["next"] = target
    sent = client.post("/dashboard/login", data=form)
    assert sent.status_code == 200, sent.data
    return sent.get_data(as_text=True)


def test_sign_in_with_the_emailed_code_returns_to_consent_and_completes_the_flow(
        client, inbox, bound_db, app):
    client_id, verifier, authorize_url = _authorization_request(client)
    login_path = _login_path(client.get(authorize_url))
    assert parse_qs(urlsplit(login_path).query)["next"] == [authorize_url]
    page = client.get(login_path)
    html = page.get_data(as_text=True)
    assert page.headers["X-Frame-Options"] == "DENY"
    assert f'name="next" value="{authorize_url.replace("&", "&amp;")}"' in html

    code_step = _ask_for_code(client, login_path, "Owner@Example.com", authorize_url)
    assert 'name="next"' in code_step  # the code form carries the target on
    code, _ = inbox.last_for("owner@example.com")
    csrf = page_csrf(client.get(login_path).get_data(as_text=True))
    wrong = client.post("/dashboard/login/verify", data={
        "csrf_token": csrf, "email": "owner@example.com", "next": authorize_url,
        "code": "000000" if code != "000000" else "111111"})
    assert wrong.status_code == 401 and "invalid or expired" in wrong.get_data(as_text=True)
    right = client.post("/dashboard/login/verify", data={
        "csrf_token": csrf, "email": "owner@example.com", "next": authorize_url,
        "code": code})
    assert right.status_code == 303 and right.headers["Location"] == authorize_url

    consent = client.get(authorize_url)
    html = consent.get_data(as_text=True)
    assert consent.status_code == 200 and "owner@example.com" in html
    # The dashboard's layout, under a policy that lets it load and forbids framing.
    assert "/static/dashboard.css" in html and 'class="topbar"' in html
    policy = consent.headers["Content-Security-Policy"]
    assert "style-src 'self'" in policy and "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    decided = client.post(authorize_url, data={"csrf_token": csrf_from(html),
                                               "decision": "approve",
                                               "approved_scope": RECOMMENDED})
    back = redirect_params(decided)
    tokens = exchange(client, client_id, back["code"], verifier)
    assert tokens.status_code == 200 and tokens.get_json()["access_token"].startswith("svco_")


def test_htmx_sign_in_and_the_emailed_link_return_to_consent_too(client, inbox, bound_db):
    _, _, authorize_url = _authorization_request(client)
    login_path = _login_path(client.get(authorize_url))
    _ask_for_code(client, login_path, "htmx@example.com", authorize_url)
    code, token = inbox.last_for("htmx@example.com")
    csrf = page_csrf(client.get(login_path).get_data(as_text=True))
    # The page's htmx form: the answer tells htmx where to go.
    verified = client.post("/dashboard/login/verify", headers={
        "HX-Request": "true", "X-CSRF-Token": csrf}, data={
        "email": "htmx@example.com", "code": code, "next": authorize_url})
    assert verified.status_code == 200 and verified.headers["HX-Redirect"] == authorize_url
    assert client.get(authorize_url).status_code == 200

    # The emailed link, in a new browser, with the consent page as next.
    other = client.application.test_client()
    _ask_for_code(other, _login_path(other.get(authorize_url)), "link@example.com",
                  authorize_url)
    _, token = inbox.last_for("link@example.com")
    link_page = other.get("/dashboard/login?" + urlencode({"token": token,
                                                           "next": authorize_url}))
    redeemed = other.post("/dashboard/login/link", data={
        "csrf_token": page_csrf(link_page.get_data(as_text=True)), "token": token,
        "next": authorize_url})
    assert redeemed.status_code == 303 and redeemed.headers["Location"] == authorize_url
    assert "link@example.com" in other.get(authorize_url).get_data(as_text=True)


def test_one_browser_session_signing_out_or_expiring_ends_consent_too(client, user, app):
    _, _, authorize_url = _authorization_request(client)
    sign_in(client, user)
    consent = client.get(authorize_url)
    assert consent.status_code == 200 and user.email in consent.get_data(as_text=True)
    # The consent page's header is the dashboard's: its sign-out button signs out of both.
    out = client.post("/dashboard/logout", data={
        "csrf_token": page_csrf(consent.get_data(as_text=True))})
    assert out.status_code == 303
    _login_path(client.get(authorize_url))
    # A session JWT past its 24 hours no longer reaches consent.
    stale = auth.issue_session(user, now=utcnow() - timedelta(hours=25))
    with client.session_transaction() as session:
        session[JWT_KEY] = stale.token
    _login_path(client.get(authorize_url))


def test_the_sign_in_form_needs_its_csrf_token(client, inbox, bound_db):
    response = client.post("/dashboard/login", data={"email": "a@example.com"})
    assert response.status_code == 403
    assert inbox.messages == []


@pytest.mark.parametrize("target", [
    "https://evil.example/oauth/authorize", "//evil.example/oauth/authorize",
    "/\\evil.example/oauth/authorize", "/oauth/authorizeX", "/oauth/token",
    "javascript:alert(1)", "/oauth/authorize?\r\nSet-Cookie: x=1", "/api/keys"])
def test_next_only_returns_to_this_sites_dashboard_or_authorize_paths(
        client, inbox, bound_db, target):
    login_path = "/dashboard/login?" + urlencode({"next": target})
    page = client.get(login_path).get_data(as_text=True)
    assert 'name="next"' not in page
    # Even posted straight to the verification step, the target is dropped.
    _ask_for_code(client, login_path, "b@example.com", target)
    code, _ = inbox.last_for("b@example.com")
    done = client.post("/dashboard/login/verify", data={
        "csrf_token": page_csrf(client.get(login_path).get_data(as_text=True)),
        "email": "b@example.com", "code": code, "next": target})
    assert done.status_code == 303 and done.headers["Location"] == HOME
