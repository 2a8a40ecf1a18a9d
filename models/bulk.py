"""Plain-SQL writes and reads for hot paths (the copy engine's intents, orders and positions).

peewee builds a statement value by value through its query compiler, which costs more than
the database's own work for a batch of a few dozen wide rows. These helpers convert each
value with its field's own ``db_value`` (so what is stored is exactly what peewee would
store; what is read back goes through ``python_value``) and send statements whose text is
built once per shape: ``insert_rows`` one multi-row INSERT per chunk, ``update_rows`` one
``UPDATE ... FROM (VALUES ...)`` per set of changed fields, ``update_returning_rows`` the same
reading the rows back, ``select_rows`` one SELECT; on SQLite (>= 3.35: UPDATE FROM and
RETURNING) and PostgreSQL alike.
An update may carry a guard (conditional write: ``WHERE status IN (...)``), which is how
monotonic status transitions are written without an extra round trip.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import peewee

from models.base import UTCDateTimeField

_MISSING = object()


class _Never:
    """No value is of this type: a field whose every value goes through its converter."""


# (type, converter): a value of exactly that type is stored as it is (what the field's
# db_value would return for it); any other goes through the converter, which returns what
# db_value returns. A hot batch converts thousands of values: most skip a call this way.
Converter = tuple[type, Callable[[Any], Any]]


def _utc_naive(field: peewee.Field) -> Callable[[Any], Any]:
    slow = field.db_value

    def convert(value: Any) -> Any:
        # UTCDateTimeField.db_value's result for UTC (astimezone(UTC) of a UTC datetime is
        # itself) without its two calls and isinstance checks.
        if type(value) is datetime and value.tzinfo is UTC:
            return value.replace(tzinfo=None)
        return slow(value)
    return convert


def _uuid_hex(field: peewee.Field) -> Callable[[Any], Any]:
    slow = field.db_value

    def convert(value: Any) -> Any:
        return value.hex if type(value) is UUID else slow(value)  # UUIDField.db_value's
    return convert


def _converter(field: peewee.Field) -> Converter:
    """``field.db_value`` as a (type stored as it is, converter) pair (see ``Converter``)."""
    kind = type(field)
    target = field.rel_field if isinstance(field, peewee.ForeignKeyField) \
        and kind.db_value is peewee.ForeignKeyField.db_value else field
    if type(target).db_value is peewee.UUIDField.db_value:
        return _Never, _uuid_hex(field)
    if kind.db_value is UTCDateTimeField.db_value \
            and kind.adapt is peewee.DateTimeField.adapt:
        return type(None), _utc_naive(field)  # None is stored as None
    if kind.db_value is peewee.Field.db_value:  # None, or adapt(value)
        adapt = kind.adapt
        for same, its_adapt in ((str, peewee._StringField.adapt),
                                (int, peewee.IntegerField.adapt), (bool, bool),
                                (datetime, peewee.DateTimeField.adapt)):
            if adapt is its_adapt:  # returns a value of this exact type as it is
                return same, field.db_value
    return _Never, field.db_value


@functools.lru_cache(maxsize=256)
def _converters(model: type[peewee.Model]) -> Mapping[str, Converter]:
    """Each of ``model``'s fields' converter pair, by field name."""
    return {name: _converter(field)
            for name, field in model._meta.fields.items()}  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=256)
def _insert_plan(model: type[peewee.Model], given: frozenset[str]
                 ) -> tuple[str, list[tuple[str, type, Callable[[Any], Any], Any, bool]]]:
    """The INSERT's column list for rows naming ``given``, and per column (field name, its
    converter pair, its default, whether the default is called per row)."""
    meta = model._meta  # type: ignore[attr-defined]
    converters = _converters(model)
    # Like peewee: every field a row names, plus every field with a default.
    fields = [field for field in meta.sorted_fields
              if field.name in given or field.default is not None]
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    return columns, [(field.name, *converters[field.name], field.default,
                      callable(field.default)) for field in fields]


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
    columns, plan = _insert_plan(model, frozenset().union(*rows))
    database = meta.database
    one_row = "(" + ", ".join([database.param] * len(plan)) + ")"
    suffix = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    if returning_ids:
        suffix += f' RETURNING "{meta.primary_key.column_name}"'
    inserted: list[UUID] = []
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        params: list[Any] = []
        append = params.append
        for row in part:
            get = row.get
            for name, same, convert, default, call in plan:
                value = get(name, _MISSING)
                if value is _MISSING:
                    value = default() if call else default
                append(value if type(value) is same else convert(value))
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

_UPDATE_CHUNK = 200  # rows per statement (SQLite allows 32,766 parameters)


# A VALUES list's column types on PostgreSQL, which reads bare parameters as text (SQLite's
# columns apply their own affinity to whatever is stored: no types there).
_POSTGRES_TYPES: Mapping[str, str] = {**peewee.FIELD, **peewee.PostgresqlDatabase.field_types}


def _typed(database: Any) -> bool:
    """Whether ``database`` (or the one a proxy stands for) needs its VALUES typed."""
    return isinstance(getattr(database, "obj", database), peewee.PostgresqlDatabase)


@functools.lru_cache(maxsize=512)
def _update_sql(model: type[peewee.Model], key: str, shape: Shape,
                returning: tuple[str, ...] | None, guard: GuardShape, rows: int, param: str,
                typed: bool) -> str:
    """``UPDATE t SET ... FROM (VALUES (key, change..., allowed...), ...) AS v WHERE ...``:
    each row's changes and guard values in its own VALUES row, one statement for them all
    (SQLite >= 3.33 and PostgreSQL name a VALUES list's columns column1, column2, ...)."""
    meta = model._meta  # type: ignore[attr-defined]
    fields = meta.fields
    table = f'"{meta.table_name}"'
    columns = [fields[key]] + [fields[name] for name, _ in shape] \
        + [fields[name] for name, count in guard for _ in range(count)]
    if typed:  # the first row's types are the list's (the rest follow them)
        first = ", ".join(f"CAST({param} AS "
                          f"{_POSTGRES_TYPES.get(field.field_type, field.field_type)})"
                          for field in columns)
    else:
        first = ", ".join([param] * len(columns))
    values = ", ".join([f"({first})"] + [f"({', '.join([param] * len(columns))})"]
                       * (rows - 1))
    sets = []
    for index, (name, if_null) in enumerate(shape, start=2):
        column = f'"{fields[name].column_name}"'
        sets.append(f"{column} = COALESCE({table}.{column}, v.column{index})" if if_null
                    else f"{column} = v.column{index}")
    sql = (f'UPDATE {table} SET {", ".join(sets)} FROM (VALUES {values}) AS v '
           f'WHERE {table}."{fields[key].column_name}" = v.column1')
    index = 2 + len(shape)
    for name, count in guard:
        allowed = ", ".join(f"v.column{index + offset}" for offset in range(count))
        sql += f' AND {table}."{fields[name].column_name}" IN ({allowed})'
        index += count
    if returning is not None:  # the key first: which row each answer is
        sql += " RETURNING " + ", ".join(f'{table}."{fields[name].column_name}"'
                                         for name in (key, *returning))
    return sql


def _update_params(converters: Mapping[str, Converter], key: str, key_value: Any,
                   changes: Mapping[str, Any], guard: Guard | None = None
                   ) -> tuple[Shape, GuardShape, list[Any]]:
    shape: list[tuple[str, bool]] = []
    same, convert = converters[key]
    params: list[Any] = [key_value if type(key_value) is same else convert(key_value)]
    append = params.append
    for name, value in changes.items():
        if type(value) is IfNull:
            shape.append((name, True))
            value = value.value
        else:
            shape.append((name, False))
        same, convert = converters[name]
        append(value if type(value) is same else convert(value))
    checks: list[tuple[str, int]] = []
    if guard:
        for name, allowed in guard.items():
            checks.append((name, len(allowed)))
            same, convert = converters[name]
            params.extend([value if type(value) is same else convert(value)
                           for value in allowed])
    return tuple(shape), tuple(checks), params


def _batches(rows: list[tuple[Any, list[Any]]]) -> list[list[list[Any]]]:
    """A shape's rows in statements of at most ``_UPDATE_CHUNK``, a key at most once in each
    (a second change of one row waits for the next statement, so the later one wins, as
    one statement per row would have it)."""
    batches: list[list[list[Any]]] = []
    seen: set[Any] = set()
    for key_value, params in rows:
        if not batches or key_value in seen or len(batches[-1]) >= _UPDATE_CHUNK:
            batches.append([])
            seen = set()
        seen.add(key_value)
        batches[-1].append(params)
    return batches


def _update(model: type[peewee.Model], rows: Sequence[tuple[Any, Mapping[str, Any]]], key: str,
            guard: Callable[[Mapping[str, Any]], Guard] | None,
            returning: tuple[str, ...] | None) -> list[tuple[Any, ...]]:
    """Write the rows, one statement per shape of change (and of guard); with ``returning``
    (None: nothing), each written row's key and those fields as stored."""
    meta = model._meta  # type: ignore[attr-defined]
    database = meta.database
    converters = _converters(model)
    groups: dict[tuple[Shape, GuardShape], list[tuple[Any, list[Any]]]] = {}
    for key_value, changes in rows:
        shape, checks, params = _update_params(converters, key, key_value, changes,
                                               guard(changes) if guard else None)
        groups.setdefault((shape, checks), []).append((params[0], params))
    found: list[tuple[Any, ...]] = []
    typed = _typed(database)
    for (shape, checks), group in groups.items():
        for batch in _batches(group):
            sql = _update_sql(model, key, shape, returning, checks, len(batch),
                              database.param, typed)
            cursor = database.execute_sql(sql, [value for params in batch for value in params])
            if returning is not None:
                found.extend(cursor.fetchall())
    return found


def update_rows(model: type[peewee.Model], rows: Sequence[tuple[Any, Mapping[str, Any]]], *,
                key: str = "id", guard: Callable[[Mapping[str, Any]], Guard] | None = None
                ) -> None:
    """UPDATE each (key value, {field name: value}) row of ``model`` with its own changes.

    The row is the one whose ``key`` field holds the key value; an ``IfNull`` value is
    written only where the column is NULL. With ``guard``, a row is written only where
    each field it names (for that row's changes) still holds one of the values given: a
    conditional write that leaves a row someone else moved on alone. Rows changing the
    same fields under the same kind of guard share one statement (``UPDATE ... FROM
    (VALUES ...)``: each row's values, its guard's too, in its own VALUES row).
    """
    database = model._meta.database  # type: ignore[attr-defined]
    # All or nothing (inside a caller's transaction that is the caller's).
    with contextlib.nullcontext() if database.in_transaction() else database.atomic():
        _update(model, rows, key, guard, None)


def update_returning_rows(model: type[peewee.Model],
                          rows: Sequence[tuple[Any, Mapping[str, Any]]],
                          returning: Sequence[str], *, key: str = "id",
                          guard: Callable[[Mapping[str, Any]], Guard] | None = None
                          ) -> dict[Any, dict[str, Any]]:
    """``update_rows`` whose written rows come back: key value -> ``returning`` fields as
    now stored (key values as the key field reads them back).

    One statement per shape writes and reads, so what comes back is the row this change
    produced (on PostgreSQL, under the row lock the UPDATE took). A row missing from the
    answer was not written: no row with its key, or its guard no longer held (it lost a
    race). Call it inside the caller's transaction when the rows must go together.
    """
    fields = model._meta.fields  # type: ignore[attr-defined]
    converters = [fields[name].python_value for name in (key, *returning)]
    written: dict[Any, dict[str, Any]] = {}
    for row in _update(model, rows, key, guard, tuple(returning)):
        key_value, *values = (convert(value) for convert, value
                              in zip(converters, row, strict=True))
        written[key_value] = dict(zip(returning, values, strict=True))
    return written


def update_returning(model: type[peewee.Model], key_value: Any, changes: Mapping[str, Any],
                     returning: Sequence[str], *, key: str = "id", guard: Guard | None = None
                     ) -> dict[str, Any] | None:
    """``update_returning_rows`` for one row: its ``returning`` fields as now stored, or
    None when it was not written (no row with this key, or ``guard`` no longer held)."""
    written = update_returning_rows(model, [(key_value, changes)], returning, key=key,
                                    guard=None if guard is None else lambda _: guard)
    return next(iter(written.values()), None)


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


__all__ = ["Guard", "IfNull", "insert_rows", "select_rows", "update_returning",
           "update_returning_rows", "update_rows"]
