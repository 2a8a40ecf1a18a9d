"""Endpoint URLs that may carry credentials, shown without them.

RPC providers put the API key in the path (``/v2/<key>``), the query (``?apikey=``) or the
userinfo; none of these may reach an error message or a log line.
"""

from __future__ import annotations

from urllib.parse import urlsplit


def redact_url(url: str) -> str:
    """``url`` with its userinfo, path and query hidden: ``https://host:port/***``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparsable url>"
    hidden = "/***" if (parts.path.strip("/") or parts.query or parts.username
                        or parts.fragment) else ""
    shown_host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown_host}{port}{hidden}"


def secret_parts(url: str) -> list[str]:
    """The pieces of ``url`` that may be a credential (userinfo, path, query), longest first."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [url, parts.path + (f"?{parts.query}" if parts.query else ""), parts.path,
             parts.query, parts.username or "", parts.password or ""]
    return sorted({piece for piece in found if piece.strip("/")}, key=len, reverse=True)


def has_credentials(url: str) -> bool:
    """Whether ``url`` carries userinfo or a query (where a key would sit in a venue URL)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    return bool(parts.username or parts.password or parts.query)


def scrub(text: str, url: str) -> str:
    """``text`` with every credential-bearing piece of ``url`` replaced by ``***``."""
    for piece in secret_parts(url):
        text = text.replace(piece, "***" if piece != url else redact_url(url))
    return text
