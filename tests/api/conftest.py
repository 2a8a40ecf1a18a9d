"""Fixtures shared by the REST API tests."""

import pytest


@pytest.fixture
def me(user, make_trader):
    """The signed-in user (``auth_headers``) with a funded trading wallet."""
    return make_trader(user=user)
