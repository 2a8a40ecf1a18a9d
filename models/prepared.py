"""Queries compiled to SQL once per database, then run with new values (per-request paths).

peewee builds a query's SQL text anew on every execution: for the few queries every
authenticated request runs, that compilation cost more than the database's own work
(README "Capacity"). A ``Prepared`` query is built once per bound database with marker
values, its SQL and parameter list kept, and each run swaps the real values in. How its
rows map onto models (peewee's cursor wrapper's ``initialize``, which matches the cursor's
columns to the models' fields on every run) is kept too, from the first run that returns a row.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import peewee

from models.base import db

# A cursor wrapper's attributes that belong to one execution; the others (what
# ``initialize`` derives from the SQL's columns) are the same on every run of one query.
_PER_CURSOR = frozenset({"cursor", "count", "index", "initialized", "populated", "row_cache"})


class Prepared:
    """A SELECT built by ``build(*values)``, whose values are compared with ``fields``."""

    def __init__(self, build: Callable[..., peewee.ModelSelect], *fields: peewee.Field) -> None:
        """``fields[i]`` is the column ``build``'s i-th argument is compared with."""
        self._build = build
        self._fields = fields
        # Keyed by id(database); the entry holds the database, so the id stays its own.
        self._compiled: dict[int, tuple[peewee.Database, peewee.ModelSelect, str, list[Any],
                                        list[list[int]]]] = {}
        # Keyed like _compiled: the row mapping ``initialize`` derived on a first run.
        self._mappings: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _marker(self, field: peewee.Field) -> Any:
        # A value no caller sends, that survives the field's conversion unchanged in kind.
        if isinstance(field, peewee.ForeignKeyField):
            field = field.rel_field
        if isinstance(field, peewee.UUIDField):
            return uuid.uuid4()
        return f"\x00prepared-{uuid.uuid4().hex}"

    def _compile(self, database: peewee.Database) -> tuple[Any, ...]:
        markers = [self._marker(field) for field in self._fields]
        query = self._build(*markers)
        sql, params = database.get_sql_context().sql(query).query()
        slots = []
        for field, marker in zip(self._fields, markers, strict=True):
            stored = field.db_value(marker)
            found = [i for i, param in enumerate(params) if param == stored]
            if not found:
                raise ValueError(f"{field.name}'s value does not reach the SQL parameters")
            slots.append(found)
        return database, query, sql, list(params), slots

    def _execute(self, values: tuple[Any, ...]) -> tuple[peewee.ModelSelect, Any]:
        database = db.obj
        compiled = self._compiled.get(id(database))
        if compiled is None:
            with self._lock:
                compiled = self._compile(database)
                self._compiled[id(database)] = compiled
        _, query, sql, params, slots = compiled
        params = list(params)
        for field, value, places in zip(self._fields, values, slots, strict=True):
            for place in places:
                params[place] = field.db_value(value)
        return query, database.execute_sql(sql, params)

    def rows(self, *values: Any) -> list[Any]:
        """The rows (model instances, as ``build``'s query returns them) for ``values``."""
        query, cursor = self._execute(values)
        database = db.obj
        wrapper = query._get_cursor_wrapper(cursor)
        mapping = self._mappings.get(id(database))
        if mapping is not None:
            # The same SQL gives the same columns: skip peewee's per-run column matching.
            vars(wrapper).update(mapping)
            wrapper.initialized = True
        found = list(wrapper)
        if mapping is None and wrapper.initialized:
            self._mappings[id(database)] = {name: value for name, value in vars(wrapper).items()
                                            if name not in _PER_CURSOR}
        return found

    def first_values(self, *values: Any) -> tuple[Any, ...] | None:
        """The first row's selected fields, each read as its field reads it, or None.

        No model instance is built: for a hot read of a few plain columns.
        """
        query, cursor = self._execute(values)
        found = cursor.fetchall()  # to the end: an unfinished SQLite read would hold its lock
        if not found:
            return None
        return tuple(field.python_value(value)
                     for field, value in zip(query._returning, found[0], strict=True))

    def first(self, *values: Any) -> Any:
        """The first row for ``values``, or None."""
        found = self.rows(*values)
        return found[0] if found else None
