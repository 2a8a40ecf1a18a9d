"""Execution quality per trade: a copy's slippage against the target's fill and its stage
delays; a manual order's stages.

Each copy intent records (columns of ``models.copying.CopyIntent``):

- ``detection_source``: what saw the target's fill first (``feed``, ``matched``, ``poll``;
  ``chain`` and ``pending`` for the on-chain sources);
- the stages, in whole milliseconds: ``detection`` (the target's trade time to our seeing it,
  ``detection_delay_ms``; the venue stamps trades in whole seconds, so this one is coarse),
  ``decision`` (seen to decided: quotes read, rules applied), ``placement`` (decided to the
  order leaving: planning, signing, the durable record), ``ack`` (sent to the venue's
  answer), ``settlement`` (the answer to our fill being recorded; for an order the venue
  held, until the reconciler saw it fill) and ``taker_delay`` (the market's taker delay,
  when the venue held the order for it);
- ``slippage_bps``: our average fill price against the target's, in signed basis points of
  the target's price, positive when worse for us (a buy paid more, a sale got less). An
  inverse copy trades the other outcome, whose reference is 1 - the target's price.

Every delay after detection is measured on the monotonic clock and written with the
outcome (one write); nothing is read again to compute it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.copying import KIND_MIRROR, CopyIntent
from venue.models import Side

# A copy's stages, in the order they happen: (name shown, CopyIntent column).
STAGES: tuple[tuple[str, str], ...] = (
    ("detection", "detection_delay_ms"), ("decision", "decision_ms"),
    ("placement", "placement_ms"), ("ack", "ack_ms"), ("settlement", "settlement_ms"),
    ("taker_delay", "taker_delay_ms"))
BPS = Decimal(10000)
CENTI_BPS = Decimal("0.01")


def reference_price(target_price: Decimal | None, target_trade_key: str,
                    token_id: str) -> Decimal | None:
    """The price our copy is measured against: the target's, or 1 - it for an inverse copy
    (which trades the market's other outcome)."""
    if target_price is None:
        return None
    parts = target_trade_key.split("|")  # tx hash, asset, side, wallet (a mirror's key)
    if len(parts) == 4 and parts[1] and parts[1] != token_id:
        return Decimal(1) - target_price
    return target_price


def slippage_bps(side: Side | str | None, reference: Decimal | None,
                 price: Decimal | None) -> Decimal | None:
    """Our price against the reference in signed bps, positive when worse for us; None when
    either price is unknown."""
    if side is None or reference is None or price is None or reference <= 0:
        return None
    moved = (price - reference) / reference * BPS
    worse = moved if Side.parse(side) is Side.BUY else -moved
    return worse.quantize(CENTI_BPS)


def slippage_of(draft: Any, filled_price: Decimal | None) -> Decimal | None:
    """A copy's slippage at ``filled_price`` (a draft or a stored intent)."""
    if getattr(draft, "kind", KIND_MIRROR) != KIND_MIRROR:
        return None  # exits and stops follow no target trade
    return slippage_bps(draft.side, reference_price(
        draft.target_price, draft.target_trade_key, draft.token_id), filled_price)


def execution_view(row: Any) -> dict[str, Any]:
    """A copy's execution quality as shown on it (REST, MCP): source, prices, slippage, fee,
    and each stage's delay (None where not measured)."""
    return {
        "source": row.detection_source,
        "target_price": row.target_price,
        "price": row.filled_price,
        "slippage_bps": row.slippage_bps,
        "fee": row.fee,
        "stages": {f"{name}_ms": getattr(row, column) for name, column in STAGES},
    }


def order_execution_view(order: Any) -> dict[str, Any] | None:
    """A manual order's stages (placement, ack, taker delay) in the same shape; None when
    the order has none measured."""
    if order is None or (order.placement_ms is None and order.ack_ms is None):
        return None
    price = (order.filled_value / order.filled_size) if order.filled_size else None
    stages = {f"{name}_ms": None for name, _ in STAGES}
    stages.update(placement_ms=order.placement_ms, ack_ms=order.ack_ms,
                  taker_delay_ms=order.taker_delay_ms)
    return {"source": None, "target_price": None, "price": price, "slippage_bps": None,
            "fee": order.fee, "stages": stages}


def copies_of(trades: Sequence[Any]) -> dict[UUID, CopyIntent]:
    """The copy intents behind these trades (live or paper; one query), by trade id."""
    ids = [trade.id for trade in trades if trade.config_id is not None]
    if not ids:
        return {}
    return {intent.trade_id: intent
            for intent in CopyIntent.select().where(CopyIntent.trade_id.in_(ids))}


__all__ = ["STAGES", "copies_of", "execution_view", "order_execution_view", "reference_price",
           "slippage_bps", "slippage_of"]
