"""Multi-row INSERTs for hot paths (the copy engine's intents and order records).

peewee builds an INSERT value by value through its query compiler, which costs more than
the database's own work for a batch of a few dozen wide rows. ``insert_rows`` converts
each value with its field's own ``db_value`` (so what is stored is exactly what peewee
would store) and sends one multi-row statement per chunk, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Sequence
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


__all__ = ["insert_rows"]
