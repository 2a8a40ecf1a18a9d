"""The copy engine's database work, blocking (run in threads): configs, cursors, intents, positions.

Intents for one target fill are written for every config in one transaction: the active
configs are re-read (``FOR SHARE`` on PostgreSQL, so a concurrent ``stop`` waits for us or
we see it), the rows go in with ``ON CONFLICT DO NOTHING`` on (config, target trade), and
only the rows this call inserted come back to be acted on. Another worker, a retry or a
restart that sees the same fill inserts nothing, so it never places a second order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import peewee

from models.base import atomic, db, utcnow
from models.bulk import insert_rows, select_rows, update_rows
from models.copying import (
    INTENT_OPEN,
    INTENT_PENDING,
    CopyConfig,
    CopyIntent,
    CopyPosition,
    TargetCursor,
)
from services import copying, metrics
from services.copying import CopyRules, Holding

ZERO = Decimal(0)


@dataclass
class ConfigSnapshot:
    """What an executor keeps in memory about one active config."""

    id: UUID
    user_id: UUID
    target: str
    version: int
    paper: bool
    rules: CopyRules
    started_ts: int = 0  # fills before the config started are not its business
    holdings: dict[str, Holding] = field(default_factory=dict)
    opened: dict[str, int] = field(default_factory=dict)  # token -> times opened (exit keys)


def write_transaction() -> Any:
    """A transaction that reads then writes: IMMEDIATE on SQLite, so the write lock is taken
    up front (a deferred one fails with "database is locked" when it upgrades under load).
    Inside an open transaction it adds nothing (no savepoint: see ``models.base.atomic``)."""
    if db.in_transaction():
        return atomic()
    if isinstance(db.obj, peewee.SqliteDatabase):
        return db.atomic("IMMEDIATE")
    return db.atomic()


def _rules(config: CopyConfig) -> CopyRules:
    return CopyRules(
        size_multiplier=config.size_multiplier, max_position_usdc=config.max_position_usdc,
        price_deviation_bps=config.price_deviation_bps,
        blocked_categories=copying.normalise_categories(json.loads(config.blocked_categories)),
        take_profit_bps=config.take_profit_bps, stop_loss_bps=config.stop_loss_bps)


def active_targets() -> dict[str, int]:
    """Every target with active configs, and how many configs copy it."""
    rows = (CopyConfig.select(CopyConfig.target_address,
                              peewee.fn.COUNT(CopyConfig.id).alias("n"))
            .where(CopyConfig.is_active, CopyConfig.deleted_at.is_null())
            .group_by(CopyConfig.target_address).tuples())
    return {target: count for target, count in rows}


def config_fingerprint() -> tuple[int, int, Any]:
    """(count, sum of versions, latest update) of every config: moves on any change.

    Every edit, start, stop and delete bumps a config's version, and creations and
    removals change the count, so an unchanged fingerprint means nothing to reload.
    """
    count, versions, latest = CopyConfig.select(
        peewee.fn.COUNT(CopyConfig.id), peewee.fn.COALESCE(peewee.fn.SUM(CopyConfig.version), 0),
        peewee.fn.MAX(CopyConfig.updated_at)).tuples().get()
    return int(count), int(versions), latest


def config_versions(targets: Sequence[str]) -> dict[UUID, tuple[str, int]]:
    """Active configs of ``targets``: id -> (target, version)."""
    found: dict[UUID, tuple[str, int]] = {}
    for start in range(0, len(targets), 500):
        chunk = list(targets[start:start + 500])
        rows = (CopyConfig.select(CopyConfig.id, CopyConfig.target_address, CopyConfig.version)
                .where(CopyConfig.target_address.in_(chunk), CopyConfig.is_active,
                       CopyConfig.deleted_at.is_null()).tuples())
        for config_id, target, version in rows:
            found[config_id] = (target, version)
    return found


def load_configs(config_ids: Iterable[UUID]) -> list[ConfigSnapshot]:
    """Snapshots (rules and holdings) of the given configs that are still active."""
    ids = list(config_ids)
    snapshots: dict[UUID, ConfigSnapshot] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for config in CopyConfig.select().where(CopyConfig.id.in_(chunk), CopyConfig.is_active,
                                                CopyConfig.deleted_at.is_null()):
            snapshots[config.id] = ConfigSnapshot(
                id=config.id, user_id=config.user_id, target=config.target_address,
                version=config.version, paper=config.paper_trading, rules=_rules(config),
                started_ts=int(config.started_at.timestamp()) if config.started_at else 0)
        for position in CopyPosition.select().where(CopyPosition.config.in_(chunk)):
            snap = snapshots.get(position.config_id)
            if snap is not None and position.paper == snap.paper:
                snap.holdings[position.token_id] = Holding(position.shares, position.cost_usdc)
                snap.opened[position.token_id] = position.opened
    return list(snapshots.values())


def read_cursor(target: str) -> int | None:
    """The newest fill timestamp already read for ``target``, if any."""
    row = TargetCursor.get_or_none(TargetCursor.target_address == target)
    return row.last_timestamp if row else None


def write_cursor(target: str, timestamp: int) -> None:
    """Move the target's cursor forward (never back)."""
    now = utcnow()
    (TargetCursor.insert(target_address=target, last_timestamp=timestamp, updated_at=now)
     .on_conflict(conflict_target=[TargetCursor.target_address],
                  update={TargetCursor.last_timestamp: peewee.Case(
                      None, [(TargetCursor.last_timestamp < timestamp, timestamp)],
                      TargetCursor.last_timestamp),
                      TargetCursor.updated_at: now})
     .execute())


