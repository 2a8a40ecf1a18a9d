"""The lean HTTP/1.1 pool (venue/http11.py) against a real local server over TCP.

The server is Python's own http.server speaking HTTP/1.1 (kept-alive connections,
Content-Length and chunked answers), or a raw socket answering scripted bytes (the framings
and faults http.server does not write); the client side is what the worker runs under trio.
h11 (httpx's own HTTP/1.1 library) is the reference for the bytes a request is written as.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import h11
import httpx
import pytest
import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.fresh_interpreter import run_python
from tests.local_http import serving
from venue.client import AsyncVenueClient
from venue.config import VenueConfig
from venue.errors import VenueNotFound, VenueRejected, VenueTimeout, VenueUnavailable
from venue.http import AsyncTransport, Call, VenueRequest, lean_transport
from venue.http11 import (
    _MEMO_SIZE,
    ANSWER_READS,
    Http11Pool,
    Http11Response,
    Http11Transport,
    _Fields,
    _Lines,
    _observed,
)
from venue.parse.values import MalformedResponse


class Answers(BaseHTTPRequestHandler):
    """``json`` (Content-Length), ``chunked``, ``bye`` (then closes), ``slow``, ``hold``
    (counts requests in progress), ``linger`` (closes after a keep-alive answer), a status
    code (a JSON error with ``Retry-After: 7``), ``garbled`` (200, not JSON), ``gzip``
    (a gzip-encoded JSON body); POST echoes."""

    protocol_version = "HTTP/1.1"
    ports: list[int] = []
    lock = threading.Lock()
    in_progress = 0
    most_in_progress = 0

    def _answer(self, status: int, body: bytes, *, chunked: bool = False,
                close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        if chunked:
            for start in range(0, len(body), 7):
                part = body[start:start + 7]
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)

    def do_GET(self) -> None:
        self.ports.append(self.client_address[1])
        name = self.path.split("?")[0].rsplit("/", 1)[-1]  # any prefix (/clob/...) works
        if name == "slow":
            threading.Event().wait(1.0)
        if name == "hold":
            self._hold()
        if name.isdigit():
            self.send_response(int(name))
            self.send_header("Retry-After", "7")
            body = json.dumps({"error": f"status {name}"}).encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if name == "garbled":
            self._answer(200, b"<html>not json")
            return
        if name == "gzip":
            body = gzip.compress(json.dumps({"path": self.path}).encode())
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        body = json.dumps({"path": self.path, "n": "12.5"}).encode()
        self._answer(200, body, chunked=name == "chunked", close=name == "bye")
        if name == "linger":
            self.close_connection = True  # the answer said keep-alive; the server closes anyway

    def _hold(self) -> None:
        cls = type(self)
        with cls.lock:
            cls.in_progress += 1
            cls.most_in_progress = max(cls.most_in_progress, cls.in_progress)
        threading.Event().wait(0.1)
        with cls.lock:
            cls.in_progress -= 1

    def do_POST(self) -> None:
        self.ports.append(self.client_address[1])
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(200, json.dumps({"got": body.decode(),
                                      "key": self.headers.get("POLY_API_KEY")}).encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    Answers.ports = []
    Answers.in_progress = Answers.most_in_progress = 0
    with serving(Answers) as url:
        yield url


class TlsServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` over TLS, each handshake in its connection's own thread."""

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)

    def get_request(self) -> tuple[ssl.SSLSocket, Any]:
        conn, address = self.socket.accept()
        return self.context.wrap_socket(conn, server_side=True,
                                        do_handshake_on_connect=False), address

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            request.do_handshake()
        except OSError:  # ssl.SSLError too: a client that refused the certificate
            return
        super().finish_request(request, client_address)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    """The same server over TLS with a fresh self-signed certificate for localhost, and a
    client context that trusts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    server = TlsServer(("127.0.0.1", 0), Answers)
    server.context.load_cert_chain(cert_file, key_file)
    server.daemon_threads = True
    Answers.ports = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield (f"https://localhost:{server.server_address[1]}",
               ssl.create_default_context(cafile=str(cert_file)))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _pool(**overrides: float) -> Http11Pool:
    # Generous unless a test is about a timeout (it passes its own): a loaded machine can
    # keep this process off the CPU for a second between a loopback connect and its answer.
    options = {"timeout": 30.0, "connect_timeout": 30.0, "max_connections": 4, **overrides}
    return Http11Pool(**options)  # type: ignore[arg-type]


def test_requests_reuse_one_connection_and_read_both_framings(server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        first = await pool.request("GET", f"{server_url}/json?a=1", {})
        chunked = await pool.request("GET", f"{server_url}/chunked", {})
        posted = await pool.request("POST", f"{server_url}/echo",
                                    {"POLY_API_KEY": "k-1"}, b'{"x":1}')
        await pool.aclose()
        assert first.status_code == 200 and first.json()["path"] == "/json?a=1"
        assert json.loads(chunked.content, parse_float=Decimal)["n"] == "12.5"
        assert "transfer-encoding" not in chunked.headers  # already de-chunked
        assert posted.json() == {"got": '{"x":1}', "key": "k-1"}

    trio.run(main)
    assert len(Answers.ports) == 3 and len(set(Answers.ports)) == 1


def test_a_connection_the_server_closed_is_not_reused(server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        await pool.request("GET", f"{server_url}/bye", {})
        await pool.request("GET", f"{server_url}/json", {})  # after "Connection: close"
        await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()

    trio.run(main)
    assert Answers.ports[0] != Answers.ports[1] == Answers.ports[2]


def test_idle_connections_expire(server_url: str) -> None:
    async def main() -> None:
        pool = _pool(keepalive_expiry=0.05)
        await pool.request("GET", f"{server_url}/json", {})
        await trio.sleep(0.1)
        await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()

    trio.run(main)
    assert len(set(Answers.ports)) == 2


def test_timeouts_and_refused_connections_raise_httpx_errors(server_url: str) -> None:
    async def main() -> None:
        pool = _pool(timeout=0.2)
        with pytest.raises(httpx.ReadTimeout):
            await pool.request("GET", f"{server_url}/slow", {})
        with pytest.raises(httpx.ConnectError):
            await pool.request("GET", "http://127.0.0.1:9/json", {})
        await pool.aclose()

    trio.run(main)


def test_the_async_client_under_trio_uses_it_and_maps_errors(server_url: str) -> None:
    config = VenueConfig.for_sandbox(server_url, timeout=0.2, max_retries=0)

    async def main() -> None:
        async with AsyncVenueClient(config) as client:
            assert client.transport._lean is not None
            assert (await client.transport.run(_call("/chunked")))["n"] == "12.5"
            with pytest.raises(VenueTimeout):
                await client.transport.run(_call("/slow"))
        down = VenueConfig.for_sandbox("http://127.0.0.1:9", timeout=0.2, max_retries=0)
        async with AsyncVenueClient(down) as client:
            with pytest.raises(VenueUnavailable):
                await client.transport.run(_call("/json"))

    trio.run(main)


def _call(path: str, headers: dict[str, str] | None = None) -> Call[object]:
    return Call(VenueRequest("clob", "GET", path, headers=headers or {}, retryable=False),
                lambda body: body)


def test_requests_over_tls_are_verified_and_reuse_one_connection(
        tls_server: tuple[str, ssl.SSLContext]) -> None:
    url, trusted = tls_server

    async def main() -> None:
        pool = Http11Pool(timeout=2, connect_timeout=2, max_connections=4, ssl_context=trusted)
        first = await pool.fetch("GET", f"{url}/chunked", {})
        posted = await pool.fetch("POST", f"{url}/echo", {"POLY_API_KEY": "k-1"}, b'{"x":1}')
        await pool.aclose()
        assert first.status_code == 200 and json.loads(first.content)["n"] == "12.5"
        assert json.loads(posted.content) == {"got": '{"x":1}', "key": "k-1"}
        untrusting = _pool(connect_timeout=2)  # the system's roots: the certificate is refused
        with pytest.raises(httpx.ConnectError) as refused:
            await untrusting.fetch("GET", f"{url}/json", {})
        await untrusting.aclose()
        causes = []
        cause: BaseException | None = refused.value
        while cause is not None:
            causes.append(cause)
            cause = cause.__cause__
        assert any(isinstance(c, ssl.SSLCertVerificationError) for c in causes)

    trio.run(main)
    assert len(Answers.ports) == 2 and len(set(Answers.ports)) == 1


def test_a_connection_the_server_closed_while_idle_is_not_reused(server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        first = await pool.request("GET", f"{server_url}/linger", {})
        await trio.sleep(0.1)  # the server's close (FIN) arrives while the connection idles
        second = await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()
        assert first.status_code == second.status_code == 200

    trio.run(main)
    assert len(Answers.ports) == 2 and Answers.ports[0] != Answers.ports[1]


def test_requests_beyond_the_connection_cap_wait_for_a_free_connection(server_url: str) -> None:
    answers: list[int] = []

    async def main() -> None:
        pool = _pool(max_connections=2)

        async def one() -> None:
            answers.append((await pool.fetch("GET", f"{server_url}/hold", {})).status_code)

        async with trio.open_nursery() as nursery:
            for _ in range(6):
                nursery.start_soon(one)
        await pool.aclose()

    trio.run(main)
    assert answers == [200] * 6
    assert Answers.most_in_progress == 2 and len(set(Answers.ports)) == 2


def test_a_cancelled_caller_sends_nothing_and_leaves_the_idle_connection(
        server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        await pool.request("GET", f"{server_url}/json", {})
        with trio.CancelScope() as scope:
            scope.cancel()
            await pool.request("GET", f"{server_url}/json?never", {})
        assert scope.cancelled_caught
        await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()

    trio.run(main)
    assert len(Answers.ports) == 2 and Answers.ports[0] == Answers.ports[1]


@pytest.mark.parametrize("headers", [
    {"POLY_API_KEY": "k-1\r\nX-Injected: 1"},  # a value that would forge a header
    {"POLY_API_KEY": " k-1"},  # leading whitespace
    {"Bad Name": "x"},
    {"Content-Length": "3"},  # conflicts with the body's length
    {"Transfer-Encoding": "gzip"},
])
def test_a_request_with_an_invalid_header_is_refused_every_time_and_never_sent(
        server_url: str, headers: dict[str, str]) -> None:
    async def main() -> None:
        pool = _pool()
        for _ in range(2):  # the second time too: refusals are not remembered as valid
            with pytest.raises(httpx.LocalProtocolError):
                await pool.request("POST", f"{server_url}/echo", headers, b'{"x":1}')
        valid = {"POLY_API_KEY": "k-1", "Content-Length": "7"}  # a matching length is fine
        posted = await pool.request("POST", f"{server_url}/echo", valid, b'{"x":1}')
        await pool.aclose()
        assert posted.json() == {"got": '{"x":1}', "key": "k-1"}

    trio.run(main)
    assert len(Answers.ports) == 1


def test_the_transport_refuses_an_invalid_header_as_venue_unavailable(server_url: str) -> None:
    config = VenueConfig.for_sandbox(server_url, timeout=0.5, max_retries=0)

    async def main() -> None:
        async with AsyncVenueClient(config) as client:
            assert client.transport._lean is not None
            with pytest.raises(VenueUnavailable, match="LocalProtocolError"):
                await client.transport.run(_call("/json", {"POLY_API_KEY": "k\nX: 1"}))

    trio.run(main)
    assert Answers.ports == []


FIELD_SETS = [
    [("Host", "example.org"), ("POLY_API_KEY", "k-1"), ("Content-Length", "7")],
    [("Host", "example.org"), ("Content-Length", "7"), ("content-length", "7")],
    [("Host", "example.org"), ("Content-Length", "7"), ("Content-Length", "8")],
    [("Host", "example.org"), ("Content-Length", "8")],
    [("Host", "example.org"), ("Transfer-Encoding", "Chunked"), ("Content-Length", "7")],
    [("Host", "example.org"), ("Transfer-Encoding", "chunked")],
    [("Host", "example.org"), ("X-Value", "a\x00b")],
    [("Host", "example.org"), ("X-Value", "trailing ")],
    [("Host", "example.org"), ("X-Value", "a\tb c")],
    [("Host", "example.org"), ("X Value", "x")],
    [("Host", "example.org"), ("X-Value", "caf\xe9")],
]
BODY = b'{"x":1}'


def h11_head(fields: list[tuple[str, str]]) -> tuple[bytes, frozenset[bytes]] | None:
    """What h11 writes for a POST of ``BODY`` with ``fields`` (its request line and its set
    of field lines), or None when it refuses them."""
    try:
        request = h11.Request(method="POST", target="/order", headers=fields)
        written = h11.Connection(our_role=h11.CLIENT).send(request)
    except (h11.LocalProtocolError, UnicodeEncodeError):
        return None
    line, *lines = written.split(b"\r\n")[:-2]
    return line, frozenset(lines)


@pytest.mark.parametrize("fields", FIELD_SETS)
def test_requests_are_written_as_h11_writes_them_or_refused(fields: list[tuple[str, str]]
                                                            ) -> None:
    """Every field set h11 writes is written with the same request line and field lines
    (Content-Length last), then the body; what h11 refuses is refused, every time (checked
    once, remembered as valid only). The pool is stricter only on framing it never sends:
    a chunked request body, a length that does not match the body."""
    lines = _Lines()
    given = any(name.lower() == "content-length" for name, _ in fields)
    expected = h11_head(fields if given else [*fields, ("Content-Length", "7")])
    framing = any(name.lower() == "transfer-encoding" for name, _ in fields) or any(
        name.lower() == "content-length" and value != "7" for name, value in fields)
    for _ in range(2):
        try:
            written = lines.head("POST", b"/order", b"", fields, BODY)
        except httpx.LocalProtocolError:
            assert expected is None or framing
            continue
        assert expected is not None and written.endswith(b"\r\n\r\n" + BODY)
        line, *rest = written[:-len(BODY)].split(b"\r\n")[:-2]
        assert (line, frozenset(rest)) == expected
        assert rest[-1] == b"Content-Length: 7" and len(rest) == len(set(rest))


def test_the_memo_of_checked_fields_stays_bounded() -> None:
    lines = _Lines()
    for n in range(3 * _MEMO_SIZE):  # a new signature on every request
        head = lines.head("GET", b"/", b"Host: x\r\n", [("POLY_SIGNATURE", f"sig-{n}")], None)
        assert head == f"GET / HTTP/1.1\r\nHost: x\r\nPOLY_SIGNATURE: sig-{n}\r\n\r\n".encode()
        assert len(lines._known) <= _MEMO_SIZE


async def _errors_read_as_httpx_reads_them(transport: AsyncTransport) -> None:
    """429 with its Retry-After, 504, 404, 400 with its body and a garbled 200, mapped."""
    with pytest.raises(VenueUnavailable) as limited:
        await transport.run(_call("/429"))
    assert limited.value.retry_after == 7
    with pytest.raises(VenueTimeout):
        await transport.run(_call("/504"))
    with pytest.raises(VenueNotFound, match="status 404"):
        await transport.run(_call("/404"))
    with pytest.raises(VenueRejected) as refused:
        await transport.run(_call("/400"))
    assert refused.value.status == 400 and refused.value.body == {"error": "status 400"}
    with pytest.raises(MalformedResponse):
        await transport.run(_call("/garbled"))


def test_the_lean_transport_reads_errors_and_their_retry_after_as_httpx_does(
        server_url: str) -> None:
    config = VenueConfig.for_sandbox(server_url, timeout=0.5, max_retries=0)

    async def main() -> None:
        async with AsyncVenueClient(config) as client:
            transport = client.transport
            assert transport._lean is not None
            success = await transport._send(_call("/json").request)
            # the lean pool carried it and the runner reads its answer as it is
            assert type(success) is Http11Response
            assert json.loads(success.content)["path"] == "/clob/json"
            await _errors_read_as_httpx_reads_them(transport)

    trio.run(main)


def test_an_httpx_client_over_the_transport_reads_answers_as_httpx_does(server_url: str) -> None:
    """Through ``httpx.AsyncClient(transport=Http11Transport(...))``: both framings, a POST,
    a gzip-encoded body decoded by httpx, httpx's errors; one kept-alive connection."""

    async def main() -> None:
        async with httpx.AsyncClient(transport=Http11Transport(_pool(timeout=0.2))) as client:
            first = await client.get(f"{server_url}/json", params={"a": "1"})
            chunked = await client.get(f"{server_url}/chunked")
            posted = await client.post(f"{server_url}/echo", content=b'{"x":1}',
                                       headers={"POLY_API_KEY": "k-1"})
            packed = await client.get(f"{server_url}/gzip")
            assert first.status_code == 200 and first.json()["path"] == "/json?a=1"
            assert first.http_version == "HTTP/1.1"
            assert json.loads(chunked.content, parse_float=Decimal)["n"] == "12.5"
            assert posted.json() == {"got": '{"x":1}', "key": "k-1"}
            assert packed.json() == {"path": "/gzip"}
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"{server_url}/slow")
            with pytest.raises(httpx.ConnectError):
                await client.get("http://127.0.0.1:9/json")

    trio.run(main)
    assert len(Answers.ports) == 5 and len(set(Answers.ports[:4])) == 1


