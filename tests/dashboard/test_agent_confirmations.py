"""An unattended agent's order approved on the dashboard, and the per-key switch (issue 47)."""

from __future__ import annotations

import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mcp import Client

from models import ApiKey, User
from models.agents import AgentConfirmation
from models.oauth import Approval
from tests.api.test_sessions import confirmation_code
from tests.dashboard.conftest import approved_app, screenshot, sign_in
from tests.mcp_server.conftest import run_client as run_in_loop
from tests.trading_support import onboarded_trader


def run_client(*args: Any) -> Any:
    """The SDK client on its own thread: Playwright's sync API holds this one's event loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run_in_loop, *args).result()


def test_a_person_approves_an_agents_order_on_the_dashboard(page, inbox, live_server, api_key,
                                                             venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "200", venue_control)
    market = venue_control.add_market(f"dash-confirm-{secrets.token_hex(4)}", liquidity=True,
                                      fair_price="0.5", category="politics")
    token = api_key("trade:execute", owner=user)
    url = f"{live_server}/api/mcp"
    order = {"token_id": market["token_ids"][0], "side": "buy", "size": "10",
             "order_type": "market"}

    async def ask(client: Client):
        quote = await client.call_tool("preview_market_order", order)
        args = {**order, "preview_id": quote.structured_content["preview_id"],
                "idempotency_key": str(uuid.uuid4())}
        return args, await client.call_tool("place_market_order", args)

    args, asked = run_client(url, token, "auto", ask)
    assert asked.is_error and asked.structured_content["code"] == "validation_failed"
    summary = asked.structured_content["confirmation"]["summary"]

    page.goto("/dashboard/keys")
    card = page.locator("#agent-confirmations")
    item = card.locator("li", has_text=summary)
    item.wait_for()
    assert "API key “test key”" in item.inner_text()
    screenshot(page, "agent-confirmations")
    item.locator("button:has-text('Approve')").click()
    page.wait_for_selector("#agent-confirmations:has-text('Nothing waiting')")
    assert AgentConfirmation.get(AgentConfirmation.user_id == user.id).status == "approved"

    async def retry(client: Client):  # the agent's same call, without any code
        return await client.call_tool("place_market_order", args)

    done = run_client(url, token, "auto", retry)
    assert not done.is_error and done.structured_content["status"] == "filled"
    assert AgentConfirmation.get(AgentConfirmation.user_id == user.id).status == "used"

    # The owner lets this key act alone: the switch on its row, past a fresh code (as
    # PATCH /api/keys/{id} asks), sent by the first press; until it is typed, nothing changes.
    row = page.locator("#keys tr", has_text="test key")
    row.locator("button:has-text('Stop asking')").click()  # confirm: yes
    code_field = page.locator("#keys tr:has-text('test key') input[name=step_up_code]")
    code_field.wait_for()
    assert page.locator("#keys [data-code-where=mail]").count() == 1
    assert ApiKey.get(ApiKey.user == user.id).confirm_money_tools is True
    code_field.fill(confirmation_code(inbox, email))
    page.locator("#keys tr:has-text('test key') button:has-text('Stop asking')").click()
    page.wait_for_selector("#keys tr:has-text('test key') button:has-text('Ask me first')")
    assert ApiKey.get(ApiKey.user == user.id).confirm_money_tools is False


def test_an_apps_stop_asking_switch_needs_a_fresh_code(page, inbox, app):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    client = approved_app(user, "Trading agent", ["read:account", "trade:execute"])
    approval = Approval.get(Approval.client == client.id)

    page.goto("/dashboard/apps")
    row = page.locator("#apps tr", has_text="Trading agent")
    row.locator("button:has-text('Stop asking')").click()  # confirm: yes
    code_field = page.locator("#apps tr:has-text('Trading agent') input[name=step_up_code]")
    code_field.wait_for()
    assert Approval.get_by_id(approval.id).confirm_money_tools is True
    # The code form wraps inside its cell: the table still fits its card (wide screens keep
    # cells on one line, and the form's words once widened it past the card).
    page.set_viewport_size({"width": 1280, "height": 900})
    widths = page.evaluate("() => { const t = document.querySelector('#apps table');"
                           " return [t.scrollWidth, t.parentElement.clientWidth]; }")
    assert widths[0] <= widths[1], widths
    code_field.fill("000000" if confirmation_code(inbox, email) != "000000" else "111111")
    page.locator("#apps tr:has-text('Trading agent') button:has-text('Stop asking')").click()
    page.locator("#apps-errors .alert").wait_for()  # a wrong code switches nothing
    assert Approval.get_by_id(approval.id).confirm_money_tools is True

    page.goto("/dashboard/apps")
    row.locator("button:has-text('Stop asking')").click()  # confirm: yes
    code_field.fill(confirmation_code(inbox, email))
    page.locator("#apps tr:has-text('Trading agent') button:has-text('Stop asking')").click()
    page.wait_for_selector("#apps tr:has-text('Trading agent') button:has-text('Ask me first')")
    assert Approval.get_by_id(approval.id).confirm_money_tools is False
    # Asking again needs no code.
    row.locator("button:has-text('Ask me first')").click()
    page.wait_for_selector("#apps tr:has-text('Trading agent') button:has-text('Stop asking')")
    assert Approval.get_by_id(approval.id).confirm_money_tools is True


def test_a_declined_call_leaves_the_list_and_is_refused(page, inbox, live_server, api_key):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    token = api_key("wallet:write", owner=user)

    async def claim(client: Client):
        return await client.call_tool("claim_positions",
                                      {"idempotency_key": str(uuid.uuid4())})

    url = f"{live_server}/api/mcp"
    asked = run_client(url, token, "auto", claim)
    code = asked.structured_content["confirmation"]["code"]
    page.goto("/dashboard/keys")
    item = page.locator("#agent-confirmations li", has_text="Claim every resolved winning")
    item.locator("button:has-text('Decline')").click()
    page.wait_for_selector("#agent-confirmations:has-text('Nothing waiting')")

    async def with_code(client: Client):
        return await client.call_tool("claim_positions", {
            "idempotency_key": str(uuid.uuid4()), "confirmation_code": code})

    refused = run_client(url, token, "auto", with_code)
    assert refused.is_error and "declined" in refused.structured_content["error"]
    assert AgentConfirmation.get(AgentConfirmation.user_id == user.id).status == "declined"
