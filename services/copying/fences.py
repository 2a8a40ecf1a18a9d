"""Fencing tokens of target leases, as the database checks them (issue 31).

A copy engine runs a target under a lease (``services.platform.copy_leases``) whose fencing
token moves on at every take-over. Before it runs the target, the engine registers its
token here (``register``: ``target_fences`` keeps the greatest one seen); every intent it
writes carries the token, and the intent write (``copy_intents.insert``) joins the configs
it re-reads to their target's fence row and refuses drafts whose token is older than the
registered one: one more column compared in a statement the write already makes, inside
the same transaction (on PostgreSQL the row is read ``FOR SHARE``, so a registration waits
for an intent write in progress, and the next write sees it). An engine whose lease was
taken over while it was cut off therefore records nothing, and sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

import peewee

from models.base import atomic, utcnow
from models.copying import CopyConfig, TargetFence

log = logging.getLogger(__name__)


class LeaseLapsed(Exception):
    """The engine's lease clock ran out before a copy was recorded: nothing was written or
    sent, and the fill is the next owner's (its cursor must not move past it)."""


def register(target: str, token: int) -> int:
    """Make ``token`` the target's current fencing token unless a newer one is; the
    token now registered (greater than ``token``: this engine's lease is stale, or Redis
    lost its counters)."""
    target = target.lower()
    with atomic():
        (TargetFence.insert(target_address=target, token=token, updated_at=utcnow())
         .on_conflict(conflict_target=[TargetFence.target_address],
                      update={TargetFence.token: peewee.Case(
                          None, [(TargetFence.token < token, token)], TargetFence.token),
                          TargetFence.updated_at: utcnow()})
         .execute())
        return int(TargetFence.select(TargetFence.token)
                   .where(TargetFence.target_address == target).scalar())


def current(target: str) -> int | None:
    """The target's registered fencing token (None: never leased under fencing)."""
    return TargetFence.select(TargetFence.token).where(
        TargetFence.target_address == target.lower()).scalar()


def holds(target: str, token: int) -> bool:
    """True when ``token`` is not older than the target's registered one (inside the
    caller's write transaction: the row is read ``FOR SHARE`` on PostgreSQL)."""
    query = TargetFence.select(TargetFence.token).where(
        TargetFence.target_address == target.lower())
    if TargetFence._meta.database.for_update:
        query = query.for_update("FOR SHARE")
    found = query.scalar()
    if found is None or found > token:
        log.warning("target %s: fencing token %d is stale (current %s); nothing written",
                    target, token, found)
        return False
    return True


def active_configs(config_ids: Sequence[UUID], token: int | None) -> set[UUID]:
    """The configs among ``config_ids`` still active, read ``FOR SHARE`` on PostgreSQL;
    with ``token``, only those whose target's registered fencing token is not newer.

    Plain SQL (the copy engine's hot path): by primary key, with the fence row joined on
    the config's target; given "deleted_at IS NULL", SQLite's planner would walk the
    deleted_at index over every live config instead of looking up the fill's few.
    """
    meta, fence = CopyConfig._meta, TargetFence._meta
    database = meta.database
    fields = meta.fields
    marks = ", ".join([database.param] * len(config_ids))
    params = [fields["id"].db_value(cid) for cid in config_ids]
    if token is None:
        sql = (f'SELECT c."id", c."is_active", c."deleted_at", NULL FROM "{meta.table_name}" c'
               f' WHERE c."id" IN ({marks})')
    else:
        sql = (f'SELECT c."id", c."is_active", c."deleted_at", f."token" '
               f'FROM "{meta.table_name}" c JOIN "{fence.table_name}" f '
               f'ON f."target_address" = c."target_address" WHERE c."id" IN ({marks})')
    if database.for_update:  # SQLite has no row locks (its write transaction keeps writers out)
        sql += " FOR SHARE"
    active: set[UUID] = set()
    stale = 0
    for cid, is_active, deleted_at, current_token in database.execute_sql(sql, params):
        if not is_active or deleted_at is not None:
            continue
        if token is not None and current_token > token:
            stale += 1
            continue
        active.add(fields["id"].python_value(cid))
    if stale:
        log.warning("fencing token %d is stale for %d config(s): their intents are refused",
                    token, stale)
    return active


__all__ = ["LeaseLapsed", "active_configs", "current", "holds", "register"]
