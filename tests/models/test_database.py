"""The data layer: migrations, exact money storage, the refusal to run unmigrated."""

from __future__ import annotations

import uuid
from decimal import Decimal

import peewee
import pytest

from app import create_app
from models import User, database, migrate
from models.base import AmountField, BaseModel, DecimalTextField


def test_migrations_are_recorded_and_idempotent(bound_db):
    assert migrate.pending(bound_db) == []
    assert migrate.migrate(bound_db) == []
    assert "m0001_users" in migrate.applied(bound_db)


def test_unmigrated_database_refuses_to_start(tmp_path, app_config):
    config = dict(app_config, DATABASE_URL=f"sqlite:///{tmp_path / 'empty.db'}")
    with pytest.raises(migrate.SchemaNotMigrated, match="copytrade migrate"):
        create_app(config)
    from models.base import db
    db.initialize(database.open_database(app_config["DATABASE_URL"]))


class Ledger(BaseModel):
    amount = AmountField(decimals=6)
    exact = DecimalTextField()

    class Meta:
        table_name = "test_ledger"


def test_money_round_trips_exactly(bound_db):
    with bound_db.bind_ctx([Ledger]):
        bound_db.create_tables([Ledger])
        try:
            value = Decimal("123456789.123456")
            row = Ledger.create(amount=value, exact=Decimal("0.1000000000000000000001"))
            fetched = Ledger.get_by_id(row.id)
            assert fetched.amount == value and isinstance(fetched.amount, Decimal)
            assert fetched.exact == Decimal("0.1000000000000000000001")
            total = Ledger.select(peewee.fn.SUM(Ledger.amount)).scalar()
            assert total == 123456789123456  # base units sum in SQL, exactly
            with pytest.raises(ValueError, match="decimal places"):
                Ledger.create(amount=Decimal("0.0000001"), exact=Decimal(0))
        finally:
            bound_db.drop_tables([Ledger])


def test_user_timestamps_are_utc(bound_db):
    user = User.create(email=f"{uuid.uuid4().hex}@example.com")
    fetched = User.get_by_id(user.id)
    assert fetched.created_at.tzinfo is not None
    assert fetched.tier == "free"
    assert abs((fetched.created_at - user.created_at).total_seconds()) < 1


class Blob(BaseModel):
    payload = peewee.TextField()

    class Meta:
        table_name = "test_blobs"


def _write_pages(database: peewee.Database, pages: int) -> None:
    with database.bind_ctx([Blob]):
        database.create_tables([Blob])
        for _ in range(pages // 10):
            with database.atomic():  # one commit per ~10 pages, like a burst of copies
                Blob.insert_many([{"payload": "x" * 3500} for _ in range(10)]).execute()


@pytest.mark.parametrize("fold_on_commit", [True, False])
def test_the_worker_folds_sqlite_log_itself(tmp_path, fold_on_commit):
    """Commits fold the log past 1,000 pages by default; the worker's never do (the copy
    engine calls ``fold_log`` between fills), and ``fold_log`` folds all of it."""
    opened = database.open_database(f"sqlite:///{tmp_path / 'log.db'}",
                                    fold_on_commit=fold_on_commit)
    with opened.connection_context():
        _write_pages(opened, 1500)
    from models.base import db

    previous = db.obj
    db.initialize(opened)
    try:
        with opened.connection_context():
            frames, folded = database.fold_log()
    finally:
        db.initialize(previous)
    if fold_on_commit:
        assert frames < 1000  # a commit folded it on the way
    else:
        assert frames >= 1500  # nothing folded it until now
    assert folded == frames


def test_postgresql_has_no_log_to_fold(bound_db):
    if isinstance(bound_db, peewee.SqliteDatabase):
        assert database.has_log_to_fold()
    else:
        assert not database.has_log_to_fold()
        assert database.fold_log() is None
