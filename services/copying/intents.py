"""Copy intents, exactly once: what is inserted, what may be acted on, how open ones settle.

A ``CopyIntentDraft`` is one decision about one target trade for one config (copy, or
skip with a reason). The rules that make mirroring exactly-once:

- ``insert``: a fill's drafts go in together, for the configs still active (re-read
  ``FOR SHARE`` on PostgreSQL, so a concurrent ``stop`` waits for us or we see it), with
  ``ON CONFLICT DO NOTHING`` on (config, target trade). Only the drafts this call inserted
  come back, and only those may be acted on: another worker, a retry or a restart that
  sees the same fill inserts nothing, so it never places a second order. Drafts carry
  the target lease's fencing token, and the same statement refuses one older than the
  target's current token (``services.copying.fences``): an engine whose lease was taken
  over while it was cut off records nothing.
- ``reconcile``: after a restart or a take-over, an open intent with no order record
  never left (the order service writes the record before sending) and is handed back to
  be placed, or failed as ``not_sent`` when too old; one with an order record takes the
  outcome the venue gives for its hash (an order the venue does not know yet, within the
  order service's grace period, leaves the intent pending: it is looked up again). Taking
  over another engine's pending intent is a conditional update only one engine wins
  (``claim``). An intent whose engine recorded its order but held it back (its lease
  clock ran out first) names no engine (``UNOWNED``): the order is closed and detached,
  and whichever engine runs the config next places the copy.
- ``settle`` / ``settle_many``: outcomes are fenced. An intent's status only moves forward
  (``models.copying.INTENT_PREDECESSORS``: a final outcome is written once), and only for
  the engine named in its ``worker`` column, the fencing token a take-over rewrites. An
  engine that lost the target's lease while sending, and whose intents another engine
  took over, writes no outcome and moves no position for them; its venue answer still
  reaches the order record, whose writes are conditional too. Only the intents actually
  written come back, and only those may move a position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import atomic, utcnow
from models.bulk import Guard, insert_rows, update_returning_rows
from models.copying import (
    INTENT_CANCELLED,
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_OPEN,
    INTENT_PENDING,
    INTENT_PREDECESSORS,
    INTENT_SENT,
    INTENT_SKIPPED,
    KIND_MIRROR,
    CopyIntent,
)
from services.copying import fences
from services.platform import metrics
from services.platform.runtime import runtime
from services.trading import copy_positions, order_outages
from services.trading.execution_quality import slippage_of
from venue.models import Side

# The ``worker`` of a pending intent handed back by its engine: no engine is alive by this
# name, so the next one to run its config takes it over (``claim``) and places it.
UNOWNED = ""


@dataclass(slots=True)
class CopyIntentDraft:
    """One config's decision about one target trade (or exit), as it is written."""

    id: UUID
    config_id: UUID
    user_id: UUID
    target_trade_key: str
    target_address: str
    token_id: str
    status: str                       # pending (to copy) or skipped; a failure before sending
    seen_at: datetime
    kind: str = KIND_MIRROR
    paper: bool = False
    side: Side | None = None          # the copy's side (None when skipped)
    size: Decimal | None = None       # shares to trade
    price: Decimal | None = None      # worst acceptable price
    usdc: Decimal | None = None       # pUSD to spend (buys) or expected (sells)
    # A buy's most possible cost, reserved against the exposure cap and budgets while open.
    reserved_usdc: Decimal | None = None
    reason: str | None = None
    detail: str = ""
    target_side: Side | str | None = None
    target_size: Decimal | None = None
    target_price: Decimal | None = None
    target_timestamp: int | None = None
    target_tx_hash: str | None = None
    condition_id: str = ""
    outcome: str = ""
    outcome_index: int | None = None
    market_slug: str = ""
    detection_delay_ms: int | None = None
    detection_source: str | None = None  # feed, matched, poll, chain, pending (None: no fill)
    decision_ms: int | None = None
    # Monotonic clock when the decision was made (the placement stage runs from it).
    decided_clock: float | None = None
    worker: str = ""
    created_at: datetime | None = None
    settled_at: datetime | None = None  # set when it fails before anything is sent
    # The target lease's fencing token the engine writes under (None: not fenced, outside
    # a running engine): the write refuses one older than the target's current token.
    fence: int | None = None
    # A buy under the user's exposure cap or its config's budgets (decided with them): its
    # reservation is taken when it is written (``services.copying.reservations``).
    guarded: bool = False

    def failed(self, changes: Mapping[str, Any]) -> None:
        """Take an outcome decided before anything was sent (status, reason, detail)."""
        self.status = changes["status"]
        self.reason = changes.get("reason")
        self.detail = changes.get("detail", "")
        self.settled_at = changes.get("settled_at")

    def row(self) -> dict[str, Any]:
        """The ``CopyIntent`` row (sides as the venue's text)."""
        return {
            "id": self.id, "config": self.config_id, "user_id": self.user_id,
            "kind": self.kind, "target_trade_key": self.target_trade_key,
            "target_address": self.target_address,
            "target_side": str(self.target_side) if self.target_side is not None else None,
            "target_size": self.target_size, "target_price": self.target_price,
            "target_timestamp": self.target_timestamp, "target_tx_hash": self.target_tx_hash,
            "token_id": self.token_id, "condition_id": self.condition_id,
            "outcome": self.outcome, "outcome_index": self.outcome_index,
            "market_slug": self.market_slug, "paper": self.paper, "status": self.status,
            "reason": self.reason, "detail": self.detail,
            "side": self.side.value if self.side is not None else None,
            "size": self.size, "price": self.price, "usdc": self.usdc,
            "reserved_usdc": self.reserved_usdc,
            "seen_at": self.seen_at, "detection_delay_ms": self.detection_delay_ms,
            "detection_source": self.detection_source, "decision_ms": self.decision_ms,
            "worker": self.worker, "created_at": self.created_at or self.seen_at,
            "settled_at": self.settled_at, "fence": self.fence,
        }

    @classmethod
    def stored(cls, intent: CopyIntent) -> CopyIntentDraft:
        """The draft of an intent already written (to place it after a restart)."""
        return cls(
            id=intent.id, config_id=intent.config_id, user_id=intent.user_id,
            target_trade_key=intent.target_trade_key, target_address=intent.target_address,
            token_id=intent.token_id, status=intent.status, seen_at=intent.seen_at,
            kind=intent.kind, paper=intent.paper,
            side=Side.parse(intent.side) if intent.side else None, size=intent.size,
            price=intent.price, usdc=intent.usdc, reserved_usdc=intent.reserved_usdc,
            reason=intent.reason,
            detail=intent.detail, target_side=intent.target_side,
            target_size=intent.target_size, target_price=intent.target_price,
            target_timestamp=intent.target_timestamp, target_tx_hash=intent.target_tx_hash,
            condition_id=intent.condition_id, outcome=intent.outcome,
            outcome_index=intent.outcome_index, market_slug=intent.market_slug,
            detection_delay_ms=intent.detection_delay_ms,
            detection_source=intent.detection_source, decision_ms=intent.decision_ms,
            worker=intent.worker,
            created_at=intent.created_at, settled_at=intent.settled_at, fence=intent.fence)


