"""OAuth 2.1 over HTTP: discovery, registration, consent, tokens, resources, revocation."""

from __future__ import annotations

import uuid
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

from models.base import utcnow
from models.oauth import Approval, AuthorizationCode, OAuthToken
from tests.api.oauth_flow import (
    RECOMMENDED,
    REDIRECT_URI,
    authorize_params,
    bearer,
    consent,
    exchange,
    obtain_tokens,
    pkce,
    redirect_params,
    refresh,
    register,
    sign_in,
)
from tests.conftest import app_settings, one_database

ALL_SCOPES = [*RECOMMENDED, "wallet:write"]


def oauth_error(response, status: int, error: str) -> dict:
    assert response.status_code == status, response.data
    body = response.get_json()
    assert body["error"] == error, body
    assert "code" not in body  # OAuth's format, not the API's {error, code}
    return body


def api_resource(app) -> str:
    return app_settings(app).base_url + "/api"


def mcp_resource(app) -> str:
    return app_settings(app).base_url + "/api/mcp"


# ---- discovery -----------------------------------------------------------------------------


def test_authorization_server_metadata(client, app):
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    doc = response.get_json()
    base = app_settings(app).base_url
    assert doc["issuer"] == base
    assert doc["authorization_endpoint"] == base + "/oauth/authorize"
    assert doc["token_endpoint"] == base + "/oauth/token"
    assert doc["registration_endpoint"] == base + "/oauth/register"
    assert doc["revocation_endpoint"] == base + "/oauth/revoke"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert doc["response_types_supported"] == ["code"]
    assert doc["scopes_supported"] == ALL_SCOPES
    assert set(doc["token_endpoint_auth_methods_supported"]) == {
        "none", "client_secret_basic", "client_secret_post"}
    assert doc["client_id_metadata_document_supported"] is True
    assert doc["authorization_response_iss_parameter_supported"] is True


@one_database
def test_protected_resource_metadata(client, app):
    base = app_settings(app).base_url
    root = client.get("/.well-known/oauth-protected-resource")
    inserted = client.get("/.well-known/oauth-protected-resource/api/mcp")
    assert root.status_code == inserted.status_code == 200
    assert root.get_json() == inserted.get_json()
    doc = root.get_json()
    assert doc["resource"] == base + "/api/mcp"
    assert doc["authorization_servers"] == [base]
    assert doc["scopes_supported"] == ALL_SCOPES
    assert doc["bearer_methods_supported"] == ["header"]
    assert root.headers["Access-Control-Allow-Origin"] == "*"
    rest = client.get("/.well-known/oauth-protected-resource/api").get_json()
    assert rest["resource"] == base + "/api"


