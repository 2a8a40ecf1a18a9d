"""Every example the docs show (docs/examples/, included into the pages) runs here as a user
would run it: the curl calls in a shell against the app on a real HTTP server over the
sandbox venue, the MCP clients with the official SDK (a key; OAuth), the agent configs' URL
and headers, and the webhook receivers (Python and Node) as child processes checking real
signatures.

One database (SQLite): the examples are about the surfaces, not the storage."""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from eth_account import Account

from models import User
from tests.api.oauth_flow import csrf_from, page_csrf
from tests.api.test_wallets import worker  # noqa: F401 - the fixture
from tests.conftest import DEADLINE, free_port
from tests.mcp_server.conftest import live_server  # noqa: F401 - the fixture

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


def run(example: str, **env: str) -> Any:
    """Run ``docs/examples/<example>`` (sh, python or node by its suffix); its JSON answer."""
    path = EXAMPLES / example
    program = {".sh": ["sh"], ".py": [sys.executable], ".mjs": ["node"]}[path.suffix]
    done = subprocess.run([*program, str(path)], env={**os.environ, **env}, cwd=EXAMPLES,
                          capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, f"{example}: {done.stdout}\n{done.stderr}"
    return json.loads(done.stdout) if path.suffix == ".sh" else done.stdout


def logged_code(caplog: pytest.LogCaptureFixture, email: str) -> str:
    """The code a laptop user reads in the terminal (no SMTP_URL: it is logged)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        for record in caplog.records:
            found = re.search(rf"(?:sign-in|confirmation) code for {re.escape(email)}"
                              r"(?:, for [^:\n]+)?: (\d{6})", record.getMessage())
            if found:
                return found.group(1)
        time.sleep(0.05)
    raise AssertionError(f"no sign-in code logged for {email}")


@pytest.fixture
def signed_in(live_server, set_settings, caplog) -> dict[str, str]:  # noqa: F811
    """The REST walkthrough's first half: a code, a session, a key (the examples' own)."""
    set_settings(smtp_url=None)  # a laptop run: the code is in the log
    caplog.set_level(logging.WARNING, logger="services.identity.auth")
    email = f"{secrets.token_hex(5)}@example.com"
    env = {"COPYTRADE_URL": live_server, "EMAIL": email}
    assert run("rest/request-code.sh", **env)["status"] == "sent"
    session = run("rest/verify-code.sh", **env, CODE=logged_code(caplog, email))
    assert session["token_type"] == "Bearer" and session["user"]["email"] == email
    key = run("rest/create-key.sh", **env, SESSION=session["token"])
    assert key["secret"].startswith("svck_live_") and "trade:execute" in key["scopes"]
    return {**env, "SESSION": session["token"], "COPYTRADE_KEY": key["secret"]}


def test_the_rest_examples_sign_in_mint_a_key_order_and_copy(
        signed_in, make_trader, market, venue_control):
    me = make_trader(user=User.get(User.email == signed_in["EMAIL"]))
    title = httpx.get(f"{signed_in['COPYTRADE_URL']}/api/markets/{market.slug}", headers={
        "Authorization": f"Bearer {signed_in['COPYTRADE_KEY']}"}).json()["title"]
    word = max(title.split(), key=len)  # the test market's own word ("Will t-1a2b happen?")
    found = run("rest/list-markets.sh", **signed_in, QUERY=word)
    assert market.yes in {o["token_id"] for m in found for o in m["outcomes"]}, title
    quote = run("rest/preview-order.sh", **signed_in, TOKEN_ID=market.yes)
    assert quote["confirmation"].startswith("Buy 10.00 shares")
    placed = run("rest/place-order.sh", **signed_in, TOKEN_ID=market.yes,
                 PREVIEW_ID=quote["preview_id"])
    assert placed["status"] == "filled" and placed["filled_size"] == "10"
    sent = [e for e in venue_control.received_orders() if e["order_id"] == placed["order_id"]]
    assert len(sent) == 1 and sent[0]["body"]["order"]["maker"] == me.maker
    spend = run("rest/preview-spend.sh", **signed_in, TOKEN_ID=market.yes)
    assert spend["amount"] == "5" and "spending at most 5.00 pUSD" in spend["confirmation"]
    bought = run("rest/place-spend.sh", **signed_in, TOKEN_ID=market.yes,
                 PREVIEW_ID=spend["preview_id"])
    assert bought["status"] == "filled" and bought["filled_size"] == spend["estimated_shares"]

    target = Account.create().address.lower()
    venue_control.call("POST", "/trades", {"wallet": target, "token_id": market.yes,
                                           "side": "BUY", "size": "100", "price": "0.5"},
                       expect=201)
    asked = run("rest/copyability.sh", **signed_in, TARGET=target)
    assert asked["location"].startswith(f"/api/traders/{target}/copyability/")
    preview = run("rest/preview-config.sh", **signed_in, TARGET=target)
    assert preview["target"]["address"].lower() == target
    config = run("rest/create-config.sh", **signed_in, CONFIG_PREVIEW_ID=preview["preview_id"])
    assert config["paper_trading"] is True and config["size_multiplier"] == "0.5"
    started = run("rest/start-config.sh", **signed_in, CONFIG_ID=config["id"])
    assert started["is_active"] is True


def test_the_python_mcp_example_runs_with_the_official_sdk(api_key, user,
                                                           live_server):  # noqa: F811
    out = run("mcp/client.py", COPYTRADE_URL=live_server,
              COPYTRADE_KEY=api_key("read:account", "read:markets"))
    tools = out.splitlines()[0]
    assert tools.startswith("tools: ") and "get_user_summary" in tools
    assert str(user.id) in out  # the summary the tool answered: this key's user


def _agent_server(name: str, base: str) -> dict[str, Any]:
    """The config file's one server, its URL pointed at ``base`` and ${VAR}s expanded."""
    [server] = json.loads((EXAMPLES / "mcp" / name).read_text())["mcpServers"].values()
    assert server["url"].startswith("http://127.0.0.1:8000/")  # what `make run` serves
    return {**server, "url": server["url"].replace("http://127.0.0.1:8000", base)}