def test_the_runner_reads_the_same_answers_through_httpx_over_the_transport(
        server_url: str) -> None:
    """An ``AsyncTransport`` given a client over the lean transport (no fast path) maps
    answers and errors as the fast path does, in httpx's model."""
    config = VenueConfig.for_sandbox(server_url, timeout=0.5, max_retries=0)

    async def main() -> None:
        client = httpx.AsyncClient(transport=Http11Transport(_pool()))
        transport = AsyncTransport(config, client)
        assert transport._lean is None
        success = await transport._send(_call("/json").request)
        assert isinstance(success, httpx.Response)
        assert (await transport.run(_call("/chunked")))["n"] == "12.5"
        await _errors_read_as_httpx_reads_them(transport)
        await transport.aclose()

    trio.run(main)
    assert len(set(Answers.ports)) == 1


def test_the_lean_pool_is_the_clients_transport_and_closes_with_it(server_url: str) -> None:
    """Under trio the runner's one httpx client carries the lean transport; the fast path
    and the client share its pool (one connection), and closing the client closes it."""
    config = VenueConfig.for_sandbox(server_url, timeout=0.5, max_retries=0)

    async def main() -> None:
        transport = AsyncTransport(config)
        pool = transport._lean
        assert pool is not None
        assert type(await transport._send(_call("/json").request)) is Http11Response
        through_httpx = await transport._client.get(f"{server_url}/clob/json")
        assert through_httpx.json()["path"] == "/clob/json"
        await transport.aclose()
        with pytest.raises(httpx.ConnectError, match="closed"):
            await pool.fetch("GET", f"{server_url}/json", {})

    trio.run(main)
    assert len(Answers.ports) == 2 and len(set(Answers.ports)) == 1


