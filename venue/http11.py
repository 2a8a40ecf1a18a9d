"""A lean HTTP/1.1 client on trio for the worker's venue calls: kept-alive pool, TLS.

httpx on trio spends about a millisecond of CPU per request in its own layers (request
models, httpcore, anyio). The copy engine sends a fan-out's orders and every target's
backstop polls from one Trio loop, so that per-request cost becomes latency and a CPU
ceiling. This client keeps one ``h11.Connection`` per pooled socket: h11 does the HTTP/1.1
framing (validating and writing the request, parsing status, headers, ``Content-Length`` or
chunked bodies, deciding whether the connection may carry another request); this module
only moves bytes, pools connections per origin and applies timeouts. It raises httpx's
exception types, so ``venue.http.AsyncTransport`` maps errors and retries exactly as it does
for httpx; ``fetch`` answers a plain ``Http11Response`` (status, headers, body) and
``request`` the equivalent ``httpx.Response``. ``Http11Transport`` puts the pool behind
httpx's transport interface, so an ``httpx.AsyncClient`` can carry it (httpx then follows
redirects and decodes compressed bodies); it does not do proxies (``venue.http`` chooses
httpx's own transport when a proxy is configured).

The path to the write is kept free of scheduler trips: a free connection slot is taken
without a checkpoint, and header fields h11 already validated (the origin's, a copier's API
key and passphrase) are not validated again, so a fan-out's orders all go out in the loop's
first pass over them. That reuse reaches h11's private header helpers; where they are
missing or changed, h11.Request validates every field every time (``FIELD_CHECKS`` says
which), writing the same bytes.
"""

from __future__ import annotations

import contextlib
import select
import ssl
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import h11
import httpx
import trio

try:  # h11's own header normalisation and validated-headers type (private; h11 is pinned):
    # fields it validated once are reused as they are, not checked again on every request.
    from h11._headers import Headers, normalize_and_validate
except ImportError:  # an h11 without them: h11.Request validates every field every time
    Headers = normalize_and_validate = None  # type: ignore[assignment,misc]

MAX_HEADER_BYTES = 64 * 1024
_READ = 65536
# Framing headers httpx would act on again if they stayed on the decoded response.
_DROPPED = (b"transfer-encoding", b"content-encoding")
# Fields h11 checks against one another (duplicate or conflicting lengths, chunked + length).
_FRAMING = (b"content-length", b"transfer-encoding")
# Validated fields and split URLs remembered: most are per-origin or per-copier constants,
# but a signature is new on every order, so a memo is emptied when it reaches this size.
_MEMO_SIZE = 1024
_END = h11.EndOfMessage()  # an immutable event: one serves every request


@dataclass(frozen=True, slots=True)
class Http11Response:
    """One answer as h11 read it: status, header fields (h11's ``Headers``) and the body."""

    status_code: int
    headers: Headers
    content: bytes

    def to_httpx(self) -> httpx.Response:
        """The same answer as an ``httpx.Response`` (body already de-chunked)."""
        kept = [(name, value) for name, value in self.headers.raw_items()
                if name.lower() not in _DROPPED]
        return _as_read(self.status_code, kept, self.content)


def _read_publicly(status: int, headers: list[tuple[bytes, bytes]], content: bytes
                   ) -> httpx.Response:
    """A read ``httpx.Response`` of a body in hand, built the public way (``content=``)."""
    return httpx.Response(status, headers=headers, content=content)


def _read_preset(status: int, headers: list[tuple[bytes, bytes]], content: bytes
                 ) -> httpx.Response:
    """``_read_publicly``'s answer without reading the body through httpx's stream machinery.

    ``content=`` runs the body through httpx's decoders and chunker (``Response.read``): ~25
    µs of the worker's loop per answer (every order's, every poll's), about ten times the
    rest of the conversion. The body is already whole and decoded, so it is set as read,
    with the ``Content-Length`` ``content=`` adds; this reaches httpx's private ``_content``
    (``_choose_reader`` checks that the result reads the same).
    """
    if content and not any(name.lower() == b"content-length" for name, _ in headers):
        headers.append((b"Content-Length", str(len(content)).encode()))
    response = httpx.Response(status, headers=headers, stream=httpx.ByteStream(content))
    response._content = content
    response.is_stream_consumed = response.is_closed = True
    return response


def _observed(response: httpx.Response) -> tuple[object, ...]:
    """What a reader of a read answer can see of it."""
    return (response.status_code, response.headers.multi_items(), response.content,
            response.text, response.is_stream_consumed, response.is_closed,
            response.num_bytes_downloaded, response.read(), list(response.iter_bytes()))


