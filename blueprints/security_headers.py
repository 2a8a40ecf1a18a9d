"""Response hardening: trusted hosts, nosniff and referrer policy, HSTS on https, CSP on pages.

The Host check refuses (400) any Host that is not BASE_URL's host or one of ALLOWED_HOSTS, so
a rebinding DNS name or a forged Host cannot reach the app or steer the URLs it builds. A
loopback BASE_URL (local runs, tests) accepts every loopback name. The dashboard and the OAuth
consent pages load only this site's scripts and styles: no inline script or style exists.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, Response, request

from blueprints import header_writes
from services.platform import errors
from services.platform.runtime import runtime

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# Pages rendered for a browser: only this origin's scripts, styles, images and requests.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "frame-ancestors 'none'")
CSP_PREFIXES = ("/dashboard", "/oauth")
HSTS = "max-age=31536000"


def _host_name(host: str) -> str:
    """The name part of a Host header (no port; brackets of an IPv6 literal removed)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def allowed_hosts() -> frozenset[str]:
    """The Host names this app answers to: BASE_URL's, ALLOWED_HOSTS, loopback for a local URL."""
    settings = runtime().settings
    source = (settings.base_url, settings.allowed_hosts)
    found = _ALLOWED.get(source)
    if found is None:  # worked out once per pair of settings, not on every request
        base = (urlsplit(settings.base_url).hostname or "").lower()
        names = {base, *(_host_name(name) for name in settings.allowed_hosts)}
        if base in LOOPBACK_HOSTS:
            names |= LOOPBACK_HOSTS
        found = _ALLOWED.setdefault(source, frozenset(names))
    return found


_ALLOWED: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}


# Probes (load balancers, orchestrators) call by IP; the answer reveals nothing.
HOST_EXEMPT_PATHS = frozenset({"/healthz"})


def check_host() -> None:
    """Refuse a request whose Host is not one this deployment answers to."""
    current = request._get_current_object()  # type: ignore[attr-defined]  # one lookup
    if current.path in HOST_EXEMPT_PATHS:
        return
    if _host_name(current.host) not in allowed_hosts():
        raise errors.BadRequest("Unknown host.")


# nosniff everywhere; sign-in links carry a token in the URL: never send it to another site.
EVERYWHERE = (("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"))
ON_HTTPS = (("Strict-Transport-Security", HSTS),)
ON_PAGES = (("Content-Security-Policy", CONTENT_SECURITY_POLICY), ("X-Frame-Options", "DENY"))


def add_headers(response: Response) -> Response:
    """nosniff and a referrer policy everywhere, HSTS on https, the CSP on browser pages."""
    pairs: tuple[tuple[str, str], ...] = EVERYWHERE
    if runtime().settings.base_url.startswith("https://"):
        pairs += ON_HTTPS
    if request.path.startswith(CSP_PREFIXES):
        pairs += ON_PAGES
    header_writes.default_known(response.headers, pairs)
    return response


def init_app(app: Flask) -> None:
    """Install the Host check and the response headers (after the request log: both logged)."""
    app.before_request(check_host)
    app.after_request(add_headers)
