"""Credentials resolve through one static table; services leave scope checks to the gates."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from services.identity import auth, credentials, keys
from services.oauth import tokens as oauth
from services.platform import errors

SERVICES = Path(__file__).resolve().parents[3] / "services"


def test_the_table_sends_each_prefix_to_its_resolver():
    table = dict(credentials.RESOLVERS_BY_PREFIX)
    assert table == {"svck_": keys.resolve, "svco_": oauth.resolve}
    assert credentials.SESSION_RESOLVER is auth.resolve_session


@pytest.mark.parametrize("token", ["svck_live_" + "a" * 43, "svco_" + "a" * 43, "not-a-jwt"])
def test_unknown_tokens_of_every_kind_are_invalid(app, bound_db, token):
    with pytest.raises(errors.InvalidToken):
        credentials.resolve(f"Bearer {token}")


@pytest.mark.parametrize("header", [None, "", "Basic YTpi", "Bearer "])
def test_a_missing_bearer_token_is_unauthorized(header):
    with pytest.raises(errors.Unauthorized) as raised:
        credentials.bearer_token(header)
    assert not isinstance(raised.value, errors.InvalidToken)


def test_services_leave_scope_checks_to_the_gates():
    # REST routes and MCP tools declare their scope and one gate each enforces it
    # (blueprints/access.py, blueprints/mcp/runner.py); a service re-check would drift.
    offenders = [f"{path.name}:{node.lineno}"
                 for path in sorted(SERVICES.rglob("*.py")) if path.name != "principal.py"
                 for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Attribute) and node.attr == "require_scope"]
    assert offenders == []
