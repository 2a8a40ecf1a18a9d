"""The dashboard's number and moment formatting: money to the cent, prices to the tick,
shares to 2 decimals, signed PnL, and UTC moments the page localises."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from blueprints.dashboard.numbers import moment, money, pnl, pnl_class, price, shares


def test_money_rounds_to_the_cent_and_groups_thousands():
    assert money("1234.5") == "1,234.50 pUSD"
    assert money(Decimal("-0.000000319814311123376120153")) == "0.00 pUSD"  # no "-0.00"
    assert money("0.005") == "0.00 pUSD"  # half to even, as the API's quantize
    assert money("0.015") == "0.02 pUSD"
    assert money(None) == "—" and money("not a number") == "—"


def test_pnl_is_signed_and_coloured():
    assert pnl("12.3") == "+12.30 pUSD" and pnl("-20.630000") == "-20.63 pUSD"
    assert pnl("0.001") == "0.00 pUSD"
    assert (pnl_class("1"), pnl_class("-1"), pnl_class("0.004")) == ("pos", "neg", "")


def test_prices_to_the_markets_tick_and_shares_to_two_decimals():
    assert price("0.6300000248157570130730208453") == "0.63"
    assert price("0.6255", "0.001") == "0.626"
    assert price("0.625", "0.010") == "0.62"  # the tick's own zeros do not add places
    assert shares("0.007368") == "0.01" and shares("1250") == "1,250.00"


def test_moments_are_utc_time_elements_the_page_localises():
    html = str(moment("2026-11-27T16:02:33+00:00"))
    assert html == ('<time class="local" datetime="2026-11-27T16:02:33+00:00">'
                    "2026-11-27 16:02 UTC</time>")
    naive = datetime(2026, 11, 27, 16, 2, 33)  # the database's naive UTC
    assert 'datetime="2026-11-27T16:02:33+00:00"' in str(moment(naive))
    assert str(moment(datetime(2026, 11, 27, 17, 2, tzinfo=UTC))).endswith("17:02 UTC</time>")
    assert str(moment(None)) == "—"
