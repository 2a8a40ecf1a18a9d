"""OAuth services: the svco_ resolver, approvals, single-use codes and refresh tokens,
resource indicators, client metadata validation and metadata-document fetch faults."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import httpx
import pytest

from models.base import utcnow
from models.oauth import OAuthClient, OAuthToken
from schemas.vocabulary import ALL_SCOPES
from services.identity import credentials
from services.oauth import clients as oauth_clients
from services.oauth import resources as oauth_resources
from services.oauth import tokens as oauth
from services.platform import errors
from services.platform.principal import Principal

CT = {"BASE_URL": "https://ct.example"}


@pytest.fixture
def settings(set_settings):
    """The app's settings served at https://ct.example."""
    return set_settings(base_url="https://ct.example")


@pytest.fixture
def oauth_client(bound_db):
    record, _ = oauth_clients.register(
        {"redirect_uris": ["https://agent.example/cb"], "token_endpoint_auth_method": "none",
         "grant_types": ["authorization_code", "refresh_token"], "client_name": "Agent"})
    return record


def _issue(user, client, scopes=("read:account",), resource=None):
    approval = oauth.record_approval(user, client, scopes)
    return oauth.issue_tokens(
        client=client, user=user, approval=approval, scope=" ".join(scopes),
        resource=resource or oauth_resources.mcp_resource(), family_id=uuid.uuid4(),
        with_refresh=True)


def session_of(user) -> Principal:
    return Principal(user=user, kind="session", scopes=ALL_SCOPES)


# ---- the resolver --------------------------------------------------------------------------


def test_resolver_gives_an_oauth_principal_for_its_resource(settings, user, oauth_client):
    issued = _issue(user, oauth_client, ("read:account", "read:markets"))
    token = oauth_resources.request_resource.set(oauth_resources.mcp_resource())
    try:
        principal = credentials.resolve_token(issued.access_token)
    finally:
        oauth_resources.request_resource.reset(token)
    assert principal.kind == "oauth" and principal.user_id == user.id
    assert principal.scopes == {"read:account", "read:markets"}
    assert principal.has_scope("read:markets") and not principal.has_scope("wallet:write")
    assert principal.extra["client_id"] == oauth_client.client_id
    with pytest.raises(errors.Forbidden):
        principal.require_session()


def test_resolver_refuses_other_resources_and_no_resource(settings, user, oauth_client):
    issued = _issue(user, oauth_client)
    with pytest.raises(errors.InvalidToken):
        credentials.resolve_token(issued.access_token)  # no request: fail closed
    with pytest.raises(errors.InvalidToken):
        oauth.resolve_for_resource(issued.access_token,
                                   oauth_resources.api_resource())


def test_resolver_refuses_expired_revoked_and_unknown_tokens(settings, user, oauth_client):
    mcp = oauth_resources.mcp_resource()
    expired = _issue(user, oauth_client)
    OAuthToken.update(access_expires_at=utcnow() - timedelta(seconds=1)).where(
        OAuthToken.id == expired.record.id).execute()
    revoked = _issue(user, oauth_client)
    oauth.revoke_token(revoked.record, whole_family=False)
    for secret in (expired.access_token, revoked.access_token, "svco_" + "a" * 43,
                   revoked.refresh_token):
        with pytest.raises(errors.InvalidToken):
            oauth.resolve_for_resource(secret, mcp)


def test_secrets_are_stored_only_as_keyed_hashes(settings, user, oauth_client):
    issued = _issue(user, oauth_client)
    assert issued.access_token.startswith("svco_") and len(issued.access_token) == 5 + 43
    record = OAuthToken.get_by_id(issued.record.id)
    assert issued.access_token not in (record.access_token_hash, record.refresh_token_hash)
    assert record.access_token_hash == oauth.hash_secret("access",
                                                         issued.access_token)


# ---- rotation, codes -----------------------------------------------------------------------


def test_refresh_tokens_rotate_once_and_reuse_revokes_the_family(settings, user, oauth_client):
    issued = _issue(user, oauth_client)
    record = oauth.usable_refresh_token(issued.refresh_token)
    assert record is not None
    assert oauth.rotate(record) is True
    assert oauth.rotate(record) is False  # a racing second exchange loses
    assert oauth.usable_refresh_token(issued.refresh_token) is None
    assert OAuthToken.get_by_id(record.id).revoked_at is not None