def _choose_reader() -> tuple[Callable[[int, list[tuple[bytes, bytes]], bytes],
                                        httpx.Response], str]:
    """``_read_preset`` when this httpx's answers built that way read as the public ones."""
    probes = [(200, [(b"Content-Type", b"application/json"), (b"Content-Length", b"2")],
               b"{}"), (404, [(b"X-Probe", b"1")], b"missing"), (204, [], b"")]
    try:
        if all(_observed(_read_preset(status, list(headers), body))
               == _observed(_read_publicly(status, list(headers), body))
               for status, headers, body in probes):
            return _read_preset, "preset"
    except (AttributeError, TypeError, ValueError, httpx.HTTPError):
        pass  # a changed httpx: fall through to the public path
    return _read_publicly, "httpx"


_as_read, ANSWER_READS = _choose_reader()


class _CheckedFields:
    """Request header fields through h11's validation, each distinct field once."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], tuple[bytes, bytes, bytes]] = {}

    def headers(self, fields: Sequence[tuple[str, str]]) -> Headers:
        """h11 ``Headers`` of ``fields``; raises h11.LocalProtocolError on an invalid one."""
        known = self._known
        items: list[tuple[bytes, bytes, bytes]] = []
        framing = 0
        for pair in fields:
            item = known.get(pair)
            if item is None:
                # Alone, a field's validation and normal form depend on nothing else.
                (item,) = normalize_and_validate([pair])._full_items
                if len(known) >= _MEMO_SIZE:
                    known.clear()
                known[pair] = item
            framing += item[1] in _FRAMING
            items.append(item)
        if framing > 1:  # h11 checks these against one another: let it see them all at once
            return normalize_and_validate(list(fields))
        return Headers(items)


class _PublicFields:
    """``_CheckedFields``' stand-in where h11's private helpers are missing or changed: the
    fields go to ``h11.Request`` as they are, which validates all of them on every request."""

    __slots__ = ()

    def headers(self, fields: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """``fields`` for ``h11.Request`` to validate (it raises h11.LocalProtocolError)."""
        return list(fields)


def _choose_fields() -> tuple[type[_CheckedFields] | type[_PublicFields], str]:
    """``_CheckedFields`` when h11's private helpers work as it expects, else the public path."""
    if normalize_and_validate is not None:
        probe = [("Host", "example.org"), ("X-Probe", "1"), ("Content-Length", "2")]
        try:
            if _CheckedFields().headers(probe).raw_items() == (
                    normalize_and_validate(probe).raw_items()):
                return _CheckedFields, "memo"
        except (AttributeError, TypeError, ValueError):
            pass  # a changed h11: fall through to the public path
    return _PublicFields, "h11"


_Fields, FIELD_CHECKS = _choose_fields()


@dataclass
class _Origin:
    """Idle connections to one (scheme, host, port), the cap on open ones, its Host field."""

    scheme: str
    host: str
    port: int
    limit: trio.Semaphore
    host_field: tuple[str, str]
    idle: deque[tuple[_Connection, float]] = field(default_factory=deque)


