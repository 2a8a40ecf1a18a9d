"""The process's one TLS client context: httpx's defaults (certifi's roots, names checked).

httpx builds a new context for every client or transport it makes, and each build reads and
parses certifi's bundle: about 18 ms of CPU on a two-core machine, more than the request a
short-lived client is made for. A client context is safe to share between threads and
clients once configured, so every outbound HTTP client here (the venue's, the bounded
fetches of webhooks and client metadata, the Telegram Bot API) shares this one.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def client_context() -> ssl.SSLContext:
    """The shared default TLS client context, built on first use."""
    return httpx.create_ssl_context()
