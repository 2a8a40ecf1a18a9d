"""Issue 41, finding 1: every config's copy positions close when their market resolves, not
only those of configs with a loss or drawdown stop (paper ones included, which no claim
ever closes), so PnL and the exposure cap stop counting a market that is over."""

from __future__ import annotations

from decimal import Decimal

from models.base import db
from models.copying import CopyPosition
from services.copying import reservations
from services.trading import copy_positions, resolved_positions
from worker.maintenance import close_resolved_positions


def _row(config, token: str) -> CopyPosition:
    with db.connection_context():
        return CopyPosition.get(CopyPosition.config == config.id, CopyPosition.token_id == token)


def _hold(config, paper: bool, market, token: str, shares: str, cost: str) -> None:
    with db.connection_context():
        copy_positions.apply_position(config.id, paper, token, "BUY", Decimal(shares),
                                      Decimal(cost), condition_id=market.condition_id,
                                      market_slug=market.slug, outcome="Yes")


def test_a_resolved_markets_positions_close_at_payout_for_configs_without_a_stop(
        make_config, trader, target, market, venue_control) -> None:
    live = make_config(trader.user, target)  # no stop, no exit rule
    paper = make_config(trader.user, target, paper_trading=True)
    _hold(live, False, market, market.yes, "40", "20.40")
    _hold(paper, True, market, market.no, "10", "4.90")
    with db.connection_context():
        assert resolved_positions.close_resolved_markets() == []  # not resolved yet
        held = reservations.exposure([trader.user.id], False)[trader.user.id]
    assert held == Decimal("20.40")
    resolved_positions._asked.clear()  # the unresolved answer is remembered: ask again now

    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    with db.connection_context():
        assert close_resolved_positions() == 2
    won, lost = _row(live, market.yes), _row(paper, market.no)
    assert (won.shares, won.cost_usdc, won.realized_pnl) == (0, 0, Decimal("19.60"))
    assert (lost.shares, lost.cost_usdc, lost.realized_pnl) == (0, 0, Decimal("-4.90"))
    with db.connection_context():
        assert reservations.exposure([trader.user.id], False)[trader.user.id] == 0
        assert close_resolved_positions() == 0  # booked once
    assert _row(live, market.yes).realized_pnl == Decimal("19.60")
