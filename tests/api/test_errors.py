"""Every failure answers {error, code} with a stable code and the right status."""

from __future__ import annotations

import pytest
from flask.views import MethodView
from marshmallow import Schema, fields

from blueprints import access
from blueprints import errors as error_handler
from blueprints.api.base import Blueprint
from schemas.fields import DecimalString
from services.platform import errors
from tests.conftest import one_database


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.data
    body = response.get_json()
    assert set(body) >= {"error", "code"}
    assert body["code"] == code
    assert body["code"] in errors.ERROR_CODES
    assert "Traceback" not in response.get_data(as_text=True)
    return body


@one_database
def test_unknown_route_is_not_found(client):
    assert_error(client.get("/api/no-such-thing"), 404, "not_found")


def test_wrong_method_names_allowed_methods(client):
    response = client.delete("/api/stats/platform")
    assert_error(response, 405, "bad_request")
    assert "GET" in response.headers["Allow"]


@one_database
def test_wrong_content_type_is_refused(client):
    response = client.post("/api/stats/platform", data="a=1",
                           content_type="application/x-www-form-urlencoded")
    assert_error(response, 415, "bad_request")


class EchoSchema(Schema):
    amount = DecimalString(required=True, positive=True, places=6)
    name = fields.String(required=True)


echo = Blueprint("echo_test", __name__, url_prefix="/api/_echo")


@echo.route("")
class Echo(MethodView):
    @access.public
    @echo.arguments(EchoSchema)
    def post(self, body):
        return {"amount": str(body["amount"]), "name": body["name"]}


@pytest.fixture
def echo_client(app):
    api = app.extensions["copytrade_api"]
    if "echo_test" not in app.blueprints:
        app._got_first_request = False  # allow late registration in the test
        api.register_blueprint(echo)
    return app.test_client()


@one_database
def test_malformed_json_is_bad_request(echo_client):
    response = echo_client.post("/api/_echo", data="{not json",
                                content_type="application/json")
    assert_error(response, 400, "bad_request")


@one_database
@pytest.mark.parametrize("depth", [65, 100_000])
def test_deeply_nested_json_is_bad_request_not_500(echo_client, depth):
    # 100,000 levels crashed the process: web3's py_ecc lifts the recursion limit to 100,000
    body = '{"name": "x", "amount": "1", "deep": ' + "[" * depth + "]" * depth + "}"
    response = echo_client.post("/api/_echo", data=body, content_type="application/json")
    assert "nests deeper" in assert_error(response, 400, "bad_request")["error"]
    unclosed = echo_client.post("/api/_echo", data="[" * 300_000,
                                content_type="application/json")
    assert_error(unclosed, 400, "bad_request")


@one_database
def test_brackets_inside_strings_are_not_nesting(echo_client):
    name = "[{" * 200 + '\\"' + "]" * 10
    response = echo_client.post("/api/_echo", data=f'{{"name": "{name}", "amount": "1"}}',
                                content_type="application/json")
    assert response.status_code == 200, response.get_data(as_text=True)


@one_database
def test_validation_errors_name_each_field(echo_client):
    response = echo_client.post("/api/_echo", json={"amount": 1.5, "extra": True})
    body = assert_error(response, 400, "validation_failed")
    assert set(body["fields"]) == {"amount", "name", "extra"}


@one_database
def test_oversized_body_is_refused(echo_client):
    body = b'{"name": "' + b"a" * (2 * 1024 * 1024) + b'"}'
    response = echo_client.post("/api/_echo", data=body, content_type="application/json")
    assert_error(response, 413, "bad_request")


@one_database
def test_decimal_string_validation(echo_client):
    assert_error(echo_client.post("/api/_echo", json={"amount": "-1", "name": "x"}),
                 400, "validation_failed")
    assert_error(echo_client.post("/api/_echo", json={"amount": "1.1234567", "name": "x"}),
                 400, "validation_failed")
    ok = echo_client.post("/api/_echo", json={"amount": "12.500000", "name": "x"})
    assert ok.status_code == 200
    assert ok.get_json() == {"amount": "12.500000", "name": "x"}


@one_database
@pytest.mark.parametrize("exc,status,code", [
    (errors.InsufficientBalance(), 402, "insufficient_balance"),
    (errors.ScopeRequired("trade:execute"), 403, "scope_required"),
    (errors.TierLimitExceeded(), 403, "tier_limit_exceeded"),
    (errors.InvalidToken(), 401, "invalid_token"),
    (errors.VenueUnavailable(), 503, "polymarket_unavailable"),
    (errors.FeatureNotEnabled(), 501, "feature_not_enabled"),
    (errors.CryptoError(), 500, "crypto_error"),
    (errors.Conflict(), 409, "bad_request"),
])
def test_domain_errors_map_to_status_and_code(app, exc, status, code):
    with app.test_request_context("/api/x"):
        response = error_handler.handle(exc)
    assert response.status_code == status
    assert response.get_json()["code"] == code
    if status in (409, 429, 503):
        assert int(response.headers["Retry-After"]) > 0


@one_database
def test_scope_required_names_the_scope(app):
    with app.test_request_context("/api/x"):
        body = error_handler.handle(errors.ScopeRequired("wallet:write")).get_json()
    assert body["required_scope"] == "wallet:write"


@one_database
def test_transport_errors_are_translated(app):
    import peewee
    import redis

    from chain.errors import ChainUnavailable
    from venue.errors import VenueTimeout

    cases = [
        (VenueTimeout("slow", retry_after=7), 503, "polymarket_unavailable", "7"),
        (peewee.OperationalError("gone"), 503, "database_error", "5"),
        (redis.exceptions.ConnectionError("down"), 503, "cache_error", "5"),
        (ChainUnavailable(), 503, "wallet_error", "5"),
    ]
    for exc, status, code, retry in cases:
        with app.test_request_context("/api/x"):
            response = error_handler.handle(exc)
        assert (response.status_code, response.get_json()["code"]) == (status, code)
        assert response.headers["Retry-After"] == retry


@one_database
def test_unexpected_exception_hides_details(app, caplog):
    with app.test_request_context("/api/x"):
        response = error_handler.handle(RuntimeError("secret internals"))
    assert response.status_code == 500
    assert response.get_json() == {"error": "Internal error.", "code": "internal_error"}
    assert "secret internals" not in response.get_data(as_text=True)
