"""order.filled and order.failed from the product's own order path against the sandbox venue:
a manual order that fills, a refused one, and a fill whose venue trade FAILED at settlement;
each told once, over real HTTP, to a webhook receiver checking signatures with the reference
package."""

from __future__ import annotations

from datetime import timedelta

from models.notifications import Notification
from services.markets import catalogue
from services.notifications import channels
from services.trading import order_reconcile
from tests.chain_venue import run_queued_jobs
from tests.notifications.fakes import WebhookReceiver, running
from tests.services.trading.test_order_lifecycle import _place, _seller

DELIVER = {"notifications.deliver"}


def _told(hook: WebhookReceiver) -> list[tuple[str, dict]]:
    run_queued_jobs(only=DELIVER)
    return [(b["type"], b["data"]) for b in hook.bodies()]


def test_a_fill_then_its_failed_settlement_are_each_told_once(
        tune, trader, make_trader, make_sandbox_market, venue_control, venue_clock,
        prefix):
    market = make_sandbox_market(liquidity=False)
    _seller(make_trader, market, venue_control)
    with running(WebhookReceiver()) as hook:
        added = channels.add(trader.user, "webhook", url=hook.url + "/hook")
        hook.secrets.append(added.secret)
        # The venue matches the buy, then its trade goes RETRYING and FAILED.
        venue_control.call("POST", "/lifecycle", {"fail_next": 1, "mined_after": 1,
                                                  "confirmed_after": 3}, expect=200)
        placed = _place(trader, market.yes, "buy", "10", "market")
        assert placed.status == "matched"
        [(kind, filled)] = _told(hook)
        assert kind == "order.filled"
        assert filled["payload"]["size"] == "10" and filled["payload"]["side"] == "Bought"
        question = catalogue.named(token_id=market.yes)["market_title"]
        assert filled["text"].startswith(f"Bought 10.00 shares of “{question}” (Yes) at ")
        assert filled["payload"]["market_title"]["untrusted_data"]["text"] == question
        for seconds in (1, 2):
            venue_clock.advance(seconds)
            order_reconcile.reconcile_pending(older_than=timedelta(0))
        told = _told(hook)
        assert [kind for kind, _ in told] == ["order.filled", "order.failed"]
        failed = told[-1][1]
        assert failed["payload"]["order_id"] == str(placed.trade_id)
        assert failed["payload"]["size"] == "10"
        assert "failed at settlement" in failed["text"], failed["text"]
        # Reconciling again finds nothing new to tell.
        order_reconcile.reconcile(placed.trade_id)
        assert len(_told(hook)) == 2 and hook.rejected == 0
    assert Notification.select().where(Notification.type == "order.failed").count() == 1


def test_a_refused_order_is_told_as_failed(tune, trader, make_sandbox_market,
                                           venue_control,
                                           prefix):
    market = make_sandbox_market()
    with running(WebhookReceiver()) as hook:
        added = channels.add(trader.user, "webhook", url=hook.url + "/hook")
        hook.secrets.append(added.secret)
        # A sell without shares: the venue refuses on balance.
        placed = _place(trader, market.yes, "sell", "10", "limit", "0.60")
        assert placed.status == "rejected"
        [(kind, data)] = _told(hook)
    assert kind == "order.failed"
    # The venue's words and the market's title are third-party text: in the envelope.
    assert data["payload"]["reason"] == {"untrusted_data": {
        "source": "third_party", "text": "not enough balance / allowance"}}
    assert data["payload"]["market"]["untrusted_data"]["source"] == "third_party"
    assert data["text"].endswith("failed: not enough balance / allowance.")
