"""The sandbox's scripted market maker and scalper beside the whales (issue 46): on the
leaderboard with every whale from the thread's first round, trading the way their names say,
without changing what a whale tick does."""

from __future__ import annotations

from devstack.venue.data_api import leaderboard_rows
from devstack.venue.state import SandboxState
from devstack.venue.whales import MAKER_PROFILE, SCALPER_PROFILE, WhaleRunner


def test_the_first_round_puts_every_whale_and_both_styles_on_the_leaderboard():
    state = SandboxState()
    runner = WhaleRunner(state)
    runner.with_styles = True  # as `copytrade up` starts them
    runner.round()
    board = {row["proxyWallet"]: row["userName"] for row in leaderboard_rows(state, "ALL",
                                                                              "VOL")}
    for whale in state.whales:
        assert whale.lower() in board
    assert board[runner.styles.maker.lower()] == MAKER_PROFILE[0]
    assert board[runner.styles.scalper.lower()] == SCALPER_PROFILE[0]
    runner.round()  # later rounds add no introductions: one whale trade a round
    assert sum(1 for f in state.tape.fills if f.proxy_wallet.lower() in
               {w.lower() for w in state.whales}) == 4 + 1


def test_without_the_styles_a_round_is_a_whale_tick():
    state = SandboxState()
    fills = WhaleRunner(state).round()
    assert {f.proxy_wallet for f in fills} <= set(state.whales) | {state.house}


def test_a_whale_tick_is_what_it_was():
    """The whales' dice are theirs alone: the same seed gives the same whale trades whether
    or not the styles trade in between."""
    alone, beside = SandboxState(), SandboxState()
    styles = WhaleRunner(beside).styles

    def whale_trades(state: SandboxState, with_styles: bool) -> list[tuple]:
        made = []
        for _ in range(6):
            made += [(f.proxy_wallet, f.side, f.size) for f in state.whale_tick()
                     if f.proxy_wallet in state.whales]
            if with_styles:
                styles.tick()
        return made

    assert whale_trades(alone, False) == whale_trades(beside, True)


def test_the_maker_quotes_both_sides_and_the_scalper_sells_next_round():
    state = SandboxState()
    styles = WhaleRunner(state).styles
    first = styles.tick()
    maker = [f for f in first if f.proxy_wallet == styles.maker]
    assert [f.side for f in maker] == ["BUY", "SELL"]
    assert maker[0].price < maker[1].price and maker[0].asset == maker[1].asset
    scalper = [f for f in first if f.proxy_wallet == styles.scalper]
    assert [f.side for f in scalper] == ["BUY"]
    sold = [f for f in styles.tick() if f.proxy_wallet == styles.scalper]
    assert sold[0].side == "SELL" and sold[0].asset == scalper[0].asset
    assert sold[0].size == scalper[0].size


def test_the_scalper_starts_anew_when_its_token_left_the_catalogue():
    """Attaching the dev chain resets the sandbox to a catalogue of the chain's token ids:
    the scalper's held token from before is unknown there, and its round buys anew."""
    state = SandboxState()
    styles = WhaleRunner(state).styles
    styles.tick()
    styles.scalping = "1" * 70  # a token of the catalogue before the reset
    fills = [f for f in styles.tick() if f.proxy_wallet == styles.scalper]
    assert [f.side for f in fills] == ["BUY"]
    assert styles.scalping in state.catalog.tokens