def test_discovery_preflight_is_allowed(client):
    response = client.options("/.well-known/oauth-authorization-server",
                              headers={"Origin": "https://agent.example",
                                       "Access-Control-Request-Method": "GET"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    token = client.options("/oauth/token", headers={"Origin": "https://agent.example"})
    assert token.headers["Access-Control-Allow-Origin"] == "*"


@one_database
def test_openapi_documents_the_oauth_endpoints(client):
    spec = client.get("/openapi.json").get_json()
    for path in ("/oauth/authorize", "/oauth/token", "/oauth/register", "/oauth/revoke",
                 "/.well-known/oauth-authorization-server",
                 "/.well-known/oauth-protected-resource", "/api/oauth/approvals"):
        assert path in spec["paths"], path
    description = spec["info"]["description"]
    assert "1 hour" in description and "30 days" in description
    assert "error_description" in description


# ---- registration --------------------------------------------------------------------------


def test_register_public_client(client):
    registration = register(client)
    assert registration["client_id"]
    assert registration["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in registration
    assert registration["redirect_uris"] == [REDIRECT_URI]


def test_register_defaults_to_a_confidential_client(client):
    response = client.post("/oauth/register", json={"redirect_uris": ["https://a.example/cb"]})
    assert response.status_code == 201
    body = response.get_json()
    assert body["token_endpoint_auth_method"] == "client_secret_basic"
    assert body["client_secret"] and body["client_secret_expires_at"] == 0
    assert response.headers["Cache-Control"] == "no-store"


@one_database
def test_register_refuses_bad_metadata(client):
    for uris in (["http://evil.example/cb"], ["https://a.example/cb#frag"], [], "x",
                 ["javascript:alert(1)"]):
        response = client.post("/oauth/register", json={"redirect_uris": uris})
        oauth_error(response, 400, "invalid_redirect_uri")
    for extra in ({"grant_types": ["client_credentials"]},
                  {"token_endpoint_auth_method": "private_key_jwt"},
                  {"response_types": ["token"]}, {"scope": "admin"}):
        response = client.post("/oauth/register",
                               json={"redirect_uris": ["https://a.example/cb"], **extra})
        oauth_error(response, 400, "invalid_client_metadata")
    response = client.post("/oauth/register", data="redirect_uris=x")
    oauth_error(response, 400, "invalid_client_metadata")


# ---- the authorization code flow -------------------------------------------------------------


def test_unsigned_browser_is_sent_to_sign_in(client):
    registration = register(client)
    _, challenge = pkce()
    url = "/oauth/authorize?" + urlencode(authorize_params(registration["client_id"], challenge))
    response = client.get(url)
    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert location.path == "/dashboard/login"
    assert parse_qs(location.query)["next"][0] == url  # back to this very request


def test_consent_page_shows_client_host_and_scopes_in_plain_words(client, user):
    registration = register(client, client_name="Portfolio Watcher")
    sign_in(client, user)
    _, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge, scope=" ".join(ALL_SCOPES))
    page = client.get("/oauth/authorize?" + urlencode(params))
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Portfolio Watcher" in html and "127.0.0.1" in html and user.email in html
    assert "Cancel your resting orders" in html
    assert "withdraw funds" in html
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    for scope in RECOMMENDED:
        assert f'value="{scope}"\n             checked' in html, scope
    assert 'value="wallet:write"\n             >' in html  # offered, not ticked


def test_full_flow_issues_svco_tokens_with_the_approved_scopes(client, user, app):
    registration = register(client)
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge,
                              scope=" ".join(ALL_SCOPES), resource=api_resource(app))
    back = redirect_params(consent(client, params, ["read:account", "read:trades"]))
    assert back["state"] == params["state"]
    assert back["iss"] == app_settings(app).base_url
    response = exchange(client, registration["client_id"], back["code"], verifier)
    assert response.status_code == 200, response.data
    assert response.headers["Cache-Control"] == "no-store"
    tokens = response.get_json()
    assert tokens["access_token"].startswith("svco_") and len(tokens["access_token"]) >= 48
    assert tokens["refresh_token"].startswith("svcr_")
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == "read:account read:trades"
    me = client.get("/api/users/me", headers=bearer(tokens["access_token"]))
    assert me.status_code == 200 and me.get_json()["email"] == user.email
    positions = client.get("/api/positions", headers=bearer(tokens["access_token"]))
    assert positions.status_code == 403 and positions.get_json()["code"] == "scope_required"
    keys = client.get("/api/keys", headers=bearer(tokens["access_token"]))
    assert keys.status_code == 403  # JWT-only routes refuse OAuth tokens
    record = OAuthToken.get()
    assert tokens["access_token"] not in (record.access_token_hash, record.refresh_token_hash)
    approval = Approval.get()
    assert approval.scope_list == ["read:account", "read:trades"]


def test_unticking_everything_or_denying_redirects_access_denied(client, user, app):
    registration = register(client)
    sign_in(client, user)
    _, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge)
    for response in (consent(client, params, decision="deny"), consent(client, params, [])):
        back = redirect_params(response)
        assert back["error"] == "access_denied"
        assert back["state"] == params["state"] and back["iss"] == app_settings(app).base_url
        assert "code" not in back
    assert AuthorizationCode.select().count() == 0


def test_consent_without_the_csrf_token_is_refused(client, user):
    registration = register(client)
    sign_in(client, user)
    _, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge)
    response = consent(client, params, csrf="forged")
    assert response.status_code == 400
    assert "Location" not in response.headers
    assert AuthorizationCode.select().count() == 0 and Approval.select().count() == 0