def test_codes_work_once(settings, user, oauth_client):
    approval = oauth.record_approval(user, oauth_client, ["read:account"])
    code = oauth.new_code()
    record = oauth.store_code(code, client=oauth_client, user=user,
                              approval=approval, redirect_uri="https://agent.example/cb",
                              scope="read:account", resource="r", code_challenge="c" * 43,
                              code_challenge_method="S256")
    found = oauth.find_code(code, oauth_client)
    assert found is not None and found.id == record.id
    assert oauth.consume_code(found) is True
    assert oauth.consume_code(found) is False
    assert oauth.find_code(code, oauth_client) is None


# ---- approvals -----------------------------------------------------------------------------


def test_approvals_need_a_session_and_belong_to_their_user(settings, user, oauth_client,
                                                           bound_db):
    from models import User

    _issue(user, oauth_client)
    (approval,) = oauth.list_approvals(session_of(user))
    key_principal = Principal(user=user, kind="api_key", scopes=ALL_SCOPES)
    with pytest.raises(errors.Forbidden):
        oauth.list_approvals(key_principal)
    stranger = User.create(email="stranger@example.com")
    with pytest.raises(errors.NotFound):
        oauth.revoke_approval(session_of(stranger), approval.id)
    oauth.revoke_approval(session_of(user), approval.id)
    assert oauth.list_approvals(session_of(user)) == []
    assert OAuthToken.select().where(OAuthToken.revoked_at.is_null()).count() == 0


def test_approving_again_replaces_the_scopes(user, oauth_client):
    first = oauth.record_approval(user, oauth_client, ["read:trades", "read:account"])
    assert first.scope_list == ["read:account", "read:trades"]
    oauth.revoke_approval(session_of(user), first.id)
    again = oauth.record_approval(user, oauth_client, ["read:markets"])
    assert again.id == first.id and again.scope_list == ["read:markets"]
    assert again.revoked_at is None


# ---- resources (RFC 8707) ------------------------------------------------------------------


def test_resource_selection(use_settings):
    use_settings(**CT)
    assert oauth_resources.select([]) == "https://ct.example/api/mcp"
    assert oauth_resources.select(["https://CT.example/api/"]) == (
        "https://ct.example/api")
    for values in (["https://ct.example/api", "https://ct.example/api/mcp"],
                   ["https://other.example/api"], ["https://ct.example/api/mcp#x"],
                   ["/api/mcp"], ["https://ct.example/api/keys"]):
        with pytest.raises(oauth_resources.InvalidTargetError):
            oauth_resources.select(values)


def test_resource_for_path(use_settings):
    use_settings(**CT)
    assert oauth_resources.resource_for_path("/api/mcp") == (
        "https://ct.example/api/mcp")
    assert oauth_resources.resource_for_path("/api/mcpx") == "https://ct.example/api"
    assert oauth_resources.resource_for_path("/api/users/me") == (
        "https://ct.example/api")
    assert oauth_resources.resource_for_path("/oauth/token") is None
    assert oauth_resources.metadata_url("https://ct.example/api/mcp") == (
        "https://ct.example/.well-known/oauth-protected-resource/api/mcp")


# ---- client metadata -----------------------------------------------------------------------


def test_client_metadata_rules():
    clean = oauth_clients.normalize_metadata(
        {"redirect_uris": ["https://a.example/cb", "http://127.0.0.1:7777/cb",
                           "com.example.app:/cb"]}, metadata_document=False)
    assert clean["token_endpoint_auth_method"] == "client_secret_basic"
    assert clean["grant_types"] == ["authorization_code"]
    for uri in ("http://a.example/cb", "https://a.example/cb#x", "data:text/html,x",
                "javascript:alert(1)"):
        with pytest.raises(oauth_clients.ClientMetadataError) as caught:
            oauth_clients.normalize_metadata({"redirect_uris": [uri]}, metadata_document=False)
        assert caught.value.error == "invalid_redirect_uri"
    with pytest.raises(oauth_clients.ClientMetadataError):
        oauth_clients.normalize_metadata(
            {"redirect_uris": ["https://a.example/cb"],
             "token_endpoint_auth_method": "client_secret_post"}, metadata_document=True)


def test_client_scope_rules(oauth_client, bound_db):
    client = oauth_clients.Client(oauth_client)
    assert client.get_allowed_scope(None) == " ".join(oauth.RECOMMENDED_SCOPES)
    assert client.get_allowed_scope("wallet:write read:account") == "read:account wallet:write"
    OAuthClient.update(scope="read:account").execute()
    limited = oauth_clients.Client(OAuthClient.get_by_id(oauth_client.id))
    assert limited.get_allowed_scope("read:account trade:execute") == "read:account"
    assert limited.get_allowed_scope("trade:execute") is None
    assert limited.check_redirect_uri("https://agent.example/cb")
    assert not limited.check_redirect_uri("https://agent.example/cb/")


# ---- metadata documents: URL rules and fetch faults (MockTransport injects them) -------------


