"""Copy-config reports: executor status, PnL per position, and the decisions ledger."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from peewee import fn

from models.base import utcnow
from models.copying import INTENT_FILLED, INTENT_SKIPPED, CopyConfig, CopyIntent, CopyPosition
from models.trading import Trade
from models.user import User
from services.copying import mirror as copying
from services.copying.configs.crud import get
from services.platform import venues
from services.platform.pagination import Page, paginate
from services.trading.execution_quality import execution_view


def status(user: User | UUID | str, config_id: UUID | str) -> dict[str, Any]:
    """Whether an executor runs it (and where), last detection and error, recent fills/skips."""
    from services.platform import copy_control, copy_leases, operations

    config = get(user, config_id)
    now = utcnow()
    owner = copy_leases.owner_of_target(config.target_address) if config.is_active else None
    heartbeat = copy_leases.engine_heartbeat(owner) if owner else None
    detection = (operations.engine_detection(copy_control.connection(), None, [owner])
                 .get(owner or "", operations.NO_DETECTION))
    last = (CopyIntent.select().where(CopyIntent.config == config.id)
            .order_by(CopyIntent.created_at.desc()).first())

    def count(status_value: str, since: datetime) -> int:
        return CopyIntent.select().where(CopyIntent.config == config.id,
                                         CopyIntent.status == status_value,
                                         CopyIntent.created_at >= since).count()

    last_skip = (CopyIntent.select().where(CopyIntent.config == config.id,
                                           CopyIntent.status == INTENT_SKIPPED)
                 .order_by(CopyIntent.created_at.desc()).first())
    return {
        "config_id": config.id,
        "is_active": config.is_active,
        "executor_running": bool(config.is_active and owner),
        "worker": owner,
        "worker_heartbeat_at": heartbeat,
        **detection,
        "mode": "paper" if config.paper_trading else "live",
        "target_address": config.target_address,
        "last_detection_at": last.seen_at if last else None,
        "last_decision": decision_view(last, _ledger([last]).get(last.trade_id))
        if last else None,
        "last_skip": decision_view(last_skip) if last_skip else None,
        "last_error": config.last_error,
        "last_error_at": config.last_error_at,
        "fills_last_hour": count(INTENT_FILLED, now - timedelta(hours=1)),
        "fills_last_day": count(INTENT_FILLED, now - timedelta(days=1)),
        "skips_last_hour": count(INTENT_SKIPPED, now - timedelta(hours=1)),
        "skips_last_day": count(INTENT_SKIPPED, now - timedelta(days=1)),
        "started_at": config.started_at,
        "stopped_at": config.stopped_at,
        "stopped_reason": config.stopped_reason,
        "breaker": breaker_view(config),
        "buys_paused": ({"reason": config.buys_paused_reason, "since": config.buys_paused_at}
                        if config.buys_paused_reason else None),
        "out_of_funds": out_of_funds(config, last, last_skip),
        "reasons_24h": reason_counts(config.id, now - timedelta(days=1)),
        "reasons_7d": reason_counts(config.id, now - timedelta(days=7)),
    }


def out_of_funds(config: CopyConfig, last: CopyIntent | None,
                 last_skip: CopyIntent | None) -> bool:
    """Whether the config is out of funds: its latest failed copy found too little balance,
    or its latest decision was a skip for balance (a copy since clears it)."""
    if config.breaker_last_reason == copying.INSUFFICIENT_BALANCE and config.breaker_failures:
        return True
    return (last is not None and last_skip is not None and last.id == last_skip.id
            and last_skip.reason == copying.INSUFFICIENT_BALANCE)


def breaker_view(config: CopyConfig) -> dict[str, Any]:
    """The failure breaker as /status shows it: ``half`` once an open one's pause is over
    (the next copy tries; a success closes it, a failure opens it for longer)."""
    state = config.breaker_state
    if state == "open" and config.breaker_retry_at is not None \
            and config.breaker_retry_at <= utcnow():
        state = "half"
    return {"state": state, "failures": config.breaker_failures,
            "retry_at": config.breaker_retry_at, "last_error": config.breaker_last_error}


def reason_counts(config_id: UUID, since: datetime) -> dict[str, int]:
    """Decisions that carry a reason (skips, failures, stops) since ``since``, per code."""
    rows = (CopyIntent.select(CopyIntent.reason, fn.COUNT(CopyIntent.id))
            .where(CopyIntent.config == config_id, CopyIntent.created_at >= since,
                   CopyIntent.reason.is_null(False))
            .group_by(CopyIntent.reason).tuples())
    return dict(sorted(((reason, int(count)) for reason, count in rows),
                       key=lambda pair: (-pair[1], pair[0])))


def pnl(user: User | UUID | str, config_id: UUID | str) -> dict[str, Any]:
    """Realized plus unrealized PnL of the config, per position (best bid as the mark)."""
    config = get(user, config_id)
    rows = list(CopyPosition.select().where(CopyPosition.config == config.id))
    client = venues.client()
    positions = []
    realized = unrealized = Decimal(0)
    for row in rows:
        price = None
        if row.shares > 0:
            try:
                price = client.clob.price(row.token_id, "BUY")  # best bid: what selling gets
            except Exception:
                price = None
        value = row.shares * price if price is not None else None
        open_pnl = value - row.cost_usdc if value is not None else Decimal(0)
        realized += row.realized_pnl
        unrealized += open_pnl
        positions.append({
            "token_id": row.token_id, "market_slug": row.market_slug, "outcome": row.outcome,
            "paper": row.paper, "size": row.shares, "cost_basis": row.cost_usdc,
            "current_price": price, "current_value": value, "unrealized_pnl": open_pnl,
            "realized_pnl": row.realized_pnl,
        })
    return {"config_id": config.id, "realized_pnl": realized, "unrealized_pnl": unrealized,
            "total_pnl": realized + unrealized, "positions": positions}


_TRADE_STATUS = {"pending": "pending", "sent": "pending", "filled": "filled",
                 "failed": "failed", "cancelled": "cancelled", "skipped": "cancelled"}


def _ledger(intents: Sequence[CopyIntent]) -> dict[UUID, Trade]:
    """The live ledger rows behind these decisions (one query), by trade id."""
    ids = [intent.trade_id for intent in intents if intent.trade_id is not None]
    return {trade.id: trade for trade in Trade.select().where(Trade.id.in_(ids))} if ids else {}


def decision_view(intent: CopyIntent, trade: Trade | None = None) -> dict[str, Any]:
    """A decision in the Trade shape, plus whether it was copied or skipped and why; a live
    copy's settlement comes from its ledger row ``trade`` (none yet: nothing settled)."""
    filled = intent.filled_size or Decimal(0)
    price = intent.filled_price or Decimal(0)
    side = intent.side or intent.target_side or ""
    return {
        "id": intent.id, "token_id": intent.token_id, "market_slug": intent.market_slug,
        "side": side.lower(),
        "size": filled if filled > 0 else (intent.size or Decimal(0)),
        "price": intent.price or intent.target_price or Decimal(0),
        "filled_price": price, "usdc_value": (filled * price).quantize(Decimal("0.000001")),
        "fee": intent.fee or Decimal(0), "latency_ms": intent.latency_ms,
        "status": _TRADE_STATUS.get(intent.status, "pending"),
        "created_at": intent.created_at, "filled_at": intent.settled_at if filled > 0 else None,
        "config_id": intent.config_id, "order_id": intent.order_id,
        "settlement": trade.settlement if trade is not None else None,
        "failed_size": trade.failed_size if trade is not None else Decimal(0),
        "settled_at": trade.settled_at if trade is not None else None,
        "decision": "skipped" if intent.status == INTENT_SKIPPED else "copied",
        "intent_status": intent.status, "kind": intent.kind, "reason": intent.reason,
        "detail": intent.detail, "paper": intent.paper, "trade_id": intent.trade_id,
        "outcome": intent.outcome, "outcome_index": intent.outcome_index,
        "target_trade": {
            "key": intent.target_trade_key, "side": (intent.target_side or "").lower() or None,
            "size": intent.target_size, "price": intent.target_price,
            "traded_at": (datetime.fromtimestamp(intent.target_timestamp, UTC)
                          if intent.target_timestamp is not None else None),
            "tx_hash": intent.target_tx_hash,
        } if intent.kind == "mirror" else None,
        "detection_delay_ms": intent.detection_delay_ms,
        "execution": execution_view(intent),
    }


def decisions(user: User | UUID | str, config_id: UUID | str, *, limit: int = 50,
              offset: int = 0) -> Page[dict[str, Any]]:
    """The config's decisions (copied and skipped, with reasons), newest first, one page."""
    config = get(user, config_id)
    query = (CopyIntent.select().where(CopyIntent.config == config.id)
             .order_by(CopyIntent.created_at.desc(), CopyIntent.id.desc()))
    page = paginate(query, limit, offset)
    ledger = _ledger(page.items)
    return page.map(lambda intent: decision_view(intent, ledger.get(intent.trade_id)))
