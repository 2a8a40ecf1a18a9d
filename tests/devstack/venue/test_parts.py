"""The sandbox state's parts: listeners hear the desk, reservations follow the book."""

from __future__ import annotations

from decimal import Decimal

from devstack.venue import SandboxConfig, SandboxState
from devstack.venue.amounts import SCALE
from devstack.venue.matching import cost_of

WALLET = "0x00000000000000000000000000000000000000aa"


class Recorder:
    """A BookListener that writes down what it hears."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, str]] = []

    def on_book_changed(self, market) -> None:
        self.heard.append(("book", market.condition_id))

    def on_trade(self, market, taker_index, side, size, fee_rate_bps, transaction_hash,
                 now) -> None:
        self.heard.append(("trade", market.condition_id))


def test_listeners_hear_the_trade_then_the_book_change() -> None:
    state = SandboxState(seed=5, clock=lambda: 1_700_000_000.0)
    recorder = Recorder()
    state.desk.listen(recorder)
    market = next(iter(state.catalog.markets.values()))
    with state.lock:
        fills = state.desk.inject(WALLET, market.token_ids[0], "BUY", price=None,
                                  size=Decimal(10), counterparty=None, rng=state.rng)
    assert fills and recorder.heard == [("trade", market.condition_id),
                                        ("book", market.condition_id)]
    with state.lock:
        state.settlement.resolve(market.condition_id, 0)
    assert recorder.heard[-1] == ("book", market.condition_id)


def test_the_market_channel_listens_to_the_desk_after_a_reset() -> None:
    state = SandboxState(seed=5)
    first = state.desk
    state.reset()
    assert state.desk is not first
    assert state.desk.listeners == [state.market_channel]


def test_resting_orders_reserve_and_closing_releases() -> None:
    state = SandboxState(SandboxConfig(house_liquidity=False), seed=5)
    market = next(iter(state.catalog.markets.values()))
    price, shares = Decimal("0.4"), 10 * SCALE
    with state.lock:
        bid = state.desk.rest(market, WALLET, 0, "BUY", price, shares, is_house=False)
        ask = state.desk.rest(market, WALLET, 1, "SELL", Decimal("0.7"), shares, is_house=False)
        assert state.ledger.reserved(WALLET) == (cost_of(shares, price),
                                                 {market.token_ids[1]: shares})
        state.desk.close(bid, "CANCELED")
        assert state.ledger.reserved(WALLET) == (0, {market.token_ids[1]: shares})
        state.desk.close(ask, "CANCELED")
        assert state.ledger.reserved(WALLET) == (0, {})
