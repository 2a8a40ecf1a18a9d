"""The OpenAPI document: valid 3.1, versioned, with shared components and error docs."""

from __future__ import annotations

from openapi_spec_validator import validate

from tests.conftest import one_database


@one_database
def test_openapi_is_valid_3_1(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    spec = response.get_json()
    validate(spec)
    assert spec["openapi"] == "3.1.0"
    assert spec["info"]["version"] == "1.1.0"


@one_database
def test_openapi_shared_components(client):
    spec = client.get("/openapi.json").get_json()
    components = spec["components"]
    assert set(components["securitySchemes"]) >= {"sessionJWT", "apiKey", "oauth"}
    assert components["schemas"]["Error"]["required"] == ["code", "error"]
    assert components["schemas"]["DecimalString"]["pattern"] == r"^-?[0-9]+(\.[0-9]+)?$"
    assert set(components["schemas"]["Pagination"]["required"]) == {"limit", "offset", "has_next"}


@one_database
def test_every_operation_documents_errors(client):
    spec = client.get("/openapi.json").get_json()
    for path, item in spec["paths"].items():
        if path.startswith("/api/_"):
            continue  # routes the tests themselves register (e.g. /api/_echo, /api/_access)
        for method, operation in item.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            errors = [code for code in operation["responses"] if code.startswith(("4", "5"))]
            assert errors, f"{method.upper()} {path} documents no error response"


@one_database
def test_platform_stats_documents_decimal_string(client):
    spec = client.get("/openapi.json").get_json()
    stats = spec["components"]["schemas"]["PlatformStats"]
    assert stats["properties"]["total_volume_usdc_24h"]["pattern"] == r"^-?[0-9]+(\.[0-9]+)?$"


@one_database
def test_docs_explorer_served_without_cdn(client):
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/api/docs/assets/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower() and "unpkg" not in html.lower()
    bundle = client.get("/api/docs/assets/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and b"SwaggerUI" in bundle.data[:5_000_000]


def test_error_bodies_with_extra_members_match_the_published_error_schema(
        client, auth_headers, api_key):
    from jsonschema import Draft202012Validator

    published = Draft202012Validator(client.get("/openapi.json").get_json()[
        "components"]["schemas"]["Error"])
    markets_only = api_key("read:markets")  # one of the free plan's 3 keys
    invalid = client.post("/api/keys", json={"name": "k", "scopes": ["nope"]},
                          headers=auth_headers)
    for _ in range(2):  # the free plan's keys, then one too many
        client.post("/api/keys", json={"name": "k", "scopes": ["read:trades"]},
                    headers=auth_headers)
    over_quota = client.post("/api/keys", json={"name": "k", "scopes": ["read:trades"]},
                             headers=auth_headers)
    unscoped = client.get("/api/trades", headers={"Authorization": f"Bearer {markets_only}"})
    bodies = {"fields": invalid.get_json(), "limit": over_quota.get_json(),
              "required_scope": unscoped.get_json()}
    assert (invalid.status_code, over_quota.status_code, unscoped.status_code) == (
        400, 403, 403)
    for member, body in bodies.items():
        assert member in body, body
        assert not list(published.iter_errors(body)), (member, body)
    assert bodies["limit"]["limit"] == "max_api_keys" and bodies["limit"]["allowed"] == 3
