"""Jobs that touch the database, on SQLite and PostgreSQL: one connection per job, work once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from models import database as database_module
from models.user import User
from services.platform import jobs as jobs_service
from tests.worker.conftest import run_host, status, wait_for
from worker.host import WorkerHost, WorkerSettings


@pytest.fixture
def db_settings(redis_url: str, prefix: str, database_url: str) -> Iterator[WorkerSettings]:
    """Worker settings with the models bound to the test database (as ``main`` binds it)."""
    bound = database_module.bind(database_url)
    yield WorkerSettings(redis_url=redis_url, prefix=prefix, capacity=4, grace_seconds=2,
                         heartbeat_seconds=0.5, poll_seconds=0.05)
    with bound.connection_context():
        User.delete().where(User.email.endswith("@worker.test")).execute()
    if hasattr(bound, "close_all"):
        bound.close_all()


def test_job_writes_through_its_own_connection_once(db_settings):
    email = "db-job@worker.test"
    jobs = [jobs_service.enqueue("test.db_user", email) for _ in range(3)]  # a job run thrice

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: all(status(j) == "finished" for j in jobs))

    run_host(db_settings, body)
    ids = {job.return_value(refresh=True) for job in jobs}
    from models.base import db

    with db.connection_context():
        users = list(User.select().where(User.email == email))
    assert [str(u.id) for u in users] == list(ids)
