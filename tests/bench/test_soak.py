"""`copytrade dev soak` (issue 43, item 3): a simulated day of the whole stack, checked by
its invariants, each of which must hold.

The command starts a stack of its own (web, two workers, the sandbox on a dev chain,
an embedded Redis) on a fresh PostgreSQL schema, so it runs on PostgreSQL only: the
suite's SQLite pass would double its 3 to 8 minutes for what the rest of the suite
covers on both already. `make test` starts it first (tests/conftest.py, SLOW_FIRST). Its
random choices come from a seed printed with the table (SOAK_SEED=... replays them).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.conftest import RUN_ID, _connect_postgresql, _pg_schema_url

ROOT = Path(__file__).resolve().parents[2]


def test_a_simulated_day_keeps_every_promise(tmp_path: Path) -> None:
    seed = os.environ.get("SOAK_SEED") or str(secrets.randbits(32))
    schema = f"soak_{RUN_ID}_{secrets.token_hex(3)}"
    conn = _connect_postgresql()
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'CREATE SCHEMA "{schema}"')
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cli", "dev", "soak", "--days", "1", "--speed", "2880",
             "--followers", "12",
             "--seed", seed, "--instance", str(tmp_path / "soak"),
             "--database-url", _pg_schema_url(schema), "--json"],
            cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        with conn.cursor() as cur:
            cur.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.close()
    print(done.stderr[-3000:])
    assert done.stdout.strip(), (seed, done.returncode, done.stderr[-5000:])
    report = json.loads(done.stdout)
    print(json.dumps(report, indent=1))
    failed = {row["name"]: row["failures"] for row in report["invariants"] if not row["ok"]}
    assert not failed, (f"SOAK_SEED={seed}", failed)
    assert [row["name"] for row in report["invariants"]] == [
        "every target fill copied or skipped with a reason, once",
        "no stop, budget or cap exceeded beyond one in-flight copy",
        "each user's ledger equals the chain and the venue to the base unit",
        "no money moved twice",
        "every notification delivered once per channel",
        "nothing traded while the checks read"]
    # the day happened: copies, a killed worker, lost answers, a venue restart, money out
    figures = {row["name"]: row["figures"] for row in report["invariants"]}
    assert figures["every target fill copied or skipped with a reason, once"]["fills"] > 0
    assert report["run"]["worker kills"] == 1
    assert report["run"]["events"]["venue restarts"] == 1
    assert report["ok"] and done.returncode == 0, done.stderr[-3000:]
