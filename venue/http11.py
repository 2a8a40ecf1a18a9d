"""A lean HTTP/1.1 client on trio for the worker's venue calls: kept-alive pool, TLS.

httpx on trio spends about a millisecond of CPU per request in its own layers (request
models, httpcore, h11, anyio). The copy engine sends a fan-out's orders and every
target's backstop polls from one Trio loop, so that per-request cost becomes latency and
a CPU ceiling. This client writes a request in one send and reads the answer with a
small parser (status line, headers, ``Content-Length`` or chunked body), reusing
connections per origin. It answers ``httpx.Response`` objects and raises httpx's
exception types, so ``venue.http.AsyncTransport`` maps results, errors and retries
exactly as it does for httpx. It does not do proxies, redirects or compression
(``AsyncTransport`` keeps httpx when a proxy is configured).
"""

from __future__ import annotations

import contextlib
import select
import ssl
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import trio

MAX_HEADER_BYTES = 64 * 1024
_READ = 65536


@dataclass
class _Origin:
    """Idle connections to one (scheme, host, port) and the cap on open ones."""

    limit: trio.Semaphore
    idle: deque[tuple[trio.abc.Stream, float]] = field(default_factory=deque)


class _Connection:
    """One open stream with its unread bytes."""

    __slots__ = ("buffer", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def fill(self) -> None:
        data = await self.stream.receive_some(_READ)
        if not data:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        self.buffer += data

    async def read_until(self, marker: bytes, limit: int = MAX_HEADER_BYTES) -> bytes:
        while True:
            index = self.buffer.find(marker)
            if index >= 0:
                chunk = bytes(self.buffer[:index])
                del self.buffer[:index + len(marker)]
                return chunk
            if len(self.buffer) > limit:
                raise httpx.RemoteProtocolError("Response header too long.")
            await self.fill()

    async def read_exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            await self.fill()
        chunk = bytes(self.buffer[:size])
        del self.buffer[:size]
        return chunk

    async def read_to_end(self) -> bytes:
        while True:
            data = await self.stream.receive_some(_READ)
            if not data:
                chunk = bytes(self.buffer)
                self.buffer.clear()
                return chunk
            self.buffer += data


def _socket_of(stream: trio.abc.Stream) -> trio.socket.SocketType | None:
    inner = getattr(stream, "transport_stream", stream)
    return getattr(inner, "socket", None)


def _still_open(stream: trio.abc.Stream) -> bool:
    """False when an idle connection became readable: the server closed it (or sent
    something nobody asked for); either way it cannot carry the next request."""
    sock = _socket_of(stream)
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


class Http11Pool:
    """Kept-alive HTTP/1.1 connections per origin, for one Trio loop."""

    def __init__(self, *, timeout: float, connect_timeout: float, max_connections: int,
                 keepalive_expiry: float = 5.0, user_agent: str = "copytrade",
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self.user_agent = user_agent
        self._ssl_context = ssl_context
        self._origins: dict[tuple[str, str, int], _Origin] = {}
        self._closed = False

    def _origin(self, key: tuple[str, str, int]) -> _Origin:
        origin = self._origins.get(key)
        if origin is None:
            origin = self._origins[key] = _Origin(limit=trio.Semaphore(self.max_connections))
        return origin

    async def _connect(self, scheme: str, host: str, port: int) -> trio.abc.Stream:
        try:
            with trio.fail_after(self.connect_timeout):
                stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
                if scheme == "https":
                    if self._ssl_context is None:
                        self._ssl_context = ssl.create_default_context()
                        self._ssl_context.set_alpn_protocols(["http/1.1"])
                    tls = trio.SSLStream(stream, self._ssl_context, server_hostname=host,
                                         https_compatible=True)
                    await tls.do_handshake()
                    stream = tls
                return stream
        except trio.TooSlowError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except (OSError, trio.BrokenResourceError, ssl.SSLError) as exc:
            raise httpx.ConnectError(f"connecting to {host}:{port}: {exc}") from exc

    def _take_idle(self, origin: _Origin) -> trio.abc.Stream | None:
        now = time.monotonic()
        while origin.idle:
            stream, since = origin.idle.pop()
            if now - since < self.keepalive_expiry and _still_open(stream):
                return stream
            _close_quietly(stream)
        return None

    async def request(self, method: str, url: str, headers: Mapping[str, str],
                      body: bytes | None = None) -> httpx.Response:
        """Send one request and read the whole answer (raises httpx's exception types)."""
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed")
        parts = urlsplit(url)
        scheme = parts.scheme or "http"
        host = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default_port = port == (443 if scheme == "https" else 80)
        lines = [f"{method} {target} HTTP/1.1",
                 f"Host: {host if default_port else f'{host}:{port}'}",
                 f"User-Agent: {self.user_agent}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH", "DELETE"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        origin = self._origin((scheme, host, port))
        async with origin.limit:
            stream = self._take_idle(origin)
            if stream is None:
                stream = await self._connect(scheme, host, port)
            connection = _Connection(stream)
            reusable = False
            try:
                with trio.fail_after(self.timeout):
                    await stream.send_all(head + body if body else head)
                    response, reusable = await self._read_response(connection, method)
            except trio.TooSlowError:
                raise httpx.ReadTimeout(f"{method} {url} timed out") from None
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                    ssl.SSLError) as exc:
                raise httpx.ReadError(f"{method} {url}: {exc}") from exc
            finally:
                if reusable and not connection.buffer and not self._closed:
                    origin.idle.append((stream, time.monotonic()))
                else:
                    _close_quietly(stream)
        return response

    async def _read_response(self, connection: _Connection, method: str
                             ) -> tuple[httpx.Response, bool]:
        while True:
            status_line, *lines = (await connection.read_until(b"\r\n\r\n")
                                   ).decode("latin-1").split("\r\n")
            version, _, rest = status_line.partition(" ")
            code_text = rest[:3]
            if not version.startswith("HTTP/1.") or not code_text.isdigit():
                raise httpx.RemoteProtocolError(f"Malformed status line {status_line!r}.")
            status = int(code_text)
            header_pairs: list[tuple[str, str]] = []
            for line in lines:
                name, sep, value = line.partition(":")
                if not sep:
                    raise httpx.RemoteProtocolError(f"Malformed header {line!r}.")
                header_pairs.append((name.strip(), value.strip()))
            if 100 <= status < 200:
                continue  # an interim answer (100 Continue): the real one follows
            break
        lowered = {name.lower(): value for name, value in header_pairs}
        connection_header = lowered.get("connection", "").lower()
        keep = ("close" not in connection_header if version == "HTTP/1.1"
                else "keep-alive" in connection_header)
        if method == "HEAD" or status in (204, 304):
            content = b""
        elif "chunked" in lowered.get("transfer-encoding", "").lower():
            content = await _read_chunked(connection)
        elif "content-length" in lowered:
            content = await connection.read_exactly(int(lowered["content-length"]))
        else:
            content = await connection.read_to_end()
            keep = False
        # The header block as sent, minus framing headers httpx would act on again.
        kept = [(n, v) for n, v in header_pairs
                if n.lower() not in ("transfer-encoding", "content-encoding")]
        return httpx.Response(status, headers=kept, content=content), keep

    async def aclose(self) -> None:
        """Close every idle connection; the pool takes no more requests."""
        self._closed = True
        for origin in self._origins.values():
            while origin.idle:
                stream, _ = origin.idle.pop()
                _close_quietly(stream)


async def _read_chunked(connection: _Connection) -> bytes:
    body = bytearray()
    while True:
        size_line = (await connection.read_until(b"\r\n")).split(b";", 1)[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError:
            raise httpx.RemoteProtocolError(f"Malformed chunk size {size_line!r}.") from None
        if size == 0:
            while await connection.read_until(b"\r\n"):  # trailers, up to the empty line
                pass
            return bytes(body)
        body += await connection.read_exactly(size)
        await connection.read_until(b"\r\n")


def _close_quietly(stream: trio.abc.Stream) -> None:
    sock = _socket_of(stream)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.close()


__all__ = ["Http11Pool"]
