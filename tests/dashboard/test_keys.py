"""API keys at /dashboard/keys in a real browser: mint, the secret shown once, revoke."""

from __future__ import annotations

import httpx

from models import User
from tests.dashboard.conftest import screenshot, sign_in


def test_create_a_key_see_its_secret_once_use_it_and_revoke_it(page, inbox, live_server):
    sign_in(page, inbox)
    page.goto("/dashboard/keys")
    # Plain-words hints and the least-privilege advice of SPEC rule 11.
    assert "A monitoring agent needs no" in page.content()
    assert page.locator("label.scope").count() == 7

    # No scope ticked: refused inline with the API's code, naming the field.
    page.fill("input[name=name]", "monitoring agent")
    page.click("button:has-text('Create key')")
    alert = page.locator("#key-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "validation_failed"
    assert alert.locator("[data-field=scopes]").count() == 1

    page.check("input[value='read:account']")
    page.check("input[value='read:positions']")
    page.select_option("select[name=expires_in_days]", "30")
    page.click("button:has-text('Create key')")
    secret_box = page.locator("#new-key-secret")
    secret_box.wait_for()
    assert page.locator("#key-errors .alert").count() == 0
    secret = secret_box.inner_text().strip()
    assert secret.startswith("svck_live_")
    page.click("[data-copy='#new-key-secret']")
    page.wait_for_selector("[data-copy='#new-key-secret']:has-text('Copied')")
    row = page.locator("tr", has_text="monitoring agent")
    assert "read:account" in row.inner_text() and "active" in row.inner_text()
    screenshot(page, "keys-created")

    # The key works against the API with exactly its scopes.
    with httpx.Client(base_url=live_server) as http:
        auth = {"Authorization": f"Bearer {secret}"}
        assert http.get("/api/users/me", headers=auth).status_code == 200
        assert http.get("/api/trades", headers=auth).json()["code"] == "scope_required"

    # Shown once: a reload lists the key by prefix, never the secret.
    page.reload()
    assert secret not in page.content()
    assert secret[:16] in page.content()
    screenshot(page, "keys")
    screenshot(page, "keys-phone", phone=True)

    page.click("tr:has-text('monitoring agent') button:has-text('Revoke')")  # confirm: yes
    page.wait_for_selector("tr:has-text('monitoring agent') .badge:has-text('revoked')")
    with httpx.Client(base_url=live_server) as http:
        answer = http.get("/api/users/me", headers={"Authorization": f"Bearer {secret}"})
        assert answer.status_code == 401 and answer.json()["code"] == "invalid_token"


def test_the_tier_key_quota_shows_its_code(page, inbox):
    email = sign_in(page, inbox)
    # new accounts start unlimited (self-hosted); the operator put this one on free
    User.update(tier="free").where(User.email == email).execute()
    page.goto("/dashboard/keys")
    for number in range(4):  # the free tier allows 3 active keys
        page.fill("input[name=name]", f"key {number}")
        page.check("input[value='read:markets']")
        page.click("button:has-text('Create key')")
        if number < 3:
            page.wait_for_selector(f"#new-key:has-text('key {number}')")
    alert = page.locator("#key-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "tier_limit_exceeded"
