"""OAuth clients: dynamic registration (RFC 7591) and Client ID Metadata Documents.

A client arrives either registered (``POST /oauth/register`` gives it a random
``client_id``) or unregistered, with an https URL as its ``client_id``: the
URL's JSON metadata document is fetched (services/platform/outbound.py: a wall-clock deadline, a
per-process cap, failures remembered, the checked address pinned; no redirects,
size-capped) and cached in ``oauth_clients`` for CIMD_CACHE_TTL. Only the consent page
fetches (``find(..., fetch=True)``, for a signed-in user); the anonymous token and
revocation endpoints use the stored copy, whatever its age, or know no such client. Plain http is
accepted only for loopback hosts and only when OAUTH_ALLOW_HTTP_CLIENT_ID_URLS is
set (tests, local development). Redirect URIs are matched exactly.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpx
import peewee
from authlib.oauth2.rfc6749 import ClientMixin

from models.base import db, utcnow
from models.oauth import OAuthClient
from schemas.vocabulary import SCOPES
from services.oauth import tokens as oauth
from services.platform import outbound
from services.platform.runtime import runtime

log = logging.getLogger(__name__)

CIMD_MAX_BYTES = 16 * 1024
CIMD_CACHE_TTL = timedelta(minutes=10)
CIMD_STALE_LIMIT = timedelta(hours=24)  # a cached copy used while the host is down
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ("code",)
NAME_MAX = 200
MAX_REDIRECT_URIS = 10
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class ClientMetadataError(ValueError):
    """Client metadata is unacceptable; ``error`` is the RFC 7591 error code."""

    def __init__(self, error: str, description: str, transient: bool = False,
                 busy: bool = False) -> None:
        self.error = error
        self.description = description
        self.transient = transient  # the host could not be reached: a cached copy may serve
        self.busy = busy  # refused for our load, not the client's fault: not remembered
        super().__init__(description)


class Client(ClientMixin):
    """authlib's view of a stored client."""

    def __init__(self, record: OAuthClient) -> None:
        self.record = record

    @property
    def is_public(self) -> bool:
        """True for clients without a secret (``token_endpoint_auth_method: none``)."""
        return self.record.token_endpoint_auth_method == "none"

    @property
    def name(self) -> str:
        """What the consent screen calls the client."""
        return self.record.client_name or self.record.client_id

    def get_client_id(self) -> str:
        """The client_id."""
        return self.record.client_id

    def get_default_redirect_uri(self) -> str | None:
        """The redirect URI when exactly one is registered; otherwise it must be sent."""
        uris = self.record.redirect_uri_list
        return uris[0] if len(uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str | None:
        """Requested scopes the client may ask for; the recommended ones when none are named."""
        registered = set(self.record.scope.split()) if self.record.scope else set(SCOPES)
        wanted = scope.split() if scope else list(oauth.RECOMMENDED_SCOPES)
        allowed = oauth.ordered_scopes(s for s in wanted if s in registered)
        return " ".join(allowed) if allowed else None

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Exact string match against the registered redirect URIs."""
        return redirect_uri in self.record.redirect_uri_list

    def check_client_secret(self, client_secret: str) -> bool:
        """Compare the presented secret's keyed hash with the stored one."""
        stored = self.record.client_secret_hash
        return bool(stored) and secrets.compare_digest(
            stored, oauth.hash_secret("client-secret", client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        """The token and revocation endpoints take only the registered auth method."""
        return method == self.record.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        """Only ``code``, and only if registered."""
        return response_type in self.record.response_types.split()

    def check_grant_type(self, grant_type: str) -> bool:
        """Only the grant types the client registered."""
        return grant_type in self.record.grant_types.split()


# ---- lookup --------------------------------------------------------------------------------


def is_metadata_url(client_id: str) -> bool:
    """True when ``client_id`` is a URL (a Client ID Metadata Document)."""
    return client_id.startswith(("https://", "http://"))


def find(client_id: str | None, *, fetch: bool = False) -> Client | None:
    """The client for ``client_id``: registered, or known by its metadata document (fetched
    when ``fetch`` and the stored copy is older than CIMD_CACHE_TTL; else the stored copy)."""
    if not client_id or len(client_id) > 2048:
        return None
    if is_metadata_url(client_id):
        record = (_metadata_document_client(client_id) if fetch
                  else _stored_metadata_document_client(client_id))
    else:
        record = OAuthClient.get_or_none(OAuthClient.client_id == client_id,
                                         OAuthClient.kind == "registered")
    return Client(record) if record is not None else None


# ---- validation shared by registration and metadata documents --------------------------------


def check_redirect_uri_value(uri: Any) -> str:
    """A redirect URI we accept: https, http on a loopback host, or a private-use scheme."""
    if not isinstance(uri, str) or not uri or len(uri) > 2000:
        raise ClientMetadataError("invalid_redirect_uri", "Each redirect URI must be a string.")
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        raise ClientMetadataError("invalid_redirect_uri",
                                  "A redirect URI must not contain a fragment.")
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.netloc:
        return uri
    if scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return uri
    if "." in scheme and scheme not in ("http", "https") and not parts.netloc:
        return uri  # RFC 8252 7.1 private-use scheme, e.g. com.example.app:/callback
    raise ClientMetadataError(
        "invalid_redirect_uri",
        "Redirect URIs must be https, http on a loopback address, or a private-use scheme.")


def normalize_metadata(raw: Mapping[str, Any], *, metadata_document: bool) -> dict[str, Any]:
    """Validate RFC 7591 client metadata and fill its defaults; ClientMetadataError if bad."""
    if not isinstance(raw, Mapping):
        raise ClientMetadataError("invalid_client_metadata", "Send a JSON object.")
    uris = raw.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise ClientMetadataError("invalid_redirect_uri",
                                  f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs.")
    redirect_uris = [check_redirect_uri_value(uri) for uri in uris]
    default_method = "none" if metadata_document else "client_secret_basic"
    method = raw.get("token_endpoint_auth_method") or default_method
    allowed_methods = ("none",) if metadata_document else AUTH_METHODS
    if method not in allowed_methods:
        raise ClientMetadataError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method must be one of: {', '.join(allowed_methods)}.")
    grant_types = raw.get("grant_types") or ["authorization_code"]
    response_types = raw.get("response_types") or ["code"]
    if (not isinstance(grant_types, list) or not set(grant_types) <= set(GRANT_TYPES)
            or "authorization_code" not in grant_types):
        raise ClientMetadataError(
            "invalid_client_metadata",
            "grant_types must include authorization_code and may add refresh_token.")
    if not isinstance(response_types, list) or set(response_types) != {"code"}:
        raise ClientMetadataError("invalid_client_metadata", "response_types must be [code].")
    scope = raw.get("scope")
    if scope is not None:
        if not isinstance(scope, str) or not scope.split() or not set(scope.split()) <= set(
                SCOPES):
            raise ClientMetadataError("invalid_client_metadata",
                                      f"scope may hold only: {' '.join(SCOPES)}.")
        scope = " ".join(oauth.ordered_scopes(scope.split()))
    name = raw.get("client_name") or ""
    if not isinstance(name, str) or len(name) > NAME_MAX:
        raise ClientMetadataError("invalid_client_metadata",
                                  f"client_name must be a string of at most {NAME_MAX}.")
    optional_uris = {}
    for field in ("client_uri", "logo_uri"):
        value = raw.get(field)
        if value is not None and not (isinstance(value, str)
                                      and urlsplit(value).scheme in ("https", "http")):
            raise ClientMetadataError("invalid_client_metadata", f"{field} must be a URL.")
        optional_uris[field] = value
    return {
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": method,
        "grant_types": [g for g in GRANT_TYPES if g in grant_types],
        "response_types": ["code"],
        "client_name": name.strip(),
        "scope": scope,
        **optional_uris,
    }


# ---- dynamic registration (RFC 7591) ---------------------------------------------------------


def register(metadata: Mapping[str, Any]) -> tuple[OAuthClient, str | None]:
    """Register a client; returns the record and its secret (None for public clients)."""
    clean = normalize_metadata(metadata, metadata_document=False)
    secret = None
    if clean["token_endpoint_auth_method"] != "none":
        secret = secrets.token_urlsafe(32)
    record = OAuthClient.create(
        client_id="ct_" + secrets.token_urlsafe(24), kind="registered",
        client_secret_hash=oauth.hash_secret("client-secret", secret)
        if secret else None,
        client_name=clean["client_name"], client_uri=clean.get("client_uri"),
        logo_uri=clean.get("logo_uri"), redirect_uris=json.dumps(clean["redirect_uris"]),
        grant_types=" ".join(clean["grant_types"]),
        response_types=" ".join(clean["response_types"]), scope=clean["scope"],
        token_endpoint_auth_method=clean["token_endpoint_auth_method"], created_at=utcnow())
    return record, secret


def registration_response(record: OAuthClient, secret: str | None) -> dict[str, Any]:
    """The RFC 7591 section 3.2.1 body: client information plus the metadata as registered."""
    body: dict[str, Any] = {
        "client_id": record.client_id,
        "client_id_issued_at": int(record.created_at.timestamp()),
        "client_name": record.client_name or None,
        "redirect_uris": record.redirect_uri_list,
        "grant_types": record.grant_types.split(),
        "response_types": record.response_types.split(),
        "token_endpoint_auth_method": record.token_endpoint_auth_method,
        "scope": record.scope,
        "client_uri": record.client_uri,
        "logo_uri": record.logo_uri,
    }
    if secret is not None:
        body["client_secret"] = secret
        body["client_secret_expires_at"] = 0
    return {key: value for key, value in body.items() if value is not None}


# ---- Client ID Metadata Documents ------------------------------------------------------------


Resolver = outbound.Resolver


def _acceptable_url(url: str) -> SplitResult | None:
    """``url`` split, when its form may serve as a client_id: https with a path, or http on
    a loopback host when OAUTH_ALLOW_HTTP_CLIENT_ID_URLS is set (tests, development)."""
    try:
        parts = urlsplit(url)
        port = parts.port  # noqa: F841 - raises on a malformed port
    except ValueError:
        return None
    if parts.fragment or parts.username or parts.password or not parts.hostname:
        return None
    if parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path:
        return None
    if parts.scheme == "https":
        return parts
    if parts.scheme == "http" and runtime().settings.oauth_allow_http_client_id_urls:
        try:
            loopback = ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            loopback = parts.hostname == "localhost"
        return parts if loopback else None
    return None


def _address_rule(parts: SplitResult) -> Callable[[outbound.Address], bool]:
    """Which resolved addresses the fetch may connect to.

    A client_id URL makes this server fetch it, so an https one must reach only public
    addresses (no loopback, private, link-local or reserved: SSRF); the development http
    form only loopback ones.
    """
    if parts.scheme == "http":
        return lambda address: address.is_loopback
    return outbound.public


def _deadline() -> float:
    return runtime().settings.oauth_fetch.deadline_seconds


def check_metadata_url(url: str, *, resolver: Resolver | None = None) -> bool:
    """Whether ``url`` may serve as a client_id: its form, and every address it resolves to."""
    parts = _acceptable_url(url)
    if parts is None:
        return False
    try:
        addresses = outbound.resolve(parts.hostname or "",
                                     time.monotonic() + _deadline(), resolver)
    except outbound.FetchError:
        return False
    return all(_address_rule(parts)(address) for address in addresses)


def _fetch_gate() -> outbound.Gate:
    limits = runtime().settings.oauth_fetch
    return outbound.gate("oauth-client-metadata", limits.concurrency,
                         limits.failure_ttl_seconds)


def fetch_metadata_document(url: str, *,
                            transport: httpx.BaseTransport | None = None,
                            resolver: Resolver | None = None) -> dict[str, Any]:
    """GET the client's metadata document and validate it; ClientMetadataError when unusable.

    The fetch is bounded (services/platform/outbound.py): a wall-clock deadline, DNS included; at
    most OAUTH_FETCH_CONCURRENCY at once per process (more are refused at once); a failure
    is remembered for OAUTH_FETCH_FAILURE_TTL_SECONDS and answered without fetching again.
    """
    parts = _acceptable_url(url)
    if parts is None:
        raise ClientMetadataError("invalid_client", "This client_id URL is not accepted.")
    gate = _fetch_gate()
    remembered = gate.failure(url)
    if remembered is not None:
        raise ClientMetadataError(*remembered)
    try:
        document = _fetched_document(url, parts, gate, transport, resolver)
    except ClientMetadataError as exc:
        if not exc.busy:
            gate.remember_failure(url, (exc.error, exc.description, exc.transient))
        raise
    return document


def _fetched_document(url: str, parts: SplitResult, gate: outbound.Gate,
                      transport: httpx.BaseTransport | None,
                      resolver: Resolver | None) -> dict[str, Any]:
    try:
        with gate.slot():
            fetched = outbound.fetch(
                url, deadline_seconds=_deadline(), max_bytes=CIMD_MAX_BYTES,
                allow=_address_rule(parts), headers={"Accept": "application/json"},
                resolver=resolver, transport=transport)
    except outbound.Busy as exc:
        raise ClientMetadataError("invalid_client", str(exc), transient=True,
                                  busy=True) from exc
    except outbound.Refused as exc:
        raise ClientMetadataError("invalid_client",
                                  "This client_id URL is not accepted.") from exc
    except outbound.FetchError as exc:
        raise ClientMetadataError("invalid_client",
                                  f"The metadata document could not be fetched: {exc}",
                                  transient=True) from exc
    if fetched.status != 200:
        raise ClientMetadataError(
            "invalid_client", f"The metadata document answered {fetched.status}.")
    try:
        document = json.loads(fetched.body)
    except ValueError as exc:
        raise ClientMetadataError("invalid_client",
                                  "The metadata document is not JSON.") from exc
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise ClientMetadataError("invalid_client",
                                  "The metadata document's client_id must equal its URL.")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientMetadataError("invalid_client",
                                  "A metadata document must not carry a client secret.")
    try:
        return normalize_metadata(document, metadata_document=True)
    except ClientMetadataError as exc:
        raise ClientMetadataError("invalid_client", exc.description) from exc


def _stored_metadata_document_client(url: str) -> OAuthClient | None:
    return OAuthClient.get_or_none(OAuthClient.client_id == url,
                                   OAuthClient.kind == "metadata_doc")


def _metadata_document_client(url: str) -> OAuthClient | None:
    cached = _stored_metadata_document_client(url)
    now = utcnow()
    if cached is not None and cached.metadata_fetched_at and (
            now - cached.metadata_fetched_at < CIMD_CACHE_TTL):
        return cached
    try:
        clean = fetch_metadata_document(url)
    except ClientMetadataError as exc:
        log.info("client metadata document %s refused: %s", url, exc.description)
        if cached is not None and cached.metadata_fetched_at and (
                now - cached.metadata_fetched_at < CIMD_STALE_LIMIT and exc.transient):
            # The client's host is briefly down (or we are busy): serve the known copy.
            return cached
        return None
    fields = {
        "client_name": clean["client_name"], "client_uri": clean.get("client_uri"),
        "logo_uri": clean.get("logo_uri"), "redirect_uris": json.dumps(clean["redirect_uris"]),
        "grant_types": " ".join(clean["grant_types"]),
        "response_types": " ".join(clean["response_types"]), "scope": clean["scope"],
        "token_endpoint_auth_method": "none", "metadata_fetched_at": now,
    }
    if cached is not None:
        OAuthClient.update(**fields).where(OAuthClient.id == cached.id).execute()
        return OAuthClient.get_by_id(cached.id)
    try:
        with db.atomic():
            return OAuthClient.create(client_id=url, kind="metadata_doc",
                                      created_at=now, **fields)
    except peewee.IntegrityError:  # a parallel request stored it first
        return OAuthClient.get_or_none(OAuthClient.client_id == url)
