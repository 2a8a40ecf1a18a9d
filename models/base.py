"""The database binding and the field types every model shares.

``db`` is a ``DatabaseProxy``: the app factory, the worker and the tests bind
it to SQLite or PostgreSQL with ``models.database.bind``.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import peewee

db = peewee.DatabaseProxy()


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def atomic() -> Any:
    """``db.atomic()``, or nothing new inside an open transaction, which covers the work.

    peewee nests atomic blocks as savepoints, two more statements each; a block whose
    failure propagates aborts the caller's transaction anyway (the copy engine records a
    fill's ten orders in one transaction: twenty savepoint statements saved).
    """
    return contextlib.nullcontext() if db.in_transaction() else db.atomic()


class AmountField(peewee.BigIntegerField):
    """A Decimal stored as integer base units (``decimals`` places); refuses to round."""

    def __init__(self, decimals: int = 6, *args: Any, **kwargs: Any) -> None:
        self.decimals = decimals
        super().__init__(*args, **kwargs)

    def db_value(self, value: Any) -> int | None:
        if value is None:
            return None
        amount = Decimal(value) if not isinstance(value, Decimal) else value
        scaled = amount.scaleb(self.decimals)
        if scaled != scaled.to_integral_value():
            raise ValueError(f"{amount} has more than {self.decimals} decimal places")
        return int(scaled)

    def python_value(self, value: Any) -> Decimal | None:
        if value is None:
            return None
        return Decimal(int(value)).scaleb(-self.decimals)


class DecimalTextField(peewee.TextField):
    """A Decimal of any precision stored as its exact text (SQLite's DECIMAL is a float)."""

    def db_value(self, value: Any) -> str | None:
        return None if value is None else str(Decimal(value))

    def python_value(self, value: Any) -> Decimal | None:
        return None if value is None else Decimal(value)


class UTCDateTimeField(peewee.DateTimeField):
    """A datetime stored as naive UTC and read back timezone-aware."""

    def db_value(self, value: Any) -> Any:
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return super().db_value(value)

    def python_value(self, value: Any) -> Any:
        value = super().python_value(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class BaseModel(peewee.Model):
    """Every table: a UUID primary key and the shared database proxy."""

    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        database = db
        legacy_table_names = False
