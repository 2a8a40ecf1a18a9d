"""The OAuth 2.1 endpoints: authorize (HTML consent), token, register, revoke.

They speak OAuth's error format (``{error, error_description}``, RFC 6749 5.2),
not the API's ``{error, code}``. The authorize endpoint redirects errors to the
client only once the client and its redirect URI are verified; before that it
shows an error page. A signed-out browser signs in on the dashboard's sign-in page,
which sends it back here (``next=``); the consent and error pages use the dashboard's
browser session and layout. Token, register and revoke answer CORS requests from any
origin (they take no cookies).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import OAuth2Error
from flask import (
    Response,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.dashboard import session as browser
from blueprints.oauth.server import current_server
from schemas import request_examples
from schemas.oauth import ClientInformationSchema, OAuthErrorSchema, TokenResponseSchema
from services.identity import auth, keys
from services.oauth import clients as oauth_clients
from services.oauth import resources as oauth_resources
from services.oauth import server as oauth_server
from services.oauth import tokens as oauth
from services.platform import errors
from services.wallets import account_setup

blp = Blueprint("oauth", __name__, url_prefix="/oauth", description=(
    "OAuth 2.1 authorization server for hosted agents. Lifetimes: access tokens (`svco_...`) "
    "1 hour, refresh tokens (`svcr_...`) 30 days and single use (rotated on every refresh; "
    "a reused one revokes the whole family), codes 5 minutes and single use. Errors use "
    "OAuth's format `{error, error_description}`, not `{error, code}`."))

FORM = "application/x-www-form-urlencoded"
# The consent and error pages load only this site's stylesheet and scripts (the dashboard's
# layout, htmx for its sign-out button) and may never be framed (clickjacking). No
# form-action: browsers apply it to the redirect after the consent form, and that goes to
# the client's redirect URI, which may be any origin or a private-use scheme.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "600",
}


def _oauth_error(status: int, description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": OAuthErrorSchema}}}


def _form_body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"required": True, "content": {FORM: {"schema": {
        "type": "object", "properties": properties, "required": required}}}}


@blp.after_request
def _cors(response: Response) -> Response:
    if request.endpoint in ("oauth.token", "oauth.register", "oauth.revoke"):
        response.headers.update(CORS_HEADERS)
    return response


# ---- authorize -----------------------------------------------------------------------------


def _page_headers(response: Response) -> Response:
    """Headers the consent and error pages carry: strict CSP, no framing, caching or referrer."""
    response.headers["Content-Security-Policy"] = PAGE_CSP
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    # The page's URL carries the request's state and PKCE challenge.
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _signed_in_user() -> Any:
    caller = browser.principal()
    return caller.user if caller is not None else None


def _with_issuer(location: str) -> str:
    return add_params_to_uri(location, {"iss": oauth_server.issuer()})


def _authorize_error(error: OAuth2Error) -> Response:
    if error.redirect_uri:
        # Client and redirect URI are verified: the client hears about it (RFC 6749 4.1.2.1).
        _, _, headers = error()
        response = redirect(_with_issuer(dict(headers)["Location"]))
        response.headers["Cache-Control"] = "no-store"
        return response
    response = make_response(render_template(
        "oauth/error.html", error=error.error, description=error.description), 400)
    return _page_headers(response)


def _resource_name(resource: str) -> str:
    if resource == oauth_resources.mcp_resource():
        return "MCP server (tools for AI agents)"
    return "REST API"


def _consent_page(grant: Any, user: Any, *, error: str | None = None,
                  status: int = 200, chosen: list[str] | None = None,
                  need_code: bool = False) -> Response:
    client = grant.client
    redirect_parts = urlsplit(grant.redirect_uri)
    ticked = set(chosen) if chosen is not None else set(oauth.RECOMMENDED_SCOPES)
    scopes = [{"scope": scope, "description": oauth.describe_scope(scope),
               "checked": scope in ticked,
               "optional": scope in oauth.OPTIONAL_SCOPES}
              for scope in grant.request.scope.split()]
    response = make_response(render_template(
        "oauth/consent.html", client_name=client.name, client_uri=client.record.client_uri,
        redirect_host=redirect_parts.hostname or redirect_parts.scheme, scopes=scopes,
        resource_name=_resource_name(grant.request.resource), user_email=user.email,
        mail=auth.codes_by_mail(),
        signed_in_email=user.email, action=request.full_path, error=error,
        need_code=need_code), status)
    return _page_headers(response)


def _money_step_up(grant: Any, user: Any, chosen: list[str]) -> Response | None:
    """Allowing ``wallet:write`` needs a fresh emailed code, as minting such a key does:
    a stolen session cookie must not hand an app the power to withdraw. None when proven."""
    caller = browser.principal()
    if caller is None:
        return redirect(url_for("dashboard.login", next=request.full_path))
    code = (request.form.get("step_up_code") or "").strip() or None
    try:
        if browser.step_up_token(caller, code) is not None:
            return None
    except errors.CopytradeError as err:
        return _consent_page(grant, user, status=err.status, chosen=chosen, need_code=True,
                             error=err.message)
    auth.request_step_up(user.email, client_ip=request.remote_addr,
                         purpose="allowing an app to move your money (wallet:write)")
    return _consent_page(grant, user, status=403, chosen=chosen, need_code=True, error=(
        "Allowing wallet:write lets the app move your money: enter the confirmation code "
        "we just emailed you."))


@blp.route("/authorize", methods=["GET", "POST"])
@access.public
@blp.doc(
    summary="Authorization endpoint (HTML consent)",
    description=(
        "RFC 6749 authorization code flow with PKCE (**S256 required**; `plain` or a missing "
        "`code_challenge` is `invalid_request`). Parameters: `response_type=code`, "
        "`client_id` (registered at /oauth/register, or the https URL of a Client ID "
        "Metadata Document), `redirect_uri` (exact match; optional when exactly one is "
        "registered), `scope` (space-separated; default the recommended scopes), `state`, "
        "`code_challenge`, `code_challenge_method=S256`, `resource` (RFC 8707: "
        "`<BASE_URL>/api/mcp`, the default, or `<BASE_URL>/api`). A signed-out user "
        "signs in on the dashboard (`/dashboard/login?next=...`: emailed code or one-time "
        "link) and comes back here; the consent page shows the client's name, its "
        "redirect host and each scope in plain words (`wallet:write` is never ticked in "
        "advance), and the user allows or denies (a CSRF-protected form POSTed to this "
        "same URL). The redirect carries `code`, `state` "
        "and `iss` (RFC 9207), or `error` (`access_denied`, `invalid_request`, "
        "`invalid_scope`, `invalid_target`, ...). An unknown client or an unregistered "
        "redirect URI is shown to the user as a 400 page and never redirected."),
    responses={
        "200": {"description": "The consent page (HTML).", "content": {"text/html": {}}},
        "302": {"description": "To the dashboard's sign-in page, or back to the client's "
                               "redirect URI with `code`/`error`, `state` and `iss`."},
        "400": {"description": "Invalid client or redirect URI, or a stale form (HTML).",
                "content": {"text/html": {}}},
        "429": {"description": "Rate limited (`rate_limited`)."},
    })
def authorize() -> Response:
    """Show the consent page, or record the user's decision and redirect to the client."""
    server = current_server()
    user = _signed_in_user()
    if user is None and oauth_clients.is_metadata_url(request.args.get("client_id") or ""):
        # Checking this client means fetching its metadata document: only for a signed-in
        # user, so an anonymous request never makes this server fetch anything.
        return redirect(url_for("dashboard.login", next=request.full_path))
    try:
        grant = server.get_consent_grant(end_user=user)
    except OAuth2Error as error:
        return _authorize_error(error)
    if user is None:
        return redirect(url_for("dashboard.login", next=request.full_path))
    if request.method == "GET":
        return _consent_page(grant, user)
    if not browser.csrf_ok():
        return _consent_page(grant, user, status=400,
                             error="The form expired; please decide again.")
    offered = grant.request.scope.split()
    chosen = [scope for scope in request.form.getlist("approved_scope") if scope in offered]
    if request.form.get("decision") != "approve" or not chosen:
        response = server.create_authorization_response(grant=grant, grant_user=None)
    else:
        if keys.MONEY_SCOPE in chosen:
            refused = _money_step_up(grant, user, chosen)
            if refused is not None:
                return refused
        approval = oauth.record_approval(user, grant.client.record, chosen)
        # An app's sign-in: its user may trade through it at once, so setup starts now.
        account_setup.start(user)
        grant.request.approval = approval
        grant.request.approved_scope = " ".join(oauth.ordered_scopes(chosen))
        response = server.create_authorization_response(grant=grant, grant_user=user)
    response.headers["Cache-Control"] = "no-store"
    return response


