"""A lean HTTP/1.1 client on trio for the worker's venue calls: kept-alive pool, TLS.

httpx on trio spends about a millisecond of CPU per request in its own layers (request
models, httpcore, anyio), and h11's event machinery, which this pool used until issue 48,
another ~70 µs (a state machine stepped per event, an object per event, every field
validated and normalised). The copy engine sends a fan-out's orders and every target's
backstop polls from one Trio loop, so that per-request cost becomes latency and a CPU
ceiling. This module writes a request as one ``bytes`` (the origin's constant fields
prepared once, each distinct caller field checked once and remembered as its line) and
reads the answer with a minimal HTTP/1.1 reader: the status line and fields, the body by
``Content-Length``, chunked, or to the end of the connection, and whether the connection
may carry another request (HTTP/1.1 without ``Connection: close``, nothing left over).

It raises httpx's exception types, so ``venue.http.AsyncTransport`` maps errors and retries
exactly as it does for httpx; ``fetch`` answers an ``Http11Response`` (status, fields, body:
what the runner reads of an answer) and ``request`` the equivalent ``httpx.Response``.
``Http11Transport`` puts the pool behind httpx's transport interface, so an
``httpx.AsyncClient`` can carry it (httpx then follows redirects and decodes compressed
bodies); it does not do proxies (``venue.http`` chooses httpx's own transport when a proxy
is configured).

The path to the write is kept free of scheduler trips: a free connection slot is taken
without a checkpoint, so a fan-out's orders all go out in the loop's first pass over them.
"""

from __future__ import annotations

import contextlib
import re
import select
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import trio

MAX_HEADER_BYTES = 64 * 1024
_READ = 65536
# Framing headers httpx would act on again if they stayed on the decoded response.
_DROPPED = (b"transfer-encoding", b"content-encoding")
# Checked fields and split URLs remembered: most are per-origin or per-copier constants,
# but a signature is new on every order, so a memo is emptied when it reaches this size.
_MEMO_SIZE = 1024
# RFC 9110's token and field-value (h11's own grammar: no leading or trailing whitespace,
# no control characters but tab; obs-text allowed), and a request target without spaces.
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_TARGET = re.compile(rb"[^\x00\s]+")
_STATUS = re.compile(rb"HTTP/(\d)\.(\d) ([0-9]{3})(?: [^\r\n]*)?")
_BODILESS = (204, 304)
_FRAMING = (b"content-length", b"transfer-encoding")  # a request's: the pool writes its own


class _Fields:
    """An answer's header fields as they came, read by name (case-insensitive) like httpx's."""

    __slots__ = ("_named", "raw")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.raw = raw
        self._named: dict[str, str] | None = None

    def get(self, name: str, default: str | None = None) -> str | None:
        """The field's value (repeated fields joined with ", ", as httpx does), or default."""
        named = self._named
        if named is None:
            named = self._named = {}
            for key, value in self.raw:
                text, seen = key.decode("latin-1").lower(), value.decode("latin-1")
                named[text] = f"{named[text]}, {seen}" if text in named else seen
        return named.get(name.lower(), default)

    def raw_items(self) -> list[tuple[bytes, bytes]]:
        """(name, value) pairs as the server wrote them."""
        return list(self.raw)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Http11Response:
    """One answer as the pool read it: status, header fields and the (de-chunked) body.

    What ``venue.http``'s runner reads of an answer (``status_code``, ``headers.get``,
    ``content``, ``text``), so the fast path needs no ``httpx.Response``.
    """

    status_code: int
    headers: _Fields
    content: bytes

    @property
    def text(self) -> str:
        """The body decoded as httpx decodes it: the Content-Type's charset, else UTF-8."""
        kind = self.headers.get("content-type") or ""
        found = _CHARSET.search(kind)
        try:
            return self.content.decode(found.group(1) if found else "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")

    def to_httpx(self) -> httpx.Response:
        """The same answer as an ``httpx.Response`` (body already de-chunked)."""
        kept = [(name, value) for name, value in self.headers.raw
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
    µs of the worker's loop per answer, about ten times the rest of the conversion. The body
    is already whole and decoded, so it is set as read, with the ``Content-Length``
    ``content=`` adds; this reaches httpx's private ``_content`` (``_choose_reader`` checks
    that the result reads the same).
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


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("ascii")


