"""Floor of settlement: a fill's copies' answers written back (intents and orders updated,
positions upserted), one statement per table and one commit.

    .venv/bin/python bench/floors/settlement.py [--copies 10]
"""

from __future__ import annotations

import uuid
from typing import Any

from floor_db import main, per_copy
from psycopg2.extras import execute_values


def settler(connection: Any, copies: int) -> Any:
    """One call settles one fill's ``copies`` (rows made beforehand)."""
    ids = [str(uuid.uuid4()) for _ in range(copies)]
    with connection.cursor() as cursor:
        for table in ("intents", "orders", "trades"):
            execute_values(cursor, f"INSERT INTO {table} (id, status) VALUES %s",
                           [(i, "pending") for i in ids])
    connection.commit()

    def settle() -> None:
        with connection.cursor() as cursor:
            for table in ("intents", "orders"):
                execute_values(cursor, f"UPDATE {table} t SET status = v.s, c0 = v.f "
                               "FROM (VALUES %s) v(id, s, f) WHERE t.id = v.id::uuid",
                               [(i, "filled", "10.000000") for i in ids])
            execute_values(cursor, "INSERT INTO trades (id, status) VALUES %s ON CONFLICT "
                           "(id) DO UPDATE SET status = excluded.status",
                           [(i, "held") for i in ids])
        connection.commit()
    return settle


def measure(copies: int) -> float:
    """ms of CPU per copy order."""
    return per_copy(settler, copies)


if __name__ == "__main__":
    main("settle", settler, __doc__)