class _Connection:
    """One open stream and the h11 state machine that frames what crosses it."""

    __slots__ = ("h11", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(our_role=h11.CLIENT,
                                  max_incomplete_event_size=MAX_HEADER_BYTES)

    def reusable(self) -> bool:
        """True when both sides finished the exchange cleanly and nothing extra arrived."""
        conn = self.h11
        return (conn.our_state is h11.DONE and conn.their_state is h11.DONE
                and conn.trailing_data == (b"", False))

    async def exchange(self, request: h11.Request, body: bytes | None) -> Http11Response:
        conn = self.h11
        data = conn.send(request)
        if body:
            data += conn.send(h11.Data(data=body))
        data += conn.send(_END)
        await self.stream.send_all(data)
        head: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await self.stream.receive_some(_READ))  # b"" = EOF
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                chunks.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.")
            # InformationalResponse (100 Continue): the real answer follows.
        assert head is not None  # h11 yields a Response before any EndOfMessage
        return Http11Response(head.status_code, head.headers, b"".join(chunks))


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
        self._routes: dict[str, tuple[_Origin, str]] = {}  # URL -> its origin, request target
        self._fields = _Fields()
        self._closed = False

    def _route(self, url: str) -> tuple[_Origin, str]:
        route = self._routes.get(url)
        if route is None:
            parts = urlsplit(url)
            scheme = parts.scheme or "http"
            host = parts.hostname or ""
            port = parts.port or (443 if scheme == "https" else 80)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            origin = self._origins.get((scheme, host, port))
            if origin is None:
                default_port = port == (443 if scheme == "https" else 80)
                origin = self._origins[(scheme, host, port)] = _Origin(
                    scheme, host, port, trio.Semaphore(self.max_connections),
                    ("Host", host if default_port else f"{host}:{port}"))
            if len(self._routes) >= _MEMO_SIZE:
                self._routes.clear()
            route = self._routes[url] = (origin, target)
        return route

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

    def _take_idle(self, origin: _Origin) -> _Connection | None:
        now = time.monotonic()
        while origin.idle:
            connection, since = origin.idle.pop()
            if now - since < self.keepalive_expiry and _still_open(connection.stream):
                return connection
            _close_quietly(connection.stream)
        return None

    async def request(self, method: str, url: str, headers: Mapping[str, str],
                      body: bytes | None = None) -> httpx.Response:
        """Send one request and read the whole answer (raises httpx's exception types)."""
        return (await self.fetch(method, url, headers, body)).to_httpx()

    async def fetch(self, method: str, url: str, headers: Mapping[str, str],
                    body: bytes | None = None) -> Http11Response:
        """``request``, answering h11's status, headers and body without httpx's model."""
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed")
        # A cancelled caller stops here, as at the slot's checkpoint before (no yield when not).
        await trio.lowlevel.checkpoint_if_cancelled()
        origin, target = self._route(url)
        fields = [origin.host_field, ("User-Agent", self.user_agent), *headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH", "DELETE"):
            fields.append(("Content-Length", str(len(body or b""))))
        return await self._exchange(method, url, origin, target, fields, body)

    async def send_fields(self, method: str, url: str, fields: Sequence[tuple[bytes, bytes]],
                          body: bytes | None = None) -> Http11Response:
        """``fetch`` with every header field given (Host and framing included), as httpx
        builds a request for a transport."""
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        origin, target = self._route(url)
        return await self._exchange(method, url, origin, target, fields, body)

    async def _exchange(self, method: str, url: str, origin: _Origin, target: str,
                        fields: Sequence[tuple[str, str]] | Sequence[tuple[bytes, bytes]],
                        body: bytes | None) -> Http11Response:
        try:
            request = h11.Request(method=method, target=target,
                                  headers=self._fields.headers(fields))
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(f"{method} {url}: {exc}") from exc
        limit = origin.limit
        try:
            limit.acquire_nowait()  # a free slot: no trip through the scheduler before the write
        except trio.WouldBlock:
            await limit.acquire()
        try:
            connection = self._take_idle(origin)
            if connection is None:
                connection = _Connection(
                    await self._connect(origin.scheme, origin.host, origin.port))
            try:
                with trio.move_on_after(self.timeout) as deadline:
                    response = await connection.exchange(request, body)
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(f"{method} {url}: {exc}") from exc
            except h11.LocalProtocolError as exc:
                raise httpx.LocalProtocolError(f"{method} {url}: {exc}") from exc
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                    ssl.SSLError) as exc:
                raise httpx.ReadError(f"{method} {url}: {exc}") from exc
            finally:
                if connection.reusable() and not self._closed:
                    connection.h11.start_next_cycle()
                    origin.idle.append((connection, time.monotonic()))
                else:
                    _close_quietly(connection.stream)
        finally:
            limit.release()
        if deadline.cancelled_caught:
            raise httpx.ReadTimeout(f"{method} {url} timed out")
        return response

    async def aclose(self) -> None:
        """Close every idle connection; the pool takes no more requests."""
        self._closed = True
        for origin in self._origins.values():
            while origin.idle:
                connection, _ = origin.idle.pop()
                _close_quietly(connection.stream)


class Http11Transport(httpx.AsyncBaseTransport):
    """The lean pool behind httpx's transport interface: ``httpx.AsyncClient(transport=...)``.

    httpx builds the request (its default headers included) and reads the answer through
    its own decoders; this carries it over the pool. Timeouts are the pool's.
    """

    def __init__(self, pool: Http11Pool) -> None:
        self.pool = pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` over a pooled connection; the answer's body is read whole."""
        body = await request.aread()
        answer = await self.pool.send_fields(request.method, str(request.url),
                                             request.headers.raw, body or None)
        # The answer's fields as they came (httpx's own transport keeps the framing ones too).
        return httpx.Response(answer.status_code, headers=answer.headers.raw_items(),
                              stream=httpx.ByteStream(answer.content),
                              extensions={"http_version": b"HTTP/1.1"})

    async def aclose(self) -> None:
        """Close the pool's connections."""
        await self.pool.aclose()


def _close_quietly(stream: trio.abc.Stream) -> None:
    sock = _socket_of(stream)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.close()


__all__ = ["Http11Pool", "Http11Response", "Http11Transport"]
