"""services/trading/orders.py, order_reconcile.py, order_reads.py and order_cancels.py against
the sandbox venue over real HTTP: place, sign, reconcile, list, cancel."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest

from devstack.venue.order_signing import parse_order, recover_order_signer
from models.base import utcnow
from models.trading import Order, Trade
from services.platform import errors, venues
from services.trading import (
    order_cancels,
    order_plan,
    order_reads,
    order_reconcile,
    orders,
    previews,
)
from services.wallets import venue_accounts, wallets


def _received(venue_control, order_hash: str) -> list[dict]:
    return [e for e in venue_control.received_orders() if e["order_id"] == order_hash]


def _place(trader, token, side, size, kind, price=None, **extra):
    """What placing answers (PlaceOrderResponse's fields, the status as stored)."""
    quote = previews.create(trader.user, token, side, size, kind, price)
    return SimpleNamespace(**orders.placed_view(orders.place_order(
        trader.user, token_id=token, side=side, size=size, order_type=kind, price=price,
        preview_id=quote["preview_id"], **extra)))


def test_market_buy_sends_one_correctly_signed_fok_order(trader, market, venue_control,
                                                         venue_server):
    placed = _place(trader, market.yes, "buy", "10", "market")

    assert placed.status == "matched"
    assert placed.filled_size == Decimal("10")
    assert placed.average_price == Decimal("0.51")
    [entry] = _received(venue_control, placed.order_id)
    assert entry["status"] == 200
    body = entry["body"]
    assert body["orderType"] == "FOK"
    signed = body["order"]
    assert signed["maker"] == signed["signer"] == trader.maker
    assert signed["signatureType"] == 3  # the default account: a deposit wallet
    assert signed["side"] == "BUY"
    # The budget is the walked cost (10 x 0.51); the protective limit is 0.51 + 3% on the
    # tick grid (0.53): at most 5.1 / 0.53 shares' worth of price movement is accepted.
    assert signed["makerAmount"] == "5100000"
    assert signed["takerAmount"] == "9622600"
    state = venue_server.state
    exchange = state.config.exchange_for(False)
    # the deposit wallet's owner signs (ERC-7739, checked by the wallet's ERC-1271)
    assert recover_order_signer(parse_order(signed), state.config.chain_id, exchange) \
        == trader.address
    assert venue_control.balances(trader.maker)["positions"] == {market.yes: "10"}
    order = Order.get(Order.order_hash == placed.order_id)
    assert order.status == "matched" and order.time_in_force == "FOK"
    assert order.price == Decimal("0.53") and order.budget == Decimal("5.1")
    assert json.loads(order.signed_body)["order"]["signature"] == signed["signature"]
    trade = Trade.get_by_id(placed.trade_id)
    assert (trade.status, trade.filled_size, trade.filled_value) == (
        "filled", Decimal("10"), Decimal("5.1"))
    assert trade.filled_at is not None


def test_limit_order_rests_then_fills_and_the_trade_follows(trader, make_trader,
                                                             make_sandbox_market, venue_control):
    market = make_sandbox_market(liquidity=False)
    placed = _place(trader, market.yes, "buy", "20", "limit", "0.45")
    assert placed.status == "live"
    assert placed.filled_size == 0
    [entry] = _received(venue_control, placed.order_id)
    assert entry["body"]["orderType"] == "GTC"
    listed = order_reads.open_orders(trader.user)
    assert [(o["order_id"], o["price"], o["size"], o["order_type"]) for o in listed] == [
        (placed.order_id, Decimal("0.45"), Decimal("20"), "limit")]
    assert Trade.get_by_id(placed.trade_id).status == "pending"

    # Another trader sells into the resting bid: the maker fill shows up on sync.
    seller = make_trader()
    venue_control.grant(seller.maker, market.yes, "20")  # held a while: the CLOB has seen them
    sold = _place(seller, market.yes, "sell", "20", "limit", "0.45")
    assert sold.status == "matched" and sold.average_price == Decimal("0.45")
    order_reconcile.sync_user_orders(trader.user)
    trade = Trade.get_by_id(placed.trade_id)
    assert (trade.status, trade.filled_size, trade.filled_value) == (
        "filled", Decimal("20"), Decimal("9.00"))
    assert order_reads.open_orders(trader.user) == []


def test_cancel_only_own_orders(trader, make_trader, market, venue_control):
    mine = _place(trader, market.yes, "buy", "10", "limit", "0.40")
    other = make_trader()
    theirs = _place(other, market.yes, "buy", "10", "limit", "0.41")

    with pytest.raises(errors.NotFound):
        order_cancels.cancel_order(trader.user, theirs.order_id)
    result = order_cancels.cancel_order(trader.user, mine.order_id)
    assert result == {"canceled": [mine.order_id], "not_canceled": {}}
    assert Trade.get_by_id(mine.trade_id).status == "cancelled"
    assert [o["order_id"] for o in order_reads.open_orders(other.user)] == [theirs.order_id]
    again = order_cancels.cancel_order(trader.user, mine.order_id)
    assert again["canceled"] == [] and mine.order_id in again["not_canceled"]

    second = _place(trader, market.yes, "buy", "10", "limit", "0.39")
    third = _place(trader, market.no, "buy", "10", "limit", "0.39")
    result = order_cancels.cancel_all(trader.user)
    assert sorted(result["canceled"]) == sorted([second.order_id, third.order_id])
    assert order_reads.open_orders(trader.user) == []
    assert [o["order_id"] for o in order_reads.open_orders(other.user)] == [theirs.order_id]


def test_insufficient_collateral_is_402_before_sending(make_trader, market, venue_control):
    poor = make_trader(funds="2")
    quote = previews.create(poor.user, market.yes, "buy", "10", "market")
    before = len(venue_control.received_orders())
    with pytest.raises(errors.InsufficientBalance) as caught:
        orders.place_order(poor.user, token_id=market.yes, side="buy", size="10",
                           order_type="market", preview_id=quote["preview_id"])
    assert caught.value.status == 402 and "5.1" in caught.value.message
    assert len(venue_control.received_orders()) == before
    assert Order.select().count() == 0
    # The preview was not consumed by the refusal.
    assert previews.check(poor.user, quote["preview_id"], market.yes, "buy", Decimal(10),
                          "market", None)


def test_venue_refusal_is_rejected_with_its_reason(trader, market, venue_control):
    # A sell without shares: the venue refuses on balance.
    placed = _place(trader, market.yes, "sell", "10", "limit", "0.60")
    assert placed.status == "rejected"
    assert placed.reason == "not enough balance / allowance"
    assert Order.get(Order.order_hash == placed.order_id).status == "rejected"
    assert Trade.get_by_id(placed.trade_id).status == "failed"


def test_a_legacy_eoa_the_venue_allowlists_trades_as_type_0(make_eoa_trader, market,
                                                              venue_control):
    eoa = make_eoa_trader("100")
    placed = _place(eoa, market.yes, "buy", "10", "market")
    assert placed.status == "matched", placed.reason
    [entry] = _received(venue_control, placed.order_id)
    signed = entry["body"]["order"]
    assert signed["signatureType"] == 0
    assert signed["maker"] == signed["signer"] == eoa.address == eoa.maker
    assert venue_control.balances(eoa.address)["positions"] == {market.yes: "10"}


def test_deposit_wallet_signature_type_3(trader, market, venue_control, venue_server):
    # The default account: an onboarded deposit wallet, under the venue's strict rules.
    deposit = trader.maker
    assert deposit == trader.wallet.funder_address != trader.address
    placed = _place(trader, market.yes, "buy", "10", "market")
    assert placed.status == "matched", placed.reason
    [entry] = _received(venue_control, placed.order_id)
    signed = entry["body"]["order"]
    assert signed["signatureType"] == 3
    assert signed["maker"] == signed["signer"] == deposit
    assert len(signed["signature"]) == 636
    assert venue_control.balances(deposit)["positions"] == {market.yes: "10"}
    assert venue_control.balances(trader.address)["positions"] == {}
    assert venue_accounts.maker_address(trader.user) == deposit


def test_credentials_are_derived_once_and_stored_sealed(user):
    wallet = wallets.get_or_create(user)  # new, not onboarded yet: no credentials
    assert wallets.venue_credentials(wallet) is None
    first = venue_accounts.account(user)
    stored = wallets.venue_credentials(wallets.get_or_create(user))
    assert stored is not None and stored.api_key == first.creds.api_key
    assert first.creds.secret not in wallets.get_or_create(user).venue_api_secret_sealed
    assert venue_accounts.account(user).creds.api_key == first.creds.api_key


def test_copy_trade_goes_through_the_same_function(trader, market):
    from models.base import utcnow

    config_id = "6f0c1a44-6a53-4cbb-9d1f-3f8ab5a0c9a1"
    detected = utcnow() - timedelta(milliseconds=250)
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", source="copy", config_id=config_id,
                                target_trade_id="0xabc:1", detected_at=detected,
                                time_in_force="FAK")
    assert placed.status == "matched"
    order = Order.get(Order.order_hash == placed.order_hash)
    assert (order.source, str(order.config_id), order.target_trade_id, order.time_in_force) \
        == ("copy", config_id, "0xabc:1", "FAK")
    trade = Trade.get_by_id(placed.id)  # the Trade shares its Order's id
    assert str(trade.config_id) == config_id
    assert trade.latency_ms is not None and trade.latency_ms >= 250


