"""Plain-SQL writes and reads for hot paths (the copy engine's intents, orders and positions).

peewee builds a statement value by value through its query compiler, which costs more than
the database's own work for a batch of a few dozen wide rows. These helpers convert each
value with its field's own ``db_value`` (so what is stored is exactly what peewee would
store; what is read back goes through ``python_value``) and send statements whose text is
built once per shape: ``insert_rows`` one multi-row INSERT per chunk, ``update_rows`` one
prepared UPDATE per set of changed fields (``executemany``), ``update_returning`` one
UPDATE that reads the row back, ``select_rows`` one SELECT; on SQLite and PostgreSQL alike.
An update may carry a guard (conditional write: ``WHERE status IN (...)``), which is how
monotonic status transitions are written without an extra round trip.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import peewee

_MISSING = object()


def _default(field: peewee.Field) -> Any:
    default = field.default
    return default() if callable(default) else default


def insert_rows(model: type[peewee.Model], rows: Sequence[dict[str, Any]], *,
                ignore_conflicts: bool = False, returning_ids: bool = False,
                chunk: int = 200) -> list[UUID]:
    """INSERT ``rows`` (dicts keyed by field name) into ``model``'s table in few statements.

    Fields missing from a row take their default (NULL without one). With
    ``ignore_conflicts`` rows that hit a unique constraint are skipped (``ON CONFLICT DO
    NOTHING``); with ``returning_ids`` the primary keys of the rows actually inserted come
    back.
    """
    if not rows:
        return []
    meta = model._meta  # type: ignore[attr-defined]
    given = {name for row in rows for name in row}
    # Like peewee: every field a row names, plus every field with a default.
    fields = [field for field in meta.sorted_fields
              if field.name in given or field.default is not None]
    database = meta.database
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    one_row = "(" + ", ".join([database.param] * len(fields)) + ")"
    suffix = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    if returning_ids:
        suffix += f' RETURNING "{meta.primary_key.column_name}"'
    inserted: list[UUID] = []
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        params = []
        for row in part:
            for field in fields:
                value = row.get(field.name, _MISSING)
                params.append(field.db_value(_default(field) if value is _MISSING else value))
        sql = (f'INSERT INTO "{meta.table_name}" ({columns}) VALUES '
               + ", ".join([one_row] * len(part)) + suffix)
        cursor = database.execute_sql(sql, params)
        if returning_ids:
            inserted.extend(UUID(str(value)) for (value,) in cursor.fetchall())
    return inserted


@dataclass(frozen=True, slots=True)
class IfNull:
    """A change written only where the column is still NULL (a first time is kept)."""

    value: Any


Shape = tuple[tuple[str, bool], ...]  # (field name, written only if NULL) per change
# A row's precondition: (field name, how many allowed values) per field it checks.
GuardShape = tuple[tuple[str, int], ...]
# A row's precondition: field name -> the values it may hold for the row to be written.
Guard = Mapping[str, Sequence[Any]]


@functools.lru_cache(maxsize=256)
def _update_sql(model: type[peewee.Model], key: str, shape: Shape, returning: tuple[str, ...],
                param: str, guard: GuardShape = ()) -> str:
    meta = model._meta  # type: ignore[attr-defined]
    fields = meta.fields
    sets = []
    for name, if_null in shape:
        column = f'"{fields[name].column_name}"'
        sets.append(f"{column} = COALESCE({column}, {param})" if if_null
                    else f"{column} = {param}")
    sql = (f'UPDATE "{meta.table_name}" SET {", ".join(sets)} '
           f'WHERE "{fields[key].column_name}" = {param}')
    for name, count in guard:
        sql += f' AND "{fields[name].column_name}" IN ({", ".join([param] * count)})'
    if returning:
        sql += " RETURNING " + ", ".join(f'"{fields[name].column_name}"' for name in returning)
    return sql


def _update_params(fields: Mapping[str, peewee.Field], key_field: peewee.Field, key_value: Any,
                   changes: Mapping[str, Any], guard: Guard | None = None
                   ) -> tuple[Shape, GuardShape, list[Any]]:
    shape: list[tuple[str, bool]] = []
    params: list[Any] = []
    for name, value in changes.items():
        if_null = isinstance(value, IfNull)
        shape.append((name, if_null))
        params.append(fields[name].db_value(value.value if if_null else value))
    params.append(key_field.db_value(key_value))
    checks: list[tuple[str, int]] = []
    for name, allowed in (guard or {}).items():
        checks.append((name, len(allowed)))
        params.extend(fields[name].db_value(value) for value in allowed)
    return tuple(shape), tuple(checks), params


def update_rows(model: type[peewee.Model], rows: Sequence[tuple[Any, Mapping[str, Any]]], *,
                key: str = "id", guard: Callable[[Mapping[str, Any]], Guard] | None = None
                ) -> None:
    """UPDATE each (key value, {field name: value}) row of ``model`` with its own changes.

    The row is the one whose ``key`` field holds the key value; an ``IfNull`` value is
    written only where the column is NULL. With ``guard``, a row is written only where
    each field it names (for that row's changes) still holds one of the values given: a
    conditional write that leaves a row someone else moved on alone. Rows changing the
    same fields under the same kind of guard share one prepared statement (``executemany``).
    """
    meta = model._meta  # type: ignore[attr-defined]
    fields = meta.fields
    database = meta.database
    groups: dict[tuple[Shape, GuardShape], list[list[Any]]] = {}
    for key_value, changes in rows:
        shape, checks, params = _update_params(fields, fields[key], key_value, changes,
                                               guard(changes) if guard else None)
        groups.setdefault((shape, checks), []).append(params)
    # All or nothing (inside a caller's transaction that is the caller's).
    with contextlib.nullcontext() if database.in_transaction() else database.atomic():
        for (shape, checks), group in groups.items():
            sql = _update_sql(model, key, shape, (), database.param, checks)
            if len(group) == 1:
                database.execute_sql(sql, group[0])
                continue
            with peewee.__exception_wrapper__:  # the driver's errors as peewee's raises them
                database.cursor().executemany(sql, group)


def update_returning(model: type[peewee.Model], key_value: Any, changes: Mapping[str, Any],
                     returning: Sequence[str], *, key: str = "id", guard: Guard | None = None
                     ) -> dict[str, Any] | None:
    """``update_rows`` for one row, whose ``returning`` fields come back as now stored.

    One statement writes and reads, so what comes back is the row this change produced
    (on PostgreSQL, under the row lock the UPDATE took). None when no row matched (none
    with this key, or ``guard``'s condition no longer held: the write lost a race).
    """
    meta = model._meta  # type: ignore[attr-defined]
    fields = meta.fields
    database = meta.database
    shape, checks, params = _update_params(fields, fields[key], key_value, changes, guard)
    sql = _update_sql(model, key, shape, tuple(returning), database.param, checks)
    found = database.execute_sql(sql, params).fetchall()
    if not found:
        return None
    return {name: fields[name].python_value(value)
            for name, value in zip(returning, found[0], strict=True)}


def select_rows(model: type[peewee.Model], names: Sequence[str],
                where_in: Mapping[str, Collection[Any]], *, for_update: bool = False,
                for_share: bool = False) -> list[dict[str, Any]]:
    """The ``names`` fields of ``model``'s rows whose every ``where_in`` field is in its values.

    With ``for_update`` they stay locked until the transaction ends (``FOR UPDATE``) on a
    database with row locks; on SQLite a write transaction already keeps other writers out.
    ``for_share`` takes the shared lock instead (``FOR SHARE``: writers wait, readers not).
    """
    meta = model._meta  # type: ignore[attr-defined]
    fields = meta.fields
    database = meta.database
    if any(not values for values in where_in.values()):
        return []
    conditions = []
    params: list[Any] = []
    for name, values in where_in.items():
        field = fields[name]
        conditions.append(f'"{field.column_name}" IN ('
                          + ", ".join([database.param] * len(values)) + ")")
        params.extend(field.db_value(value) for value in values)
    columns = ", ".join(f'"{fields[name].column_name}"' for name in names)
    sql = f'SELECT {columns} FROM "{meta.table_name}" WHERE {" AND ".join(conditions)}'
    if (for_update or for_share) and database.for_update:  # SQLite has no row locks
        sql += " FOR UPDATE" if for_update else " FOR SHARE"
    converters = [fields[name].python_value for name in names]
    return [{name: convert(value) for name, convert, value in zip(names, converters, row,
                                                                   strict=True)}
            for row in database.execute_sql(sql, params).fetchall()]


__all__ = ["Guard", "IfNull", "insert_rows", "select_rows", "update_returning", "update_rows"]
