"""Issue 48: a held token's book move asks its holders for exit checks only when its best
bid moved, the one thing of the book every exit verdict reads (take-profit and stop-loss,
the loss and drawdown stops' marks, a closing sale's limit); the copies' own buys, which
move only the asks, ask for none."""

from __future__ import annotations

import dataclasses
import uuid
from decimal import Decimal

import trio

from services.copying.mirror import CopyRules
from services.trading.holdings import Holding
from tests.conftest import DEADLINE
from tests.worker.copy_engine.conftest import FAST
from worker.copy_engine.exits import ExitSchedule
from worker.copy_engine.store import ConfigSnapshot

TOKEN, TARGET = "token-1", "0xtarget"
# No check by polling or timer within the test: what is asked for is the moves'.
QUIET = dataclasses.replace(FAST, exit_check_seconds=10 * DEADLINE)


def _holder() -> ConfigSnapshot:
    """A config holding TOKEN with a loss stop (its stop checks read the book's bid)."""
    return ConfigSnapshot(id=uuid.uuid4(), user_id=uuid.uuid4(), target=TARGET, version=1,
                          paper=True, rules=CopyRules(Decimal(1), Decimal(100),
                                                     loss_stop_usdc=Decimal(10)),
                          holdings={TOKEN: Holding(shares=Decimal(10),
                                                   cost_usdc=Decimal(5))})


def test_only_a_move_of_the_best_bid_asks_for_exit_checks():
    bids: dict[str, Decimal | None] = {TOKEN: Decimal("0.49")}
    asked: list[tuple[str, frozenset[str] | None]] = []
    queue_full = False

    def request(target: str, tokens: frozenset[str] | None) -> bool:
        if queue_full:
            return False
        asked.append((target, tokens))
        return True

    async def market_end(token: str) -> int | None:
        return None

    schedule = ExitSchedule(QUIET, request, market_end, lambda token: True,
                            lambda config: False, bids.get)
    config = _holder()

    async def checks_after(move: Decimal | None = None) -> list:
        """The checks asked for after one book move (its best bid ``move``, or as it was)."""
        asked.clear()
        if move is not None:
            bids[TOKEN] = move
        schedule.moved({TOKEN})
        await trio.sleep(0.3)  # past the coalescing of moves
        return list(asked)

    async def scenario() -> None:
        nonlocal queue_full
        async with trio.open_nursery() as nursery:
            nursery.start_soon(schedule.run)
            schedule.update(TARGET, {config.id: config})
            await trio.sleep(0.3)  # the newly held position's own check
            assert await checks_after() == [(TARGET, frozenset({TOKEN}))]  # first bid told
            assert await checks_after() == []  # the asks moved: the bid did not
            assert await checks_after() == []
            assert await checks_after(Decimal("0.48")) == [(TARGET, frozenset({TOKEN}))]
            queue_full = True  # the check of the next bid cannot be queued ...
            assert await checks_after(Decimal("0.47")) == []
            queue_full = False  # ... so the next move asks again, its bid unchanged
            assert await checks_after() == [(TARGET, frozenset({TOKEN}))]
            assert await checks_after() == []
            assert await checks_after(None) == []  # (the same bid again)
            nursery.cancel_scope.cancel()

    trio.run(scenario)
