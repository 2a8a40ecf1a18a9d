"""The one number formatter (services/platform/numbers.py) every surface shares: money to the
cent with its token, prices to the tick (or 2-4 decimals without trailing noise), shares to
2 decimals, counts with their noun in the right number, fractions as percentages."""

from __future__ import annotations

from decimal import Decimal

from services.platform import addresses, numbers


def test_money_has_two_decimals_and_the_token_name():
    assert numbers.money("6.3") == "6.30 pUSD"
    assert numbers.money(Decimal("5.000000")) == "5.00 pUSD"
    assert numbers.money("1234.5") == "1,234.50 pUSD"
    assert numbers.money("-0.001") == "0.00 pUSD"  # no "-0.00"
    assert numbers.money("2", unit="") == "2.00"
    assert numbers.money(None) == numbers.UNKNOWN and numbers.money("x") == numbers.UNKNOWN
    assert numbers.money(Decimal("NaN")) == numbers.UNKNOWN
    assert numbers.pnl("12.3") == "+12.30 pUSD" and numbers.pnl("-4") == "-4.00 pUSD"


def test_an_exact_amount_shows_the_cent_and_every_digit_past_it():
    # what a person confirms or sent: grouped like money, never rounded away
    assert numbers.exact_money("12.5") == "12.50 pUSD"
    assert numbers.exact_money(Decimal("12.500000")) == "12.50 pUSD"
    assert numbers.exact_money("1234.0000001") == "1,234.0000001 pUSD"
    assert numbers.exact_money("0.000021", unit="MATIC") == "0.000021 MATIC"
    assert numbers.exact_money(None) == numbers.UNKNOWN


def test_prices_follow_the_tick_or_show_two_to_four_decimals():
    assert numbers.price("0.45", "0.01") == "0.45"
    assert numbers.price("0.4500", "0.001") == "0.450"  # a finer tick shows its places
    assert numbers.price("0.6255", "0.001") == "0.626"
    assert numbers.price("0.890") == "0.89" and numbers.price("0.4500") == "0.45"
    assert numbers.price("0.4525") == "0.4525" and numbers.price("0.45251") == "0.4525"
    assert numbers.price("0.5") == "0.50" and numbers.price(None) == numbers.UNKNOWN


def test_shares_counts_and_percentages():
    assert numbers.shares("10.1") == "10.10" and numbers.shares("1250") == "1,250.00"
    assert numbers.plural(1, "copy") == "1 copy" and numbers.plural(2, "copy") == "2 copies"
    assert numbers.plural(0, "fill") == "0 fills" and numbers.plural(1, "fill") == "1 fill"
    assert numbers.plural(3, "match") == "3 matches"
    assert numbers.plural(1200, "skip") == "1,200 skips"
    assert numbers.percent("1") == "100 %" and numbers.percent("0.254") == "25 %"
    assert numbers.percent("0.2545", places=1) == "25.4 %"
    assert numbers.bps(1500) == "15 %" and numbers.bps(25) == "0.25 %"


def test_multipliers_and_traders_read_as_people_write_them():
    # A multiplier is a rule as typed: never rounded (0.7 for 0.7037 misstates every size).
    times = "\u00d7"
    for typed, shown in (
        ("0.7037", "0.7037"),
        ("2", "2"),
        ("1.1532", "1.1532"),
        ("0.70", "0.7"),
        ("2.500000", "2.5"),
        ("1E+1", "10"),
    ):
        assert numbers.multiplier(typed) == f"{times}{shown}"
    assert numbers.multiplier("0.5") == "\u00d70.5" and numbers.multiplier("0.005") == "\u00d70.005"
    address = "0x" + "ab" * 20
    assert addresses.short_address(address) == "0xabab…abab"
    assert addresses.trader_name("TideRunner", address) == "TideRunner (0xabab…abab)"
    assert addresses.trader_name("", address) == "0xabab…abab"
