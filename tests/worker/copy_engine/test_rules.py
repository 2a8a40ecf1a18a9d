"""Issue 27's rules end to end: the engine against the sandbox venue (real HTTP, RTDS, Redis,
the database): budgets, loss stops that close, the failure breaker, copying open positions at
start, inverse copies, markets ending soon, keyword filters, dust, paper configs."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

import trio

from models.base import db, utcnow
from models.copying import CopyConfig, CopyPosition
from tests.worker.copy_engine.conftest import inject, intents_of, owned, settled, wait_for


def _notice(user, kind: str):
    from models.notifications import Notification

    with db.connection_context():
        return Notification.get_or_none(Notification.user == user.id, Notification.type == kind)


def _config(config: CopyConfig) -> CopyConfig:
    with db.connection_context():
        return CopyConfig.get_by_id(config.id)


def test_a_daily_budget_runs_out_mid_day_and_a_sale_gives_back(run_engines, make_config,
                                                               trader, market, target,
                                                               venue_control):
    # 12 pUSD a day: the first 20 shares (about 10.2 pUSD at 0.51) fit, the next do not.
    config = make_config(trader.user, target, daily_budget_usdc=Decimal(12))

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 2))
        await inject(venue_control, target, market.yes, "SELL", "40", "0.49")  # all of it
        await wait_for(settled(config, 3))
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 4))

    run_engines(scenario)
    first, second, sale, after = intents_of(config)
    assert first.status == "filled" and first.filled_size == Decimal(20)
    assert (second.status, second.reason) == ("skipped", "daily_budget_exhausted")
    assert sale.status == "filled" and sale.side == "SELL"
    assert after.status == "filled", (after.reason, after.detail)  # the sale gave back


def test_a_loss_stop_stops_the_config_and_closes_its_positions(run_engines, make_config,
                                                               trader, market, target,
                                                               venue_control):
    # Bought at the 0.51 ask and marked at the 0.49 bid, 40 shares lose about 0.8 pUSD.
    config = make_config(trader.user, target, loss_stop_usdc=Decimal("0.5"),
                         close_positions_on_stop=True)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")

        def stopped():
            return not _config(config).is_active and len(intents_of(config)) >= 3 and all(
                i.status not in ("pending", "sent") for i in intents_of(config))

        await wait_for(stopped)

    run_engines(scenario)
    stored = _config(config)
    assert not stored.is_active and stored.stopped_reason == "loss_stop"
    stopped = _notice(trader.user, "config.stopped")
    assert '"reason": "loss_stop"' in stopped.payload
    assert stopped.text.endswith(" stopped: its loss reached the config's loss stop.")
    assert "Closing positions: 1 of 1" in stored.last_error
    kinds = {(i.kind, i.status, i.reason) for i in intents_of(config)}
    assert ("loss_stop", "skipped", "loss_stop") in kinds  # the stop itself, counted
    [close] = [i for i in intents_of(config) if i.kind == "loss_stop" and i.side == "SELL"]
    assert close.status == "filled" and close.filled_size == Decimal(40)
    assert close.price == Decimal("0.47")  # the bid 0.49 less 5% (price_deviation_bps 500)
    assert venue_control.balances(trader.address)["positions"] in ({}, {market.yes: "0"})


def test_the_breaker_opens_after_failures_and_a_success_closes_it(run_engines, make_config,
                                                                  make_trader, market,
                                                                  target, venue_control):
    poor = make_trader(funds="1")
    config = make_config(poor.user, target, max_consecutive_failures=2)

    async def scenario(engines):
        await owned(engines[0], target)
        for count in (1, 2, 3):
            await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
            await wait_for(settled(config, count))
        stored = _config(config)
        assert stored.breaker_state == "open" and stored.breaker_failures == 2
        assert stored.breaker_last_reason == "insufficient_balance"
        # Funds arrive and the pause ends: the next copy goes out and closes the breaker.
        await trio.to_thread.run_sync(lambda: venue_control.call(
            "POST", "/fund", {"address": poor.address, "amount": "500", "seen": True}))
        for snap in engines[0].targets[target].configs.values():
            snap.retry_ts = 0
        engines[0].wallets.accounts.get(poor.user.id).refreshed_at = 0.0
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 4))
        # The breaker is written after the outcome: wait for it before the engine stops.
        await wait_for(lambda: _config(config).breaker_state == "closed")

    run_engines(scenario)
    reasons = [(i.status, i.reason) for i in intents_of(config)]
    assert reasons[:3] == [("skipped", "insufficient_balance")] * 2 + [
        ("skipped", "breaker_open")]
    assert reasons[3][0] == "filled", intents_of(config)[3].detail
    stored = _config(config)
    assert (stored.breaker_state, stored.breaker_failures, stored.breaker_retry_at) == (
        "closed", 0, None)
    assert _notice(poor.user, "config.breaker_opened") is not None


def test_copy_open_positions_mirrors_what_the_target_holds_at_start(run_engines, make_config,
                                                                    trader, market, target,
                                                                    venue_control):
    venue_control.call("POST", "/trades", {"wallet": target, "token_id": market.no,
                                           "side": "BUY", "size": "30", "price": "0.5"},
                       expect=201)
    config = make_config(trader.user, target, start_mode="copy_open_positions",
                         size_multiplier=Decimal("0.5"),
                         started_at=utcnow() + timedelta(seconds=1))

    async def scenario(engines):
        await owned(engines[0], target)
        await wait_for(settled(config, 1))

    run_engines(scenario)
    [intent] = intents_of(config)
    assert (intent.kind, intent.token_id, intent.side, intent.status) == (
        "open_position", market.no, "BUY", "filled")
    assert intent.filled_size == Decimal(15)
    # A restart of the engine does not copy them again.
    run_engines(lambda engines: owned(engines[0], target))
    assert len(intents_of(config)) == 1


def test_inverse_buys_and_sells_the_other_outcome(run_engines, make_config, trader, market,
                                                  target, venue_control):
    config = make_config(trader.user, target, direction="inverse")

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "SELL", "20", "0.49")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    buy, sell = intents_of(config)
    assert (buy.token_id, buy.side, buy.status) == (market.no, "BUY", "filled")
    assert buy.filled_size == Decimal(20) and buy.target_price == Decimal("0.5")
    assert (sell.token_id, sell.side, sell.status) == (market.no, "SELL", "filled"), \
        (sell.reason, sell.detail)
    with db.connection_context():
        assert CopyPosition.get(CopyPosition.config == config.id).token_id == market.no


def test_markets_ending_soon_and_keyword_filters_skip(run_engines, make_config, make_trader,
                                                      target, venue_control):
    slug = f"soon-{secrets.token_hex(4)}"
    summary = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                       category="politics", days_to_end=1,
                                       question=f"Will the Ceasefire hold ({slug})?")
    token = summary["token_ids"][0]
    soon = make_config(make_trader().user, target, skip_if_ends_within_hours=Decimal(48))
    later = make_config(make_trader().user, target, skip_if_ends_within_hours=Decimal(12))
    excluded = make_config(make_trader().user, target, exclude_keywords='["ceasefire"]')
    included = make_config(make_trader().user, target, include_keywords='["zzz-nowhere"]')

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, token, "BUY", "20", "0.5")
        for config in (soon, later, excluded, included):
            await wait_for(settled(config))

    run_engines(scenario)
    assert [(i.status, i.reason) for i in intents_of(soon)] == [("skipped", "market_ends_soon")]
    assert intents_of(later)[0].status == "filled"
    assert [i.reason for i in intents_of(excluded)] == ["keyword_excluded"]
    assert [i.reason for i in intents_of(included)] == ["keyword_not_included"]


def test_a_sell_that_would_leave_dust_sells_the_whole_holding(run_engines, make_config,
                                                              trader, market, target,
                                                              venue_control):
    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "12", "0.5")
        await wait_for(settled(config, 1))
        # 60% of 12 is 7.2, leaving 4.8: under the 5-share minimum, so all 12 go.
        await inject(venue_control, target, market.yes, "SELL", "7.2", "0.49")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    _, sell = intents_of(config)
    assert sell.status == "filled" and sell.size == Decimal(12), (sell.reason, sell.detail)
    assert "unsellable dust" in sell.detail


def test_paper_configs_honour_the_rules(run_engines, make_config, trader, market, target,
                                        venue_control):
    fixed = make_config(trader.user, target, paper_trading=True, sizing_mode="fixed_usdc",
                        fixed_usdc=Decimal("5.2"), total_budget_usdc=Decimal(7))
    band = make_config(trader.user, target, paper_trading=True, min_price=Decimal("0.6"))

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "100", "0.5")
        await wait_for(settled(fixed, 1))
        await wait_for(settled(band, 1))
        await inject(venue_control, target, market.yes, "BUY", "100", "0.5")
        await wait_for(settled(fixed, 2))

    run_engines(scenario)
    first, second = intents_of(fixed)
    assert first.paper and first.status == "filled" and first.size == Decimal(10)
    assert (second.status, second.reason) == ("skipped", "total_budget_exhausted")
    assert [i.reason for i in intents_of(band)] == ["price_out_of_range"] * 2


def test_an_edit_applies_to_the_next_fill_and_never_recopies_an_old_one(
        run_engines, make_config, trader, market, target, venue_control):
    from services.copying import configs

    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 1))
        await trio.to_thread.run_sync(lambda: configs.update(
            trader.user, config.id, {"copy_buys": False, "max_trade_usdc": "3"}))

        def reloaded():
            snap = engines[0].targets[target].configs.get(config.id)
            return snap is not None and not snap.rules.copy_buys

        await wait_for(reloaded)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 2))
        await engines[0].targets[target].poll_once()  # the old fill is seen again

    run_engines(scenario)
    first, second = intents_of(config)
    assert first.status == "filled" and first.filled_size == Decimal(20)
    assert (second.status, second.reason) == ("skipped", "buys_disabled")


def test_a_position_is_sold_hours_before_its_market_ends(run_engines, make_config, trader,
                                                         target, venue_control):
    slug = f"ending-{secrets.token_hex(4)}"
    summary = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                       category="politics", days_to_end=1)
    token = summary["token_ids"][0]
    config = make_config(trader.user, target, exit_hours_before_end=Decimal(48))

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, token, "BUY", "20", "0.5")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    buy, exit_sale = intents_of(config)
    assert buy.status == "filled"
    assert (exit_sale.kind, exit_sale.side, exit_sale.status) == ("market_end", "SELL", "filled")
    assert exit_sale.filled_size == Decimal(20)


def test_the_users_exposure_limit_spans_its_configs(run_engines, make_config, trader, market,
                                                    target, venue_control):
    from models import User

    with db.connection_context():
        User.update(max_total_exposure_usdc=Decimal(12)).where(
            User.id == trader.user.id).execute()
    first = make_config(trader.user, target)
    second = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(first, 1))
        await wait_for(settled(second, 1))
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(first, 2))
        await wait_for(settled(second, 2))

    run_engines(scenario)
    decisions = sorted((i.status, i.reason) for c in (first, second) for i in intents_of(c))
    # 12 pUSD in all: about 10.4 for the first copy, the rest too little for 5 shares,
    # even for the other config copying the same fill.
    assert decisions == [("filled", None)] + [("skipped", "exposure_limit")] * 3
