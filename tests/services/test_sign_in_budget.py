"""The sign-in budget under concurrency: of many guesses racing for one address, no more
than the budget are checked (insert-then-count), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

from models import SignInEvent
from services.identity import auth
from services.platform import errors


def test_racing_guesses_cannot_overshoot_the_budget(app, bound_db, set_settings):
    database = app.extensions["database"]
    email = "raced@example.com"
    set_settings(smtp_url=None)
    auth.request_login(email)
    start = threading.Barrier(30)
    outcomes: list[str] = []
    lock = threading.Lock()

    def guess(i: int) -> None:
        with database.connection_context():
            start.wait()
            try:
                auth.verify_code(email, f"{i:06d}", client_ip=f"10.9.0.{i}")
                outcome = "signed in"
            except errors.RateLimited:
                outcome = "locked"
            except errors.InvalidToken:
                outcome = "checked"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    checked = outcomes.count("checked") + outcomes.count("signed in")
    assert len(outcomes) == 30
    assert checked <= 10, outcomes
    assert outcomes.count("locked") >= 20
    assert SignInEvent.select().where(SignInEvent.kind == "miss").count() <= 10
