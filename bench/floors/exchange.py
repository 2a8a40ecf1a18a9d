"""Floor of the HTTP exchange: one POST /order on a kept-alive socket (the L2 headers' HMAC,
the request bytes, the write, the answer read and decoded), against a server in another
process that answers at once (its CPU is not counted: only this thread's).

    .venv/bin/python bench/floors/exchange.py
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import multiprocessing
import socket
import time

from floor_clock import cpu_ms

ANSWER = json.dumps({"success": True, "orderID": "0x" + "ab" * 32, "status": "matched",
                     "makingAmount": "5", "takingAmount": "10"}).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(ANSWER)).encode() + b"\r\n\r\n" + ANSWER)
BODY = json.dumps({"order": {"salt": 1, "maker": "0x" + "11" * 20, "signature": "0x" + "22" * 65,
                             "tokenId": "7" * 77, "makerAmount": "5000000",
                             "takerAmount": "10000000", "side": "BUY"},
                   "owner": "key", "orderType": "FAK"}).encode()
SECRET = base64.urlsafe_b64encode(b"s" * 32)


def _serve(listener: socket.socket) -> None:
    connection, _ = listener.accept()
    buffer = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\r\n\r\n" in buffer:
            head, _, rest = buffer.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            buffer = rest[length:]
            connection.sendall(RESPONSE)


def poster(connection: socket.socket) -> object:
    """One call posts one order and decodes the answer."""
    key = base64.urlsafe_b64decode(SECRET)

    def post() -> dict[str, object]:
        stamp = str(int(time.time())).encode()
        mac = hmac.new(key, stamp + b"POST/order" + BODY, hashlib.sha256).digest()
        connection.sendall(
            b"POST /order HTTP/1.1\r\nHost: venue\r\nContent-Type: application/json\r\n"
            b"POLY_API_KEY: key\r\nPOLY_PASSPHRASE: pass\r\nPOLY_ADDRESS: 0x11\r\n"
            b"POLY_TIMESTAMP: " + stamp + b"\r\nPOLY_SIGNATURE: "
            + base64.urlsafe_b64encode(mac) + b"\r\nContent-Length: "
            + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
        data = connection.recv(65536)
        _, _, body = data.partition(b"\r\n\r\n")
        return json.loads(body)
    return post


def measure(copies: int) -> float:
    """ms of CPU per copy order (one request per copy)."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = multiprocessing.Process(target=_serve, args=(listener,), daemon=True)
    server.start()
    try:
        with socket.create_connection(listener.getsockname()) as connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return cpu_ms(poster(connection), calls=1000)
    finally:
        server.kill()
        listener.close()


if __name__ == "__main__":
    print(f"http: {measure(1):.4f} ms per copy")