def insert_intents(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Insert the decisions of one fill for configs still active; the rows actually inserted."""
    if not rows:
        return []
    config_ids = list({row["config"] for row in rows})
    with write_transaction():
        # By id alone, the state checked here: given "deleted_at IS NULL", SQLite's planner
        # walks the deleted_at index over every live config (4 ms at 10,000) instead of
        # looking up the fill's ten by primary key.
        query = CopyConfig.select(CopyConfig.id, CopyConfig.is_active,
                                  CopyConfig.deleted_at).where(CopyConfig.id.in_(config_ids))
        if isinstance(db.obj, peewee.PostgresqlDatabase):
            query = query.for_update("FOR SHARE")
        active = {config_id for (config_id, is_active, deleted_at) in query.tuples()
                  if is_active and deleted_at is None}
        live = [row for row in rows if row["config"] in active]
        if not live:
            return []
        # One multi-row statement; RETURNING names the rows inserted (not the conflicts).
        inserted = set(insert_rows(CopyIntent, live, ignore_conflicts=True,
                                   returning_ids=True))
    recorded = [row for row in live if row["id"] in inserted]
    metrics.copy_decisions(recorded)
    return recorded


def settle_intent(intent_id: UUID, changes: dict[str, Any]) -> None:
    """Record what became of an intent's order."""
    settle_intents([(intent_id, changes)])
    metrics.copy_settled(changes)


def settle_intents(settled: Sequence[tuple[UUID, Mapping[str, Any]]]) -> None:
    """Record what became of intents' orders: (intent id, changes) each; counted by the caller.

    Intents with the same kind of outcome share one prepared statement (the copy engine
    settles a fill's intents inside the transaction that holds the write lock).
    """
    update_rows(CopyIntent, settled)


@dataclass(frozen=True)
class PositionFill:
    """A fill to add to a config's position (``apply_positions``)."""

    config_id: UUID
    paper: bool
    token_id: str
    side: str
    shares: Decimal
    usdc: Decimal
    condition_id: str = ""
    market_slug: str = ""
    outcome: str = ""


_POSITION_MOVES = ("shares", "cost_usdc", "realized_pnl", "opened")  # what a fill changes
_POSITION_STATE = ("id", "config", "paper", "token_id", *_POSITION_MOVES)


def apply_position(config_id: UUID, paper: bool, token_id: str, side: str, shares: Decimal,
                   usdc: Decimal, *, condition_id: str = "", market_slug: str = "",
                   outcome: str = "") -> tuple[Holding, int]:
    """Add a fill to the config's position (average cost); the new holding and open count."""
    [result] = apply_positions([PositionFill(
        config_id, paper, token_id, side, shares, usdc, condition_id=condition_id,
        market_slug=market_slug, outcome=outcome)])
    return result


def apply_positions(fills: Sequence[PositionFill]) -> list[tuple[Holding, int]]:
    """Add fills, in order, to their configs' positions; each fill's new holding and open count.

    The positions involved are read (and locked, on PostgreSQL) in one statement, missing
    ones inserted with their first fill applied, the rest written with one prepared
    statement: a fill's copies settle in three statements instead of two or three each.
    """
    if not fills:
        return []
    with write_transaction():
        config_ids = list({fill.config_id for fill in fills})
        where: dict[str, list[Any]] = {"paper": list({fill.paper for fill in fills}),
                                       "token_id": list({fill.token_id for fill in fills})}
        positions: dict[tuple[UUID, bool, str], dict[str, Any]] = {}
        for start in range(0, len(config_ids), 500):
            for row in select_rows(CopyPosition, _POSITION_STATE,
                                   {"config": config_ids[start:start + 500], **where},
                                   for_update=True):
                positions[(row["config"], row["paper"], row["token_id"])] = row
        new: set[tuple[UUID, bool, str]] = set()
        moved: set[tuple[UUID, bool, str]] = set()
        results: list[tuple[Holding, int]] = []
        for fill in fills:
            key = (fill.config_id, fill.paper, fill.token_id)
            row = positions.get(key)
            if row is None:
                row = positions[key] = {
                    "id": uuid4(), "config": fill.config_id, "paper": fill.paper,
                    "token_id": fill.token_id, "condition_id": fill.condition_id,
                    "market_slug": fill.market_slug, "outcome": fill.outcome,
                    "shares": ZERO, "cost_usdc": ZERO, "realized_pnl": ZERO, "opened": 0}
                new.add(key)
            before = Holding(row["shares"], row["cost_usdc"])
            after, realized = copying.apply_fill(before, fill.side, fill.shares, fill.usdc)
            row.update(shares=after.shares, cost_usdc=after.cost_usdc,
                       realized_pnl=row["realized_pnl"] + realized,
                       opened=row["opened"] + (1 if before.shares <= 0 < after.shares else 0))
            moved.add(key)
            results.append((after, row["opened"]))
        now = utcnow()
        if new:
            insert_rows(CopyPosition, [{**positions[key], "updated_at": now} for key in new])
        update_rows(CopyPosition, [
            (positions[key]["id"], {name: positions[key][name] for name in _POSITION_MOVES}
             | {"updated_at": now}) for key in moved - new])
    return results


def record_error(config_ids: Iterable[UUID], message: str) -> None:
    """Remember the latest error of configs (shown by /status)."""
    ids = list(config_ids)
    if ids:
        CopyConfig.update(last_error=message[:2000], last_error_at=utcnow()).where(
            CopyConfig.id.in_(ids)).execute()


def open_intents(config_ids: Sequence[UUID]) -> list[CopyIntent]:
    """Intents of these configs whose order may still be unaccounted for."""
    found: list[CopyIntent] = []
    for start in range(0, len(config_ids), 500):
        found.extend(CopyIntent.select().where(
            CopyIntent.config.in_(list(config_ids[start:start + 500])),
            CopyIntent.status.in_(INTENT_OPEN)))
    return found


def claim_intent(intent_id: UUID, worker: str, previous: str) -> bool:
    """Take over a pending intent from ``previous`` (a dead engine); False if someone did."""
    return bool(CopyIntent.update(worker=worker).where(
        CopyIntent.id == intent_id, CopyIntent.worker == previous,
        CopyIntent.status == INTENT_PENDING).execute())


def now() -> datetime:
    """The current UTC time (for callers that only import this module)."""
    return utcnow()
