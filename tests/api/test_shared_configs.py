"""Shared setups (issue 45) over REST: share a config's rules by link, read it as another
user, revoke it; results only when the owner shows them; nobody shares another's config."""

from __future__ import annotations

import secrets
import uuid
from decimal import Decimal

import pytest
from eth_account import Account

from models import User
from models.base import utcnow
from models.copying import INTENT_FILLED, CopyIntent, CopyPosition, SharedConfig
from services.identity import auth
from tests.api.test_configs import create, decode

RULES = {"sizing_mode": "fixed_usdc", "fixed_usdc": "5", "min_price": "0.1",
         "max_price": "0.9", "daily_budget_usdc": "40", "copy_sells": False,
         "exclude_keywords": ["election"], "max_consecutive_failures": 3}


@pytest.fixture
def whale(venue_control) -> tuple[str, dict]:
    """A trader to copy, and a market with a book to mark positions on."""
    address = Account.create().address.lower()
    market = venue_control.add_market(f"shr-{uuid.uuid4().hex[:8]}", liquidity=True,
                                      fair_price="0.5", category="politics")
    return address, market


@pytest.fixture
def reader_headers(bound_db) -> dict[str, str]:
    """A second signed-in user: the one a link is sent to."""
    reader = User.create(email=f"{secrets.token_hex(6)}@example.com")
    return {"Authorization": f"Bearer {auth.issue_session(reader).token}"}


def shared_config(client, auth_headers, target: str) -> dict:
    return create(client, auth_headers, target, **RULES)


def test_a_second_user_reads_the_rules_and_no_more(client, auth_headers, reader_headers,
                                                   whale, user):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    answer = client.post(f"/api/configs/{config['id']}/share", headers=auth_headers)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    link = decode(answer)
    assert link["show_results"] is False and link["config_id"] == config["id"]
    assert link["url"].endswith(f"/dashboard/shared/{link['token']}")
    assert len(link["token"]) >= 43
    # Only the token's hash is kept.
    row = SharedConfig.get(SharedConfig.config == config["id"])
    assert link["token"] not in row.token_hash

    read = client.get(f"/api/shared-configs/{link['token']}", headers=reader_headers)
    assert read.status_code == 200, read.get_data(as_text=True)
    shown = decode(read)
    assert shown["target_address"] == target and shown["results"] is None
    rules = shown["rules"]
    assert rules["sizing_mode"] == "fixed_usdc" and rules["fixed_usdc"] == "5"
    assert rules["copy_sells"] is False and rules["exclude_keywords"] == ["election"]
    assert rules["max_position_usdc"] == "100" and rules["blocked_categories"] == ["sports"]
    assert rules["max_consecutive_failures"] == 3 and rules["stop_loss_bps"] == 2000
    # The owner's label, mode, wallet and account are not in it.
    assert "target_name" not in rules and "paper_trading" not in rules
    text = read.get_data(as_text=True)
    assert user.email not in text and str(user.id) not in text and config["id"] not in text
    assert "whale" not in text

    # The rules go to a preview as they are: the reader's own config of the same setup.
    mine = client.post("/api/configs/preview", headers=reader_headers,
                       json={"target_address": shown["target_address"], **rules})
    assert mine.status_code == 200, mine.get_data(as_text=True)
    assert decode(mine)["config"]["fixed_usdc"] == "5"
    assert decode(mine)["mode"] == "paper"


def test_the_link_follows_edits_and_revoking_ends_it(client, auth_headers, reader_headers,
                                                     whale):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    token = decode(client.post(f"/api/configs/{config['id']}/share", json={},
                               headers=auth_headers))["token"]
    client.put(f"/api/configs/{config['id']}", json={"daily_budget_usdc": "25"},
               headers=auth_headers)
    shown = decode(client.get(f"/api/shared-configs/{token}", headers=reader_headers))
    assert shown["rules"]["daily_budget_usdc"] == "25"

    revoked = client.delete(f"/api/configs/{config['id']}/share", headers=auth_headers)
    assert revoked.status_code == 204
    gone = client.get(f"/api/shared-configs/{token}", headers=reader_headers)
    assert gone.status_code == 404 and decode(gone)["code"] == "not_found"
    # Revoking what is already revoked is done, not an error.
    assert client.delete(f"/api/configs/{config['id']}/share",
                         headers=auth_headers).status_code == 204


def test_sharing_again_rotates_the_link(client, auth_headers, reader_headers, whale):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    first = decode(client.post(f"/api/configs/{config['id']}/share", headers=auth_headers))
    second = decode(client.post(f"/api/configs/{config['id']}/share", headers=auth_headers))
    assert first["token"] != second["token"]
    assert client.get(f"/api/shared-configs/{first['token']}",
                      headers=reader_headers).status_code == 404
    assert client.get(f"/api/shared-configs/{second['token']}",
                      headers=reader_headers).status_code == 200