def test_tokens_are_bound_to_their_resource(client, user, app):
    _, mcp_tokens = obtain_tokens(client, user)  # no resource: the MCP server
    record = OAuthToken.get()
    assert record.resource == mcp_resource(app)
    refused = client.get("/api/users/me", headers=bearer(mcp_tokens["access_token"]))
    assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_token"
    _, rest_tokens = obtain_tokens(client, user, resource=api_resource(app))
    allowed = client.get("/api/users/me", headers=bearer(rest_tokens["access_token"]))
    assert allowed.status_code == 200


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_family(client, user, app):
    registration, first = obtain_tokens(client, user, resource=api_resource(app))
    client_id = registration["client_id"]
    rotated = refresh(client, client_id, first["refresh_token"])
    assert rotated.status_code == 200, rotated.data
    second = rotated.get_json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["scope"] == first["scope"]
    assert client.get("/api/users/me", headers=bearer(second["access_token"])).status_code == 200

    oauth_error(refresh(client, client_id, first["refresh_token"]), 400, "invalid_grant")
    for token in (first["access_token"], second["access_token"]):
        assert client.get("/api/users/me", headers=bearer(token)).status_code == 401
    oauth_error(refresh(client, client_id, second["refresh_token"]), 400, "invalid_grant")


def test_refresh_may_narrow_but_not_widen_scope(client, user, app):
    registration, tokens = obtain_tokens(client, user, ["read:account", "read:trades"],
                                         resource=api_resource(app))
    wider = refresh(client, registration["client_id"], tokens["refresh_token"],
                    scope="read:account wallet:write")
    oauth_error(wider, 400, "invalid_scope")
    narrower = refresh(client, registration["client_id"], tokens["refresh_token"],
                       scope="read:account")
    assert narrower.status_code == 200 and narrower.get_json()["scope"] == "read:account"


# ---- bad input -----------------------------------------------------------------------------


def test_missing_or_plain_code_challenge_is_invalid_request(client, user):
    registration = register(client)
    sign_in(client, user)
    verifier, challenge = pkce()
    for extra in ({"code_challenge": None, "code_challenge_method": None},
                  {"code_challenge_method": None},
                  {"code_challenge": verifier, "code_challenge_method": "plain"}):
        params = authorize_params(registration["client_id"], challenge, **extra)
        response = client.get("/oauth/authorize?" + urlencode(params))
        back = redirect_params(response)
        assert back["error"] == "invalid_request", back
        assert back["state"] == params["state"] and "iss" in back
    assert AuthorizationCode.select().count() == 0


def test_unknown_client_or_mismatched_redirect_is_never_redirected(client, user):
    registration = register(client)
    sign_in(client, user)
    _, challenge = pkce()
    for params in (authorize_params("no-such-client", challenge),
                   authorize_params(registration["client_id"], challenge,
                                    redirect_uri="http://127.0.0.1:9/callback/other"),
                   authorize_params(registration["client_id"], challenge,
                                    redirect_uri="https://evil.example/callback")):
        response = client.get("/oauth/authorize?" + urlencode(params))
        assert response.status_code == 400
        assert "Location" not in response.headers
        html = response.get_data(as_text=True)
        assert "invalid_client" in html or "invalid_request" in html


def test_unknown_client_at_the_token_endpoint_is_invalid_client(client):
    verifier, _ = pkce()
    response = exchange(client, "no-such-client", "x" * 43, verifier)
    oauth_error(response, 400, "invalid_client")


def test_unknown_scope_and_unknown_resource_are_redirected_errors(client, user, app):
    registration = register(client)
    sign_in(client, user)
    _, challenge = pkce()
    scope = redirect_params(client.get("/oauth/authorize?" + urlencode(
        authorize_params(registration["client_id"], challenge, scope="read:account admin"))))
    assert scope["error"] == "invalid_scope"
    target = redirect_params(client.get("/oauth/authorize?" + urlencode(
        authorize_params(registration["client_id"], challenge,
                         resource="https://elsewhere.example/api"))))
    assert target["error"] == "invalid_target"


def _code(client, user, registration, challenge, **extra):
    sign_in(client, user)
    params = authorize_params(registration["client_id"], challenge, **extra)
    return redirect_params(consent(client, params))["code"]


def test_wrong_verifier_is_invalid_grant(client, user):
    registration = register(client)
    _, challenge = pkce()
    code = _code(client, user, registration, challenge)
    other_verifier, _ = pkce()
    oauth_error(exchange(client, registration["client_id"], code, other_verifier), 400,
                "invalid_grant")
    oauth_error(exchange(client, registration["client_id"], code, None), 400,
                "invalid_request")
    assert OAuthToken.select().count() == 0


