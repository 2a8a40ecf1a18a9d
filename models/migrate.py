"""Schema migrations: numbered modules in ``models/migrations``, applied in order, once.

Each module defines ``apply(database, migrator)`` and freezes the tables it
creates as they were at that step, so later model changes never rewrite an
old migration. ``schema_migrations`` records what has run.
"""

from __future__ import annotations

import importlib
import pkgutil
from datetime import UTC, datetime

import peewee
from playhouse.migrate import PostgresqlMigrator, SchemaMigrator, SqliteMigrator

import models.migrations as migrations_pkg


class SchemaNotMigrated(RuntimeError):
    """The database lacks migrations this code needs."""


class SchemaMigration(peewee.Model):
    name = peewee.CharField(primary_key=True, max_length=200)
    applied_at = peewee.DateTimeField()

    class Meta:
        table_name = "schema_migrations"


def available() -> list[str]:
    """Names of every migration module, in the order they apply."""
    names = [m.name for m in pkgutil.iter_modules(migrations_pkg.__path__)
             if m.name.startswith("m") and m.name[1:5].isdigit()]
    return sorted(names)


def applied(database: peewee.Database) -> set[str]:
    """Names of the migrations already recorded in ``database``."""
    if not database.table_exists(SchemaMigration._meta.table_name):
        return set()
    with database.bind_ctx([SchemaMigration]):
        return {row.name for row in SchemaMigration.select()}


def pending(database: peewee.Database) -> list[str]:
    """Migrations this code has and ``database`` has not run yet."""
    done = applied(database)
    return [name for name in available() if name not in done]


def _migrator(database: peewee.Database) -> SchemaMigrator:
    if isinstance(database, peewee.PostgresqlDatabase):
        return PostgresqlMigrator(database)
    return SqliteMigrator(database)


def migrate(database: peewee.Database) -> list[str]:
    """Apply every pending migration, each in its own transaction; return their names."""
    with database.bind_ctx([SchemaMigration]):
        database.create_tables([SchemaMigration], safe=True)
    ran = []
    for name in pending(database):
        module = importlib.import_module(f"{migrations_pkg.__name__}.{name}")
        with database.atomic(), database.bind_ctx([SchemaMigration]):
            module.apply(database, _migrator(database))
            SchemaMigration.create(name=name, applied_at=datetime.now(UTC).replace(tzinfo=None))
        ran.append(name)
    return ran


def require_migrated(database: peewee.Database) -> None:
    """Raise SchemaNotMigrated, naming what is missing, unless the schema is current."""
    missing = pending(database)
    if missing:
        raise SchemaNotMigrated(
            f"The database is not migrated ({len(missing)} pending: {', '.join(missing)}). "
            "Run `copytrade migrate` first."
        )
