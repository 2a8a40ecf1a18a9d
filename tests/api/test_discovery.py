"""REST discovery against the sandbox over real HTTP: markets (search, browse, one market with
its books, price history) and traders (leaderboard, profile), each with the scope the MCP
tools need (issue 29 item 2)."""

from __future__ import annotations

import json
from decimal import Decimal

from services.markets import markets
from services.trading.holdings import Holding, apply_fill
from tests.conftest import one_database

BTC = "will-bitcoin-reach-150k-2026"


def test_search_and_browse_page_with_the_pagination_headers(client, auth_headers):
    found = client.get("/api/markets?q=bitcoin", headers=auth_headers)
    assert found.status_code == 200, found.get_json()
    assert BTC in [m["slug"] for m in found.get_json()]

    first = client.get("/api/markets?limit=2", headers=auth_headers)
    second = client.get("/api/markets?limit=2&offset=2", headers=auth_headers)
    assert first.headers["X-Pagination-Count"] == "2"
    assert first.headers["X-Pagination-Has-Next"] == "true"
    firsts = [m["slug"] for m in first.get_json()]
    seconds = [m["slug"] for m in second.get_json()]
    assert len(firsts) == 2 and not set(firsts) & set(seconds)
    assert all(m["status"] == "open" for m in first.get_json() + second.get_json())

    crypto = client.get("/api/markets?category=crypto&limit=50", headers=auth_headers)
    assert crypto.get_json() and all(m["category"].lower() == "crypto"
                                     for m in crypto.get_json())
    assert BTC in [m["slug"] for m in crypto.get_json()]
    unknown = client.get("/api/markets?category=no-such-thing", headers=auth_headers)
    assert unknown.status_code == 400
    assert unknown.get_json()["code"] == "validation_failed"
    assert "category" in unknown.get_json()["fields"]


def test_one_market_with_its_rules_dates_and_each_outcomes_book(client, auth_headers):
    page = client.get(f"/api/markets/{BTC}", headers=auth_headers)
    assert page.status_code == 200
    body = page.get_json()
    assert Decimal(body["tick_size"]) > 0 and Decimal(body["min_order_size"]) > 0
    assert body["end_date"]
    assert [b["outcome"] for b in body["books"]] == ["Yes", "No"]
    for book in body["books"]:
        depth = book["depth"]
        assert Decimal(depth["best_bid"]) < Decimal(depth["best_ask"])
        assert book["token_id"] == depth["token_id"]
    missing = client.get("/api/markets/no-such-market-anywhere", headers=auth_headers)
    assert missing.status_code == 404 and missing.get_json()["code"] == "not_found"


def test_price_history_of_an_outcome_by_its_label(client, auth_headers):
    yes = client.get(f"/api/markets/{BTC}/price-history?outcome=yes&interval=1w",
                     headers=auth_headers)
    assert yes.status_code == 200
    details = markets.market_details(slug=BTC)
    assert yes.get_json()["token_id"] == details["outcomes"][0]["token_id"]
    no = client.get(f"/api/markets/{BTC}/price-history?outcome=No", headers=auth_headers)
    assert no.get_json()["token_id"] == details["outcomes"][1]["token_id"]
    wrong = client.get(f"/api/markets/{BTC}/price-history?outcome=Maybe",
                       headers=auth_headers)
    assert wrong.status_code == 400 and "outcome" in wrong.get_json()["fields"]