def test_redirect_uri_must_match_at_the_token_endpoint(client, user):
    registration = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)
    response = exchange(client, registration["client_id"], code, verifier,
                        redirect_uri="http://127.0.0.1:9/other")
    oauth_error(response, 400, "invalid_grant")
    assert OAuthToken.select().count() == 0


def test_expired_code_is_invalid_grant(client, user):
    registration = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)
    AuthorizationCode.update(expires_at=utcnow() - timedelta(seconds=1)).execute()
    oauth_error(exchange(client, registration["client_id"], code, verifier), 400,
                "invalid_grant")
    assert OAuthToken.select().count() == 0


def test_reused_code_is_refused_and_revokes_what_it_issued(client, user, app):
    registration = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge, resource=api_resource(app))
    first = exchange(client, registration["client_id"], code, verifier)
    assert first.status_code == 200
    oauth_error(exchange(client, registration["client_id"], code, verifier), 400,
                "invalid_grant")
    token = first.get_json()["access_token"]
    assert client.get("/api/users/me", headers=bearer(token)).status_code == 401
    assert OAuthToken.select().count() == 1


def test_code_of_another_client_is_invalid_grant(client, user):
    registration = register(client)
    other = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)
    oauth_error(exchange(client, other["client_id"], code, verifier), 400, "invalid_grant")


def test_token_resource_must_match_the_code(client, user, app):
    registration = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)  # bound to the MCP server
    response = exchange(client, registration["client_id"], code, verifier,
                        resource=api_resource(app))
    oauth_error(response, 400, "invalid_target")
    assert OAuthToken.select().count() == 0


@one_database
def test_unsupported_grant_type(client):
    response = client.post("/oauth/token", data={"grant_type": "password"})
    oauth_error(response, 400, "unsupported_grant_type")


# ---- confidential clients ------------------------------------------------------------------


def test_confidential_client_must_authenticate(client, user):
    registration = register(client, token_endpoint_auth_method="client_secret_basic")
    secret = registration["client_secret"]
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)
    unauthenticated = exchange(client, registration["client_id"], code, verifier)
    oauth_error(unauthenticated, 401, "invalid_client")
    wrong = client.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier}, auth=(registration["client_id"], "wrong"))
    oauth_error(wrong, 401, "invalid_client")
    assert wrong.headers["WWW-Authenticate"].startswith("Basic")
    right = client.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier}, auth=(registration["client_id"], secret))
    assert right.status_code == 200, right.data


# ---- revocation ----------------------------------------------------------------------------


def test_revoke_access_token(client, user, app):
    registration, tokens = obtain_tokens(client, user, resource=api_resource(app))
    response = client.post("/oauth/revoke", data={"token": tokens["access_token"],
                                                  "client_id": registration["client_id"]})
    assert response.status_code == 200
    assert client.get("/api/users/me", headers=bearer(tokens["access_token"])).status_code == 401
    oauth_error(refresh(client, registration["client_id"], tokens["refresh_token"]), 400,
                "invalid_grant")


def test_revoke_refresh_token_revokes_the_family(client, user, app):
    registration, first = obtain_tokens(client, user, resource=api_resource(app))
    second = refresh(client, registration["client_id"], first["refresh_token"]).get_json()
    response = client.post("/oauth/revoke", data={"token": second["refresh_token"],
                                                  "token_type_hint": "refresh_token",
                                                  "client_id": registration["client_id"]})
    assert response.status_code == 200
    assert client.get("/api/users/me", headers=bearer(second["access_token"])).status_code == 401
    assert OAuthToken.select().where(OAuthToken.revoked_at.is_null()).count() == 0


def test_revoking_another_clients_or_unknown_token_changes_nothing(client, user, app):
    _, tokens = obtain_tokens(client, user, resource=api_resource(app))
    other = register(client)
    for token in (tokens["access_token"], "svco_unknown"):
        response = client.post("/oauth/revoke", data={"token": token,
                                                      "client_id": other["client_id"]})
        assert response.status_code == 200
    assert client.get("/api/users/me", headers=bearer(tokens["access_token"])).status_code == 200
    oauth_error(client.post("/oauth/revoke", data={"client_id": other["client_id"]}), 400,
                "invalid_request")


# ---- approvals -----------------------------------------------------------------------------