# ---- token, register, revoke ---------------------------------------------------------------


@blp.route("/token", methods=["POST"])
@access.public
@blp.doc(
    summary="Token endpoint",
    description=(
        "`grant_type=authorization_code` (`code`, `redirect_uri`, `code_verifier`, "
        "`client_id` for public clients, optional `resource` which must match the code's) or "
        "`grant_type=refresh_token` (`refresh_token`, optional narrower `scope`, optional "
        "`resource`). Clients authenticate with their registered method: `none` (public, "
        "PKCE only), `client_secret_basic` or `client_secret_post`. Each refresh returns a "
        "new refresh token; presenting a used one is `invalid_grant` and revokes every token "
        "of that authorization. A code used twice likewise revokes what it issued. A "
        "`client_id` URL (metadata document) is never fetched here: it is known once a user "
        "consented to it at /oauth/authorize, else `invalid_client`."),
    requestBody=_form_body({
        "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
        "code": {"type": "string"}, "redirect_uri": {"type": "string"},
        "code_verifier": {"type": "string"}, "client_id": {"type": "string"},
        "client_secret": {"type": "string"}, "refresh_token": {"type": "string"},
        "scope": {"type": "string"}, "resource": {"type": "string"}}, ["grant_type"]),
    responses={
        "200": {"description": "Tokens (RFC 6749 5.1).",
                "content": {"application/json": {"schema": TokenResponseSchema}}},
        "400": _oauth_error(400, "`invalid_request`, `invalid_grant` (bad, expired or reused "
                                 "code or refresh token, wrong `code_verifier`, redirect URI "
                                 "mismatch), `invalid_client`, `unauthorized_client`, "
                                 "`unsupported_grant_type`, `invalid_scope`, "
                                 "`invalid_target`."),
        "401": _oauth_error(401, "`invalid_client` when HTTP Basic client authentication "
                                 "fails."),
        "429": {"description": "Rate limited (`rate_limited`)."},
    })