def test_the_agent_configs_reach_the_tools_with_a_key_and_find_oauth_without(
        api_key, live_server, set_settings):  # noqa: F811
    set_settings(base_url=live_server)  # as `make run` serves at its BASE_URL
    with_key = _agent_server("agent-key.json", live_server)
    key = api_key("read:account")
    headers = {name: value.replace("${COPYTRADE_KEY}", key)
               for name, value in with_key["headers"].items()}
    listed = httpx.post(with_key["url"], headers={
        **headers, "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert listed.status_code == 200, listed.text
    assert "get_user_summary" in listed.text

    # Without headers an OAuth client is told where the authorization server is: 401 naming
    # the resource's metadata, which names the server, which offers PKCE and registration.
    oauth = _agent_server("agent-oauth.json", live_server)
    assert "headers" not in oauth
    refused = httpx.post(oauth["url"], json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401
    metadata_url = re.search(r'resource_metadata="([^"]+)"',
                             refused.headers["WWW-Authenticate"]).group(1)
    resource = httpx.get(metadata_url).json()
    assert resource["resource"] == oauth["url"]
    [issuer] = resource["authorization_servers"]
    server = httpx.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    assert "S256" in server["code_challenge_methods_supported"]
    assert server["registration_endpoint"].startswith(issuer)


def _sign_in_and_allow(base: str, url: str, caplog: pytest.LogCaptureFixture) -> str:
    """What the user does in the browser: sign in (the code from the log), allow the
    recommended scopes; the address the browser is sent back to."""
    email = f"{secrets.token_hex(5)}@example.com"
    with httpx.Client(base_url=base, follow_redirects=False, timeout=DEADLINE) as browser:
        login = browser.get(url).headers["location"]
        [target] = parse_qs(urlsplit(login).query)["next"]
        csrf = page_csrf(browser.get(login).text)
        browser.post("/dashboard/login", data={"csrf_token": csrf, "email": email,
                                               "next": target}).raise_for_status()
        verified = browser.post("/dashboard/login/verify", data={
            "csrf_token": csrf, "email": email, "code": logged_code(caplog, email),
            "next": target})
        consent = urljoin(base, verified.headers["location"])
        page = browser.get(consent)
        allowed = browser.post(consent, data={
            "csrf_token": csrf_from(page.text), "decision": "approve",
            "approved_scope": ["read:account", "read:markets"]})
        assert allowed.status_code == 302, allowed.text
        return allowed.headers["location"]


def test_the_python_oauth_example_signs_in_through_the_browser_steps(
        live_server, set_settings, caplog):  # noqa: F811
    set_settings(base_url=live_server, smtp_url=None)
    caplog.set_level(logging.WARNING, logger="services.identity.auth")
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "mcp" / "client_oauth.py")], text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "COPYTRADE_URL": live_server})
    try:
        shown = process.stdout.readline()
        assert shown.startswith("Open this address to sign in: "), process.stderr.read()
        back = _sign_in_and_allow(live_server, shown.split(": ", 1)[1].strip(), caplog)
        assert back.startswith("http://127.0.0.1:8765/callback?code=")
        out, err = process.communicate(back + "\n", timeout=DEADLINE)
    finally:
        process.kill()
    assert process.returncode == 0, err
    tools = out.rsplit("tools: ", 1)[1]
    assert "get_user_summary" in tools and "place_market_order" not in tools  # as allowed


