"""Copies decide by the market's live parameters (ACCOUNTS.md §11, issue 33 item 3): the
minimum order size ``mos`` of ``/clob-markets`` changes while the market trades; the engine's
sale of a copy and its dust rule use the new one, not the one Gamma's (cached) answer and
the followed book were seeded with."""

from __future__ import annotations

from decimal import Decimal

from tests.worker.copy_engine.conftest import inject, intents_of, owned, settled, wait_for


def test_a_copy_sale_keeps_no_dust_under_the_live_minimum(
        run_engines, make_config, trader, market, target, venue_control):
    config = make_config(trader.user, target)

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
        await wait_for(settled(config, 1))
        # The venue raises the market's minimum to 15. Gamma's answer (minimum 5) is still
        # cached here, as Gamma lags the CLOB; the live parameters' 10 s cache has run out.
        venue_control.call("POST", f"/markets/{market.condition_id}/parameters",
                           {"min_order_size": "15"}, expect=200)
        engine._venue.cache.invalidate("clob:params:")
        # The target sells 70% of its 40: 28 of our 40 would leave 12, under 15: dust.
        await inject(venue_control, target, market.yes, "SELL", "28", "0.5")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    buy, sale = intents_of(config)
    assert buy.status == "filled" and buy.filled_size == Decimal(40), (buy.reason, buy.detail)
    assert sale.status == "filled", (sale.reason, sale.detail)
    assert sale.size == Decimal(40) and "unsellable dust" in sale.detail
    assert "market minimum of 15.00" in sale.detail