def token() -> Response:
    """Exchange a code or a refresh token for tokens."""
    return current_server().create_token_response()


@blp.route("/register", methods=["POST"])
@access.public
@blp.doc(
    summary="Dynamic client registration (RFC 7591)",
    description=(
        "Open registration (no initial access token). JSON body: `redirect_uris` (required; "
        "https, http on a loopback host, or a private-use scheme), `client_name`, "
        "`token_endpoint_auth_method` (`none` for public clients such as MCP clients; "
        "`client_secret_basic`, the RFC default, or `client_secret_post`), `grant_types` "
        "(`authorization_code`, `refresh_token`), `response_types` (`code`), `scope`, "
        "`client_uri`, `logo_uri`. Clients may instead skip registration and use the https "
        "URL of their Client ID Metadata Document as `client_id`."),
    requestBody={"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": ["redirect_uris"], "properties": {
            "redirect_uris": {"type": "array", "items": {"type": "string"}},
            "client_name": {"type": "string"},
            "token_endpoint_auth_method": {"type": "string", "enum": list(
                oauth_server.CLIENT_AUTH_METHODS)},
            "grant_types": {"type": "array", "items": {"type": "string"}},
            "response_types": {"type": "array", "items": {"type": "string"}},
            "scope": {"type": "string"}, "client_uri": {"type": "string"},
            "logo_uri": {"type": "string"}}},
        "example": request_examples.OAUTH_CLIENT}}},
    responses={
        "201": {"description": "The registered client (RFC 7591 3.2.1).",
                "content": {"application/json": {"schema": ClientInformationSchema}}},
        "400": _oauth_error(400, "`invalid_redirect_uri` or `invalid_client_metadata`."),
        "429": {"description": "Rate limited (`rate_limited`)."},
    })
def register() -> Response:
    """Register a client."""
    if not isinstance(request.get_json(silent=True), dict):
        response = make_response({"error": "invalid_client_metadata",
                                  "error_description": "Send the client metadata as a JSON "
                                                       "object."}, 400)
        response.headers["Cache-Control"] = "no-store"
        return response
    return current_server().create_endpoint_response("client_registration")


@blp.route("/revoke", methods=["POST"])
@access.public
@blp.doc(
    summary="Token revocation (RFC 7009)",
    description=(
        "Form body: `token`, optional `token_type_hint`; the client authenticates as at the "
        "token endpoint. Revoking an access token revokes it and its refresh token; revoking "
        "a refresh token revokes every token of that authorization. Unknown tokens and "
        "other clients' tokens answer 200 too, and nothing is revoked. A `client_id` URL is "
        "never fetched here (an unknown one is `invalid_client`)."),
    requestBody=_form_body({"token": {"type": "string"},
                            "token_type_hint": {"type": "string",
                                                "enum": ["access_token", "refresh_token"]},
                            "client_id": {"type": "string"}}, ["token"]),
    responses={
        "200": {"description": "Revoked (or nothing to revoke)."},
        "400": _oauth_error(400, "`invalid_request`, `invalid_client`, "
                                 "`unsupported_token_type`."),
        "401": _oauth_error(401, "`invalid_client` when HTTP Basic client authentication "
                                 "fails."),
        "429": {"description": "Rate limited (`rate_limited`)."},
    })
def revoke() -> Response:
    """Revoke a token."""
    return current_server().create_endpoint_response("revocation")
