"""Notification text in words: amounts as money with their token, an unknown amount left
out of the sentence (never "?"), the market by its question and outcome, the trader by name
with a short address; the payload for machines keeps its fields."""

from __future__ import annotations

from decimal import Decimal

from services.notifications import catalogue

ADDRESS = "0x" + "12" * 19 + "ab"


def test_an_unknown_amount_is_left_out_of_the_sentence():
    payload = {"trader": "TideRunner", "trader_address": ADDRESS, "market": "sbx-fc-exu",
               "market_title": "Will FC win?", "outcome": "Yes", "reason": "breaker_open",
               "reason_text": "copying is paused", "amount": None}
    _, text = catalogue.render("copy.skipped", payload)
    assert text == ("A trade of TideRunner (0x1212…12ab) on “Will FC win?” (Yes) was not "
                    "copied: copying is paused.")
    _, known = catalogue.render("copy.skipped", {**payload, "amount": Decimal("6.3")})
    assert known.startswith("A 6.30 pUSD trade of TideRunner (0x1212…12ab) on “Will FC win?”")
    _, funds = catalogue.render("config.out_of_funds", {"trader": "0x1212…12ab",
                                                        "trader_address": ADDRESS})
    assert funds == ("Copying 0x1212…12ab cannot continue: more than the trading wallet "
                     "holds. Deposit pUSD to resume.")


def test_no_event_shows_a_placeholder_whatever_its_payload_lacks():
    for name in catalogue.EVENT_TYPES:
        title, text = catalogue.render(name, {})
        assert title and "?" not in text and "None" not in text, (name, text)
        assert "{" not in text and "[" not in text, (name, text)


def test_amounts_prices_and_shares_read_as_numbers_people_write():
    _, text = catalogue.render("order.filled", {
        "side": "Bought", "size": Decimal("9.360000"), "price": Decimal("0.4500"),
        "amount": Decimal("4.212"), "market": "sbx-fc-exu-match-sbx",
        "market_title": "Will FC win?", "outcome": "No"})
    assert text == "Bought 9.36 shares of “Will FC win?” (No) at 0.45 for 4.21 pUSD."
    _, slug_only = catalogue.render("claim.completed", {"amount": Decimal("5.000000"),
                                                         "market": "sbx-fc-exu"})
    assert slug_only == "5.00 pUSD claimed from “sbx-fc-exu”."  # no title known: the slug
    _, deposit = catalogue.render("deposit.received", {"amount": Decimal(5), "token": "USDC.e"})
    assert deposit == "5.00 USDC.e arrived in your trading wallet."


def test_machines_keep_the_payload_fields():
    payload = {"market": "sbx-fc-exu", "market_title": "Will FC win?", "amount": "5"}
    data = catalogue.envelope("claim.completed", payload)
    assert data["market"]["untrusted_data"]["text"] == "sbx-fc-exu"
    assert data["market_title"]["untrusted_data"]["text"] == "Will FC win?"
    assert data["amount"] == "5"