def test_manual_orders_need_a_preview(trader, market):
    with pytest.raises(errors.BadRequest, match="needs a preview_id"):
        orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                           order_type="market")


def _past_the_grace(order: Order) -> None:
    """Time passes: the order was sent longer ago than "not found" may mean "on its way"."""
    Order.update(submitted_at=utcnow() - order_reconcile.not_found_grace() - timedelta(seconds=1)) \
        .where(Order.id == order.id).execute()


def test_record_is_written_before_sending_and_reconciled_by_hash(trader, market, venue_control):
    # The venue fails the POST before reading it: the record exists; the venue does not
    # know the order, which may still be on its way, so it stays pending for the grace.
    # A manual order answers 503 polymarket_unavailable naming the order, never 200.
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "count": 1}, expect=201)
    with pytest.raises(errors.VenueUnavailable) as caught:
        _place(trader, market.yes, "buy", "10", "market")
    assert caught.value.code == "polymarket_unavailable" and caught.value.retry_after
    order = Order.get(Order.order_hash == caught.value.details["order_id"])
    assert order.status == "pending" and order.submitted_at is not None
    assert order_reconcile.reconcile(order.id).status == "pending"  # looked up again: still unknown
    _past_the_grace(order)
    order = order_reconcile.reconcile(order.id)
    assert order.status == "failed" and "never reached" in order.error
    assert Trade.get_by_id(order.id).status == "failed"
    assert _received(venue_control, order.order_hash) == []


