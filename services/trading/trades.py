"""The live trades ledger as users see it: one Trade per order we placed, newest first.

A Trade is written with its order (services/trading/orders.py) as ``pending`` and follows it
(services/trading/order_states.py):
pending -> filled (any shares filled once the order is done: matched, or cancelled/killed
after a partial fill) | cancelled (done without a fill) | failed (refused by the venue,
or never reached it). ``size`` is the filled size once anything filled, else the size
asked for; ``filled_price`` is the average fill price (0 before any fill); ``usdc_value``
the pUSD that changed hands, fees excluded; ``latency_ms`` is set on copy trades (from
the target's trade being detected to the venue acknowledging ours). ``settlement`` is the
venue's word on the fills (services/trading/order_fills.py): ``matched``, ``mined``, ``retrying``,
then ``confirmed`` or ``failed`` (``failed_size`` shares were taken back out: their venue
trade failed, so they never changed hands).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.copying import CopyIntent
from models.trading import Trade
from models.user import User
from services.platform import errors
from services.platform.pagination import Page, paginate
from services.platform.principal import user_id_of
from services.trading import order_reconcile
from services.trading.execution_quality import copies_of, execution_view, order_execution_view
from venue.errors import VenueError

log = logging.getLogger(__name__)


def trade_view(trade: Trade, intent: CopyIntent | None = None) -> dict[str, Any]:
    """The SPEC Trade fields of a ledger row (plus order_id, config_id and its execution:
    ``intent``'s for a copy, else its order's stages)."""
    filled = trade.filled_size
    return {
        "id": trade.id,
        "token_id": trade.token_id,
        "market_slug": trade.market_slug,
        "side": trade.side,
        "size": filled if filled > 0 else trade.requested_size,
        "price": trade.price,
        "filled_price": (trade.filled_value / filled).quantize(Decimal("0.000001"))
        if filled > 0 else Decimal(0),
        "usdc_value": trade.filled_value,
        "fee": trade.fee,
        "latency_ms": trade.latency_ms,
        "status": trade.status,
        "created_at": trade.created_at,
        "filled_at": trade.filled_at,
        "config_id": trade.config_id,
        "order_id": trade.order.order_hash if trade.order_id else None,
        "settlement": trade.settlement,
        "failed_size": trade.failed_size,
        "settled_at": trade.settled_at,
        "execution": execution_view(intent) if intent is not None
        else order_execution_view(trade.order) if trade.order_id else None,
    }



def refresh(user: User | UUID | str) -> None:
    """Pull fills of the user's resting orders from the venue; a venue outage is not fatal."""
    try:
        order_reconcile.sync_user_orders(user)
    except (VenueError, errors.Unavailable) as exc:
        log.warning("could not refresh open orders: %s", exc)


def list_trades(user: User | UUID | str, *, limit: int = 50, offset: int = 0,
                config_id: UUID | str | None = None) -> Page[dict[str, Any]]:
    """The user's trades, newest first, optionally only those of one copy config."""
    user_id = user_id_of(user)
    refresh(user_id)
    query = Trade.select().where(Trade.user == user_id)
    if config_id is not None:
        query = query.where(Trade.config_id == UUID(str(config_id)))
    query = query.order_by(Trade.created_at.desc(), Trade.id.desc())
    page = paginate(query, limit, offset)
    copies = copies_of(page.items)
    return page.map(lambda trade: trade_view(trade, copies.get(trade.id)))


def get_trade(user: User | UUID | str, trade_id: UUID | str) -> dict[str, Any]:
    """One of the user's trades; NotFound for unknown ids and other users' trades."""
    try:
        tid = UUID(str(trade_id))
    except ValueError:
        raise errors.NotFound("No such trade.") from None
    trade = Trade.get_or_none(Trade.id == tid, Trade.user == user_id_of(user))
    if trade is None:
        raise errors.NotFound("No such trade.")
    if trade.status == "pending":
        refresh(trade.user_id)
        trade = Trade.get_by_id(tid)
    return trade_view(trade, copies_of([trade]).get(trade.id))
