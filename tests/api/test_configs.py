"""Copy-config REST: preview, create, read, edit, start/stop, status, PnL, decisions, helpers."""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from eth_account import Account

from models import User
from models.base import utcnow
from models.copying import ConfigPreview, CopyConfig


def decode(response):
    return json.loads(response.get_data(as_text=True), parse_float=Decimal)


@pytest.fixture
def whale(venue_control) -> tuple[str, dict]:
    """A target wallet with a few fills on a fresh politics market."""
    address = Account.create().address.lower()
    slug = f"cfg-{uuid.uuid4().hex[:8]}"
    market = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                      category="politics")
    for side, size in (("BUY", "100"), ("BUY", "60"), ("SELL", "40")):
        venue_control.call("POST", "/trades", {"wallet": address, "token_id":
                           market["token_ids"][0], "side": side, "size": size,
                           "price": "0.5"}, expect=201)
    return address, market


def body(target: str, **extra) -> dict:
    return {"target_address": target, "target_name": "whale", "size_multiplier": "0.5",
            "max_position_usdc": "100", "price_deviation_bps": 300,
            "blocked_categories": ["sports"], "take_profit_bps": 5000, "stop_loss_bps": 2000,
            **extra}


def preview(client, headers, target: str, **extra) -> dict:
    response = client.post("/api/configs/preview", json=body(target, **extra), headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return decode(response)


def create(client, headers, target: str, **extra) -> dict:
    shown = preview(client, headers, target, **extra)
    response = client.post("/api/configs", json={"preview_id": shown["preview_id"]},
                           headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)
    return decode(response)


def test_preview_summarises_the_target_and_the_config(client, auth_headers, whale):
    target, _ = whale
    shown = preview(client, auth_headers, target)
    assert shown["preview_id"] and shown["expires_at"]
    assert shown["mode"] == "paper"  # the user's first config for this target
    assert shown["target"]["recent_trades"] == 3
    assert shown["target"]["buys"] == 2 and shown["target"]["sells"] == 1
    assert shown["target"]["categories"] == [{"category": "Politics", "trades": 3}]
    assert Decimal(shown["target"]["typical_trade_usdc"]) == Decimal(30)
    assert shown["sizing"]["size_multiplier"] == "0.5"
    assert shown["guards"]["blocked_categories"] == ["sports"]


def test_create_read_edit_start_stop_delete(client, auth_headers, whale, redis_url):
    target, _ = whale
    config = create(client, auth_headers, target)
    assert config["is_active"] is False and config["paper_trading"] is True
    assert config["target_address"] == target and config["size_multiplier"] == "0.5"
    assert config["blocked_categories"] == ["sports"]
    cid = config["id"]
    assert [c["id"] for c in decode(client.get("/api/configs", headers=auth_headers))] == [cid]
    assert decode(client.get(f"/api/configs/{cid}", headers=auth_headers))["id"] == cid

    edited = client.put(f"/api/configs/{cid}", json={"size_multiplier": "2",
                                                     "stop_loss_bps": None},
                        headers=auth_headers)
    assert edited.status_code == 200
    assert decode(edited)["size_multiplier"] == "2" and decode(edited)["stop_loss_bps"] is None
    refused = client.put(f"/api/configs/{cid}", json={"target_address": target},
                         headers=auth_headers)
    assert refused.status_code == 400 and decode(refused)["code"] == "validation_failed"

    started = client.post(f"/api/configs/{cid}/start", headers=auth_headers)
    assert started.status_code == 200 and decode(started)["is_active"] is True
    status = decode(client.get(f"/api/configs/{cid}/status", headers=auth_headers))
    assert status["is_active"] is True and status["mode"] == "paper"
    assert status["fills_last_hour"] == 0 and status["last_error"] is None
    stopped = client.post(f"/api/configs/{cid}/stop", headers=auth_headers)
    assert stopped.status_code == 200 and decode(stopped)["is_active"] is False

    pnl = decode(client.get(f"/api/configs/{cid}/pnl", headers=auth_headers))
    assert pnl["total_pnl"] == "0" and pnl["positions"] == []
    trades = client.get(f"/api/configs/{cid}/trades?limit=10", headers=auth_headers)
    assert trades.status_code == 200 and decode(trades) == []
    assert trades.headers["X-Pagination-Limit"] == "10"
    assert trades.headers["X-Pagination-Has-Next"] == "false"

    assert client.delete(f"/api/configs/{cid}", headers=auth_headers).status_code == 204
    assert client.get(f"/api/configs/{cid}", headers=auth_headers).status_code == 404


def test_second_config_for_a_target_defaults_to_live(client, auth_headers, whale):
    target, _ = whale
    create(client, auth_headers, target)
    assert preview(client, auth_headers, target)["mode"] == "live"


@pytest.mark.parametrize(("field", "value"), [
    ("target_address", "0x123"),
    ("size_multiplier", "0"),
    ("size_multiplier", "101"),
    ("max_position_usdc", "-1"),
    ("price_deviation_bps", 10001),
    ("price_deviation_bps", -1),
    ("blocked_categories", ["astrology"]),
    ("take_profit_bps", 0),
    ("stop_loss_bps", -5),
])
def test_validation_names_the_field(client, auth_headers, whale, field, value):
    target, _ = whale
    response = client.post("/api/configs/preview", json=body(target, **{field: value}),
                           headers=auth_headers)
    assert response.status_code == 400
    error = decode(response)
    assert error["code"] == "validation_failed"
    assert field in error["fields"]


def test_create_needs_a_fresh_unused_matching_preview(client, auth_headers, user, whale):
    target, _ = whale
    missing = client.post("/api/configs", json=body(target), headers=auth_headers)
    assert missing.status_code == 400 and "preview_id" in decode(missing)["fields"]
    shown = preview(client, auth_headers, target)
    differs = client.post("/api/configs", json={"preview_id": shown["preview_id"],
                                                "size_multiplier": "3"},
                          headers=auth_headers)
    assert differs.status_code == 400 and "size_multiplier" in decode(differs)["fields"]
    ok = client.post("/api/configs", json={"preview_id": shown["preview_id"],
                                           "size_multiplier": "0.5"}, headers=auth_headers)
    assert ok.status_code == 201
    again = client.post("/api/configs", json={"preview_id": shown["preview_id"]},
                        headers=auth_headers)
    assert again.status_code == 400 and decode(again)["code"] == "validation_failed"
    old = preview(client, auth_headers, target)
    ConfigPreview.update(expires_at=utcnow() - timedelta(seconds=1)).where(
        ConfigPreview.id == old["preview_id"]).execute()
    expired = client.post("/api/configs", json={"preview_id": old["preview_id"]},
                          headers=auth_headers)
    assert expired.status_code == 400 and "preview_id" in decode(expired)["fields"]


def test_create_honours_idempotency_key(client, auth_headers, whale):
    target, _ = whale
    shown = preview(client, auth_headers, target)
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    first = client.post("/api/configs", json={"preview_id": shown["preview_id"]},
                        headers=headers)
    second = client.post("/api/configs", json={"preview_id": shown["preview_id"]},
                         headers=headers)
    assert first.status_code == second.status_code == 201
    assert decode(first)["id"] == decode(second)["id"]
    assert second.headers.get("Idempotent-Replay") == "true"
    assert CopyConfig.select().count() == 1


def test_tier_limit_on_active_configs(client, auth_headers, whale):
    target, _ = whale
    first = create(client, auth_headers, target)
    second = create(client, auth_headers, target)
    assert client.post(f"/api/configs/{first['id']}/start",
                       headers=auth_headers).status_code == 200
    refused = client.post(f"/api/configs/{second['id']}/start", headers=auth_headers)
    assert refused.status_code == 403 and decode(refused)["code"] == "tier_limit_exceeded"


def test_scopes(client, api_key, user, whale):
    target, _ = whale
    user.tier = "elite"  # four keys
    user.save()
    reader = {"Authorization": f"Bearer {api_key('read:account')}"}
    assert client.get("/api/configs", headers=reader).status_code == 200
    denied = client.post("/api/configs/preview", json=body(target), headers=reader)
    assert denied.status_code == 403 and decode(denied)["code"] == "scope_required"
    trader = {"Authorization": f"Bearer {api_key('trade:execute')}"}
    config = create(client, trader, target)
    assert client.get(f"/api/configs/{config['id']}/trades",
                      headers=trader).status_code == 403
    trades_reader = {"Authorization": f"Bearer {api_key('read:trades')}"}
    assert client.get(f"/api/configs/{config['id']}/trades",
                      headers=trades_reader).status_code == 200
    helper = client.get(f"/api/helpers/suggest-multiplier?target_address={target}&balance=600",
                        headers=reader)
    assert helper.status_code == 403
    markets = {"Authorization": f"Bearer {api_key('read:markets')}"}
    helper = client.get(f"/api/helpers/suggest-multiplier?target_address={target}&balance=600",
                        headers=markets)
    assert helper.status_code == 200


def test_suggest_multiplier_with_a_balance_override(client, auth_headers, whale):
    target, _ = whale
    response = client.get(
        f"/api/helpers/suggest-multiplier?target_address={target}&balance=600",
        headers=auth_headers)
    assert response.status_code == 200
    answer = decode(response)
    assert answer["balance_source"] == "override" and answer["balance"] == "600"
    assert answer["typical_trade_usdc"] == "30"
    assert Decimal(answer["size_multiplier"]) == Decimal(1)  # 5% of 600 = 30 = one trade
    assert "30" in answer["explanation"]
    assert CopyConfig.select().count() == 0  # read-only


def test_other_users_configs_are_not_found(client, auth_headers, whale, bound_db):
    from models import User

    target, _ = whale
    stranger = User.create(email="stranger@example.com")
    other = CopyConfig.create(user=stranger.id, target_address=target,
                              size_multiplier=Decimal(1), max_position_usdc=Decimal(1),
                              price_deviation_bps=0)
    for path in ("", "/status", "/pnl", "/trades"):
        assert client.get(f"/api/configs/{other.id}{path}",
                          headers=auth_headers).status_code == 404
    assert client.post(f"/api/configs/{other.id}/start",
                       headers=auth_headers).status_code == 404


def test_readiness_of_a_plain_eoa_the_operator_no_longer_allowlists(client, auth_headers,
                                                                      user) -> None:
    from services.platform import runtime
    from services.wallets import trading_accounts
    from tests.wallet_fixtures import allow_eoa_operator
    from venue.signing import OrderKey

    previous = runtime.runtime()
    key = OrderKey("0x" + secrets.token_hex(32))
    allow_eoa_operator(key.address)
    trading_accounts.connect(user, wallet_address=key.address, private_key=key.private_key)
    runtime.install(previous)  # the operator took it off TRADING_EOA_ALLOWLIST
    after = decode(client.get("/api/helpers/trading-readiness", headers=auth_headers))
    assert after["wallet_address"] == key.address and after["allowance_ok"] is False
    codes = {b["code"]: b for b in after["blockers"]}
    # The venue's own refusal, by name.
    assert "eoa_not_allowlisted" in codes and "onboarding_incomplete" not in codes
    blocker = codes["eoa_not_allowlisted"]
    assert "maker address not allowed, please use the deposit wallet flow" in blocker["message"]
    assert after["ready_to_trade"] is False


def test_trading_readiness_lists_blockers(client, auth_headers, user, venue_control):
    from services.wallets import wallets
    from tests.trading_support import run_onboarding

    before = decode(client.get("/api/helpers/trading-readiness", headers=auth_headers))
    assert before["ready_to_trade"] is False
    assert [b["code"] for b in before["blockers"]] == ["no_wallet"]
    wallet = wallets.get_or_create(user)  # a deposit wallet, its onboarding queued
    venue_control.fund(wallets.maker(wallet), "250", seen=False)
    early = decode(client.get("/api/helpers/trading-readiness", headers=auth_headers))
    assert early["wallet_address"] == wallets.maker(wallet) == wallet.funder_address
    codes = {b["code"] for b in early["blockers"]}
    assert {"onboarding_incomplete", "wallet_not_deployed"} <= codes, codes
    assert early["ready_to_trade"] is False and early["balance_usdc"] is None
    run_onboarding(wallet)  # the queued job, as the worker runs it
    after = decode(client.get("/api/helpers/trading-readiness", headers=auth_headers))
    # readiness has the CLOB re-read the balance: the fresh deposit shows
    assert after["balance_usdc"] == "250" and after["venue_credentials"] is True
    # The venue's allowances are read, not assumed: onboarding granted them.
    assert after["allowance_ok"] is True and after["missing_approvals"] == []
    assert after["ready_to_trade"] is True, after["blockers"]
    assert after["max_active_configs"] == 1 and after["active_configs"] == 0
    User.update(tier="self-hosted").where(User.id == user.id).execute()
    unlimited = decode(client.get("/api/helpers/trading-readiness", headers=auth_headers))
    assert unlimited["max_active_configs"] is None and unlimited["tier"] == "self-hosted"
    assert "tier_limit" not in [b["code"] for b in unlimited["blockers"]]


def test_rules_are_created_edited_and_shown(client, auth_headers, whale):
    target, _ = whale
    config = create(client, auth_headers, target, sizing_mode="proportional",
                    min_target_trade_usdc="10", copy_buys=True, copy_sells=False,
                    total_budget_usdc="200", max_drawdown_bps=1500,
                    include_keywords=["Election"], exit_hours_before_end="2")
    assert config["sizing_mode"] == "proportional" and config["copy_sells"] is False
    assert config["total_budget_usdc"] == "200" and config["max_drawdown_bps"] == 1500
    assert config["include_keywords"] == ["election"] and config["stopped_reason"] is None
    assert config["max_consecutive_failures"] == 5 and config["start_mode"] == "new_trades_only"
    cid = config["id"]
    edited = client.put(f"/api/configs/{cid}", json={"min_trade_usdc": "30",
                                                     "max_trade_usdc": "20"},
                        headers=auth_headers)
    assert edited.status_code == 400 and "min_trade_usdc" in decode(edited)["fields"]
    edited = client.put(f"/api/configs/{cid}", json={"max_trade_usdc": "20",
                                                     "include_keywords": []},
                        headers=auth_headers)
    assert edited.status_code == 200 and decode(edited)["include_keywords"] == []
    status = decode(client.get(f"/api/configs/{cid}/status", headers=auth_headers))
    assert status["breaker"]["state"] == "closed" and status["out_of_funds"] is False
    assert status["reasons_24h"] == {} and status["reasons_7d"] == {}


def test_entry_and_exit_rules_are_created_edited_and_shown(client, auth_headers, whale):
    target, _ = whale
    config = create(client, auth_headers, target)
    # A new config starts with today's entries and exits, and the default bands.
    assert (config["entry_policy"], config["sell_mode"], config["max_adds_count"],
            config["max_open_positions"], config["market_cooldown_seconds"]) == (
        "every_add", "mirror", None, None, None)
    # A single limit given without bands stays the limit for every price, as before;
    # without either, a new config starts with the default bands.
    assert config["price_deviation_bands"] == [] and config["price_deviation_bps"] == 300
    fresh = {k: v for k, v in body(target).items() if k != "price_deviation_bps"}
    shown = decode(client.post("/api/configs/preview", json=fresh, headers=auth_headers))
    assert shown["config"]["price_deviation_bps"] == 200
    assert shown["config"]["price_deviation_bands"][2] == {"max_price": "0.6",
                                                           "max_deviation_bps": 450}
    config = create(client, auth_headers, target, entry_policy="max_adds", max_adds_count=3,
                    sell_mode="same_percentage", max_open_positions=4,
                    market_cooldown_seconds=90,
                    price_deviation_bands=[{"max_price": "0.5", "max_deviation_bps": 400}])
    assert (config["entry_policy"], config["max_adds_count"], config["sell_mode"],
            config["max_open_positions"], config["market_cooldown_seconds"]) == (
        "max_adds", 3, "same_percentage", 4, 90)
    assert config["price_deviation_bands"] == [{"max_price": "0.5", "max_deviation_bps": 400}]
    edited = client.put(f"/api/configs/{config['id']}", json={
        "sell_mode": "manual", "price_deviation_bands": [], "max_open_positions": None},
        headers=auth_headers)
    assert edited.status_code == 200, edited.get_data(as_text=True)
    shown = decode(edited)
    assert (shown["sell_mode"], shown["price_deviation_bands"],
            shown["max_open_positions"]) == ("manual", [], None)
    stored = CopyConfig.get_by_id(config["id"])
    assert (stored.sell_mode, stored.price_deviation_bands) == ("manual", "[]")


def test_copying_pending_matches_is_an_opt_in(client, auth_headers, whale):
    target, _ = whale
    config = create(client, auth_headers, target)
    assert config["copy_pending_matches"] is False  # copies wait for confirmed fills
    cid = config["id"]
    refused = client.put(f"/api/configs/{cid}", json={"copy_pending_matches": "maybe"},
                         headers=auth_headers)
    assert refused.status_code == 400 and "copy_pending_matches" in decode(refused)["fields"]
    edited = client.put(f"/api/configs/{cid}", json={"copy_pending_matches": True},
                        headers=auth_headers)
    assert edited.status_code == 200 and decode(edited)["copy_pending_matches"] is True
    status = decode(client.get(f"/api/configs/{cid}/status", headers=auth_headers))
    assert "detection_chain" in status and "detection_pending" in status


@pytest.mark.parametrize(("extra", "field"), [
    ({"min_trade_usdc": "10", "max_trade_usdc": "5"}, "min_trade_usdc"),
    ({"min_price": "0.5", "max_price": "0.5"}, "min_price"),
    ({"max_price": "2"}, "max_price"),
    ({"daily_budget_usdc": "0"}, "daily_budget_usdc"),
    ({"sizing_mode": "fixed_usdc"}, "fixed_usdc"),
    ({"fixed_usdc": "5"}, "fixed_usdc"),
    ({"max_consecutive_failures": 0}, "max_consecutive_failures"),
    ({"exclude_keywords": [str(i) for i in range(51)]}, "exclude_keywords"),
    ({"include_keywords": ["k" * 101]}, "include_keywords"),
    ({"direction": "backwards"}, "direction"),
    # Issue 45's rules.
    ({"price_deviation_bands": [{"max_price": "0.6", "max_deviation_bps": 400},
                                {"max_price": "0.4", "max_deviation_bps": 600}]},
     "price_deviation_bands"),
    ({"price_deviation_bands": [{"max_price": "1.2", "max_deviation_bps": 400}]},
     "price_deviation_bands"),
    ({"price_deviation_bands": [{"max_price": "0", "max_deviation_bps": 400}]},
     "price_deviation_bands"),
    ({"price_deviation_bands": [{"max_price": "0.5"}]}, "price_deviation_bands"),
    ({"entry_policy": "max_adds"}, "max_adds_count"),
    ({"entry_policy": "max_adds", "max_adds_count": 0}, "max_adds_count"),
    ({"max_open_positions": 0}, "max_open_positions"),
    ({"sell_mode": "panic"}, "sell_mode"),
    ({"market_cooldown_seconds": -5}, "market_cooldown_seconds"),
])
def test_bad_rules_name_the_field(client, auth_headers, whale, extra, field):
    target, _ = whale
    response = client.post("/api/configs/preview", json=body(target, **extra),
                           headers=auth_headers)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert decode(response)["code"] == "validation_failed"
    assert field in decode(response)["fields"]


def test_a_mixed_case_target_must_carry_its_checksum(client, auth_headers, whale):
    target, _ = whale
    checksummed = Account.create().address
    assert preview(client, auth_headers, checksummed)["config"]["target_address"] == \
        checksummed.lower()
    assert preview(client, auth_headers, target.upper().replace("0X", "0x"))
    letters = [i for i, c in enumerate(checksummed) if c.isalpha() and i > 1]
    typo = checksummed[:letters[0]] + checksummed[letters[0]].swapcase() + \
        checksummed[letters[0] + 1:]
    response = client.post("/api/configs/preview", json=body(typo), headers=auth_headers)
    assert response.status_code == 400
    assert decode(response)["code"] == "validation_failed"
    assert "checksum" in decode(response)["fields"]["target_address"][0]


def test_the_users_exposure_limit(client, auth_headers, api_key, user):
    assert decode(client.get("/api/users/me/limits", headers=auth_headers)) == {
        "max_total_exposure_usdc": None}
    trader = {"Authorization": f"Bearer {api_key('trade:execute')}"}
    response = client.put("/api/users/me/limits", json={"max_total_exposure_usdc": "250"},
                          headers=trader)
    assert response.status_code == 200
    assert decode(response) == {"max_total_exposure_usdc": "250"}
    refused = client.put("/api/users/me/limits", json={"max_total_exposure_usdc": "0"},
                         headers=auth_headers)
    assert refused.status_code == 400
    assert "max_total_exposure_usdc" in decode(refused)["fields"]
    reader = {"Authorization": f"Bearer {api_key('read:account')}"}
    assert client.put("/api/users/me/limits", json={"max_total_exposure_usdc": None},
                      headers=reader).status_code == 403
    cleared = client.put("/api/users/me/limits", json={"max_total_exposure_usdc": None},
                         headers=auth_headers)
    assert decode(cleared) == {"max_total_exposure_usdc": None}


def test_the_preview_decides_the_targets_recent_buys_by_the_rules(client, auth_headers, whale):
    target, _ = whale
    # The whale bought 100 and 60 shares at 0.5: mirrored at 0.5x, 25 and 15 pUSD.
    shown = preview(client, auth_headers, target, min_target_trade_usdc="40")
    assert shown["recent_buys"]["decided"] == 2
    assert shown["recent_buys"]["outcomes"] == {"copied": 1, "below_min_target_trade": 1}
    fixed = preview(client, auth_headers, target, sizing_mode="fixed_usdc", fixed_usdc="5",
                    exclude_keywords=["happen"])
    assert fixed["recent_buys"]["outcomes"] == {"keyword_excluded": 2}


def test_an_empty_limits_body_changes_nothing(client, auth_headers):
    client.put("/api/users/me/limits", json={"max_total_exposure_usdc": "90"},
               headers=auth_headers)
    response = client.put("/api/users/me/limits", json={}, headers=auth_headers)
    assert response.status_code == 200
    assert decode(response) == {"max_total_exposure_usdc": "90"}


def test_the_preview_decides_by_the_markets_live_minimum(client, auth_headers, whale,
                                                          venue_control):
    """The simulation reads the market's live ``mos`` (ACCOUNTS.md §11) through the one
    accessor, as copies do, not Gamma's copy of it (cached here, as Gamma lags)."""
    from services.platform import venues

    target, market = whale
    venues.client().gamma.market_by_slug(market["slug"])  # Gamma's answer: minimum 5
    venue_control.call("POST", f"/markets/{market['condition_id']}/parameters",
                       {"min_order_size": "40"}, expect=200)
    # Mirrored at 0.5x: 50 shares pass the live minimum of 40, 30 do not.
    shown = preview(client, auth_headers, target)
    assert shown["recent_buys"]["outcomes"] == {"copied": 1, "below_min_size": 1}


def test_sizing_keeps_only_the_mode_in_force(client, auth_headers, whale):
    """Saving the fixed mode drops a multiplier sent with it (the form's prefilled one);
    leaving it clears the fixed amount and asks for a multiplier again (issue 44)."""
    target, _ = whale
    fixed = create(client, auth_headers, target, size_multiplier="1.1532",
                   sizing_mode="fixed_usdc", fixed_usdc="5")
    cid = fixed["id"]
    assert (fixed["sizing_mode"], fixed["fixed_usdc"], fixed["size_multiplier"]) == (
        "fixed_usdc", "5", "1")  # the stale 1.1532 is not kept
    again = client.put(f"/api/configs/{cid}", json={"size_multiplier": "3"},
                       headers=auth_headers)
    assert decode(again)["size_multiplier"] == "1"  # a fixed amount multiplies nothing
    bare = client.put(f"/api/configs/{cid}", json={"sizing_mode": "multiplier"},
                      headers=auth_headers)
    assert bare.status_code == 400 and "size_multiplier" in decode(bare)["fields"]
    switched = client.put(f"/api/configs/{cid}", json={"sizing_mode": "proportional",
                                                      "size_multiplier": "0.8"},
                          headers=auth_headers)
    assert switched.status_code == 200, switched.get_data(as_text=True)
    assert (decode(switched)["sizing_mode"], decode(switched)["fixed_usdc"],
            decode(switched)["size_multiplier"]) == ("proportional", None, "0.8")
    back = client.put(f"/api/configs/{cid}", json={"sizing_mode": "fixed_usdc",
                                                  "fixed_usdc": "7"}, headers=auth_headers)
    assert (decode(back)["fixed_usdc"], decode(back)["size_multiplier"]) == ("7", "1")
