"""Floor of the durable record: a fill's copies written as intents, orders and trades, one
multi-row INSERT per table and one commit (the client's CPU; the server's is not ours).

    .venv/bin/python bench/floors/record.py [--copies 10]
"""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from floor_clock import cpu_ms
from floor_db import COLUMNS, connect
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
    connection = connect()
    try:
        return cpu_ms(writer(connection, copies), calls=200) / copies
    finally:
        connection.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    print(f"record: {measure(parser.parse_args().copies):.4f} ms per copy")