def test_not_found_within_the_grace_stays_pending_and_a_later_lookup_settles_it(
        trader, market, venue_control):
    """Looked up while its POST is still on its way, an order is not failed (finding 8)."""
    acct = venue_accounts.account(trader.user)
    prepared = orders.prepare_order(trader.user, order_plan.OrderRequest.checked(
        market.yes, "buy", "10", "market", time_in_force="FAK"), orders.Origin("copy"))
    [order] = orders.record_orders([prepared])
    assert order_reconcile.reconcile(order.id, acct=acct).status == "pending"  # not sent yet
    assert Trade.get_by_id(order.id).status == "pending"
    settled = orders.settle(order, prepared, orders.post(prepared))
    assert (settled.id, settled.status) == (order.id, "matched")
    order = order_reconcile.reconcile(order.id, acct=acct)
    assert (order.status, order.filled_size) == ("matched", Decimal(10))
    assert venue_control.balances(trader.maker)["positions"] == {market.yes: "10"}
    _past_the_grace(order)  # a final status is never replaced, even by a late "not found"
    assert order_reconcile.reconcile(order.id, acct=acct).status == "matched"


def test_crash_after_send_is_reconciled_from_the_venue(trader, market, venue_control):
    """The process dies right after POSTing: the pending record is settled by its hash."""
    acct = venue_accounts.account(trader.user)
    plan = order_plan.plan_order(market.yes, "buy", Decimal(10), "market")
    signed = orders._sign(acct, plan)
    order = Order.create(user=trader.user.id, maker_address=acct.maker, token_id=market.yes,
                         side="buy", order_type="market", time_in_force="FOK", size=10,
                         price=plan.limit_price, budget=plan.budget,
                         order_hash=signed.order_hash,
                         signed_body=signed.body(acct.creds.api_key))
    trade = Trade.create(user=trader.user.id, order=order.id, token_id=market.yes, side="buy",
                         requested_size=10, price=plan.limit_price)
    venues.client().clob.post_order(acct.creds, signed)  # ...and the process "dies" here

    assert order_reconcile.reconcile_pending(older_than=timedelta(0)) == 1
    order = Order.get_by_id(order.id)
    assert order.status == "matched" and order.filled_size == Decimal(10)
    assert Trade.get_by_id(trade.id).status == "filled"
    # Nothing was sent twice.
    assert len(_received(venue_control, signed.order_hash)) == 1