def test_approvals_are_listed_and_revoking_one_revokes_its_tokens(client, user, app,
                                                                  auth_headers, api_key):
    registration, tokens = obtain_tokens(client, user, ["read:account"],
                                         resource=api_resource(app))
    listed = client.get("/api/oauth/approvals", headers=auth_headers)
    assert listed.status_code == 200
    (approval,) = listed.get_json()
    assert approval["client_id"] == registration["client_id"]
    assert approval["client_name"] == "Test Agent"
    assert approval["scopes"] == ["read:account"]

    assert client.get("/api/oauth/approvals",
                      headers=bearer(tokens["access_token"])).status_code == 403
    assert client.get("/api/oauth/approvals",
                      headers=bearer(api_key("read:account"))).status_code == 403

    revoked = client.delete(f"/api/oauth/approvals/{approval['id']}", headers=auth_headers)
    assert revoked.status_code == 204
    assert client.get("/api/users/me", headers=bearer(tokens["access_token"])).status_code == 401
    oauth_error(refresh(client, registration["client_id"], tokens["refresh_token"]), 400,
                "invalid_grant")
    assert client.get("/api/oauth/approvals", headers=auth_headers).get_json() == []
    again = client.delete(f"/api/oauth/approvals/{approval['id']}", headers=auth_headers)
    assert again.status_code == 404 and again.get_json()["code"] == "not_found"


def test_a_code_issued_before_revocation_is_useless(client, user, auth_headers):
    registration = register(client)
    verifier, challenge = pkce()
    code = _code(client, user, registration, challenge)
    approval = Approval.get()
    client.delete(f"/api/oauth/approvals/{approval.id}", headers=auth_headers)
    oauth_error(exchange(client, registration["client_id"], code, verifier), 400,
                "invalid_grant")


def test_reapproving_with_fewer_scopes_clamps_the_tokens_already_issued(client, user, app,
                                                                        inbox):
    """Issue 18 finding 5: a narrower re-approval narrows every token of the approval."""
    from tests.api.test_sessions import confirmation_code

    def code() -> str:
        return confirmation_code(inbox, user.email)

    registration = register(client)
    client_id = registration["client_id"]
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(client_id, challenge, scope=" ".join(ALL_SCOPES),
                              resource=api_resource(app))
    back = redirect_params(consent(client, params, ["read:account", "wallet:write"],
                                   step_up_code=code))
    tokens = exchange(client, client_id, back["code"], verifier).get_json()
    assert tokens["scope"] == "read:account wallet:write"
    withdraw = {"token": "usdc", "amount": "1", "to": "0x" + "11" * 20}

    def wallet_write_refused(token: str) -> bool:
        response = client.post("/api/trading-wallet/withdraw", json=withdraw,
                               headers={**bearer(token), "Idempotency-Key": str(uuid.uuid4())})
        return response.get_json().get("code") == "scope_required"

    assert not wallet_write_refused(tokens["access_token"])

    # The user re-approves the same client without wallet:write (a code left over from
    # before the re-approval is clamped too).
    old_verifier, old_challenge = pkce()
    old_params = authorize_params(client_id, old_challenge, scope=" ".join(ALL_SCOPES),
                                  resource=api_resource(app))
    old_code = redirect_params(consent(client, old_params, ["read:account", "wallet:write"],
                                       step_up_code=code))
    new_params = authorize_params(client_id, pkce()[1], scope=" ".join(ALL_SCOPES),
                                  resource=api_resource(app))
    redirect_params(consent(client, new_params, ["read:account"]))
    assert Approval.get().scope_list == ["read:account"]

    assert wallet_write_refused(tokens["access_token"])
    assert client.get("/api/users/me",
                      headers=bearer(tokens["access_token"])).status_code == 200
    refreshed = refresh(client, client_id, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.data
    assert refreshed.get_json()["scope"] == "read:account"
    assert wallet_write_refused(refreshed.get_json()["access_token"])
    again = refresh(client, client_id, refreshed.get_json()["refresh_token"],
                    scope="read:account wallet:write")
    oauth_error(again, 400, "invalid_scope")
    late = exchange(client, client_id, old_code["code"], old_verifier)
    assert late.status_code == 200 and late.get_json()["scope"] == "read:account"
    assert wallet_write_refused(late.get_json()["access_token"])