def insert(drafts: Sequence[CopyIntentDraft]) -> list[CopyIntentDraft]:
    """Insert one fill's drafts for configs still active; the drafts actually inserted.

    Drafts carrying a fencing token (one engine's, for one target) are inserted only while
    it is not older than their target's current one (``fences.active_configs``).
    """
    if not drafts:
        return []
    config_ids = list({draft.config_id for draft in drafts})
    with atomic():
        # By id alone, the state checked here, with the fence in the same statement.
        active = fences.active_configs(config_ids, drafts[0].fence)
        live = [draft for draft in drafts if draft.config_id in active]
        if not live:
            return []
        rows = [draft.row() for draft in live]
        # One multi-row statement; RETURNING names the rows inserted (not the conflicts).
        inserted = set(insert_rows(CopyIntent, rows, ignore_conflicts=True,
                                   returning_ids=True))
    metrics.copy_decisions([row for row in rows if row["id"] in inserted])
    return [draft for draft in live if draft.id in inserted]


def settle(intent_id: UUID, changes: dict[str, Any], *, worker: str | None = None) -> bool:
    """Record what became of an intent's order; False when the write lost (see settle_many)."""
    written = bool(settle_many([(intent_id, changes)], worker=worker))
    if written:
        metrics.copy_settled(changes)
    return written


