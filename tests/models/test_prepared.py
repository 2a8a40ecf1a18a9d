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

