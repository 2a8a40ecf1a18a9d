"""The sandbox server keeps HTTP/1.1 connections open between requests, like the venue."""

from __future__ import annotations

import json
import socket
import time

import httpx

from devstack.venue import SandboxServer
from venue.models import ApiCreds
from venue.signing import l2_headers


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_requests_follow_each_other_on_one_connection_until_stop() -> None:
    server = SandboxServer(seed=5).start()
    try:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        # A POST whose body the app refuses unread, then a GET on the same socket.
        post = (b"POST /clob/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 2\r\n\r\n{}")
        assert b"Connection: close" not in _exchange(sock, post)
        head = _exchange(sock, b"GET /clob/time HTTP/1.1\r\nHost: x\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        with httpx.Client() as client:  # ordinary clients reuse their connection too
            first = client.get(f"{server.url}/clob/time")
            second = client.get(f"{server.url}/clob/ok")
            assert first.status_code == second.status_code == 200
            assert "close" not in first.headers.get("connection", "")
    finally:
        server.stop()
    # Stopping ends kept-alive connections too: the venue is gone for them as well.
    sock.settimeout(5)
    assert sock.recv(1) == b""
    sock.close()


def test_an_idle_kept_alive_connection_closes_without_an_error_line(monkeypatch,
                                                                   caplog) -> None:
    """`make run`'s terminal showed "Request timed out: TimeoutError('timed out')" at ERROR
    when a client left a kept-alive connection idle past the handler's timeout."""
    from devstack.venue import server as venue_server

    monkeypatch.setattr(venue_server.PolyHeaderRequestHandler, "timeout", 0.3)
    server = SandboxServer(seed=5).start()
    try:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        assert _exchange(sock, b"GET /clob/time HTTP/1.1\r\nHost: x\r\n\r\n").startswith(
            b"HTTP/1.1 200")
        assert sock.recv(1) == b""  # left idle: the venue closed it
        sock.close()
    finally:
        server.stop()
    said = [record.getMessage() for record in caplog.records]
    assert not [line for line in said if "timed out" in line], said


def test_an_order_is_stamped_when_its_first_bytes_arrive(sandbox_venue, control,
                                                        make_trader) -> None:
    """The benchmark's "received by the venue": the kernel's receive time of the request's
    first bytes, not when a busy venue thread next got round to reading them."""
    trader = make_trader("0")
    creds = ApiCreds(api_key=trader.client.creds.api_key,
                     secret=trader.client.creds.api_secret,
                     passphrase=trader.client.creds.api_passphrase, address=trader.address)
    body = json.dumps({"order": {}, "owner": creds.api_key, "orderType": "GTC"})
    headers = "".join(f"{name}: {value}\r\n"
                      for name, value in l2_headers(creds, "POST", "/order", body).items())
    head = (f"POST /clob/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"{headers}Content-Length: {len(body)}\r\n\r\n").encode()
    control.call("DELETE", "/orders", expect=200)
    sock = socket.create_connection(("127.0.0.1", sandbox_venue.port), timeout=5)
    try:
        sent = time.time()
        sock.sendall(head[:40])  # the request line arrives, the rest 300 ms later
        time.sleep(0.3)
        answer = _exchange(sock, head[40:] + body.encode())
        assert answer.startswith(b"HTTP/1.1 400")  # an empty order is refused...
    finally:
        sock.close()
    [entry] = control.call("GET", "/orders", expect=200)  # ...and logged with its arrival
    assert entry["api_key"] == creds.api_key
    assert sent * 1000 - 5 <= entry["received_at"] <= sent * 1000 + 150