def test_deleting_the_config_ends_its_link(client, auth_headers, reader_headers, whale):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    token = decode(client.post(f"/api/configs/{config['id']}/share",
                               headers=auth_headers))["token"]
    assert client.delete(f"/api/configs/{config['id']}", headers=auth_headers).status_code == 204
    assert client.get(f"/api/shared-configs/{token}", headers=reader_headers).status_code == 404


def test_results_only_when_the_owner_shows_them(client, auth_headers, reader_headers, whale,
                                                user):
    target, market = whale
    config = shared_config(client, auth_headers, target)
    token_id = market["token_ids"][0]
    CopyIntent.create(config=config["id"], user_id=user.id, target_trade_key="t1:BUY",
        target_address=target, token_id=token_id, status=INTENT_FILLED, side="BUY",
        size=Decimal(10), filled_size=Decimal(10), filled_price=Decimal("0.4"),
        paper=True, seen_at=utcnow())
    CopyPosition.create(config=config["id"], paper=True, token_id=token_id,
                        market_slug=market["slug"], shares=Decimal(10), cost_usdc=Decimal(4),
                        realized_pnl=Decimal("1.5"))

    hidden = decode(client.post(f"/api/configs/{config['id']}/share",
                                json={"show_results": False}, headers=auth_headers))
    assert decode(client.get(f"/api/shared-configs/{hidden['token']}",
                             headers=reader_headers))["results"] is None

    shown = decode(client.post(f"/api/configs/{config['id']}/share",
                               json={"show_results": True}, headers=auth_headers))
    assert shown["show_results"] is True
    read = client.get(f"/api/shared-configs/{shown['token']}", headers=reader_headers)
    results = decode(read)["results"]
    owners = decode(client.get(f"/api/configs/{config['id']}/pnl", headers=auth_headers))
    assert Decimal(results["realized_pnl"]) == Decimal("1.5")
    assert Decimal(results["unrealized_pnl"]) == Decimal(owners["unrealized_pnl"])
    assert Decimal(results["total_pnl"]) == Decimal(owners["total_pnl"])
    assert results["copies"] == 1 and results["paper_trading"] is True
    assert set(results) == {"realized_pnl", "unrealized_pnl", "total_pnl", "copies",
                            "paper_trading", "since"}
    # Results are the config's figures, not the owner's positions or wallet.
    assert token_id not in read.get_data(as_text=True)


def test_another_user_cannot_share_or_revoke_my_config(client, auth_headers, reader_headers,
                                                       whale):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    token = decode(client.post(f"/api/configs/{config['id']}/share",
                               headers=auth_headers))["token"]
    for method in (client.post, client.delete):
        answer = method(f"/api/configs/{config['id']}/share", headers=reader_headers)
        assert answer.status_code == 404 and decode(answer)["code"] == "not_found"
    # My link still works.
    assert client.get(f"/api/shared-configs/{token}", headers=reader_headers).status_code == 200


def test_unknown_tokens_and_bad_bodies(client, auth_headers, reader_headers, whale):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    for token in ("nope", secrets.token_urlsafe(32), "x" * 300):
        answer = client.get(f"/api/shared-configs/{token}", headers=reader_headers)
        assert answer.status_code == 404 and decode(answer)["code"] == "not_found"
    bad = client.post(f"/api/configs/{config['id']}/share", json={"show_results": "maybe"},
                      headers=auth_headers)
    assert bad.status_code == 400 and decode(bad)["code"] == "validation_failed"
    assert "show_results" in bad.get_data(as_text=True)
    assert client.get(f"/api/shared-configs/{secrets.token_urlsafe(32)}").status_code == 401


def test_scopes(client, auth_headers, whale, api_key):
    target, _ = whale
    config = shared_config(client, auth_headers, target)
    reader = {"Authorization": f"Bearer {api_key('read:account')}"}
    refused = client.post(f"/api/configs/{config['id']}/share", headers=reader)
    assert refused.status_code == 403 and decode(refused)["code"] == "scope_required"
    writer = {"Authorization": f"Bearer {api_key('trade:execute')}"}
    token = decode(client.post(f"/api/configs/{config['id']}/share", headers=writer))["token"]
    assert client.get(f"/api/shared-configs/{token}", headers=reader).status_code == 403
    markets = {"Authorization": f"Bearer {api_key('read:markets')}"}
    assert client.get(f"/api/shared-configs/{token}", headers=markets).status_code == 200