def _listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def receivers() -> Iterator[list]:
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


@pytest.mark.parametrize("receiver", ["webhooks/receiver.py", "webhooks/receiver.mjs"])
def test_a_local_webhook_receiver_verifies_our_signature(
        signed_in, settings, receivers, receiver):
    # The sandbox venue accepts a receiver on this machine without any setting (issue 44).
    assert settings.venue.name == "sandbox"
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    channel = run("rest/add-webhook.sh", **signed_in, WEBHOOK_URL=url)
    assert channel["secret"].startswith("whsec_")
    program = sys.executable if receiver.endswith(".py") else "node"
    process = subprocess.Popen([program, str(EXAMPLES / receiver)], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={
                                   **os.environ, "PORT": str(port),
                                   "WEBHOOK_SECRET": channel["secret"]})
    receivers.append(process)
    _listening(port, process)

    forged = httpx.post(url, content=b'{"type": "copy.filled"}', headers={
        "webhook-id": "msg_1", "webhook-timestamp": str(int(time.time())),
        "webhook-signature": "v1,Zm9yZ2Vk"})
    assert forged.status_code == 400
    tested = run("rest/test-webhook.sh", **signed_in, CHANNEL_ID=channel["id"])
    assert tested["status"] == "sent" and tested["status_code"] == 204
    seen = json.loads(process.stdout.readline())
    assert seen["type"] == "notification.test" and seen["id"] not in ("", "msg_1")


def _run_answering(example: str, answer: Any, env: dict[str, str]) -> list[str]:
    """Run an interactive example; ``answer(shown)`` is what the person types. Its lines."""
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / example)], text=True, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env})
    try:
        shown = [process.stdout.readline()]
        if example.endswith("code.py"):
            shown.append(process.stdout.readline())
        out, err = process.communicate(answer(shown) + "\n", timeout=DEADLINE)
    finally:
        process.kill()
    assert process.returncode == 0, err
    return [*shown, *out.splitlines()]


def _last_json(lines: list[str]) -> Any:
    """The JSON an interactive example printed last (after its prompt: no echo in a pipe)."""
    last = lines[-1]
    return json.loads(last[last.index("{"):])


@pytest.mark.parametrize(("example", "mode"), [
    ("mcp/confirm_form.py", "auto"), ("mcp/confirm_form.py", "legacy"),
    ("mcp/confirm_code.py", "auto")])