def _may_follow(changes: Mapping[str, Any]) -> tuple[str, ...]:
    status = changes.get("status")
    return INTENT_PREDECESSORS[status] if status is not None else INTENT_OPEN


def settle_many(settled: Sequence[tuple[UUID, Mapping[str, Any]]], *,
                worker: str | None = None) -> set[UUID]:
    """Record what became of intents' orders: (intent id, changes) each; the ids written.

    An intent is written only over a status its new one may follow and, with ``worker``,
    only while that engine still owns it (its fencing token); the others lost a race and
    are left as the winner wrote them. One guarded ``UPDATE ... RETURNING`` per kind of
    outcome writes the intents and names those written (the copy engine settles a fill's
    intents inside the transaction that holds the write lock); counted by the caller.
    """
    if not settled:
        return set()

    def guard(changes: Mapping[str, Any]) -> Guard:
        # What another writer may have changed: the status moved on, the owner replaced.
        fence: dict[str, Sequence[Any]] = {"status": _may_follow(changes)}
        if worker is not None:
            fence["worker"] = (worker,)
        return fence

    with atomic():
        return set(update_returning_rows(CopyIntent, settled, (), guard=guard))


def open_intents(config_ids: Sequence[UUID]) -> list[CopyIntent]:
    """Intents of these configs whose order may still be unaccounted for."""
    found: list[CopyIntent] = []
    for start in range(0, len(config_ids), 500):
        found.extend(CopyIntent.select().where(
            CopyIntent.config.in_(list(config_ids[start:start + 500])),
            CopyIntent.status.in_(INTENT_OPEN)))
    return found


def unsettled(older_than: float) -> list[tuple[UUID, UUID, str]]:
    """Open live intents seen at least ``older_than`` seconds ago: (id, config id, worker)."""
    cutoff = utcnow() - timedelta(seconds=older_than)
    # By status first (its index): open intents that old are few (orders the venue did not
    # know yet, answers lost, engines gone), whatever the number of configs.
    return list(CopyIntent.select(CopyIntent.id, CopyIntent.config, CopyIntent.worker).where(
        CopyIntent.status.in_(INTENT_OPEN), CopyIntent.paper == False,  # noqa: E712
        CopyIntent.seen_at <= cutoff).tuples())


def claim(intent_id: UUID, worker: str, previous: str) -> bool:
    """Take over a pending intent from ``previous`` (a dead engine); False if someone did."""
    return bool(CopyIntent.update(worker=worker).where(
        CopyIntent.id == intent_id, CopyIntent.worker == previous,
        CopyIntent.status == INTENT_PENDING).execute())


def _paper_done(intent: CopyIntent) -> bool:
    from models.trading import PaperTrade

    return PaperTrade.select().where(
        PaperTrade.config_id == intent.config_id, PaperTrade.token_id == intent.token_id,
        PaperTrade.created_at >= intent.seen_at).exists()


