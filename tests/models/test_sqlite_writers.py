"""SQLite with several writers on one file (`copytrade up`: web, worker and job processes):
a transaction that reads before it writes must not fail with "database is locked".

In WAL mode a deferred transaction reads from a snapshot; when another connection commits
before its first write, the upgrade to a writer fails at once (SQLITE_BUSY_SNAPSHOT), the
busy timeout notwithstanding. ``orders.reconcile_pending`` failed so: recording a venue
order's fills reads the stored ones, then writes. Every transaction on SQLite begins
IMMEDIATE instead, so the other writer waits for the lock rather than breaking the reader.
"""

from __future__ import annotations

import sqlite3
import threading
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

import pytest

from models.trading import Order, OrderFill
from services.trading import order_fills

WAIT = 20  # seconds: a bound on waiting for the other writer, never a pause


def _order(user) -> Order:
    return Order.create(user=user, maker_address="0x" + "a" * 40, token_id="1", side="buy",
                        order_type="market", time_in_force="FAK", price=Decimal("0.5"),
                        size=Decimal(10), signed_body="{}", order_hash="0x" + "b" * 64,
                        status="matched")


def _other_process(path: str, order_id: str, go: threading.Event, tried: threading.Event,
                   outcome: dict) -> None:
    """Another process's connection (the web, say): one write the moment ``go`` is set.

    It first tries the write lock without waiting and says whether it got it (``tried``),
    then waits for the lock as the app's busy timeout does, and commits.
    """
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        assert go.wait(WAIT)
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
            outcome["waited"] = False
        except sqlite3.OperationalError:  # the reader holds the write lock: wait our turn
            outcome["waited"] = True
            tried.set()
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE orders SET error = 'touched by the web' WHERE id = ?",
                     (order_id.replace("-", ""),))
        conn.execute("COMMIT")
        outcome["committed"] = True
    finally:
        tried.set()
        conn.close()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_read_then_write_transaction_survives_another_writer(bound_db, user, database_url):
    path = str(Path(urlparse(database_url).path))
    order = _order(user)
    go, tried, outcome, result = threading.Event(), threading.Event(), {}, {}
    other = threading.Thread(target=_other_process,
                             args=(path, str(order.id), go, tried, outcome))
    other.start()

    def fills():
        # Reached inside record()'s transaction, after it read the stored fills and before
        # it writes: the other process writes now.
        go.set()
        assert tried.wait(WAIT)
        yield order_fills.Fill(trade_id="venue-trade-1", status="MATCHED",
                               shares=Decimal(10), value=Decimal(5))

    def job() -> None:  # the worker's job, on a connection of its own
        with bound_db.connection_context():
            try:
                result["totals"] = order_fills.record(order, fills())
            except Exception as exc:
                result["error"] = repr(exc)

    worker = threading.Thread(target=job)
    worker.start()
    worker.join(WAIT)
    other.join(WAIT)
    assert "error" not in result, result["error"]
    assert result["totals"].shares == Decimal(10)
    assert OrderFill.select().where(OrderFill.order == order.id).count() == 1
    # The other writer was made to wait for the lock, then wrote too.
    assert outcome == {"waited": True, "committed": True}
    assert Order.get_by_id(order.id).error == "touched by the web"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_connection_runs_in_wal_with_a_busy_timeout(bound_db, database_url):
    """The app's SQLite (issue 29): write-ahead log and a busy timeout on each connection
    the pool opens, the request's and a job thread's alike, so a writer waits its turn."""
    def pragmas() -> tuple[str, int]:
        return (bound_db.execute_sql("PRAGMA journal_mode").fetchone()[0],
                bound_db.execute_sql("PRAGMA busy_timeout").fetchone()[0])

    assert pragmas() == ("wal", 10_000)
    seen: dict[str, tuple[str, int]] = {}

    def job() -> None:  # another thread: another pooled connection
        with bound_db.connection_context():
            seen["job"] = pragmas()

    worker = threading.Thread(target=job)
    worker.start()
    worker.join(WAIT)
    assert seen == {"job": ("wal", 10_000)}
    # The file itself is in WAL mode: another process opening it plainly finds it so.
    other = sqlite3.connect(str(Path(urlparse(database_url).path)))
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_screening_sweep_writes_while_another_process_does(bound_db, database_url,
                                                              monkeypatch):
    """The sweep reads the traders to look at, then replays each (venue calls, seconds) and
    writes its row. Iterated lazily, that read kept its snapshot open across the loop, and
    the first write after another process's commit failed at once with "database is locked"
    (`make run`'s terminal showed it under load)."""
    from models.copying import TraderScreening
    from services.copying import screening

    path = str(Path(urlparse(database_url).path))
    addresses = [f"0x{n:040x}" for n in range(1, 4)]
    for address in addresses:
        TraderScreening.create(address=address, ranks='{"week:pnl": 1}')
    screened: list[str] = []

    def screen(address: str) -> bool:
        # Another process (the web, a job) commits while this trader is being replayed.
        other = sqlite3.connect(path, isolation_level=None, timeout=WAIT)
        try:
            other.execute("UPDATE trader_screenings SET name = 'web' WHERE address = ?",
                          (addresses[-1],))
        finally:
            other.close()
        TraderScreening.update(trades=7).where(TraderScreening.address == address).execute()
        screened.append(address)
        return True

    monkeypatch.setattr(screening, "rank", lambda: len(addresses))
    monkeypatch.setattr(screening, "screen", screen)
    assert screening.sweep() == {"ranked": 3, "looked": 3}
    assert sorted(screened) == addresses
    assert {row.trades for row in TraderScreening.select()} == {7}
