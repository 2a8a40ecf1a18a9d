"""A scratch PostgreSQL connection for the record and settlement floors (temp tables)."""

from __future__ import annotations

import os
from typing import Any

import psycopg2

URL = os.environ.get("FLOORS_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
COLUMNS = 24  # about an intent's, an order's or a trade's row


def connect() -> Any:
    """A connection with three temp tables shaped like the copy's rows."""
    connection = psycopg2.connect(URL)
    with connection.cursor() as cursor:
        for table in ("intents", "orders", "trades"):
            cursor.execute(
                f"CREATE TEMP TABLE {table} (id uuid PRIMARY KEY, status text, "
                + ", ".join(f"c{i} text" for i in range(COLUMNS - 2)) + ")")
    connection.commit()
    return connection
