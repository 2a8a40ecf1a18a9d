"""What a loss stop promises, checked from a stopped config's records.

A loss stop is a trigger, not a floor: the engine checks it on every book move of a held
token, every fill and every few seconds, and the first check that values the config's PnL
(realized plus positions at the best bid) at or under minus the limit stops it. So what a
stopped config may lose past its limit is, exactly:

- what moved between the last check and the one that fired; a market resolving against a
  held position is the largest such jump (its shares go from their bid to 0 at once), and
  the check that fired books it (``resolution``);
- after the stop: the close's exit below the bid the stop marked (at most
  ``price_deviation_bps``) and its taker fees (``exit``), the copies decided before the
  stop and filled after it (``in_flight``), and the positions the close could not sell
  (``left_open``, each with a decision saying why).

No buy is decided after the stop, and no close sells below its limit.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from venue.models import Side

ZERO = Decimal(0)
HALF_CENT = Decimal("0.005")  # the stop's PnL is recorded to the cent
BPS = Decimal(10000)
TICK = Decimal("0.01")  # the coarsest tick: a limit rounds to it
STOP_PNL = re.compile(r"Total PnL (-?[\d,]+\.\d+) pUSD")
BEST_BID = re.compile(r"best bid (\d+\.\d+)")
SIX = Decimal("0.000001")
# The check that fired books a resolution moments before it records the stop.
CHECK_SECONDS = 5


def _dec(value: Any) -> Decimal:
    return ZERO if value in (None, "") else Decimal(str(value))


def _realized(sale: Any) -> Decimal:
    return (_dec(sale.filled_size) * _dec(sale.filled_price) - _dec(sale.fee)
            - _dec(sale.sold_cost))


@dataclass
class Overshoot:
    """How far a stopped config's PnL went past its loss stop, and why."""

    limit: Decimal
    final_pnl: Decimal
    stop_pnl: Decimal = ZERO  # the PnL the check that fired saw
    resolution: Decimal = ZERO  # booked at payout by that check (<= 0 for a loss)
    exit: Decimal = ZERO  # the close's sales below the bid they were marked at, fees in
    in_flight: Decimal = ZERO  # buys decided before the stop, filled after it
    left_open: Decimal = ZERO  # cost of the positions the close could not sell
    failures: list[str] = field(default_factory=list)

    @property
    def past(self) -> Decimal:
        """How far the final PnL is past the stop (0 when within it)."""
        return max(ZERO, -self.limit - self.final_pnl)

    def figures(self) -> dict[str, str]:
        """For the soak's row."""
        def six(value: Decimal) -> str:
            return str(value.quantize(SIX))

        return {"pnl": six(self.final_pnl), "stop saw": str(self.stop_pnl),
                "past the stop": six(self.past),
                "resolution in the check that fired": six(self.resolution),
                "exit": six(self.exit), "in flight": six(self.in_flight),
                "left open": six(self.left_open)}


def loss_stop_overshoot(limit: Decimal, deviation_bps: int, final_pnl: Decimal,
                        intents: list[Any], positions: list[Any]) -> Overshoot:
    """Check a loss-stopped config's records against the stop's promise (module doc)."""
    out = Overshoot(limit=limit, final_pnl=final_pnl)
    markers = [i for i in intents if i.kind == "loss_stop" and not i.side]
    if len(markers) != 1:
        out.failures.append(f"{len(markers)} stop decisions recorded, not 1")
        return out
    marker = markers[0]
    at: datetime = marker.created_at
    found = STOP_PNL.search(marker.detail or "")
    if found is None:
        out.failures.append(f"the stop's PnL is not in its decision: {marker.detail!r}")
        return out
    out.stop_pnl = Decimal(found.group(1).replace(",", ""))
    if out.stop_pnl > -limit + HALF_CENT:
        out.failures.append(f"stopped at PnL {out.stop_pnl}, above its stop of -{limit}")
    late = [i for i in intents if i.side == Side.BUY and i.kind != "loss_stop"
            and i.status != "skipped" and i.created_at > at]
    if late:
        out.failures.append(f"{len(late)} buy(s) decided after the stop")
    sales: dict[str, list[Any]] = defaultdict(list)
    for intent in intents:
        if intent.side == Side.SELL and intent.status == "filled":
            sales[intent.token_id].append(intent)
        if intent.side == Side.BUY and intent.status == "filled" \
                and intent.created_at <= at < (intent.settled_at or at):
            out.in_flight += (_dec(intent.filled_size) * _dec(intent.filled_price)
                              + _dec(intent.fee))
    closes = [i for i in intents if i.kind == "loss_stop" and i.side]
    for close in closes:
        if close.status != "filled":
            continue
        size, filled = _dec(close.size), _dec(close.filled_size)
        marked = BEST_BID.search(close.detail or "")  # what the stop marked a share at
        bid = Decimal(marked.group(1)) if marked else _dec(close.usdc) / size
        limit_price = _dec(close.price)
        if _dec(close.filled_price) < limit_price:
            out.failures.append(f"close of {close.token_id[:10]}... filled at "
                                f"{close.filled_price}, under its limit {limit_price}")
        if limit_price < bid * (1 - Decimal(deviation_bps) / BPS) - TICK:
            out.failures.append(f"close of {close.token_id[:10]}... limited at {limit_price}, "
                                f"past {deviation_bps} bps under its bid {bid}")
        out.exit += filled * (bid - _dec(close.filled_price)) + _dec(close.fee)
    decided = {c.token_id for c in closes}
    for skipped in (c for c in closes if c.status == "skipped"):
        cost = sum((_dec(i.filled_size) * _dec(i.filled_price) + _dec(i.fee)
                    for i in intents if i.side == Side.BUY and i.status == "filled"
                    and i.token_id == skipped.token_id), ZERO)
        out.left_open += cost - sum((_dec(s.sold_cost) for s in sales[skipped.token_id]
                                     if s.kind != "loss_stop"), ZERO)
    held: dict[str, Decimal] = defaultdict(lambda: ZERO)  # shares at the stop
    for intent in intents:
        if intent.status == "filled" and intent.side and (intent.settled_at or at) <= at:
            sign = 1 if intent.side == Side.BUY else -1
            held[intent.token_id] += sign * _dec(intent.filled_size)
    for position in positions:
        still = _dec(position.shares) > 0 or position.updated_at > at
        if held[position.token_id] > 0 and still and position.token_id not in decided:
            out.failures.append(f"{position.token_id[:10]}... held at the stop, left open "
                                "without a decision")
        window = at - timedelta(seconds=CHECK_SECONDS) <= position.updated_at <= at
        if _dec(position.shares) == 0 and window and not any(
                s.settled_at and at - timedelta(seconds=CHECK_SECONDS) <= s.settled_at <= at
                for s in sales[position.token_id]):
            # closed at its payout by the check that fired: what its sales did not realize
            out.resolution += _dec(position.realized_pnl) - sum(
                (_realized(s) for s in sales[position.token_id]), ZERO)
    floor = out.stop_pnl - out.exit - out.in_flight - out.left_open - HALF_CENT
    if final_pnl < floor:
        out.failures.append(f"PnL {final_pnl} after the stop, under the {floor} its exit, "
                            "copies in flight and positions left open allow")
    return out