def test_leaderboard_takes_the_rest_words(client, auth_headers, venue_control):
    for _ in range(3):  # the sandbox ranks wallets that traded
        venue_control.call("POST", "/whales/tick", None, expect=201)
    ranked = client.get("/api/traders?period=all&order_by=volume&limit=3",
                        headers=auth_headers)
    assert ranked.status_code == 200, ranked.get_json()
    rows = ranked.get_json()
    assert 0 < len(rows) <= 3 and [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
    volumes = [Decimal(r["volume"]) for r in rows]
    assert volumes == sorted(volumes, reverse=True)
    bad = client.get("/api/traders?period=DECADE", headers=auth_headers)
    assert bad.status_code == 400 and "period" in bad.get_json()["fields"]


def test_a_traders_profile_after_their_trades(client, auth_headers, venue_control, bound_db):
    fills = venue_control.call("POST", "/whales/tick", None, expect=201)["fills"]
    address = fills[0]["proxyWallet"]
    profile = client.get(f"/api/traders/{address}", headers=auth_headers)
    assert profile.status_code == 200, profile.get_json()
    body = profile.get_json()
    assert body["address"] == address.lower() and body["trades"] >= 1
    assert Decimal(body["volume_usdc"]) > 0 and body["markets"]
    assert body["recent_trades"][0]["at"].endswith("+00:00")  # ISO 8601, UTC
    history = body["pnl_history"]
    assert len(history) == body["window_rows"] + 1
    assert Decimal(history[-1]["pnl"]) == (Decimal(body["realized_pnl_usdc"])
                                          + Decimal(body["unrealized_pnl_usdc"]))


def test_the_pnl_curve_replays_at_average_cost_and_counts_redemptions():
    from services.copying.traders import pnl_curve
    from venue.models import ActivityItem

    def row(ts, kind, side, size, usdc):
        return ActivityItem(proxy_wallet="0xw", timestamp=ts, condition_id="0xc", type=kind,
                            asset="7", side=side, size=Decimal(size), price=Decimal(0),
                            usdc_size=Decimal(usdc), outcome="Yes", outcome_index=0,
                            transaction_hash=f"0x{ts}", title="t", slug="s", event_slug="e",
                            name="", pseudonym="")

    rows = [row(3, "REDEEM", "", "4", "4"), row(1, "TRADE", "BUY", "10", "5"),
            row(2, "TRADE", "SELL", "6", "4.2")]
    curve = pnl_curve(rows, Decimal("0.5"))
    held, first = apply_fill(Holding(), "BUY", Decimal(10), Decimal(5))
    held, second = apply_fill(held, "SELL", Decimal(6), Decimal("4.2"))
    held, third = apply_fill(held, "SELL", Decimal(4), Decimal(4))
    assert [p["pnl"] for p in curve] == [first, first + second, first + second + third,
                                         first + second + third + Decimal("0.5")]
    assert curve[-2]["pnl"] == Decimal("3.2")  # paid 5, got 4.2 + 4


def test_an_address_with_a_wrong_checksum_is_refused(client, auth_headers):
    good = "0x52908400098527886E0F7030069857D2E4169EE7"  # EIP-55's own example
    typo = good[:-1] + "e"
    refused = client.get(f"/api/traders/{typo}", headers=auth_headers)
    assert refused.status_code == 400 and "address" in refused.get_json()["fields"]
    assert client.get(f"/api/traders/{good.lower()}", headers=auth_headers).status_code == 200
    short = client.get("/api/traders/0x1234", headers=auth_headers)
    assert short.status_code == 400


def test_discovery_needs_read_markets(client, api_key):
    without = {"Authorization": f"Bearer {api_key('read:trades')}"}
    with_scope = {"Authorization": f"Bearer {api_key('read:markets')}"}
    for path in ("/api/markets", f"/api/markets/{BTC}", "/api/traders"):
        assert client.get(path).status_code == 401
        wrong = client.get(path, headers=without)
        assert wrong.status_code == 403 and wrong.get_json()["code"] == "scope_required"
        assert client.get(path, headers=with_scope).status_code == 200


DISCOVERY = {  # path -> the schema its 200 answer is written with
    "/api/markets": "MarketSummary", "/api/markets/{slug}": "MarketPage",
    "/api/markets/{slug}/price-history": "PriceHistory", "/api/traders": "Trader",
    "/api/traders/{address}": "TraderProfile"}


@one_database
def test_the_openapi_description_documents_them_with_examples(client):
    from schemas import discovery_examples as examples
    from schemas.markets import (
        MarketPageSchema,
        MarketSummarySchema,
        PriceHistorySchema,
        TraderProfileSchema,
        TraderSchema,
    )

    spec = client.get("/openapi.json").get_json()
    for path, schema in DISCOVERY.items():
        get = spec["paths"][path]["get"]
        content = get["responses"]["200"]["content"]["application/json"]
        assert content["example"], path
        assert any(p["in"] == "path" for p in spec["paths"][path].get("parameters", [])) \
            == ("{" in path), path
        assert schema in json.dumps(content["schema"]), path
        # every parameter, in the path or the query, shows a value to try
        for param in spec["paths"][path].get("parameters", []) + get.get("parameters", []):
            if param["in"] in ("path", "query") and param["name"] not in ("limit", "offset",
                                                                             "fidelity",
                                                                             "active"):
                assert "example" in param or "example" in param.get("schema", {}), \
                    (path, param["name"])
    params = {p["name"]: p for p in spec["paths"]["/api/markets"]["get"]["parameters"]}
    assert params["q"]["schema"].get("example") or params["q"].get("example")
    # Each example is an answer its schema reads back whole (no field missing, none extra).
    for example, schema in ((examples.MARKETS, MarketSummarySchema(many=True)),
                            (examples.MARKET_PAGE, MarketPageSchema()),
                            (examples.PRICE_HISTORY, PriceHistorySchema()),
                            (examples.TRADERS, TraderSchema(many=True)),
                            (examples.TRADER_PROFILE, TraderProfileSchema())):
        schema.load(example)
        assert schema.dump(schema.load(example)) == example


def test_the_examples_have_the_shape_of_the_live_answers(client, auth_headers, venue_control):
    from schemas import discovery_examples as examples

    fills = venue_control.call("POST", "/whales/tick", None, expect=201)["fills"]
    live = {
        "/api/markets": client.get("/api/markets?limit=1", headers=auth_headers).get_json()[0],
        "/api/markets/{slug}": client.get(f"/api/markets/{BTC}", headers=auth_headers)
        .get_json(),
        "/api/markets/{slug}/price-history": client.get(
            f"/api/markets/{BTC}/price-history", headers=auth_headers).get_json(),
        "/api/traders": client.get("/api/traders?period=all", headers=auth_headers)
        .get_json()[0],
        "/api/traders/{address}": client.get(f"/api/traders/{fills[0]['proxyWallet']}",
                                             headers=auth_headers).get_json(),
    }
    shown = {"/api/markets": examples.MARKETS[0], "/api/markets/{slug}": examples.MARKET_PAGE,
             "/api/markets/{slug}/price-history": examples.PRICE_HISTORY,
             "/api/traders": examples.TRADERS[0],
             "/api/traders/{address}": examples.TRADER_PROFILE}
    for path, answer in live.items():
        assert set(answer) == set(shown[path]), path
