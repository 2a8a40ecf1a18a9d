"""``ExitSchedule``: when a target's configs have exit work, without visiting every config.

Exits (take-profit, stop-loss, the loss and drawdown stops, the sale before a market's
end) are asked of a target's watcher only:

- when a held token's best bid moves on the market channel (``moved``), for the targets
  whose configs hold it with an exit rule: every exit verdict reads the book through its
  best bid alone (take-profit and stop-loss, the stops' marks, a closing sale's limit), so
  a move deeper in the book or on the asks (copies buying, the venue's other makers)
  asks for nothing; moves are gathered for ``COALESCE_SECONDS`` so a busy book costs one
  check per target, not one per frame;
- when a clock comes due: a heap keyed by each held position's exit-before-end time (the
  market's end less the config's ``exit_hours_before_end``), re-armed every
  ``exit_check_seconds`` while the position is still held after its time;
- once when a target starts, a config is (re)loaded or a fill moved its holdings (a
  position opened past its take-profit, a realised loss reaching a loss stop, the
  target's positions to copy at start, retried while unreadable);
- every ``exit_check_seconds`` while a loss or drawdown stop values a position only
  provisionally (no bid: its last bid) or not at all (one timer per target), so a
  resolution is booked and a stop without a verdict is timed without waiting for a move;
- for held tokens whose book the market channel does not follow in sync (the channel is
  off or down, or dropped the book), every ``exit_check_seconds``: polling, but of those
  tokens' holders only.

The schedule is told what each target's configs hold after every fill and check
(``update``): the work is per target touched, never a pass over every config.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal

import trio

from worker.copy_engine.settings import EngineSettings
from worker.copy_engine.store import ConfigSnapshot

log = logging.getLogger("copytrade.copy_engine")

COALESCE_SECONDS = 0.1  # book moves gathered before the checks they ask for are sent
TIMER_MARGIN_SECONDS = 0.05  # a timer fires this much after its time (clocks differ)
ALL = None  # a target's whole exit work (not one token's)


def _exit_rules(config: ConfigSnapshot) -> bool:
    rules = config.rules
    return bool(rules.take_profit_bps or rules.stop_loss_bps
                or rules.exit_hours_before_end is not None or rules.needs_stop_check)


class ExitSchedule:
    """Held tokens per target, the exit-before-end timers and the checks they are due."""

    def __init__(self, settings: EngineSettings,
                 request: Callable[[str, frozenset[str] | None], None],
                 market_end: Callable[[str], Awaitable[int | None]],
                 live: Callable[[str], bool],
                 opening_due: Callable[[ConfigSnapshot], bool],
                 bid: Callable[[str], Decimal | None]) -> None:
        self.settings = settings
        # (target, tokens or ALL): queue a check on its watcher; False when it was dropped
        self._request = request
        self._market_end = market_end  # a token's market end (unix seconds), if it has one
        self._live = live  # whether the market channel tells the token's moves
        self._opening_due = opening_due
        self._bid = bid  # a token's best bid on the market channel now
        # Held tokens' best bids their holders' checks were last asked for (``moved``).
        self._checked_bids: dict[str, Decimal | None] = {}
        self.holders: dict[str, set[str]] = {}  # token -> targets whose configs hold it
        self.held: dict[str, frozenset[str]] = {}  # target -> tokens held with exit rules
        self._timed: dict[str, set[tuple[str, Decimal]]] = {}  # target -> (token, hours)
        self._to_time: list[tuple[str, str, Decimal]] = []  # (target, token, hours) to arm
        self._timers: list[tuple[float, int, str, str | None]] = []
        self._retrying: set[str] = set()  # targets with a whole-target retry armed
        self._order = itertools.count()
        self._dirty: dict[str, set[str] | None] = {}
        self._wake = trio.Event()
        self.requests = 0  # checks asked of watchers (the tests' and the bench's counter)

    # -- what the targets hold ----------------------------------------------------------

    def update(self, target: str, configs: dict[object, ConfigSnapshot], *,
               everything: bool = False) -> None:
        """What ``target``'s configs hold now (after a start, a reload, a fill or a check);
        ``everything``: also check its whole-target work once (loss and drawdown stops,
        positions to copy at start) if it has any (a start, a reload, a fill)."""
        tokens: set[str] = set()
        timed: set[tuple[str, Decimal]] = set()
        retry = whole = False
        for config in configs.values():
            due = self._opening_due(config) or config.stop_unsettled
            retry = retry or due
            whole = whole or due or config.rules.needs_stop_check
            if not _exit_rules(config):
                continue
            hours = config.rules.exit_hours_before_end
            for token, holding in config.holdings.items():
                if holding.shares > 0:
                    tokens.add(token)
                    if hours is not None:
                        timed.add((token, hours))
        old = self.held.get(target, frozenset())
        new = frozenset(tokens)
        for token in old - new:
            holders = self.holders.get(token)
            if holders is not None:
                holders.discard(target)
                if not holders:
                    del self.holders[token]
                    self._checked_bids.pop(token, None)
        for token in new - old:
            self.holders.setdefault(token, set()).add(target)
        if new:
            self.held[target] = new
        else:
            self.held.pop(target, None)
        armed = self._timed.setdefault(target, set())
        armed &= timed  # sold positions' timers lapse (their heap entries are skipped)
        for token, hours in timed - armed:
            armed.add((token, hours))
            self._to_time.append((target, token, hours))
        if not armed:
            del self._timed[target]
        if everything and whole:
            self._mark(target, ALL)
        else:
            if retry and target not in self._retrying:
                # The target's positions were unreadable (copied at a later try), or a
                # stop valued a position provisionally: looked at again.
                self._retrying.add(target)
                self._arm(trio.current_time() + self.settings.exit_check_seconds, target, ALL)
            # A position opened past its take-profit is sold without waiting for a move.
            for token in new - old:
                self._mark(target, token)
        if self._to_time:
            self._wake.set()

    def forget(self, target: str) -> None:
        """The target stopped running here."""
        self.update(target, {})
        self._dirty.pop(target, None)
        self._retrying.discard(target)

    def moved(self, tokens: set[str]) -> None:
        """Books moved on the market channel: the holders' exits of those whose best bid
        moved since their last check was asked for are checked."""
        for token in tokens:
            holders = self.holders.get(token)
            if not holders:
                continue
            bid = self._bid(token)
            if token in self._checked_bids and self._checked_bids[token] == bid:
                continue  # no verdict reads anything else of the book
            self._checked_bids[token] = bid
            self._due(token)

    def _due(self, token: str) -> None:
        for target in self.holders.get(token, ()):
            self._mark(target, token)

    # -- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        """Send the checks that come due (moves, timers, unfollowed books) until cancelled."""
        next_poll = trio.current_time() + self.settings.exit_check_seconds
        while True:
            await self._arm_pending()
            wake_at = min(next_poll, self._timers[0][0] if self._timers else next_poll)
            if not self._dirty:
                with trio.move_on_at(wake_at):
                    await self._wake.wait()
                self._wake = trio.Event()
            if self._dirty:
                await trio.sleep(COALESCE_SECONDS)  # more moves of a busy book join in
            now = trio.current_time()
            self._fire_timers(now)
            if now >= next_poll:
                next_poll = now + self.settings.exit_check_seconds
                for token in [t for t in self.holders if not self._live(t)]:
                    self._checked_bids.pop(token, None)  # told again once followed
                    self._due(token)
            dirty, self._dirty = self._dirty, {}
            for target, tokens in dirty.items():
                self.requests += 1
                if self._request(target, None if tokens is None else frozenset(tokens)) \
                        is False:
                    # Not queued (the watcher's queue is full): the next move of these
                    # tokens' books asks again, whatever their bids.
                    for token in tokens if tokens is not None else self.held.get(target, ()):
                        self._checked_bids.pop(token, None)

    def _mark(self, target: str, token: str | None) -> None:
        if target not in self._dirty:
            self._dirty[target] = None if token is ALL else {token}
        elif token is ALL:
            self._dirty[target] = ALL
        elif (tokens := self._dirty[target]) is not None:
            tokens.add(token)
        self._wake.set()

    def _arm(self, due: float, target: str, token: str | None) -> None:
        heapq.heappush(self._timers, (due, next(self._order), target, token))
        self._wake.set()

    def _fire_timers(self, now: float) -> None:
        while self._timers and self._timers[0][0] <= now:
            _, _, target, token = heapq.heappop(self._timers)
            if token is ALL:
                self._retrying.discard(target)
                self._mark(target, ALL)
            elif token in self.held.get(target, ()):
                self._mark(target, token)
                # Still held after its time (a sale refused, a book empty): tried again.
                self._arm(now + self.settings.exit_check_seconds, target, token)

    async def _arm_pending(self) -> None:
        """Arm the exit-before-end timers of newly held positions (their markets' end
        dates, cached by the venue client)."""
        pending, self._to_time = self._to_time, []
        for target, token, hours in pending:
            try:
                end = await self._market_end(token)
            except Exception as exc:  # the next check of the target tries again
                log.info("exit schedule: no end date for token %s: %s", token, exc)
                self._timed.get(target, set()).discard((token, hours))
                continue
            if end is None:
                continue
            # The rule compares whole seconds (``mirror.exit_before_end``): the first second
            # at which it holds, and a tick after, so the check finds the time come.
            due_wall = math.ceil(end - float(hours) * 3600) + TIMER_MARGIN_SECONDS
            self._arm(trio.current_time() + max(0.0, due_wall - time.time()), target, token)


__all__ = ["ExitSchedule"]