def reconcile(intent_id: UUID, worker: str, stale_after: float) -> CopyIntentDraft | None:
    """Settle one open intent from the records and the venue; a draft to place, or None."""
    from models.trading import ORDER_OPEN, ORDER_PENDING, Order
    from services.trading import order_reconcile

    intent = CopyIntent.get_by_id(intent_id)
    if intent.status not in (INTENT_PENDING, INTENT_SENT):
        return None
    if intent.status == INTENT_PENDING and intent.worker != worker:
        if not claim(intent.id, worker, intent.worker):
            return None
        # Taken over: a draft handed back to be placed settles under this engine's name.
        intent.worker = worker
    # The fencing token this engine writes under: its own (a pending intent it now owns),
    # or, for a sent one, the engine that sent it, as read (unless someone moved it since).
    fence = worker if intent.status == INTENT_PENDING else intent.worker
    age = (utcnow() - intent.seen_at).total_seconds()
    if intent.paper:
        if _paper_done(intent):
            settle(intent.id, {"status": INTENT_FILLED, "settled_at": utcnow()}, worker=fence)
            return None
        return _replace_or_expire(intent, age, stale_after, fence)
    order = Order.get_or_none(Order.target_trade_id == str(intent.id))
    if order is None:
        return _replace_or_expire(intent, age, stale_after, fence)
    if order.status in ORDER_OPEN:
        order = order_reconcile.reconcile(order.id)
    if order.status == ORDER_PENDING:
        return None  # the venue does not know it yet (within the grace): looked up again
    filled = Decimal(order.filled_size or 0)
    value = Decimal(order.filled_value or 0)
    changes: dict[str, Any] = {"order_id": order.order_hash}
    if order.status in ORDER_OPEN:
        changes["status"] = INTENT_SENT
    elif filled > 0:
        changes.update(status=INTENT_FILLED, filled_size=filled, filled_price=value / filled,
                       fee=order.fee, settled_at=utcnow(),
                       slippage_bps=slippage_of(intent, value / filled))
    elif order.status in ("rejected", "failed"):
        changes.update(status=INTENT_FAILED, reason="order_refused",
                       detail=order.error or "", settled_at=utcnow())
    else:
        changes.update(status=INTENT_CANCELLED, reason="not_filled", settled_at=utcnow())
    # The order's own stages, where the engine's answer never reached the intent; an order
    # the venue held settles when found filled (wall clock: another process may find it).
    changes.update({name: getattr(order, name) for name in ("ack_ms", "taker_delay_ms")
                    if getattr(order, name) is not None and getattr(intent, name) is None})
    if changes.get("status") != INTENT_SENT and order.acknowledged_at is not None \
            and intent.settlement_ms is None:
        changes["settlement_ms"] = max(0, int((utcnow() - order.acknowledged_at)
                                              .total_seconds() * 1000))
    if order.submitted_at and intent.latency_ms is None:
        changes["sent_at"] = order.submitted_at
        changes["latency_ms"] = max(0, int((order.submitted_at - intent.seen_at)
                                           .total_seconds() * 1000))
    # One transaction: the intent's reservation ends as its fill enters the position.
    with atomic():
        written = settle(intent.id, changes, worker=fence)
        if written and changes.get("status") == INTENT_FILLED:  # a fill is counted once
            paid = copy_positions.fee_inclusive(intent.side, value, order.fee)
            copy_positions.apply_position(intent.config_id, False, intent.token_id,
                                          intent.side, filled, paid,
                                          condition_id=intent.condition_id,
                                          market_slug=intent.market_slug,
                                          outcome=intent.outcome, intent_id=intent.id)
    return None


def _replace_or_expire(intent: CopyIntent, age: float, stale_after: float, fence: str
                       ) -> CopyIntentDraft | None:
    if intent.reason in order_outages.WAITING_REASONS:
        # Refused for the venue's mode and waiting for it to reopen: its limit is the
        # fill's age, not the time since it was seen (services/trading/order_outages.py).
        born = intent.target_timestamp or intent.seen_at.timestamp()
        limit = runtime().settings.engine.max_fill_age_seconds
        if utcnow().timestamp() - born <= limit:
            return CopyIntentDraft.stored(intent)
        settle(intent.id, worker=fence, changes={
            "status": INTENT_SKIPPED, "reason": intent.reason, "settled_at": utcnow(),
            "detail": f"{intent.detail or ''} The venue did not reopen within the fill's "
                      "age limit.".strip()})
        return None
    if age > stale_after:
        settle(intent.id, worker=fence, changes={
            "status": INTENT_FAILED, "reason": "not_sent", "settled_at": utcnow(),
            "detail": f"The worker stopped before sending; {int(age)} s later it is too late "
                      "to copy."})
        return None
    return CopyIntentDraft.stored(intent)


__all__ = ["UNOWNED", "CopyIntentDraft", "claim", "insert", "open_intents", "reconcile", "settle",
           "settle_many", "unsettled"]
