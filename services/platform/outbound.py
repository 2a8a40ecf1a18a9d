"""Guarded outbound fetches: requests a stranger can make this server send.

An anonymous caller who names a URL (an OAuth client's metadata document) must not be
able to hold a web thread. Every such fetch here

- ends by a **wall-clock deadline**, DNS included: the name is resolved in a bounded
  thread pool and waited for at most the time left; every connect, TLS handshake, read
  and write gets only the time left; and a watchdog shuts the socket at the deadline
  (a server dripping one byte per read timeout gets nowhere);
- runs **bounded**: a process-wide cap per ``Gate``; a fetch beyond it is refused at
  once (``Busy``), never queued behind the slow ones;
- is **remembered when it fails**: the Gate keeps failures for a short time, so
  repeating a bad URL costs nothing;
- **connects to the address it checked**: the caller approves the resolved addresses,
  and the connection goes to the first approved one (no second lookup, so a DNS answer
  that changes in between cannot redirect it: DNS rebinding). Host header, SNI and
  certificate checks still use the URL's host name.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from venue.tls import client_context

Resolver = Callable[[str], set[str]]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Threads that run getaddrinfo; one stuck lookup holds one of them, never a web thread.
DNS_THREADS = 8
MAX_REMEMBERED_FAILURES = 4096

_dns_pool = ThreadPoolExecutor(max_workers=DNS_THREADS, thread_name_prefix="outbound-dns")


class FetchError(Exception):
    """The fetch failed; the message says why in words fit for a client."""


class Busy(FetchError):
    """Too many guarded fetches are in progress in this process."""


class Refused(FetchError):
    """The URL's host resolves to an address the caller does not allow (or not at all)."""


@dataclass(frozen=True)
class Fetched:
    """What the server answered: status and (capped) body."""

    status: int
    body: bytes


class Gate:
    """A process-wide cap on concurrent fetches, and a memory of recent failures."""

    def __init__(self, limit: int, failure_ttl: float) -> None:
        self.limit = limit
        self.failure_ttl = failure_ttl
        self._slots = threading.BoundedSemaphore(limit)
        self._failures: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the gate's slots for the block; Busy at once when none is free."""
        if not self._slots.acquire(blocking=False):
            raise Busy("Too many client lookups are in progress; try again shortly.")
        try:
            yield
        finally:
            self._slots.release()

    def failure(self, key: str) -> Any:
        """Why ``key`` failed, while that is remembered."""
        with self._lock:
            entry = self._failures.get(key)
            if entry is None:
                return None
            if entry[0] <= time.monotonic():
                del self._failures[key]
                return None
            return entry[1]

    def remember_failure(self, key: str, reason: Any) -> None:
        """Remember that ``key`` failed (the oldest memories go first when full)."""
        if self.failure_ttl <= 0:
            return
        with self._lock:
            self._failures[key] = (time.monotonic() + self.failure_ttl, reason)
            self._failures.move_to_end(key)
            while len(self._failures) > MAX_REMEMBERED_FAILURES:
                self._failures.popitem(last=False)


_gates: dict[tuple[str, int, float], Gate] = {}
_gates_lock = threading.Lock()


def gate(name: str, limit: int, failure_ttl: float) -> Gate:
    """The process-wide Gate called ``name`` with these limits."""
    key = (name, max(1, int(limit)), float(failure_ttl))
    with _gates_lock:
        if key not in _gates:
            _gates[key] = Gate(key[1], key[2])
        return _gates[key]


