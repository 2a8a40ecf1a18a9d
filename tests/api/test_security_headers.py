"""Response hardening: trusted hosts, nosniff, HSTS on https, a strict CSP on browser pages."""

from __future__ import annotations

import pytest

from blueprints.security_headers import CONTENT_SECURITY_POLICY
from tests.conftest import one_database


def test_every_response_is_nosniff_and_pages_get_the_csp(client) -> None:
    api = client.get("/healthz")
    assert api.headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" not in api.headers
    page = client.get("/dashboard/login")
    assert page.status_code == 200
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    csp = page.headers["Content-Security-Policy"]
    assert csp == CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in csp and "'unsafe-inline'" not in csp
    assert page.headers["X-Frame-Options"] == "DENY"
    # an error answer is covered too
    assert client.get("/api/nothing-here").headers["X-Content-Type-Options"] == "nosniff"


@one_database
def test_no_inline_script_or_style_in_the_pages(client) -> None:
    html = client.get("/dashboard/login").get_data(as_text=True)
    assert "<script>" not in html and "<style" not in html and " style=" not in html


def test_hsts_only_when_base_url_is_https(client, set_settings) -> None:
    assert "Strict-Transport-Security" not in client.get("/healthz").headers
    set_settings(base_url="https://ct.example")
    answer = client.get("/healthz", base_url="https://ct.example")
    assert answer.status_code == 200
    assert answer.headers["Strict-Transport-Security"].startswith("max-age=")


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "ct.example"])
def test_unknown_host_is_refused(client, host) -> None:
    # a DNS-rebinding name pointed at a local instance, or any other forged Host
    answer = client.get("/api/stats/platform", headers={"Host": host})
    assert answer.status_code == 400
    assert answer.get_json()["code"] == "bad_request"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get("/dashboard/login", headers={"Host": host}).status_code == 400
    # a probe calling by IP still gets /healthz (it reveals nothing)
    assert client.get("/healthz", headers={"Host": host}).status_code == 200


def test_hosts_of_a_public_deployment(client, set_settings) -> None:
    set_settings(base_url="https://ct.example")
    path = "/api/stats/platform"
    assert client.get(path, headers={"Host": "ct.example"}).status_code == 200
    assert client.get(path, headers={"Host": "CT.example:443"}).status_code == 200
    # loopback names are a local deployment's, not a public one's
    assert client.get(path, headers={"Host": "localhost"}).status_code == 400
    assert client.get(path, headers={"Host": "internal.lan:8000"}).status_code == 400
    set_settings(allowed_hosts=("internal.lan", "other.example"))
    assert client.get(path, headers={"Host": "internal.lan:8000"}).status_code == 200


def test_loopback_base_url_accepts_loopback_names(client) -> None:
    for host in ("localhost", "127.0.0.1:8000", "[::1]:8000"):
        assert client.get("/api/stats/platform", headers={"Host": host}).status_code == 200
