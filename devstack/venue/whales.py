"""Scripted whales: a background thread that makes a seeded-random whale trade every interval.

With the styles on (`copytrade up` turns them on), the thread's first tick also gives each
whale that has not traded yet one small buy, so all of them are on the leaderboard at once,
and two scripted styles a follower should not copy trade on every tick (on dice of their
own: the whales' trades are what they were): a market maker, whose bid and ask are both hit
in the same second, and a scalper, who sells each position on the tick after buying it.
"""

from __future__ import annotations

import random
from decimal import Decimal

from devstack.venue.amounts import SCALE
from devstack.venue.rejections import VenueRejection
from devstack.venue.state import SandboxState, derived_address
from devstack.venue.tape import Fill
from devstack.venue.ticker import Ticker

# (name, pseudonym) of the scripted styles, as the Data API shows them.
MAKER_PROFILE = ("QuoteMachine", "Steady-Spread")
SCALPER_PROFILE = ("FlipFast", "Quick-Turn")
STYLE_SIZE = Decimal(40)  # shares per fill of the maker and the scalper


class ScriptedStyles:
    """The market maker and the scalper of one sandbox state, on dice of their own."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self.rng = random.Random(f"sandbox-styles-{state.seed}")
        self.maker = derived_address(f"sandbox-maker-{state.seed}")
        self.scalper = derived_address(f"sandbox-scalper-{state.seed}")
        self.scalping: str | None = None  # the token the scalper holds, sold next tick

    def tick(self) -> list[Fill]:
        """One round: the maker's bid and ask both hit; the scalper buys or sells out."""
        state = self.state
        with state.lock:
            state.profiles.setdefault(self.maker.lower(), MAKER_PROFILE)
            state.profiles.setdefault(self.scalper.lower(), SCALPER_PROFILE)
            open_markets = [m for m in state.catalog.markets.values() if not m.closed]
            if not open_markets:
                return []
            fills: list[Fill] = []
            market = self.rng.choice(open_markets)
            token = market.token_ids[0]
            spacing = max(market.tick_size, Decimal("0.01"))
            low, high = market.tick_size, 1 - market.tick_size
            fair = min(max(market.fair_price, low + spacing), high - spacing)
            for side, price in (("BUY", fair - spacing), ("SELL", fair + spacing)):
                fills += state.desk.inject(self.maker, token, side, price=price,
                                           size=STYLE_SIZE, counterparty=None, rng=self.rng)
            fills += self._scalp(open_markets)
            return fills

    def introduce_whales(self) -> list[Fill]:
        """A first small buy for each whale that has not traded yet, so every whale is on the
        leaderboard from the first tick (the whales' own dice pick one whale a tick)."""
        state = self.state
        with state.lock:
            traded = {fill.proxy_wallet.lower() for fill in state.tape.fills}
            open_markets = [m for m in state.catalog.markets.values() if not m.closed]
            fills: list[Fill] = []
            for whale in state.whales:
                if whale.lower() in traded or not open_markets:
                    continue
                market = self.rng.choice(open_markets)
                fills += state.desk.inject(whale, market.token_ids[0], "BUY",
                                           price=market.fair_price, size=STYLE_SIZE,
                                           counterparty=None, rng=self.rng)
            return fills

    def _scalp(self, open_markets: list) -> list[Fill]:
        state = self.state
        token, self.scalping = self.scalping, None
        if token is not None:
            held = state.ledger.token_balance(self.scalper, token)
            try:
                market, index = state.catalog.market_for_token(token)
            except VenueRejection:  # its market ended and left the catalogue: start anew
                market, index = None, 0
            if market is not None and held > 0 and not market.closed:
                fair = market.fair_price if index == 0 else 1 - market.fair_price
                shares = Decimal(held) / SCALE
                return state.desk.inject(self.scalper, token, "SELL", price=fair,
                                         size=shares, counterparty=None, rng=self.rng)
        market = self.rng.choice(open_markets)
        token = market.token_ids[0]
        self.scalping = token
        return state.desk.inject(self.scalper, token, "BUY", price=market.fair_price,
                                 size=STYLE_SIZE, counterparty=None, rng=self.rng)


class WhaleRunner(Ticker):
    """Starts and stops the whale thread of one sandbox state."""

    def __init__(self, state: SandboxState) -> None:
        super().__init__("sandbox-whales", self.round, lambda: self.seconds)
        self.state = state
        self.seconds = state.config.whale_interval
        self.styles = ScriptedStyles(state)
        self.introduced = False  # every whale traded once (the first tick of the thread)
        self.with_styles = False  # the market maker and the scalper trade on each tick

    def round(self) -> list[Fill]:
        """One tick of the thread: a whale trade; with the styles on, also (the first time)
        a small buy of every whale not yet on the tape, and the maker's and scalper's."""
        fills = self.state.whale_tick()
        if not self.with_styles:
            return fills
        if not self.introduced:
            fills += self.styles.introduce_whales()
            self.introduced = True
        return fills + self.styles.tick()

    def start(self, interval: float | None = None, *, styles: bool | None = None) -> None:
        """Start trading every `interval` seconds (no-op when already running), with the
        scripted styles when ``styles``."""
        if styles is not None:
            self.with_styles = styles
        if interval is not None:
            self.seconds = max(0.01, float(interval))
        super().start()
