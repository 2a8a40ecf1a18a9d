"""services/trading/previews.py: quotes from the live sandbox book, stored, bound, single use,
expiring."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from models.base import utcnow
from models.trading import OrderPreview
from services.platform import errors
from services.trading import previews


def test_market_buy_preview_walks_the_book(trader, market):
    # House asks: 250 @ 0.51, 500 @ 0.52, ...; bids 250 @ 0.49 ...
    quote = previews.create(trader.user, market.yes, "buy", "300", "market")

    assert quote["market_slug"] == market.slug
    assert quote["market_title"] == f"Will {market.slug} happen?"
    assert quote["outcome"] == "Yes"
    assert (quote["side"], quote["order_type"], quote["time_in_force"]) == (
        "buy", "market", "FOK")
    assert quote["estimated_cost"] == Decimal("153.5")  # 250 x 0.51 + 50 x 0.52
    assert quote["estimated_shares"] == Decimal("300")
    assert quote["expected_price"] == Decimal("153.5") / 300
    assert quote["price"] == Decimal("0.54")  # worst level 0.52, +3% on the tick grid
    assert quote["midpoint"] == Decimal("0.50")
    assert quote["slippage_bps"] == ((Decimal("153.5") / 300 - Decimal("0.5")) / Decimal("0.5")
                                     * 10000).quantize(Decimal("0.01"))
    assert quote["fee"] == 0
    assert quote["confirmation"].startswith("Buy 300.00 shares of 'Yes' in")
    # in the formatter's words: money to the cent, the average to 4 decimals at most
    assert quote["confirmation"].endswith("at market (average ~0.5117, worst 0.54, FOK) for "
                                          "about 153.50 pUSD.")
    stored = OrderPreview.get_by_id(quote["preview_id"])
    assert stored.user_id == trader.user.id and stored.used_at is None
    lifetime = stored.expires_at - stored.created_at
    assert lifetime == previews.PREVIEW_TTL == timedelta(minutes=3)


def test_fees_follow_the_markets_schedule(trader, make_sandbox_market):
    market = make_sandbox_market(fee_rate="0.05")
    quote = previews.create(trader.user, market.yes, "sell", "300", "market")
    # 250 @ 0.49 and 50 @ 0.48: fee = shares x 0.05 x p(1-p) per level.
    expected = (Decimal(250) * Decimal("0.05") * Decimal("0.49") * Decimal("0.51")
                + Decimal(50) * Decimal("0.05") * Decimal("0.48") * Decimal("0.52"))
    assert quote["fee"] == expected.quantize(Decimal("0.000001"))
    assert quote["estimated_cost"] == Decimal("146.5")
    assert quote["price"] == Decimal("0.46")  # 0.48 - 3%, floored to the tick


def test_limit_preview(trader, market):
    quote = previews.create(trader.user, market.yes, "buy", "20", "limit", "0.45")
    assert (quote["time_in_force"], quote["price"], quote["estimated_cost"]) == (
        "GTC", Decimal("0.45"), Decimal("9"))
    assert quote["fee"] == 0
    assert "at limit 0.45 (GTC)" in quote["confirmation"]


@pytest.mark.parametrize(("args", "message"), [
    (("buy", "10", "limit", "0.455"), "tick grid (tick size 0.01"),
    (("buy", "4", "limit", "0.45"), "minimum order size of 5 shares"),
    (("buy", "10.123", "market", None), "more than 2 decimals"),
    (("hold", "10", "market", None), "side"),
    (("buy", "10", "stop", None), "order_type"),
    (("buy", "10", "limit", None), "price"),
    (("buy", "10", "limit", "1"), "price"),
    (("buy", "0", "market", None), "size"),
    (("buy", "1", "market", None), "at least 1 pUSD"),
    (("buy", "100000", "market", None), "cannot fill completely"),
])
def test_bad_orders_are_refused_with_a_reason(trader, market, args, message):
    side, size, kind, price = args
    with pytest.raises(errors.BadRequest) as caught:
        previews.create(trader.user, market.yes, side, size, kind, price)
    assert caught.value.status == 400
    assert message in caught.value.message
    assert OrderPreview.select().count() == 0


def test_unknown_token_is_404(trader):
    with pytest.raises(errors.NotFound):
        previews.create(trader.user, "12345678901234567890", "buy", "10", "market")


def test_check_binds_user_parameters_use_and_time(trader, make_trader, market):
    quote = previews.create(trader.user, market.yes, "buy", "10", "limit", "0.45")
    pid = quote["preview_id"]
    args = (market.yes, "buy", Decimal(10), "limit", Decimal("0.45"))

    assert previews.check(trader.user, pid, *args).id == pid
    with pytest.raises(errors.BadRequest, match="Unknown preview_id"):
        previews.check(make_trader().user, pid, *args)
    with pytest.raises(errors.BadRequest, match=r"different order: size 11 \(preview: 10\)"):
        previews.check(trader.user, pid, market.yes, "buy", Decimal(11), "limit",
                       Decimal("0.45"))
    with pytest.raises(errors.BadRequest, match=r"price 0\.46"):
        previews.check(trader.user, pid, market.yes, "buy", Decimal(10), "limit",
                       Decimal("0.46"))
    with pytest.raises(errors.BadRequest, match="expired"):
        previews.check(trader.user, pid, *args, now=utcnow() + timedelta(minutes=4))
    with pytest.raises(errors.BadRequest, match="needs a preview_id"):
        previews.check(trader.user, None, *args)

    preview = previews.check(trader.user, pid, *args)
    previews.consume(preview)
    with pytest.raises(errors.BadRequest, match="already used"):
        previews.check(trader.user, pid, *args)
    with pytest.raises(errors.BadRequest, match="already used"):
        previews.consume(preview)