# IPv6 forms that carry an IPv4 address inside them; a connection to one may reach that
# IPv4 host (through a translator or tunnel), so the IPv4 address is what is judged.
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: any embedding, site-local
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (and :: and ::1)


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64 or address in IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address (the server's is public anyway)
    return None


def public(address: Address) -> bool:
    """Whether ``address`` is a public unicast one, judging an embedded IPv4 address too
    (``ipaddress.is_global`` passes ``64:ff9b::10.0.0.1``, ``::10.0.0.1``, ``2002:a00:1::``)."""
    if not address.is_global or address.is_multicast or address in NAT64_LOCAL:
        return False
    inner = embedded_ipv4(address)
    return inner is None or (inner.is_global and not inner.is_multicast)


def system_resolver(hostname: str) -> set[str]:
    """The IP addresses the system resolver gives for ``hostname``."""
    return {info[4][0] for info in socket.getaddrinfo(hostname, None, type=socket.SOCK_STREAM)}


def resolve(hostname: str, deadline: float, resolver: Resolver | None = None
            ) -> list[Address]:
    """``hostname``'s addresses, waited for until ``deadline`` (monotonic); FetchError else."""
    future = _dns_pool.submit(resolver or system_resolver, hostname)
    try:
        texts = future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        future.cancel()
        raise FetchError(f"The host name {hostname} did not resolve in time.") from None
    except (OSError, UnicodeError) as exc:
        raise Refused(f"The host name {hostname} does not resolve.") from exc
    addresses = [ipaddress.ip_address(text.split("%", 1)[0]) for text in texts]
    if not addresses:
        raise Refused(f"The host name {hostname} does not resolve.")
    return addresses


def _left(deadline: float, timeout: float | None, error: type[Exception]) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the fetch's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation gets at most the time left."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(self.deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(self.deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        left = _left(self.deadline, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, left),
                               self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _PinnedBackend(httpcore.NetworkBackend):
    """Connects every request to one checked address, within the deadline, under a watchdog."""

    def __init__(self, address: Address, deadline: float) -> None:
        self.address = address
        self.deadline = deadline
        self.sockets: list[socket.socket] = []

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        stream = httpcore.SyncBackend().connect_tcp(
            str(self.address), port, _left(self.deadline, timeout, httpcore.ConnectTimeout),
            local_address, socket_options)
        sock = stream.get_extra_info("socket")
        if sock is not None:
            self.sockets.append(sock)
        return _DeadlineStream(stream, self.deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not fetched")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def cut(self) -> None:
        """Shut every socket: wakes an operation blocked past the deadline (a TLS handshake
        fed a byte at a time is one socket operation per byte)."""
        for sock in self.sockets:
            with suppress(OSError):  # already closed: nothing to wake
                sock.shutdown(socket.SHUT_RDWR)


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over the pinned backend (one connection, no proxies, no retries)."""

    def __init__(self, backend: _PinnedBackend, ssl_context: ssl.SSLContext | None) -> None:
        context = ssl_context or client_context()
        super().__init__(verify=context)  # its own pool is replaced: no second context
        self._pool = httpcore.ConnectionPool(ssl_context=context, max_connections=1,
                                             network_backend=backend)


def fetch(url: str, *, deadline_seconds: float, max_bytes: int,
          allow: Callable[[Address], bool], headers: Mapping[str, str] | None = None,
          resolver: Resolver | None = None, ssl_context: ssl.SSLContext | None = None,
          transport: httpx.BaseTransport | None = None, method: str = "GET",
          content: bytes | None = None) -> Fetched:
    """GET ``url`` (no redirects) within ``deadline_seconds``, from an address ``allow`` accepts.

    ``method`` and ``content`` make it another request (a webhook's POST of ``content``).
    Every resolved address must pass ``allow``, else FetchError before any connection.
    ``ssl_context`` replaces the default (certifi's roots, names checked); ``transport``
    replaces the network (fault injection in tests). Bodies over
    ``max_bytes`` are a FetchError.
    """
    deadline = time.monotonic() + deadline_seconds
    hostname = urlsplit(url).hostname or ""
    addresses = resolve(hostname, deadline, resolver)
    if not all(allow(address) for address in addresses):
        raise Refused("This URL's host is not allowed.")
    backend = _PinnedBackend(addresses[0], deadline)
    watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), backend.cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        with (httpx.Client(transport=transport or _PinnedTransport(backend, ssl_context),
                           timeout=deadline_seconds, follow_redirects=False,
                           trust_env=False) as http,
              http.stream(method, url, headers=dict(headers or {}),
                          content=content) as response):
            if response.status_code != 200:
                return Fetched(response.status_code, b"")
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise FetchError("The document is too large.")
            return Fetched(response.status_code, body)
    except httpx.HTTPError as exc:
        if time.monotonic() >= deadline:
            raise FetchError(f"No complete answer within {deadline_seconds:g} s.") from exc
        raise FetchError(f"The request failed: {exc}") from exc
    finally:
        watchdog.cancel()
