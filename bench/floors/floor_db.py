"""A scratch PostgreSQL connection for the record and settlement floors (temp tables)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import psycopg2
from floor_clock import cpu_ms

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


def per_copy(make: Callable[[Any, int], Callable[[], Any]], copies: int) -> float:
    """ms of CPU per copy order of ``make(connection, copies)()``, one fill's work a call."""
    connection = connect()
    try:
        return cpu_ms(make(connection, copies), calls=200) / copies
    finally:
        connection.close()


def main(name: str, make: Callable[[Any, int], Callable[[], Any]], doc: str) -> None:
    """A floor script's command line: ``--copies``, then its figure."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    print(f"{name}: {per_copy(make, parser.parse_args().copies):.4f} ms per copy")
