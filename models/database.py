"""Opening the database named by DATABASE_URL and binding the model proxy to it."""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, unquote, urlparse

import peewee
from playhouse.pool import PooledPostgresqlDatabase, PooledSqliteDatabase

from models.base import db


def open_database(url: str, *, fold_on_commit: bool = True) -> peewee.Database:
    """A peewee Database for ``sqlite:///path`` or ``postgresql://user@host:port/name``.

    Without ``fold_on_commit`` SQLite connections never fold the write-ahead log into the
    database themselves (SQLite's default does it inside whichever commit finds the log past
    1,000 pages, fsyncs included): the process calls ``fold_log`` on its own schedule
    instead. The worker does, so that a copy's commit never pays for it.
    """
    parsed = urlparse(url)
    options = dict(parse_qsl(parsed.query))
    if parsed.scheme == "sqlite":
        # SQLAlchemy's spelling: sqlite:///relative.db, sqlite:////absolute.db
        path = unquote(parsed.path)[1:]
        # Pooled: a request's close() hands the connection back instead of paying
        # for a fresh connect and pragmas on the next request. Every transaction begins
        # IMMEDIATE: web, worker and jobs write to one file, and a deferred transaction that
        # reads first fails at its first write ("database is locked", busy timeout or not)
        # when another process committed since its read; IMMEDIATE waits for the lock.
        return PooledSqliteDatabase(
            path or ":memory:",
            lock_type="IMMEDIATE",
            max_connections=32,
            stale_timeout=300,
            pragmas={"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 10000,
                     "synchronous": "normal",
                     "wal_autocheckpoint": 1000 if fold_on_commit else 0},
            timeout=10,
            # The pool hands a connection to one thread at a time, maybe not its creator.
            check_same_thread=False,
        )
    if parsed.scheme in ("postgres", "postgresql"):
        kwargs: dict[str, object] = {
            "host": parsed.hostname or "127.0.0.1",
            "port": parsed.port or 5432,
            "user": unquote(parsed.username) if parsed.username else None,
            "password": unquote(parsed.password) if parsed.password else None,
            "max_connections": int(options.pop("max_connections", 32)),
            "stale_timeout": 300,
            "timeout": 10,
        }
        kwargs.update(options)  # e.g. options=-c search_path=... for an isolated schema
        return PooledPostgresqlDatabase(parsed.path.lstrip("/"), autorollback=True, **kwargs)
    raise ValueError(f"unsupported DATABASE_URL scheme {parsed.scheme!r}")


def bind(url: str, *, fold_on_commit: bool = True) -> peewee.Database:
    """Open the database at ``url`` and point every model at it."""
    database = open_database(url, fold_on_commit=fold_on_commit)
    db.initialize(database)
    return database


def has_log_to_fold() -> bool:
    """True when the bound database is SQLite, whose write-ahead log needs folding."""
    return isinstance(db.obj, peewee.SqliteDatabase)


def fold_log() -> tuple[int, int] | None:
    """Fold SQLite's write-ahead log into the database without blocking anyone (PASSIVE).

    Returns (frames in the log, frames folded); None on PostgreSQL, which has no such log.
    """
    if not has_log_to_fold():
        return None
    _, frames, folded = db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return frames, folded


def wipe(url: str) -> str:
    """Remove every table of the database at ``url`` (SQLite: its files); says what went."""
    database = open_database(url)
    if isinstance(database, peewee.SqliteDatabase):
        path = database.database
        database.close_all()
        gone = [f"{path}{suffix}" for suffix in ("", "-wal", "-shm")
                if path != ":memory:" and os.path.exists(f"{path}{suffix}")]
        for name in gone:
            os.remove(name)
        return f"removed {path}" if gone else f"no database at {path}"
    with database.connection_context():
        tables = database.get_tables()
        for table in tables:
            database.execute_sql(f'DROP TABLE IF EXISTS "{table}" CASCADE')
    database.close_all()
    return f"dropped {len(tables)} table(s) of {database.database}"
