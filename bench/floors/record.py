"""Floor of the durable record: a fill's copies written as intents, orders and trades, one
multi-row INSERT per table and one commit (the client's CPU; the server's is not ours).

    .venv/bin/python bench/floors/record.py [--copies 10]
"""

from __future__ import annotations

import uuid
from typing import Any

from floor_db import COLUMNS, main, per_copy
from psycopg2.extras import execute_values


def writer(connection: Any, copies: int) -> Any:
    """One call records one fill's ``copies``."""
    values = ["x" * 40] * (COLUMNS - 2)

    def record() -> None:
        with connection.cursor() as cursor:
            for table in ("intents", "orders", "trades"):
                execute_values(cursor, f"INSERT INTO {table} VALUES %s",
                               [(str(uuid.uuid4()), "pending", *values)
                                for _ in range(copies)])
        connection.commit()
    return record


def measure(copies: int) -> float:
    """ms of CPU per copy order."""
    return per_copy(writer, copies)


if __name__ == "__main__":
    main("record", writer, __doc__)
