"""Execution quality per copy, end to end on the sandbox: the engine records the detection
source, each stage's delay and the slippage against the target's fill (hand-checked: the
house asks 0.51 and bids 0.49 around the target's 0.50 fills, so a buy and a sale are both
200 bps worse than the target's), and a delayed market's taker delay."""

from __future__ import annotations

from decimal import Decimal

from models.base import db
from models.trading import Order
from services.trading.execution_quality import STAGES
from tests.venue_lifecycle import delay_market
from tests.worker.copy_engine.conftest import inject, intents_of, owned, settled, wait_for
from tests.worker.copy_engine.test_venue_lifecycle import RECHECKING

MEASURED = ("decision_ms", "placement_ms", "ack_ms", "settlement_ms")


def _order_of(intent) -> Order:
    with db.connection_context():
        return Order.get(Order.target_trade_id == str(intent.id))


def test_a_live_buy_and_sale_record_their_source_stages_and_exact_slippage(
        run_engines, make_config, trader, market, target, venue_control, client, api_key):
    config = make_config(trader.user, target)
    sources: list[str] = []

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "SELL", "10", "0.5")
        await wait_for(settled(config, 2))
        stats = engines[0].stats
        sources.extend(["feed"] * stats.feed_fills + ["poll"] * stats.poll_fills)

    run_engines(scenario)
    buy, sale = intents_of(config)
    assert (buy.status, sale.status) == ("filled", "filled"), (buy.detail, sale.detail)
    # Bought at the house's ask 0.51 against the target's 0.50: (0.51 - 0.50) / 0.50.
    assert (buy.target_price, buy.filled_price) == (Decimal("0.5"), Decimal("0.51"))
    assert buy.slippage_bps == Decimal("200.00")
    # Sold at the house's bid 0.49 against the target's 0.50: worse for us, so positive.
    assert (sale.target_price, sale.filled_price) == (Decimal("0.5"), Decimal("0.49"))
    assert sale.slippage_bps == Decimal("200.00")
    assert sorted(i.detection_source for i in (buy, sale)) == sorted(sources)
    for intent in (buy, sale):
        assert all(getattr(intent, name) is not None and getattr(intent, name) >= 0
                   for name in MEASURED), [getattr(intent, n) for n in MEASURED]
        assert intent.detection_delay_ms is not None and intent.taker_delay_ms is None
        # The stages after detection fit inside the time from seeing it to settling it.
        spent = sum(getattr(intent, name) for name in MEASURED)
        assert spent <= (intent.settled_at - intent.seen_at).total_seconds() * 1000 + 5
        order = _order_of(intent)
        assert order.ack_ms == intent.ack_ms and order.placement_ms is not None
        assert order.taker_delay_ms is None
    # Each copy trade shows it over REST, in the list and alone: the source, the target's
    # price and ours, the signed slippage, the fee and every stage's delay.
    headers = {"Authorization": f"Bearer {api_key('read:trades', owner=trader.user)}"}
    listed = client.get(f"/api/trades?config_id={config.id}", headers=headers).get_json()
    assert len(listed) == 2
    for intent in (buy, sale):
        execution = {"source": intent.detection_source, "target_price": "0.5",
                     "price": str(intent.filled_price), "slippage_bps": "200",
                     "fee": str(intent.fee.normalize()),
                     "stages": {f"{name}_ms": getattr(intent, column)
                                for name, column in STAGES}}
        [row] = [t for t in listed if t["id"] == str(intent.trade_id)]
        assert row["execution"] == execution, row["execution"]
        alone = client.get(f"/api/trades/{intent.trade_id}", headers=headers).get_json()
        assert alone["execution"] == execution


def test_a_copy_on_a_delayed_market_records_the_taker_delay(
        run_engines, make_config, trader, market, target, venue_control, venue_clock):
    config = make_config(trader.user, target)
    delay_market(venue_control, market.condition_id, 5)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        [sent] = await wait_for(lambda: [i for i in intents_of(config) if i.status == "sent"])
        assert sent.taker_delay_ms == 5000 and sent.settlement_ms is None
        venue_clock.advance(5)
        await wait_for(lambda: [i for i in intents_of(config) if i.status == "filled"])

    run_engines(scenario, settings=RECHECKING)
    [intent] = intents_of(config)
    assert intent.taker_delay_ms == 5000 and intent.settlement_ms is not None
    assert intent.slippage_bps == Decimal("200.00") and intent.ack_ms is not None
    assert _order_of(intent).taker_delay_ms == 5000


def test_a_paper_copy_records_its_stages_and_slippage(run_engines, make_config, trader,
                                                      market, target, venue_control, client,
                                                      api_key):
    config = make_config(trader.user, target, paper_trading=True)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 1))

    run_engines(scenario)
    [intent] = intents_of(config)
    assert intent.status == "filled" and intent.paper
    assert intent.filled_price == Decimal("0.51") and intent.slippage_bps == Decimal("200.00")
    assert intent.detection_source in ("feed", "poll")
    assert all(getattr(intent, name) is not None for name in MEASURED)
    # The paper trade shows the same execution over REST.
    headers = {"Authorization": f"Bearer {api_key('read:trades', owner=trader.user)}"}
    [shown] = client.get("/api/paper/trades", headers=headers).get_json()
    assert shown["id"] == str(intent.trade_id)
    assert shown["execution"] == {
        "source": intent.detection_source, "target_price": "0.5", "price": "0.51",
        "slippage_bps": "200", "fee": str(intent.fee.normalize()),
        "stages": {f"{name}_ms": getattr(intent, column) for name, column in STAGES}}
