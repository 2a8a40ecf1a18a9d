"""The consent flow's sign-in page: emailed code over a real SMTP server, CSRF, safe `next`."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from aiosmtpd.controller import Controller

from tests.api.oauth_flow import authorize_params, csrf_from, pkce, register
from tests.api.test_auth import Inbox
from tests.conftest import free_port


@pytest.fixture
def mailbox(app, monkeypatch):
    handler = Inbox()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setitem(app.config, "SMTP_URL", f"smtp://127.0.0.1:{port}")
    yield handler
    controller.stop()


def _authorize_url(client) -> str:
    registration = register(client)
    _, challenge = pkce()
    return "/oauth/authorize?" + urlencode(authorize_params(registration["client_id"],
                                                            challenge))


def test_sign_in_with_the_emailed_code_returns_to_the_consent_page(client, mailbox, bound_db):
    authorize_url = _authorize_url(client)
    login_url = "/oauth/login?" + urlencode({"next": authorize_url})
    page = client.get(login_url)
    assert page.status_code == 200 and page.headers["X-Frame-Options"] == "DENY"
    sent = client.post(login_url, data={"csrf_token": csrf_from(page.get_data(as_text=True)),
                                        "action": "send", "email": "Owner@Example.com"})
    assert sent.status_code == 200
    code, _ = mailbox.last_for("owner@example.com")
    html = sent.get_data(as_text=True)
    wrong = client.post(login_url, data={"csrf_token": csrf_from(html), "action": "verify",
                                         "email": "owner@example.com",
                                         "code": "000000" if code != "000000" else "111111"})
    assert wrong.status_code == 400 and "invalid or expired" in wrong.get_data(as_text=True)
    right = client.post(login_url, data={"csrf_token": csrf_from(html), "action": "verify",
                                         "email": "owner@example.com", "code": code})
    assert right.status_code == 302 and right.headers["Location"] == authorize_url
    consent = client.get(authorize_url)
    assert consent.status_code == 200 and "owner@example.com" in consent.get_data(as_text=True)


def test_sign_in_form_needs_its_csrf_token(client, mailbox, bound_db):
    response = client.post("/oauth/login", data={"action": "send", "email": "a@example.com"})
    assert response.status_code == 400
    assert mailbox.messages == []


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/oauth/authorize",
                                    "/oauth/authorizeX", "/dashboard"])
def test_next_only_returns_to_the_authorize_endpoint(client, mailbox, bound_db, target):
    login_url = "/oauth/login?" + urlencode({"next": target})
    page = client.get(login_url)
    sent = client.post(login_url, data={"csrf_token": csrf_from(page.get_data(as_text=True)),
                                        "action": "send", "email": "b@example.com"})
    code, _ = mailbox.last_for("b@example.com")
    done = client.post(login_url, data={"csrf_token": csrf_from(sent.get_data(as_text=True)),
                                        "action": "verify", "email": "b@example.com",
                                        "code": code})
    assert done.status_code == 200 and "Location" not in done.headers
    assert "You are signed in as" in done.get_data(as_text=True)