# What DNS would answer for the hosts these tests name (there is no DNS here).
DNS = {"agent.example": {"93.184.216.34"}, "inside.example": {"10.1.2.3"},
       "mixed.example": {"93.184.216.34", "127.0.0.1"}, "v6.example": {"fe80::1%eth0"}}


def fake_dns(hostname: str) -> set[str]:
    if hostname not in DNS:
        raise OSError("no such host")
    return DNS[hostname]


def test_metadata_urls_must_be_https_with_a_path(use_settings):
    use_settings()
    assert oauth_clients.check_metadata_url("https://agent.example/client.json",
                                            resolver=fake_dns)
    for url in ("https://agent.example", "https://agent.example/", "http://agent.example/c",
                "https://u:p@agent.example/c", "https://agent.example/c#f",
                "http://127.0.0.1:8/c"):
        assert not oauth_clients.check_metadata_url(url, resolver=fake_dns), url
    use_settings(OAUTH_ALLOW_HTTP_CLIENT_ID_URLS=True)
    assert oauth_clients.check_metadata_url("http://127.0.0.1:8/c")
    assert not oauth_clients.check_metadata_url("http://10.0.0.1:8/c")


def _fetch(handler):
    url = "https://agent.example/client.json"
    return oauth_clients.fetch_metadata_document(url, transport=httpx.MockTransport(handler),
                                                 resolver=fake_dns)


def test_metadata_urls_must_not_reach_internal_addresses(use_settings):
    use_settings()
    # The server fetches a client_id URL itself: no loopback, private or link-local
    # targets (SSRF), decided before any connection is made.
    for url in ("https://127.0.0.1/c.json", "https://10.0.0.8/c.json", "https://[::1]/c.json",
                "https://169.254.169.254/latest", "https://inside.example/c.json",
                "https://mixed.example/c.json", "https://v6.example/c.json",
                "https://unknown.example/c.json"):
        assert not oauth_clients.check_metadata_url(url, resolver=fake_dns), url
    with pytest.raises(oauth_clients.ClientMetadataError):
        oauth_clients.fetch_metadata_document("https://inside.example/c.json",
                                              resolver=fake_dns)


def test_metadata_urls_must_not_reach_an_internal_ipv4_address_in_an_ipv6_form(use_settings):
    # NAT64, IPv4-compatible and 6to4 forms pass ipaddress's is_global; their embedded
    # IPv4 address (here 10.0.0.8 and the cloud metadata 169.254.169.254) is what counts.
    use_settings()
    for address in ("64:ff9b::a00:8", "::a9fe:a9fe", "2002:a9fe:a9fe::1", "64:ff9b:1::a00:8"):
        assert not oauth_clients.check_metadata_url(f"https://[{address}]/c.json"), address
        assert not oauth_clients.check_metadata_url(
            "https://agent.example/c.json", resolver=lambda _, a=address: {a}), address
    assert oauth_clients.check_metadata_url(  # NAT64 of a public address
        "https://agent.example/c.json", resolver=lambda _: {"64:ff9b::5db8:d822"})


def test_metadata_fetch_faults_are_refusals(use_settings):
    # One URL, several faults in a row: failures are not remembered here (see
    # test_oauth_fetch.py for the memory).
    use_settings(OAUTH_FETCH_FAILURE_TTL_SECONDS=0)
    def timeout(request):
        raise httpx.ConnectTimeout("timed out", request=request)

    def huge(request):
        return httpx.Response(200, content=b"{" + b" " * (oauth_clients.CIMD_MAX_BYTES + 1))

    def server_error(request):
        return httpx.Response(503)

    for handler in (timeout, huge, server_error):
        with pytest.raises(oauth_clients.ClientMetadataError) as caught:
            _fetch(handler)
        assert caught.value.error == "invalid_client"

    def good(request):
        return httpx.Response(200, content=json.dumps({
            "client_id": str(request.url), "redirect_uris": ["https://agent.example/cb"],
            "client_name": "Agent"}).encode())

    assert _fetch(good)["token_endpoint_auth_method"] == "none"


def test_a_disabled_users_oauth_token_is_refused(settings, user, oauth_client):
    from services.identity import users

    issued = _issue(user, oauth_client)
    token = oauth_resources.request_resource.set(oauth_resources.mcp_resource())
    try:
        assert credentials.resolve_token(issued.access_token).user_id == user.id
        users.disable(user.email)
        with pytest.raises(errors.InvalidToken, match="disabled"):
            credentials.resolve_token(issued.access_token)
        users.enable(user.email)
        assert credentials.resolve_token(issued.access_token).user_id == user.id
    finally:
        oauth_resources.request_resource.reset(token)
