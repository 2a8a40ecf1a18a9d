"""Which URLs a user may make this server post to: https to public addresses only; http on a
loopback host only when NOTIFY_ALLOW_LOOPBACK_URLS allows it (by default with the sandbox venue,
never with Polymarket's: config.py).

Checked when a channel is added (400 ``validation_failed`` naming the field) and again at
every send, where the connection goes to the address that was checked (outbound.py)."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

from config import NotificationConfig
from services.platform import errors, outbound


def _loopback_host(hostname: str) -> bool:
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return hostname == "localhost"


def address_rule(url: str, config: NotificationConfig) -> Callable[[outbound.Address], bool]:
    """Which resolved addresses a send to ``url`` may connect to."""
    parts = urlsplit(url)
    if config.allow_loopback_urls and _loopback_host(parts.hostname or ""):
        return lambda address: address.is_loopback
    return outbound.public


def check(url: str, field: str, config: NotificationConfig, *, prefix: str | None = None,
          resolver: outbound.Resolver | None = None) -> str:
    """``url`` when a channel may post to it; ValidationFailed on ``field`` else."""
    def refuse(why: str) -> errors.ValidationFailed:
        return errors.ValidationFailed(fields={field: [why]})

    url = (url or "").strip()
    try:
        parts: SplitResult = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise refuse("Not a valid URL.") from None
    if not parts.hostname or parts.username or parts.password or parts.fragment:
        raise refuse("Give an https URL with a host name, no user name or fragment.")
    loopback = config.allow_loopback_urls and _loopback_host(parts.hostname)
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise refuse("The URL must use https.")
    if prefix and not url.startswith(prefix):
        raise refuse(f"The URL must start with {prefix}")
    try:
        addresses = outbound.resolve(parts.hostname, time.monotonic()
                                     + config.send_deadline_seconds, resolver)
    except outbound.FetchError:
        raise refuse("The host name does not resolve.") from None
    rule = address_rule(url, config)
    if not all(rule(address) for address in addresses):
        raise refuse("The host resolves to a private or reserved address.")
    return url
