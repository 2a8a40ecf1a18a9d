"""models/bulk.py: plain-SQL updates and reads store and return exactly what peewee would."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import peewee
import pytest

from models.base import AmountField, BaseModel, DecimalTextField, UTCDateTimeField, atomic
from models.bulk import (
    IfNull,
    insert_rows,
    select_rows,
    update_returning,
    update_returning_rows,
    update_rows,
)


class Entry(BaseModel):
    account = peewee.UUIDField()
    amount = AmountField(decimals=6)
    exact = DecimalTextField(default=Decimal(0))
    note = peewee.TextField(null=True)
    paper = peewee.BooleanField(default=False)
    count = peewee.IntegerField(default=0)
    stamped_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "test_bulk_entries"


COLUMNS = ("amount", "exact", "note", "paper", "count", "stamped_at")


@pytest.fixture
def entries(bound_db) -> Iterator[type[Entry]]:
    """The throwaway table, created for the test and dropped after it."""
    with bound_db.bind_ctx([Entry]):
        bound_db.create_tables([Entry])
        try:
            yield Entry
        finally:
            bound_db.drop_tables([Entry])


def _raw(database: peewee.Database, entry_id: uuid.UUID) -> tuple:
    """The row as the database holds it (no conversion back to Python)."""
    columns = ", ".join(f'"{name}"' for name in COLUMNS)
    return database.execute_sql(f'SELECT {columns} FROM "test_bulk_entries" WHERE "id" = '
                                f"{database.param}", [Entry.id.db_value(entry_id)]).fetchone()


def _new(account: uuid.UUID, **values) -> Entry:
    return Entry.create(account=account, amount=values.pop("amount", Decimal(1)), **values)


def test_update_rows_stores_each_rows_own_values_exactly_as_peewee_does(bound_db, entries):
    account = uuid.uuid4()
    rows = [_new(account) for _ in range(6)]
    stamp = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    same_shape = [
        {"amount": Decimal("123456789.123456"), "exact": Decimal("0.1000000000000000000001"),
         "stamped_at": stamp},
        {"amount": Decimal("-0.000001"), "exact": Decimal("5.10"), "stamped_at": stamp},
        {"amount": Decimal("0"), "exact": Decimal("-1E-30"), "stamped_at": None},
    ]
    other_shape = {"note": "refused: not enough balance", "paper": True, "count": 7}
    update_rows(Entry, [(rows[0].id, same_shape[0]), (rows[1].id, same_shape[1]),
                        (rows[2].id, other_shape), (rows[3].id, same_shape[2])])
    # The same values through peewee's own UPDATE, on twins: the stored bytes must agree.
    for twin, changes in ((rows[4], same_shape[0]), (rows[5], same_shape[1])):
        Entry.update({getattr(Entry, k): v for k, v in changes.items()}).where(
            Entry.id == twin.id).execute()
    assert _raw(bound_db, rows[0].id) == _raw(bound_db, rows[4].id)
    assert _raw(bound_db, rows[1].id) == _raw(bound_db, rows[5].id)

    first, second, third, fourth = (Entry.get_by_id(r.id) for r in rows[:4])
    assert first.amount == Decimal("123456789.123456") and isinstance(first.amount, Decimal)
    assert str(first.exact) == "0.1000000000000000000001"
    assert first.stamped_at == stamp
    assert second.amount == Decimal("-0.000001") and str(second.exact) == "5.10"
    assert (third.note, third.paper, third.count) == (other_shape["note"], True, 7)
    assert third.amount == Decimal(1) and third.exact == 0  # fields it did not name stay
    assert fourth.stamped_at is None and fourth.exact == Decimal("-1E-30")


def test_update_rows_refuses_amounts_it_would_round(bound_db, entries):
    row = _new(uuid.uuid4(), amount=Decimal("2.5"))
    with pytest.raises(ValueError, match="decimal places"), atomic():
        update_rows(Entry, [(row.id, {"amount": Decimal("0.0000001")})])
    assert Entry.get_by_id(row.id).amount == Decimal("2.5")


def test_if_null_keeps_a_first_value(bound_db, entries):
    early = datetime(2024, 1, 1, tzinfo=UTC)
    late = datetime(2025, 1, 1, tzinfo=UTC)
    unset, stamped = _new(uuid.uuid4()), _new(uuid.uuid4(), stamped_at=early)
    update_rows(Entry, [(unset.id, {"stamped_at": IfNull(late), "count": 1}),
                        (stamped.id, {"stamped_at": IfNull(late), "count": 2})])
    assert Entry.get_by_id(unset.id).stamped_at == late
    assert (Entry.get_by_id(stamped.id).stamped_at, Entry.get_by_id(stamped.id).count) \
        == (early, 2)


def test_update_rows_by_another_key(bound_db, entries):
    account, other = uuid.uuid4(), uuid.uuid4()
    mine = [_new(account) for _ in range(2)]
    theirs = _new(other)
    update_rows(Entry, [(account, {"note": "mine"})], key="account")
    assert [Entry.get_by_id(r.id).note for r in mine] == ["mine", "mine"]
    assert Entry.get_by_id(theirs.id).note is None


def test_update_returning_gives_the_row_as_now_stored(bound_db, entries):
    early = datetime(2024, 1, 1, 12, 0, 0, 500, tzinfo=UTC)
    row = _new(uuid.uuid4(), amount=Decimal("3.25"), exact=Decimal("1.7225"), note="kept",
               stamped_at=early)
    state = update_returning(
        Entry, row.id, {"count": 3, "stamped_at": IfNull(datetime.now(UTC))},
        ("amount", "exact", "note", "count", "stamped_at", "paper"))
    # What it did not change comes back as stored, converted like peewee reads it.
    assert state == {"amount": Decimal("3.25"), "exact": Decimal("1.7225"), "note": "kept",
                     "count": 3, "stamped_at": early, "paper": False}
    assert str(state["exact"]) == "1.7225" and state["stamped_at"].tzinfo is not None
    assert update_returning(Entry, uuid.uuid4(), {"count": 1}, ("count",)) is None


def test_a_guard_writes_only_rows_that_still_hold_an_allowed_value(bound_db, entries):
    account = uuid.uuid4()
    rows = [_new(account, note=note) for note in ("open", "open", "done", "open")]
    # Each row's guard follows from its own changes, as a transition table would give it.
    allowed = {"done": ("open",), "open": ("open",)}
    changes = [{"note": "done", "count": 1}, {"note": "open", "count": 2},
               {"note": "done", "count": 3}, {"note": "done", "count": 4}]
    update_rows(Entry, [(row.id, change) for row, change in zip(rows, changes, strict=True)],
                guard=lambda change: {"note": allowed[change["note"]], "account": (account,)})
    assert [(Entry.get_by_id(r.id).note, Entry.get_by_id(r.id).count) for r in rows] == [
        ("done", 1), ("open", 2), ("done", 0), ("done", 4)]  # the third was done already

    lost = update_returning(Entry, rows[1].id, {"note": "done", "count": 9}, ("count",),
                            guard={"note": ("done",)})
    assert lost is None and Entry.get_by_id(rows[1].id).count == 2
    won = update_returning(Entry, rows[1].id, {"note": "done", "count": 9}, ("count",),
                           guard={"note": ("open",), "account": (account,)})
    assert won == {"count": 9}
    assert update_returning(Entry, rows[1].id, {"count": 10}, ("count",),
                            guard={"account": (uuid.uuid4(),)}) is None


def test_select_rows_reads_matching_rows_as_python_values(bound_db, entries):
    account, other = uuid.uuid4(), uuid.uuid4()
    wanted = insert_rows(Entry, [
        {"id": uuid.uuid4(), "account": account, "amount": Decimal("0.000001"),
         "exact": Decimal("9.990"), "paper": True},
        {"id": uuid.uuid4(), "account": other, "amount": Decimal(7), "paper": True}],
        returning_ids=True)
    _new(account, paper=False)
    with atomic():  # FOR UPDATE needs a transaction on PostgreSQL
        found = select_rows(Entry, ("id", "account", "amount", "exact", "paper"),
                            {"account": [account, other], "paper": [True]},
                            for_update=True)
    assert sorted(found, key=lambda r: r["amount"]) == [
        {"id": wanted[0], "account": account, "amount": Decimal("0.000001"),
         "exact": Decimal("9.990"), "paper": True},
        {"id": wanted[1], "account": other, "amount": Decimal(7), "exact": Decimal(0),
         "paper": True}]
    assert select_rows(Entry, ("id",), {"account": []}) == []


def test_select_rows_for_share_reads_the_rows_and_holds_writers_off_on_postgresql(
        bound_db, entries):
    """``for_share`` reads like a plain select; on PostgreSQL the rows stay share-locked
    until the transaction ends: another connection's UPDATE of one waits (here: times out),
    another shared read does not. SQLite has no row locks (its write transaction is the
    lock), so there it is the plain read."""
    row = _new(uuid.uuid4(), count=1)
    postgres = isinstance(bound_db, peewee.PostgresqlDatabase)
    seen: dict[str, object] = {}

    def other_connection() -> None:
        with bound_db.connection_context():
            bound_db.execute_sql("SET lock_timeout = '200ms'")
            with atomic():
                seen["shared"] = select_rows(Entry, ("count",), {"id": [row.id]},
                                             for_share=True)
            try:
                with atomic():
                    Entry.update(count=5).where(Entry.id == row.id).execute()
            except peewee.OperationalError as exc:
                seen["write"] = str(exc)

    with atomic():
        found = select_rows(Entry, ("id", "count"), {"id": [row.id]}, for_share=True)
        assert found == [{"id": row.id, "count": 1}]
        if postgres:
            worker = threading.Thread(target=other_connection)
            worker.start()
            worker.join(timeout=30)
    if postgres:
        assert seen["shared"] == [{"count": 1}]
        assert "lock timeout" in str(seen["write"])
        assert Entry.get_by_id(row.id).count == 1


def test_update_returning_rows_writes_a_batch_in_one_statement_and_names_what_it_wrote(
        bound_db, entries, monkeypatch):
    account = uuid.uuid4()
    rows = [_new(account, note=note) for note in ("open", "open", "done")]
    sent: list[str] = []
    run = bound_db.execute_sql
    monkeypatch.setattr(bound_db, "execute_sql",
                        lambda sql, params=None, *a, **k: sent.append(sql) or run(sql, params,
                                                                                  *a, **k))
    written = update_returning_rows(
        Entry, [(row.id, {"note": "done", "count": index, "exact": Decimal(f"1.{index}0")})
                for index, row in enumerate(rows)], ("count", "exact"),
        guard=lambda changes: {"note": ("open",)})
    monkeypatch.undo()
    assert len(sent) == 1 and sent[0].startswith('UPDATE "test_bulk_entries"')
    # The third was done already: not written, not named.
    assert written == {rows[0].id: {"count": 0, "exact": Decimal("1.00")},
                       rows[1].id: {"count": 1, "exact": Decimal("1.10")}}
    assert str(written[rows[0].id]["exact"]) == "1.00"
    assert [Entry.get_by_id(row.id).count for row in rows] == [0, 1, 0]


def test_update_rows_changing_one_row_twice_in_a_batch_keeps_the_later_change(
        bound_db, entries):
    row, other = _new(uuid.uuid4()), _new(uuid.uuid4())
    update_rows(Entry, [(row.id, {"count": 1}), (other.id, {"count": 5}),
                        (row.id, {"count": 2})])
    assert (Entry.get_by_id(row.id).count, Entry.get_by_id(other.id).count) == (2, 5)


def _every_model() -> list[type[peewee.Model]]:
    import models  # noqa: F401  (every table's module registers its model)

    found, todo = [], [BaseModel]
    while todo:
        model = todo.pop()
        found.append(model)
        todo.extend(model.__subclasses__())
    return found


class _Rel:
    """A value no field converts as it is (passes through the slow path)."""

    def __str__(self) -> str:
        return "rel"


def test_the_converters_give_what_each_fields_db_value_gives():
    """The converters' shortcuts (a value of the stored type kept, a UTC datetime made naive,
    a UUID as hex) agree with db_value for every field of every model, on every kind of value."""
    from datetime import timedelta, timezone

    from models.bulk import _converters

    moment = datetime(2026, 12, 8, 1, 2, 3, 456789, tzinfo=UTC)
    values = [None, moment, moment.replace(tzinfo=None),
              moment.astimezone(timezone(timedelta(hours=2))), uuid.uuid4(),
              uuid.uuid4().hex, str(uuid.uuid4()), "text", "", 0, 7, True, False,
              Decimal("1.25"), Decimal(0), b"bytes", _Rel()]
    checked = 0
    for model in _every_model():
        converters = _converters(model)
        for name, field in model._meta.fields.items():
            same, convert = converters[name]
            for value in values:
                try:
                    expected: object = field.db_value(value)
                except Exception as exc:  # the same refusal is expected of both
                    expected = type(exc)
                try:
                    got: object = value if type(value) is same else convert(value)
                except Exception as exc:
                    got = type(exc)
                assert (type(got), got) == (type(expected), expected), (model, name, value)
                checked += 1
    assert checked > 1000  # the product's models were all walked