def test_the_confirmation_examples_place_an_order_a_person_confirmed(
        example, mode, api_key, live_server, make_trader, market, venue_control):  # noqa: F811
    # legacy: a 2025-11-25 session, asked with a server request on the call's stream.
    trader = make_trader()
    env = {"COPYTRADE_URL": live_server, "TOKEN_ID": market.yes, "MCP_MODE": mode,
           "COPYTRADE_KEY": api_key("trade:execute", owner=trader.user)}

    def answer(shown: list[str]) -> str:
        if example.endswith("form.py"):
            return "yes"
        return shown[1].split(": ", 1)[1].strip()  # the person types the code they read

    lines = _run_answering(example, answer, env)
    assert lines[0].startswith("Buy 10.00 shares of")  # the preview's words, to a person
    placed = _last_json(lines)
    assert placed["status"] == "filled"
    sent = [e for e in venue_control.received_orders() if e["order_id"] == placed["order_id"]]
    assert len(sent) == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_form_example_sends_nothing_when_the_person_says_no(
        mode, api_key, live_server, make_trader, market, venue_control):  # noqa: F811
    trader = make_trader()
    env = {"COPYTRADE_URL": live_server, "TOKEN_ID": market.yes, "MCP_MODE": mode,
           "COPYTRADE_KEY": api_key("trade:execute", owner=trader.user)}
    lines = _run_answering("mcp/confirm_form.py", lambda shown: "no", env)
    answered = _last_json(lines)
    assert answered["code"] == "validation_failed" and "declined" in answered["error"]
    assert not [e for e in venue_control.received_orders()
                if trader.maker.lower() in str(e).lower()]


