"""The copy engine's own database reads and writes, blocking (run in threads).

Which targets have active configs, the configs' snapshots (rules and holdings) the
engine keeps in memory, the per-target detection cursors and the configs' last error.
Intents and positions are the services' (``copy_intents``, ``copy_positions``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import peewee

from models.base import utcnow
from models.copying import CopyConfig, CopyPosition, TargetCursor
from services.copying import mirror as copying
from services.copying.mirror import CopyRules, Holding


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


def record_error(config_ids: Iterable[UUID], message: str) -> None:
    """Remember the latest error of configs (shown by /status)."""
    ids = list(config_ids)
    if ids:
        CopyConfig.update(last_error=message[:2000], last_error_at=utcnow()).where(
            CopyConfig.id.in_(ids)).execute()
