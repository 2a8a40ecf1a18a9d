"""The one scope gate: every /api route declares a policy, enforced and documented from it."""

from __future__ import annotations

import pytest
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import mode_of
from models import User
from schemas.vocabulary import SCOPES
from services.platform import errors
from services.platform.principal import Principal
from tests.conftest import one_database

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

gate = Blueprint("access_test", __name__, url_prefix="/api/_access", description="test only")


def _scoped_view(scope: str) -> type[MethodView]:
    class Scoped(MethodView):
        @access.requires(scope)
        def get(self):
            principal = access.current_principal()
            return {"scope": scope, "kind": principal.kind}

    Scoped.__name__ = f"Scoped_{scope.replace(':', '_')}"
    return Scoped


for _scope in SCOPES:
    gate.route(f"/scoped/{_scope}", endpoint=f"scoped_{_scope.replace(':', '_')}")(
        _scoped_view(_scope))


@gate.route("/agents-only")
class AgentsOnly(MethodView):
    @access.api_credential_only
    def post(self):
        return {"kind": access.current_principal().kind}


@gate.route("/undeclared")
class Undeclared(MethodView):
    def get(self):
        return {"reached": True}


@pytest.fixture
def gated_client(app):
    if "access_test" not in app.blueprints:
        app._got_first_request = False  # allow late registration in the test
        app.extensions["copytrade_api"].register_blueprint(gate)
    return app.test_client()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@one_database
def test_every_api_route_declares_a_policy(app):
    missing = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api"):
            continue
        if rule.endpoint.startswith("access_test."):
            continue  # the deliberately undeclared test route lives there
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            if access.policy_for(app, rule.endpoint, method) is None:
                missing.append(f"{method} {rule.rule}")
    assert not missing, f"routes without an access policy: {missing}"


def _handler(app, endpoint: str, method: str):
    view = app.view_functions[endpoint]
    view_class = getattr(view, "view_class", None)
    return getattr(view_class, method.lower()) if view_class else view


@one_database
def test_every_api_write_takes_an_idempotency_key_or_says_why_not(app):
    undeclared = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api") or rule.endpoint.split(".")[0].endswith("_test"):
            continue
        for method in sorted((rule.methods or set()) & WRITE_METHODS):
            if mode_of(_handler(app, rule.endpoint, method)) is None:
                undeclared.append(f"{method} {rule.rule}")
    assert not undeclared, f"writes without @idempotent or @idempotency_exempt: {undeclared}"


def test_a_key_with_one_scope_is_refused_every_other_scope(gated_client, api_key, user):
    User.update(tier="elite").where(User.id == user.id).execute()
    user.tier = "elite"
    for held in SCOPES:
        secret = api_key(held)
        for needed in SCOPES:
            response = gated_client.get(f"/api/_access/scoped/{needed}", headers=bearer(secret))
            if held == needed:
                assert response.status_code == 200, response.data
                assert response.get_json() == {"scope": needed, "kind": "api_key"}
            else:
                assert response.status_code == 403, (held, needed)
                body = response.get_json()
                assert body["code"] == "scope_required"
                assert body["required_scope"] == needed


def test_a_session_holds_every_scope(gated_client, auth_headers):
    for scope in SCOPES:
        response = gated_client.get(f"/api/_access/scoped/{scope}", headers=auth_headers)
        assert response.get_json() == {"scope": scope, "kind": "session"}


def test_real_routes_refuse_keys_without_their_scope(client, api_key, user):
    User.update(tier="elite").where(User.id == user.id).execute()
    for held in SCOPES:
        if held == "read:account":
            continue
        response = client.get("/api/users/me", headers=bearer(api_key(held)))
        assert response.status_code == 403
        assert response.get_json()["required_scope"] == "read:account"


def test_api_credential_only_refuses_sessions(gated_client, auth_headers, api_key):
    response = gated_client.post("/api/_access/agents-only", headers=auth_headers)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_token"
    ok = gated_client.post("/api/_access/agents-only", headers=bearer(api_key("read:markets")))
    assert ok.get_json() == {"kind": "api_key"}
    assert gated_client.post("/api/_access/agents-only").get_json()["code"] == "unauthorized"


def test_undeclared_routes_refuse_everyone(gated_client, auth_headers):
    for headers in ({}, auth_headers):
        response = gated_client.get("/api/_access/undeclared", headers=headers)
        assert response.status_code == 403
        assert "reached" not in response.get_data(as_text=True)


def test_public_routes_ignore_credentials(client):
    for headers in ({}, bearer("garbage"), {"Authorization": "Basic x"}):
        assert client.get("/api/stats/platform", headers=headers).status_code == 200
    assert client.get("/api/docs").status_code == 200


@one_database
def test_openapi_security_comes_from_the_declared_policy(gated_client):
    spec = gated_client.get("/openapi.json").get_json()
    paths = spec["paths"]
    assert paths["/api/stats/platform"]["get"]["security"] == []
    assert paths["/api/auth/magic"]["post"]["security"] == []
    me = paths["/api/users/me"]["get"]
    assert me["security"] == [{"sessionJWT": []}, {"apiKey": ["read:account"]},
                              {"oauth": ["read:account"]}]
    assert "`read:account`" in me["description"]
    assert me["x-access"] == {"policy": "scope", "scope": "read:account"}
    for method in ("get", "post"):
        assert paths["/api/keys"][method]["security"] == [{"sessionJWT": []}]
    assert paths["/api/_access/agents-only"]["post"]["security"] == [{"apiKey": []},
                                                                     {"oauth": []}]
    for path, item in paths.items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete") and "_access" not in path \
                    and "undeclared" not in path:
                assert "security" in operation, f"{method} {path}"


@one_database
def test_openapi_documents_rate_limit_headers_and_idempotency(client):
    spec = client.get("/openapi.json").get_json()
    assert set(spec["components"]["headers"]) == {
        "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
    me = spec["paths"]["/api/users/me"]["get"]["responses"]
    assert me["200"]["headers"]["X-RateLimit-Remaining"] == {
        "$ref": "#/components/headers/X-RateLimit-Remaining"}
    assert "Retry-After" in me["429"]["headers"]
    delete = spec["paths"]["/api/keys/{key_id}"]["delete"]
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header"
               for p in delete["parameters"])
    assert "Idempotent-Replay" in delete["responses"]["204"]["headers"]
    post_keys = spec["paths"]["/api/keys"]["post"]
    assert "Idempotency-Key:** not accepted" in post_keys["description"]
    assert not any(p["name"] == "Idempotency-Key" for p in post_keys.get("parameters", []))
    info = spec["info"]["description"]
    for needle in ("| `free` | 1 | 3 |", "| `pro` |", "| `elite` |", "X-RateLimit-Reset",
                   "Idempotent-Replay", "tier_limit_exceeded"):
        assert needle in info


def test_principal_rules(user):
    key = Principal(user=user, kind="api_key", scopes=frozenset({"read:trades"}))
    key.require_scope("read:trades")
    with pytest.raises(errors.ScopeRequired) as refused:
        key.require_scope("wallet:write")
    assert refused.value.scope == "wallet:write"
    with pytest.raises(errors.Forbidden):
        key.require_session()
    key.require_api_credential()
    session = Principal(user=user, kind="session", scopes=frozenset(SCOPES))
    session.require_session()
    with pytest.raises(errors.InvalidToken):
        session.require_api_credential()
    with pytest.raises(ValueError):
        session.require_scope("read:everything")


def test_unknown_scope_cannot_be_declared():
    with pytest.raises(ValueError):
        access.requires("read:everything")