def test_the_readonly_agent_config_lists_read_tools_only(api_key, live_server):  # noqa: F811
    server = _agent_server("agent-readonly.json", live_server)
    key = api_key("read:account", "trade:execute")
    headers = {name: value.replace("${COPYTRADE_KEY}", key)
               for name, value in server["headers"].items()}
    listed = httpx.post(server["url"], headers={
        **headers, "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    names = {tool["name"] for tool in listed.json()["result"]["tools"]}
    assert "get_user_summary" in names and "place_market_order" not in names


def test_the_task_example_follows_an_order_to_its_end(
        api_key, live_server, make_trader, market, venue_control):  # noqa: F811
    from services.identity import agent_confirmations, keys
    from tests.mcp_server.conftest import session_of

    trader = make_trader()
    key = api_key("trade:execute", "trade:cancel", owner=trader.user)
    agent_confirmations.set_required(session_of(trader.user), "api_key",
                                     keys.resolve(key).credential_id, False)
    out = run("mcp/task.py", COPYTRADE_URL=live_server, COPYTRADE_KEY=key,
              TOKEN_ID=market.yes).splitlines()
    assert out[:3] == ["created: working resting on the book",
                       "now: working resting on the book", "after cancel: cancelled"]
    placed = json.loads(out[3])
    assert placed["status"] == "accepted"
    assert venue_control.received_orders()[-1]["order_id"] == placed["order_id"]


def test_the_task_example_on_2026_uses_the_tasks_extension(
        api_key, live_server, make_trader, market, venue_control):  # noqa: F811
    from models.trading import Order
    from services.identity import agent_confirmations, keys
    from tests.mcp_server.conftest import session_of

    trader = make_trader()
    key = api_key("trade:execute", "trade:cancel", owner=trader.user)
    agent_confirmations.set_required(session_of(trader.user), "api_key",
                                     keys.resolve(key).credential_id, False)
    out = run("mcp/task.py", COPYTRADE_URL=live_server, COPYTRADE_KEY=key,
              TOKEN_ID=market.yes, MCP_VERSION="2026-07-28").splitlines()
    assert out[:3] == ["created: working resting on the book",
                       "now: working resting on the book", "after cancel: cancelled"]
    shown = json.loads(out[3])
    assert shown["pollIntervalMs"] > 0
    [order] = Order.select().where(Order.user == trader.user.id)
    assert order.status == "cancelled" and shown["taskId"]
    assert venue_control.received_orders()[-1]["order_id"] == order.order_hash


def test_the_key_switch_examples_need_a_step_up_to_stop_asking(
        signed_in, caplog):
    from models import ApiKey
    from services.identity import keys

    key_id = str(keys.resolve(signed_in["COPYTRADE_KEY"]).credential_id)
    url = f"{signed_in['COPYTRADE_URL']}/api/keys/{key_id}"
    bare = httpx.patch(url, json={"confirm_money_tools": False},
                       headers={"Authorization": f"Bearer {signed_in['SESSION']}"})
    assert bare.status_code == 403 and bare.json()["code"] == "scope_required"
    caplog.clear()  # the sign-in code is logged too: read the step-up's
    assert run("rest/request-step-up.sh", **signed_in)["status"] == "sent"
    step_up = run("rest/step-up.sh", **signed_in,
                  CODE=logged_code(caplog, signed_in["EMAIL"]))
    off = run("rest/stop-asking.sh", **signed_in, KEY_ID=key_id,
              STEP_UP=step_up["step_up_token"])
    assert off["id"] == key_id and off["confirm_money_tools"] is False
    assert ApiKey.get_by_id(key_id).confirm_money_tools is False
    on = run("rest/ask-again.sh", **signed_in, KEY_ID=key_id)
    assert on["confirm_money_tools"] is True
    assert ApiKey.get_by_id(key_id).confirm_money_tools is True


def test_the_share_examples_share_a_setup_another_user_reads_then_revoke_it(
        signed_in, api_key):
    target = Account.create().address.lower()
    preview = run("rest/preview-config.sh", **signed_in, TARGET=target)
    config = run("rest/create-config.sh", **signed_in, CONFIG_PREVIEW_ID=preview["preview_id"])
    link = run("rest/share-config.sh", **signed_in, CONFIG_ID=config["id"])
    assert link["url"].endswith(f"/dashboard/shared/{link['token']}")
    assert link["show_results"] is False
    # Another user reads it with a key of their own.
    reader = {**signed_in, "COPYTRADE_KEY": api_key("read:markets")}
    shown = run("rest/read-shared-config.sh", **reader, SHARED_TOKEN=link["token"])
    assert shown["target_address"] == target and shown["results"] is None
    assert shown["rules"]["size_multiplier"] == "0.5"
    assert shown["rules"]["max_position_usdc"] == "100"
    assert run("rest/revoke-share.sh", **signed_in, CONFIG_ID=config["id"]) == 204
    gone = httpx.get(f"{signed_in['COPYTRADE_URL']}/api/shared-configs/{link['token']}",
                     headers={"Authorization": f"Bearer {reader['COPYTRADE_KEY']}"})
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"


def _followed(example: str, env: dict[str, str], wanted: str = "confirmed") -> dict:
    """Run a follow-up example until its answer's status is ``wanted`` (or a final one)."""
    deadline = time.monotonic() + DEADLINE
    while (answer := run(example, **env))["status"] not in (wanted, "failed") \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    return answer


def test_the_claim_and_withdrawal_examples_move_money_once(
        signed_in, caplog, make_trader, make_sandbox_market, venue_control,
        worker):  # noqa: F811 - the fixture
    """The wallet guide's curl files: a claim of a position in a market the sandbox resolved,
    then a withdrawal with its step-up, each followed to confirmed and sent once though the
    withdrawal's call is repeated."""
    trader = make_trader("4", user=User.get(User.email == signed_in["EMAIL"]))
    maker = trader.wallet.funder_address
    market = make_sandbox_market()
    venue_control.grant(maker, market.yes, "9")
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    claimed = run("rest/claim.sh", **signed_in)
    [submitted] = claimed["claims"]
    assert claimed["expected_payout"] == "9" and submitted["condition_id"] == market.condition_id
    done = _followed("rest/follow-claim.sh", {**signed_in, "CLAIM_ID": submitted["id"]})
    assert done["status"] == "confirmed", done
    assert venue_control.balances(maker)["pusd"] == "13"
    assert run("rest/claim.sh", **signed_in)["claims"] == []  # claimed once

    caplog.clear()  # the sign-in code is logged too: read the step-up's
    assert run("rest/request-step-up.sh", **signed_in)["status"] == "sent"
    step_up = run("rest/step-up.sh", **signed_in, CODE=logged_code(caplog, signed_in["EMAIL"]))
    to = Account.create().address
    env = {**signed_in, "STEP_UP": step_up["step_up_token"], "TO_ADDRESS": to,
           "WITHDRAWAL_KEY": secrets.token_hex(16)}
    sent, again = run("rest/withdraw.sh", **env), run("rest/withdraw.sh", **env)
    assert again["withdrawal_id"] == sent["withdrawal_id"]  # the retry answers the first
    followed = _followed("rest/follow-withdrawal.sh",
                         {**signed_in, "WITHDRAWAL_ID": sent["withdrawal_id"]})
    assert followed["status"] == "confirmed" and followed["amount"] == "12.5", followed
    assert venue_control.balances(maker)["pusd"] == "0.5"
    assert venue_control.balances(to)["pusd"] == "12.5"