def test_unknown_token_is_not_found(trader):
    with pytest.raises(errors.NotFound):
        previews.create(trader.user, str(secrets.randbits(200)), "buy", "10", "market")


def test_lost_answer_is_queued_for_reconciliation(trader, market, venue_control):
    from services.platform import jobs

    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "count": 1}, expect=201)
    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 20}, expect=201)
    try:
        with pytest.raises(errors.VenueUnavailable) as caught:
            _place(trader, market.yes, "buy", "10", "market")
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    order = Order.get(Order.order_hash == caught.value.details["order_id"])
    assert order.status == "pending" and order.filled_size == 0
    queued = jobs.fetch(jobs.qualified_job_id(f"reconcile-{order.id}"))
    assert queued is not None and queued.func_name == order_reconcile.RECONCILE_JOB
    assert queued.args == [str(order.id)]  # JSON-serialized job: a list
    queued.delete()
    # What the job does, once the venue answers again: not there yet, so it stays pending
    # (maintenance looks it up again); once the grace has passed, it never arrived.
    assert order_reconcile.reconcile(str(order.id)).status == "pending"
    _past_the_grace(order)
    assert order_reconcile.reconcile(str(order.id)).status == "failed"
    assert Trade.get_by_id(order.id).status == "failed"


def test_plan_and_sign_reads_nothing_and_signs_what_prepare_order_would(
        trader, market, monkeypatch):
    """The engine's path is pure: with the venue and the database cut off (faults injected),
    it plans and signs from what it is given, the same order ``prepare_order`` reads for."""
    import peewee

    acct = venue_accounts.account(trader.user)
    book, info = order_plan.read_market(market.yes)
    request = order_plan.OrderRequest.checked(market.yes, "buy", "10", "market",
                                              time_in_force="FAK")
    read = orders.prepare_order(trader.user, request, orders.Origin("copy"))

    def cut_off(*args, **kwargs):
        raise AssertionError("plan_and_sign reached the venue or the database")

    monkeypatch.setattr(venues, "client", cut_off)
    monkeypatch.setattr(peewee.Database, "execute_sql", cut_off)
    pure = orders.plan_and_sign(trader.user.id, acct, request, book=book, market=info,
                                origin=orders.Origin("copy"), available=Decimal(100))
    assert (pure.plan.size, pure.plan.limit_price, pure.plan.budget, pure.plan.time_in_force) \
        == (read.plan.size, read.plan.limit_price, read.plan.budget, "FAK")
    mine, theirs = json.loads(pure.body)["order"], json.loads(read.body)["order"]
    same = ("maker", "signer", "tokenId", "makerAmount", "takerAmount", "side",
            "signatureType")
    assert {k: mine[k] for k in same} == {k: theirs[k] for k in same}
    # A collateral figure that cannot pay refuses the buy before anything is signed.
    with pytest.raises(errors.InsufficientBalance, match=r"needs up to 5\.1 "):
        orders.plan_and_sign(trader.user.id, acct, request, book=book, market=info,
                             available=Decimal(5))
