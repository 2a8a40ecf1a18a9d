"""Every real venue sample parses into models with exact Decimal values."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.venue.conftest import SAMPLES, sample, sample_text
from venue.models import FeeSchedule, Level
from venue.parse import clob, data_api, feeds, gamma, values


def test_every_sample_file_is_covered_here() -> None:
    covered = {
        "clob-book.json", "clob-book-empty-asks.json", "clob-cancel-response.json",
        "clob-derive-api-key-response.json", "clob-midpoint.json", "clob-neg-risk.json",
        "clob-open-orders.json", "clob-post-order-request-docs-example.json",
        "clob-post-order-request.json", "clob-post-order-response.json", "clob-price.json",
        "clob-prices-history.json", "clob-tick-size.json", "data-activity.json",
        "data-leaderboard.json", "data-positions.json", "data-trades.json",
        "data-v2-activity.json", "data-v2-positions.json", "data-v2-trades.json",
        "gamma-events.json", "gamma-market-by-slug.json", "gamma-markets.json",
        "gamma-public-search.json", "rtds-activity-trades.json", "ws-market-book.json",
        "ws-market-last-trade-price.json", "ws-market-price-change.json",
    }
    assert {p.name for p in SAMPLES.glob("*.json")} == covered


def test_loads_keeps_number_text_exact() -> None:
    assert values.loads('{"a": 0.010, "b": 5.0, "c": 7}') == {
        "a": Decimal("0.010"), "b": Decimal("5.0"), "c": 7
    }
    assert str(values.loads("[0.010]")[0]) == "0.010"


# --- Gamma ---------------------------------------------------------------------------------


def test_gamma_markets_list() -> None:
    [market] = gamma.parse_markets(sample("gamma-markets.json"))
    assert market.id == "4464920"
    assert market.slug == "unl-nor-den-2026-09-24-nor"
    assert market.condition_id == (
        "0x80c7ab790a5ab37e11c79a5a658d729ac29e6e17aa2d3fc859e4a78c0d896369"
    )
    assert market.outcomes == ("Yes", "No")
    assert market.outcome_prices == (Decimal("0.575"), Decimal("0.425"))
    assert market.clob_token_ids[0] == (
        "23305969272951306317157739183583008201155714184462027894470739210983097393455"
    )
    assert market.token_id_for("yes") == market.clob_token_ids[0]
    assert market.outcome_for(market.clob_token_ids[1]) == "No"
    assert market.liquidity == Decimal("572733.0377")
    assert market.volume == Decimal("1111647.7180160005")
    assert market.tick_size == Decimal("0.01")
    assert market.min_order_size == Decimal("5")
    assert (market.best_bid, market.best_ask) == (Decimal("0.57"), Decimal("0.58"))
    assert market.last_trade_price == Decimal("0.58")
    assert market.neg_risk is True
    assert market.neg_risk_market_id == (
        "0x5aac4b53c59681df77d9cf1168ffe88e920a0bbbbaddeaae43b3a39d1ab17600"
    )
    assert market.active and not market.closed and market.accepting_orders
    assert market.end_date == datetime(2026, 9, 24, 18, 45, tzinfo=UTC)
    assert market.tags[0].slug == "sports"
    assert market.event_slugs == ("unl-nor-den-2026-09-24",)
    assert market.fee_type == "sports_fees_v3"
    assert market.fee_schedule == FeeSchedule(
        rate=Decimal("0.05"), exponent=Decimal(1), taker_only=True, rebate_rate=Decimal("0.15")
    )
    assert market.uma_resolution_statuses == ()
    assert market.raw["gameStartTime"] == "2026-09-24 18:45:00+00"


def test_gamma_market_by_slug_object() -> None:
    market = gamma.parse_market(sample("gamma-market-by-slug.json"))
    assert market.id == "559651"
    assert market.slug == "xi-jinping-out-before-2027"
    assert market.outcome_prices == (Decimal("0.0455"), Decimal("0.9545"))
    assert market.tick_size == Decimal("0.001")
    assert market.neg_risk is False
    assert market.neg_risk_market_id is None
    assert market.fee_schedule is not None
    assert market.fee_schedule.rate == Decimal("0.04")
    assert market.fee_schedule.rebate_rate == Decimal("0.25")
    assert market.tags[0].label == "world affairs"
    assert market.start_date == datetime(2025, 7, 3, 20, 37, 0, 228000, tzinfo=UTC)
    assert market.volume_24hr == Decimal("14542.225487")


def test_a_markets_version_picks_its_trading_ids() -> None:
    """ACCOUNTS.md §11: ``version`` decides, ``positionIds`` (V2) or ``clobTokenIds`` (V1);
    the samples are V1 markets that list positionIds too."""
    row = sample("gamma-market-by-slug.json")
    v1 = gamma.parse_market(row)
    assert v1.version == "v1" and not v1.is_v2
    assert v1.position_ids == tuple(row["positionIds"])
    assert v1.token_ids == v1.clob_token_ids != v1.position_ids
    v2 = gamma.parse_market({**row, "version": "v2"})
    assert v2.is_v2 and v2.token_ids == tuple(row["positionIds"])
    assert v2.token_id_for("No") == row["positionIds"][1]
    assert v2.outcome_for(row["positionIds"][0]) == "Yes"


@pytest.mark.parametrize("clob_ids", [None, "[null, null]", [None, None], ""])
def test_a_v2_only_markets_null_clob_token_ids_leave_it_trading_by_position_ids(clob_ids) -> None:
    """ACCOUNTS.md §12 (ts-sdk #331): on V2-only markets the CLOB token id is null. The
    market still parses, trades by its position ids, and no null becomes a token "None"."""
    row = {**sample("gamma-market-by-slug.json"), "version": "v2", "clobTokenIds": clob_ids}
    market = gamma.parse_market(row)
    assert market.clob_token_ids == ()
    assert market.token_ids == tuple(row["positionIds"])
    assert market.outcome_for(row["positionIds"][1]) == "No"


def test_gamma_events_with_nested_markets() -> None:
    [event] = gamma.parse_events(sample("gamma-events.json"))
    assert event.slug == "democratic-presidential-nominee-2028"
    assert event.id == "30829"
    assert event.neg_risk is True
    assert event.liquidity == Decimal("43042905.16152")  # a number on events
    assert len(event.markets) == 2
    first = event.markets[0]
    assert first.id == "559657"
    assert first.liquidity == Decimal("400500.66675")  # a string on nested markets
    assert first.outcome_prices == (Decimal("0.0105"), Decimal("0.9895"))
    assert first.fee_type is None
    assert first.fee_schedule is None
    assert event.tags[0].slug == "world-elections"


def test_gamma_public_search() -> None:
    result = gamma.parse_search(sample("gamma-public-search.json"))
    assert result.has_more is True
    assert result.total_results == 46940
    [event] = result.events
    assert event.slug == "bitcoin-above-on-march-11"
    [market] = event.markets
    assert market.slug == "bitcoin-above-64k-on-march-11"
    assert market.outcome_prices == (Decimal("0.9995"), Decimal("0.0005"))
    assert market.best_ask == Decimal("1")


def test_fee_schedule_taker_fee_matches_formula() -> None:
    schedule = gamma.parse_market(sample("gamma-markets.json")[0]).fee_schedule
    assert schedule is not None
    # 100 shares at 0.5: 100 x 0.05 x (0.25)^1 = 1.25 pUSD
    assert schedule.taker_fee(Decimal("100"), Decimal("0.5")) == Decimal("1.2500")


# --- CLOB ----------------------------------------------------------------------------------


def test_clob_book_and_hash() -> None:
    book = clob.parse_book(sample("clob-book.json"))
    assert book.asset_id == (
        "23305969272951306317157739183583008201155714184462027894470739210983097393455"
    )
    assert book.timestamp_ms == 1790262939745
    assert book.bids[0] == Level(Decimal("0.01"), Decimal("59088.47"))
    assert book.best_bid == Decimal("0.57") == book.bids[-1].price
    assert book.best_ask == Decimal("0.58") == book.asks[-1].price
    assert book.midpoint == Decimal("0.575")
    assert book.tick_size == Decimal("0.01")
    assert book.min_order_size == Decimal("5")
    assert book.neg_risk is True
    assert str(book.last_trade_price) == "0.420"
    assert book.computed_hash() == book.hash == "7579762267918d7197195fbdeea8df93ef8ee532"


def test_clob_book_empty_asks() -> None:
    book = clob.parse_book(sample("clob-book-empty-asks.json"))
    assert book.asks == ()
    assert book.best_ask is None and book.midpoint is None
    assert book.best_bid == Decimal("0.002")
    assert book.last_trade_price is None
    assert book.tick_size == Decimal("0.001")
    assert book.computed_hash() == book.hash


def test_ws_book_hash_uses_market_min_size_and_neg_risk() -> None:
    raw = sample("ws-market-book.json")
    book = clob.parse_book({**raw, "min_order_size": "5", "neg_risk": False})
    assert book.computed_hash() == raw["hash"] == "ed47eb91f3c7985fac1cb18cb7c19535eddd3c0a"
    assert str(book.last_trade_price) == "0.920"


def test_ws_price_change_and_last_trade() -> None:
    changes = feeds.parse_price_changes(sample("ws-market-price-change.json"))
    assert [c.side for c in changes] == ["BUY", "SELL"]
    assert changes[0].size == Decimal("703988.22")
    assert changes[0].best_bid == Decimal("0.61")
    assert changes[1].price == Decimal("0.41")
    assert changes[0].timestamp_ms == 1790272269309
    last = feeds.parse_last_trade_price(sample("ws-market-last-trade-price.json"))
    assert last.price == Decimal("0.002") and last.size == Decimal("20")
    assert last.fee_rate_bps == 0 and last.side == "SELL"
    assert last.transaction_hash.startswith("0x8ed4b95e")


def test_clob_scalar_answers() -> None:
    assert clob.parse_price(sample("clob-price.json")) == Decimal("0.045")
    assert clob.parse_midpoint(sample("clob-midpoint.json")) == Decimal("0.0455")
    assert clob.parse_midpoint({"mid_price": "0.5"}) == Decimal("0.5")
    tick = clob.parse_tick_size(sample("clob-tick-size.json"))
    assert tick == Decimal("0.001") and str(tick) == "0.001"
    assert clob.parse_tick_size({"minimum_tick_size": "0.01"}) == Decimal("0.01")
    assert clob.parse_neg_risk(sample("clob-neg-risk.json")) is True
    assert clob.parse_fee_rate_bps({"base_fee": 1000}) == 1000
    assert clob.parse_server_time(1790262939) == 1790262939
    assert clob.parse_version({"version": 2}) == 2


def test_clob_prices_history() -> None:
    points = clob.parse_prices_history(sample("clob-prices-history.json"))
    assert len(points) == 8
    assert points[0].t == 1789660814 and points[0].p == Decimal("0.515")
    assert points[-1].t == 1790262855 and points[-1].p == Decimal("0.575")


def test_clob_api_creds_fixture() -> None:
    creds = clob.parse_api_creds(sample("clob-derive-api-key-response.json"), "0xabc")
    assert (creds.api_key, creds.secret, creds.passphrase) == (
        "test-api-key", "test-secret", "test-passphrase"
    )
    assert "test-secret" not in repr(creds)


def test_clob_open_orders() -> None:
    page = clob.parse_open_orders(sample("clob-open-orders.json"))
    assert page.next_cursor == "MTAw" and not page.is_last
    first, second = page.orders
    assert first.id == "0xabcdef1234567890abcdef1234567890abcdef12"
    assert first.is_live and first.status == "ORDER_STATUS_LIVE"
    assert first.side == "BUY" and first.price == Decimal("0.5")
    assert first.original_size == Decimal("100000000")
    assert first.created_at == 1700000000 and first.expiration == 1735689600
    assert second.size_matched == Decimal("50000000")
    assert second.associate_trades == ("trade-123",)
    assert clob.parse_open_order({"status": "LIVE"}).is_live


def test_clob_post_order_response() -> None:
    result = clob.parse_post_order(sample("clob-post-order-response.json"))
    assert result.success is True and result.status == "matched"
    assert result.order_id == "0x2edf84dfc54d8d60e1c4549f01cf2e8ea73f6d284c75ebe648c9e2c4ba7c8d51"
    assert result.making_amount == Decimal("1.519999")
    assert result.taking_amount == Decimal("2.140844")
    assert result.transactions_hashes == (
        "0x6a701d6af2f1a524a78b61bf96313e5efad066ba7016f151f9bbfc395400a9ab",
    )
    assert result.trade_ids == () and result.error_msg == ""


def test_clob_cancel_response() -> None:
    result = clob.parse_cancel(sample("clob-cancel-response.json"))
    assert result.canceled == ("0xabcdef1234567890abcdef1234567890abcdef12",)
    assert result.not_canceled == {}


def test_post_order_request_samples_have_our_wire_shape() -> None:
    real = json.loads(sample_text("clob-post-order-request.json"))
    docs = json.loads(sample_text("clob-post-order-request-docs-example.json"))
    order = real["order"]
    assert list(order) == [
        "salt", "maker", "signer", "tokenId", "makerAmount", "takerAmount", "side",
        "expiration", "signatureType", "timestamp", "metadata", "builder", "signature",
    ]
    assert isinstance(order["salt"], int) and isinstance(order["signatureType"], int)
    assert (order["makerAmount"], order["takerAmount"]) == ("50000", "5000000")
    assert set(docs) == {"order", "owner", "orderType", "deferExec"}


# --- Data API ------------------------------------------------------------------------------


def test_data_activity_redeem_row() -> None:
    [row] = data_api.parse_activity(sample("data-activity.json"))
    assert row.type == "REDEEM" and not row.is_trade
    assert row.side == ""
    assert row.size == Decimal("20") and row.price == Decimal("0")
    assert row.usdc_size == Decimal("0")
    assert row.timestamp == 1786861677
    assert row.outcome == "Under" and row.outcome_index == 1
    assert row.proxy_wallet == "0x204f72f35326db932158cba6adff0b9a1da95e14"


def test_data_trades_rows() -> None:
    first, second = data_api.parse_activity(sample("data-trades.json"))
    assert first.is_trade and first.type == "TRADE" and first.side == "BUY"
    assert first.size == Decimal("8643") and first.price == Decimal("0.68")
    assert first.asset.startswith("968133508637750942102724")
    assert first.transaction_hash == (
        "0x854893148a04e0cd9b8593dc37a3a2229d7be314cc1d7a7032ee83263fb14c78"
    )
    assert first.outcome == "Atlanta Braves" and first.outcome_index == 1
    assert first.role is None
    assert second.side == "SELL"
    assert second.size == Decimal("5999.98") and second.price == Decimal("0.999")


def test_data_v2_activity_and_trades_pages() -> None:
    page = data_api.parse_activity_page(sample("data-v2-activity.json"))
    assert page.has_more and page.next_cursor and page.next_cursor.startswith("eyJkYXRh")
    first = page.items[0]
    assert first.type == "TRADE" and first.is_trade
    assert first.proxy_wallet == "0x379a410a36c101e3b8dfb6c90d1176eb0def4b1a"
    assert first.usdc_size == Decimal("12.16184")
    assert first.price == Decimal("0.52") and first.size == Decimal("22.84")
    assert first.outcome_index == 999
    assert first.asset.startswith("1075629529365558196687")
    trades = data_api.parse_activity_page(sample("data-v2-trades.json"))
    assert len(trades.items) == 2
    assert trades.items[1].size == Decimal("5.0") and str(trades.items[1].size) == "5.0"
    assert trades.items[1].price == Decimal("0.002")


def test_data_positions_v1_and_v2() -> None:
    [pos] = data_api.parse_positions(sample("data-positions.json"))
    assert pos.size == Decimal("162963.4451")
    assert pos.avg_price == Decimal("0.9979")
    assert pos.current_value == Decimal("155630.09")
    assert pos.cash_pnl == Decimal("-6997.4491")
    assert pos.cur_price == Decimal("0.955")
    assert pos.outcome == "Over" and pos.opposite_outcome == "Under"
    assert pos.end_date == "2026-08-16"
    v2 = data_api.parse_positions(sample("data-v2-positions.json"))
    assert len(v2) == 2
    assert v2[0].size == Decimal("28.09") and v2[0].avg_price == Decimal("0.6699")
    assert v2[0].current_value == Decimal("20.0843")
    assert v2[0].negative_risk is True
    assert v2[1].cash_pnl == Decimal("-1.2404")
    assert [p.status for p in v2] == ["OPEN", "OPEN"]
    assert pos.status == "OPEN"  # v1 rows carry none: an unresolved, unmergeable one is open


@pytest.mark.parametrize(("redeemable", "mergeable", "price", "status"), [
    (True, False, "1", "REDEEMABLE"), (True, False, "0", "REDEEMABLE_LOST"),
    (False, True, "0.5", "MERGEABLE"), (False, False, "0.5", "OPEN")])
def test_v1_positions_stand_for_a_v2_status(redeemable, mergeable, price, status) -> None:
    [row] = sample("data-positions.json")
    [pos] = data_api.parse_positions([{**row, "redeemable": redeemable,
                                       "mergeable": mergeable, "curPrice": price}])
    assert pos.status == status


def test_a_v2_status_we_do_not_know_is_kept_as_text() -> None:
    body = sample("data-v2-positions.json")
    body["data"][0]["status"] = "frozen_for_review"
    page = data_api.parse_position_page(body)
    assert [p.status for p in page.items] == ["FROZEN_FOR_REVIEW", "OPEN"]
    assert page.items[0].size == Decimal("28.09")  # the rest of the row read as ever


def test_data_leaderboard() -> None:
    entries = data_api.parse_leaderboard(sample("data-leaderboard.json"))
    assert [e.rank for e in entries] == [1, 2, 3, 4]
    assert entries[0].user_name == "Theo4"
    assert entries[0].pnl == Decimal("22053933.752321")
    assert entries[1].vol == Decimal("1850584673.0642097")
    assert entries[3].x_username == "RN1polymarket"


# --- RTDS ----------------------------------------------------------------------------------


def test_rtds_frames() -> None:
    frames = json.loads(sample_text("rtds-activity-trades.json"))
    first = feeds.parse_rtds_frame(json.dumps(frames[0]))
    second = feeds.parse_rtds_frame(json.dumps(frames[1]).encode())
    [taker_side] = first
    [other_side] = second
    assert taker_side.proxy_wallet == "0xf5848342fc388908f2D25a9012Cc18a0Ad193979"
    assert taker_side.wallet == "0xf5848342fc388908f2d25a9012cc18a0ad193979"
    assert taker_side.fee == Decimal("1.5309")
    assert taker_side.price + other_side.price == Decimal("1.00")
    assert taker_side.size == other_side.size == Decimal("1030.92")
    assert taker_side.transaction_hash == other_side.transaction_hash
    assert taker_side.timestamp == 1790272257  # payload seconds, not the envelope's ms
    assert other_side.fee is None and other_side.outcome == "Yes"
    assert taker_side.is_trade


@pytest.mark.parametrize("frame", ["", "PONG", "pong", "[]", '{"topic":"comments"}', "{bad"])
def test_rtds_frames_without_trades(frame: str) -> None:
    assert feeds.parse_rtds_frame(frame) == []


def test_bad_payloads_raise_malformed() -> None:
    with pytest.raises(values.MalformedResponse):
        values.loads("not json")
    with pytest.raises(values.MalformedResponse):
        gamma.parse_markets({"not": "a list"})
    with pytest.raises(values.MalformedResponse):
        clob.parse_price({})
    with pytest.raises(values.MalformedResponse):
        values.dec("abc")