class _Lines:
    """Request header lines, each distinct (name, value) checked once and kept as its bytes."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[tuple[str | bytes, str | bytes], tuple[bytes, bytes]] = {}

    def line(self, pair: tuple[str | bytes, str | bytes]) -> tuple[bytes, bytes]:
        """(the field's lower-case name, its ``Name: value\\r\\n`` line); raises
        httpx.LocalProtocolError for a name or value HTTP does not allow."""
        known = self._known.get(pair)
        if known is None:
            try:
                name, value = _bytes(pair[0]), _bytes(pair[1])
            except UnicodeEncodeError as exc:
                raise httpx.LocalProtocolError(f"header field {pair[0]!r}: {exc}") from None
            if not _TOKEN.fullmatch(name):
                raise httpx.LocalProtocolError(f"illegal header name {name!r}")
            if not _VALUE.fullmatch(value):
                raise httpx.LocalProtocolError(f"illegal header value {value!r}")
            known = (name.lower(), name + b": " + value + b"\r\n")
            if len(self._known) >= _MEMO_SIZE:
                self._known.clear()
            self._known[pair] = known
        return known

    def head(self, method: str, target: bytes, prefix: bytes,
             fields: Iterable[tuple[str | bytes, str | bytes]], body: bytes | None) -> bytes:
        """The request's head: request line, ``prefix`` (constant lines), the fields, the
        body's ``Content-Length`` (one given must match the body; bodies are never chunked)."""
        parts = [method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n", prefix]
        length: bytes | None = None
        for pair in fields:
            name, line = self.line(pair)
            if name == b"content-length":
                given = line[line.index(b":") + 2:-2]
                if length is not None and given != length:
                    raise httpx.LocalProtocolError("conflicting Content-Length fields")
                if not given.isdigit() or int(given) != len(body or b""):
                    raise httpx.LocalProtocolError(
                        f"Content-Length {given!r} does not match the body's "
                        f"{len(body or b'')} bytes")
                length = given
                continue
            if name == b"transfer-encoding":
                raise httpx.LocalProtocolError("request bodies are sent whole, not chunked")
            if name != b"host" or not prefix.startswith(b"Host:"):
                parts.append(line)
        if length is not None or body is not None or method in _WITH_BODY:
            parts.append(b"Content-Length: %d\r\n" % len(body or b""))
        parts.append(b"\r\n")
        if body:
            parts.append(body)
        return b"".join(parts)


_WITH_BODY = ("POST", "PUT", "PATCH", "DELETE")


@dataclass
class _Origin:
    """Idle connections to one (scheme, host, port), the cap on open ones, its fixed lines."""

    scheme: str
    host: str
    port: int
    limit: trio.Semaphore
    host_line: bytes  # "Host: ...": fetch's; send_fields' callers give their own
    prefix: bytes  # Host and User-Agent: what fetch writes on every request
    idle: deque[tuple[_Connection, float]] = field(default_factory=deque)


class _Connection:
    """One open stream, the bytes read past the last answer, and whether it may be reused."""

    __slots__ = ("buffer", "reusable", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.reusable = False

    async def _more(self) -> None:
        data = await self.stream.receive_some(_READ)
        if not data:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        self.buffer += data

    async def exchange(self, data: bytes, head_only: bool) -> Http11Response:
        """Write the request, read its answer; ``reusable`` says if another may follow."""
        self.reusable = False
        await self.stream.send_all(data)
        buffer = self.buffer
        while True:  # informational answers (100 Continue) first: the real one follows
            end = buffer.find(b"\r\n\r\n")
            while end < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise httpx.RemoteProtocolError("the answer's head is too long")
                await self._more()
                end = buffer.find(b"\r\n\r\n")
            status, fields, keep = _head(bytes(buffer[:end]))
            del buffer[:end + 4]
            if not 100 <= status < 200:
                break
            if status == 101:
                raise httpx.RemoteProtocolError("the server switched protocols")
        framing = _framing(fields)
        if head_only or status in _BODILESS:
            content = b""
        elif framing == b"chunked":
            content = await self._chunked()
        elif framing is not None:
            length = int(framing)
            while len(buffer) < length:
                await self._more()
            content = bytes(buffer[:length])
            del buffer[:length]
        else:  # neither: the body ends with the connection
            while data := await self.stream.receive_some(_READ):
                buffer += data
            content, keep = bytes(buffer), False
            buffer.clear()
        # Bytes beyond the answer were never asked for: the connection is not trusted again.
        self.reusable = keep and not buffer
        return Http11Response(status, _Fields(fields), content)

    async def _chunked(self) -> bytes:
        buffer, parts = self.buffer, []
        while True:
            end = buffer.find(b"\r\n")
            while end < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise httpx.RemoteProtocolError("a chunk's size line is too long")
                await self._more()
                end = buffer.find(b"\r\n")
            size_text = bytes(buffer[:end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise httpx.RemoteProtocolError(f"bad chunk size {size_text!r}") from None
            if size < 0 or not size_text.isalnum():
                raise httpx.RemoteProtocolError(f"bad chunk size {size_text!r}")
            del buffer[:end + 2]
            if size == 0:  # trailer fields (ignored) up to the blank line
                while not buffer.startswith(b"\r\n"):
                    end = buffer.find(b"\r\n\r\n")
                    if end >= 0:
                        del buffer[:end + 2]
                        continue
                    if len(buffer) > MAX_HEADER_BYTES:
                        raise httpx.RemoteProtocolError("the answer's trailer is too long")
                    await self._more()
                del buffer[:2]
                return b"".join(parts)
            while len(buffer) < size + 2:
                await self._more()
            if buffer[size:size + 2] != b"\r\n":
                raise httpx.RemoteProtocolError("a chunk does not end with CRLF")
            parts.append(bytes(buffer[:size]))
            del buffer[:size + 2]


def _head(head: bytes) -> tuple[int, list[tuple[bytes, bytes]], bool]:
    """(status, fields, keep-alive) of an answer's head (without its blank line)."""
    lines = head.split(b"\r\n")
    matched = _STATUS.fullmatch(lines[0])
    if matched is None:
        raise httpx.RemoteProtocolError(f"illegal status line {lines[0][:100]!r}")
    fields: list[tuple[bytes, bytes]] = []
    keep = (matched.group(1), matched.group(2)) >= (b"1", b"1")  # HTTP/1.0: one request
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):  # an obsolete line folding: the value continues
            if not fields:
                raise httpx.RemoteProtocolError("the answer's head starts with a folded line")
            name, value = fields[-1]
            fields[-1] = (name, (value + b" " + line.strip()).strip())
            continue
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise httpx.RemoteProtocolError(f"illegal header line {line[:100]!r}")
        value = value.strip(b" \t")
        fields.append((name, value))
        if keep and name.lower() == b"connection" and b"close" in value.lower():
            keep = not any(token.strip() == b"close" for token in value.lower().split(b","))
    return int(matched.group(3)), fields, keep


def _framing(fields: Sequence[tuple[bytes, bytes]]) -> bytes | None:
    """b"chunked", the body's length, or None (the body ends with the connection)."""
    length: bytes | None = None
    chunked = False
    for name, value in fields:
        lowered = name.lower()
        if lowered == b"transfer-encoding":
            if value.lower().rsplit(b",", 1)[-1].strip() != b"chunked":
                raise httpx.RemoteProtocolError(f"unsupported Transfer-Encoding {value!r}")
            chunked = True
        elif lowered == b"content-length":
            for part in value.split(b","):
                part = part.strip()
                if not part.isdigit() or (length is not None and part != length):
                    raise httpx.RemoteProtocolError(f"bad Content-Length {value!r}")
                length = part
    if chunked:
        if length is not None:
            raise httpx.RemoteProtocolError("both Content-Length and chunked")
        return b"chunked"
    return length


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
        self._routes: dict[str, tuple[_Origin, bytes]] = {}  # URL -> its origin, target
        self._lines = _Lines()
        self._user_agent = self._lines.line(("User-Agent", user_agent))[1]
        self._closed = False

    def _route(self, url: str) -> tuple[_Origin, bytes]:
        route = self._routes.get(url)
        if route is None:
            parts = urlsplit(url)
            scheme = parts.scheme or "http"
            host = parts.hostname or ""
            port = parts.port or (443 if scheme == "https" else 80)
            target = ((parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                      ).encode("ascii")
            if not _TARGET.fullmatch(target):
                raise httpx.LocalProtocolError(f"illegal request target {target!r}")
            origin = self._origins.get((scheme, host, port))
            if origin is None:
                default_port = port == (443 if scheme == "https" else 80)
                host_line = self._lines.line(
                    ("Host", host if default_port else f"{host}:{port}"))[1]
                origin = self._origins[(scheme, host, port)] = _Origin(
                    scheme, host, port, trio.Semaphore(self.max_connections), host_line,
                    host_line + self._user_agent)
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
        """``request``, answering the status, fields and body without httpx's model."""
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed")
        # A cancelled caller stops here, as at the slot's checkpoint before (no yield when not).
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            origin, target = self._route(url)
            data = self._lines.head(method, target, origin.prefix, headers.items(), body)
        except httpx.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(f"{method} {url}: {exc}") from None
        return await self._exchange(method, url, origin, data)

    async def send_fields(self, method: str, url: str, fields: Sequence[tuple[bytes, bytes]],
                          body: bytes | None = None) -> Http11Response:
        """``fetch`` with every header field given (Host included), as httpx builds a
        request for a transport; the body is sent whole with its ``Content-Length``."""
        if self._closed:
            raise httpx.ConnectError("the connection pool is closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            origin, target = self._route(url)
            data = self._lines.head(method, target, b"", fields, body)
        except httpx.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(f"{method} {url}: {exc}") from None
        return await self._exchange(method, url, origin, data)

    async def _exchange(self, method: str, url: str, origin: _Origin, data: bytes
                        ) -> Http11Response:
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
                    response = await connection.exchange(data, method == "HEAD")
            except httpx.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(f"{method} {url}: {exc}") from exc
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                    ssl.SSLError) as exc:
                raise httpx.ReadError(f"{method} {url}: {exc}") from exc
            finally:
                if connection.reusable and not self._closed:
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
        # The body is whole here, so it goes with its length, never chunked.
        fields = [(name, value) for name, value in request.headers.raw
                  if name.lower() not in _FRAMING]
        answer = await self.pool.send_fields(request.method, str(request.url), fields,
                                             body or None)
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
