"""The sign-in budget under concurrency: of many guesses racing for one address, no more
than the budget are checked (insert-then-count), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

from models import SignInEvent
from services.identity import auth
from services.platform import errors
from tests.conftest import DEADLINE

RACERS = 20


def test_racing_guesses_cannot_overshoot_the_budget(app, bound_db, set_settings):
    database = app.extensions["database"]
    email = "raced@example.com"
    set_settings(smtp_url=None)
    auth.request_login(email)
    # A thread that cannot take part (no database connection left on a busy server) breaks
    # the barrier, so the others stop at once instead of each waiting out its join.
    # Twenty racers, twice the budget: each holds a pooled connection, and the pool (32) is
    # shared with the app under test.
    start = threading.Barrier(RACERS, timeout=DEADLINE)
    outcomes: list[str] = []
    lock = threading.Lock()

    def guess(i: int) -> None:
        try:
            with database.connection_context():
                start.wait()
                try:
                    auth.verify_code(email, f"{i:06d}", client_ip=f"10.9.0.{i}")
                    outcome = "signed in"
                except errors.RateLimited:
                    outcome = "locked"
                except errors.InvalidToken:
                    outcome = "checked"
        except Exception as exc:  # reported by the assertion on the outcomes below
            start.abort()
            outcome = f"could not guess: {exc!r}"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    checked = outcomes.count("checked") + outcomes.count("signed in")
    assert len(outcomes) == RACERS and all(o in ("checked", "signed in", "locked")
                                       for o in outcomes), outcomes
    assert checked <= 10, outcomes
    assert outcomes.count("locked") >= RACERS - 10
    assert SignInEvent.select().where(SignInEvent.kind == "miss").count() <= 10
