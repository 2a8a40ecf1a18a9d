"""models.prepared: a query compiled once answers like the same query built each time."""

from __future__ import annotations

import secrets

import pytest

from models import ApiKey, User
from models.prepared import Prepared

BY_EMAIL_AND_ID = Prepared(
    lambda email, user_id: User.select().where(User.email == email, User.id == user_id),
    User.email, User.id)
KEYS_OF = Prepared(
    lambda user_id: ApiKey.select(ApiKey, User).join(User).where(ApiKey.user == user_id)
    .order_by(ApiKey.name), ApiKey.user)


def _key(user, name):
    return ApiKey.create(user=user, name=name, prefix="svck_live_x",
                         key_hash=secrets.token_hex(32), scopes="read:account")


def test_each_run_takes_its_own_values(bound_db):
    ada, bob = (User.create(email=f"{n}-{secrets.token_hex(4)}@example.com")
                for n in ("ada", "bob"))
    assert BY_EMAIL_AND_ID.first(ada.email, ada.id).id == ada.id
    assert BY_EMAIL_AND_ID.first(bob.email, bob.id).id == bob.id
    assert BY_EMAIL_AND_ID.first(ada.email, bob.id) is None  # both values are applied
    _key(ada, "b"), _key(ada, "a"), _key(bob, "c")
    found = KEYS_OF.rows(ada.id)
    assert [k.name for k in found] == ["a", "b"]
    # The join fills the related row: no second query needed for it.
    assert found[0].__rel__["user"].email == ada.email
    assert [k.name for k in KEYS_OF.rows(bob.id)] == ["c"]


def test_a_value_that_never_reaches_the_sql_is_refused(bound_db):
    wrong = Prepared(lambda email: User.select().where(User.email == "fixed"), User.email)
    with pytest.raises(ValueError, match="does not reach"):
        wrong.rows("x")



def test_later_runs_map_rows_as_the_first_did(bound_db):
    # The row mapping is kept from the first run that returned a row: later runs must
    # still convert every column and build fresh, separate instances.
    ada = User.create(email=f"ada-{secrets.token_hex(4)}@example.com")
    first, second = _key(ada, "a"), _key(ada, "b")
    by_hash = Prepared(lambda key_hash: ApiKey.select(ApiKey, User).join(User)
                       .where(ApiKey.key_hash == key_hash), ApiKey.key_hash)
    assert by_hash.first("no such hash") is None  # no row: nothing kept yet
    runs = [by_hash.first(key.key_hash) for key in (first, second, first)]
    assert [run.id for run in runs] == [first.id, second.id, first.id]
    assert runs[0] is not runs[2] and runs[0].user is not runs[2].user
    for run in runs:
        assert run.created_at == ApiKey.get_by_id(run.id).created_at  # converted, not text
        assert run.user.id == ada.id and run.user.email == ada.email
    runs[0].name = "changed"
    assert runs[2].name == "a"


def test_first_values_reads_the_selected_fields_as_their_fields_do(bound_db):
    ada = User.create(email=f"ada-{secrets.token_hex(4)}@example.com")
    key = _key(ada, "a")
    by_hash = Prepared(lambda key_hash: ApiKey.select(ApiKey.id, ApiKey.user, ApiKey.created_at)
                       .where(ApiKey.key_hash == key_hash).limit(1), ApiKey.key_hash)
    assert by_hash.first_values("no such hash") is None
    found = by_hash.first_values(key.key_hash)
    stored = ApiKey.get_by_id(key.id)
    # Converted by each field (a UUID, a datetime), as the model's own read gives them.
    assert found == (stored.id, stored.user_id, stored.created_at)
    assert by_hash.first_values(key.key_hash) == found  # the SQLite read left no lock behind
    ApiKey.update(name="b").where(ApiKey.id == key.id).execute()