def test_httpx_carries_the_requests_where_the_lean_transport_does_not_apply(
        server_url: str) -> None:
    """Not under trio, with a proxy configured, or with ``lean_http`` off: httpx's own."""
    config = VenueConfig.for_sandbox(server_url, timeout=0.5, max_retries=0)
    assert lean_transport(config) is None  # no trio loop running here

    async def main() -> None:
        assert isinstance(lean_transport(config), Http11Transport)
        assert lean_transport(dataclasses.replace(config, lean_http=False)) is None
        # config.load sets behind_proxy when HTTP(S)_PROXY is in the environment
        proxied = dataclasses.replace(config, behind_proxy=True)
        assert lean_transport(proxied) is None
        runner = AsyncTransport(proxied)
        assert runner._lean is None
        await runner.aclose()

    trio.run(main)


ANSWER_SHAPES = [
    (200, [("Content-Type", "application/json"), ("Content-Length", "11")], b'{"a":"1.5"}'),
    (200, [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")], b'{"n": 1}'),
    (400, [("Content-Type", "application/json"), ("Content-Encoding", "identity"),
           ("Content-Length", "15")], b'{"error": "no"}'),
    (429, [("Retry-After", "7"), ("Content-Length", "0")], b""),
    (204, [], b""),
    (200, [("Content-Type", "text/plain; charset=latin-1")], "caf\xe9".encode("latin-1")),
]


def _raw(fields: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in fields]


def lean_answers_as_read() -> list[tuple[object, ...]]:
    """What a reader sees of ``ANSWER_SHAPES`` turned into httpx answers by the lean pool."""
    return [_observed(Http11Response(status, _Fields(_raw(fields)), body).to_httpx())
            for status, fields, body in ANSWER_SHAPES]


def test_this_install_reads_answers_without_httpxs_stream_machinery() -> None:
    """The pinned httpx lets a body in hand be set as read (no decoder pass per answer)."""
    assert ANSWER_READS == "preset"


def test_lean_answers_read_as_httpx_reads_the_same_body_given_whole() -> None:
    """Status, fields (framing ones dropped, Content-Length as ``content=`` adds it), body,
    text, read state: what ``httpx.Response(content=...)`` of the same answer shows."""
    for (status, fields, body), seen in zip(ANSWER_SHAPES, lean_answers_as_read(), strict=True):
        kept = [(name, value) for name, value in _raw(fields)
                if name.lower() not in (b"transfer-encoding", b"content-encoding")]
        assert seen == _observed(httpx.Response(status, headers=kept, content=body))
    chunked = lean_answers_as_read()[1]
    assert (b"content-length", b"8") in [(k.encode(), v.encode()) for k, v in chunked[1]]


def test_without_httpxs_private_body_answers_are_read_the_same() -> None:
    """Where httpx keeps a read body elsewhere than ``_content`` (a changed httpx), the lean
    pool's answers are built the public way: the same answers, read the same."""
    script = (
        "import json, httpx\n"
        "streamed = httpx.Response.iter_bytes\n"
        "def iter_bytes(self, chunk_size=None):\n"
        "    if hasattr(self, '_body'):\n"
        "        yield from [self._body] if self._body else []\n"
        "    else:\n"
        "        yield from streamed(self, chunk_size)\n"
        "def read(self):\n"
        "    if not hasattr(self, '_body'):\n"
        "        self._body = b''.join(streamed(self))\n"
        "    return self._body\n"
        "httpx.Response.iter_bytes, httpx.Response.read = iter_bytes, read\n"
        "httpx.Response.content = property(lambda self: self._body)\n"
        "from venue import http11\n"
        "from tests.venue.test_http11 import lean_answers_as_read\n"
        "print(json.dumps([http11.ANSWER_READS, repr(lean_answers_as_read())]))\n"
    )
    reads, answers = json.loads(run_python(script))
    assert reads == "httpx"
    assert answers == repr(lean_answers_as_read())


class Scripted:
    """A raw loopback server: each request (head and Content-Length body) read, then the
    next scripted answer written as given; an answer ending in ``CLOSE`` closes after it.
    Counts the connections it accepted."""

    CLOSE = b"<close>"

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        with conn:
            while self.answers:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                buffer = buffer[length:]
                answer = self.answers.pop(0)
                conn.sendall(answer.removesuffix(self.CLOSE))
                if answer.endswith(self.CLOSE):
                    return

    def close(self) -> None:
        self.listener.close()


def _scripted(answers: list[bytes], paths: list[str], method: str = "GET"
              ) -> tuple[list[Http11Response | Exception], int]:
    """The pool's answers (or the httpx error raised) to ``paths`` in turn, and how many
    connections the server saw."""
    server = Scripted(answers)
    got: list[Http11Response | Exception] = []

    async def main() -> None:
        pool = _pool()
        for path in paths:
            try:
                got.append(await pool.fetch(method, f"{server.url}{path}", {}))
            except httpx.HTTPError as exc:
                got.append(exc)
        await pool.aclose()

    try:
        trio.run(main)
    finally:
        server.close()
    return got, server.connections


def test_chunked_answers_with_extensions_and_trailers_are_read_and_the_connection_kept(
        ) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
               b"4;name=value\r\n{\"a\"\r\n8\r\n:\"12.5\"}\r\n0\r\nX-Trailer: 1\r\n\r\n")
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    (first, second), connections = _scripted([chunked, plain], ["/a", "/b"])
    assert isinstance(first, Http11Response) and isinstance(second, Http11Response)
    assert first.content == b'{"a":"12.5"}' and first.headers.get("x-trailer") is None
    assert second.content == b"ok" and connections == 1


def test_informational_answers_bodiless_statuses_and_folded_fields_are_read() -> None:
    answers = [
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
        b"X-Folded: one\r\n two\r\n\r\nyes",
        b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",  # no body after a 204
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        b"HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nz",  # no reason phrase
    ]
    got, connections = _scripted(answers, ["/1", "/2", "/3", "/4"])
    assert [(a.status_code, a.content) for a in got if isinstance(a, Http11Response)] == [
        (200, b"yes"), (204, b""), (304, b""), (200, b"z")]
    assert got[0].headers.get("x-folded") == "one two"  # type: ignore[union-attr]
    assert connections == 1


@pytest.mark.parametrize("answer", [
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",  # HTTP/1.0: one request a connection
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",  # bytes nobody asked for
    b"HTTP/1.1 200 OK\r\n\r\nok" + Scripted.CLOSE,  # no length: the body ends with the close
])
def test_a_connection_that_may_not_carry_another_request_is_not_reused(answer: bytes) -> None:
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    got, connections = _scripted([answer, plain], ["/a", "/b"])
    assert [(a.status_code, a.content) for a in got if isinstance(a, Http11Response)] == [
        (200, b"ok"), (200, b"ok")]
    assert connections == 2


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n"
    b"2\r\nok\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nBad Name: 1\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok" + Scripted.CLOSE,  # cut short
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    Scripted.CLOSE,  # closed without a word
])
def test_a_malformed_or_cut_answer_raises_and_the_connection_is_dropped(answer: bytes) -> None:
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    got, connections = _scripted([answer, plain], ["/a", "/b"])
    assert isinstance(got[0], httpx.RemoteProtocolError | httpx.ReadError)
    assert isinstance(got[1], Http11Response) and got[1].content == b"ok"
    assert connections == 2


def test_a_head_answer_has_no_body_whatever_its_length() -> None:
    answers = [b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
               b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
    got, connections = _scripted(answers, ["/a", "/b"], method="HEAD")
    assert [(a.status_code, a.content) for a in got] == [(200, b""), (200, b"")]  # type: ignore[union-attr]
    assert connections == 1


def test_lean_answers_read_by_the_runner_as_their_httpx_form() -> None:
    """What the runner reads of an answer (status, a field by any casing, repeated fields
    joined, body, text in the declared charset) is the same on the lean answer as on its
    ``httpx.Response``."""
    shapes = [*ANSWER_SHAPES,
              (503, [("Retry-After", "3"), ("X-Twice", "a"), ("x-twice", "b")], b"down"),
              (200, [("Content-Type", "text/plain; charset=nonesuch")], b"caf\xc3\xa9")]
    for status, fields, body in shapes:
        lean = Http11Response(status, _Fields(_raw(fields)), body)
        model = lean.to_httpx()
        assert (lean.status_code, lean.content, lean.text) == (
            model.status_code, model.content, model.text)
        for name in ("retry-after", "Retry-After", "X-TWICE", "content-type", "missing"):
            assert lean.headers.get(name) == model.headers.get(name)
