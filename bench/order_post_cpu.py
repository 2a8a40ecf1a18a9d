"""Loop CPU per order POST on the worker's async venue client (the lean HTTP/1.1 pool).

The copy engine sends a fill's orders concurrently from one Trio loop, so the CPU the loop
spends on each order before its bytes are written delays every later order of the fill.
This benchmark prepares ``--orders`` signed orders (one copier each, distinct API creds),
starts a raw local HTTP server in a process of its own (so that its work does not hold
this interpreter's GIL; it answers each request with a fixed JSON body, nothing else) and
sends the orders as one fan-out through ``FillExecutor.send`` -> ``orders.post`` (its venue
steps on the async client) -> ``ClobApi.post_order`` -> ``AsyncTransport`` ->
``Http11Pool``, ``--rounds`` times per run. It prints the medians over ``--runs`` runs, in
µs of the loop thread's CPU (``time.thread_time``: the server's CPU is not counted) per order:

- until written: from opening the fan-out's nursery until the last order's bytes were
  handed to the kernel (the ``send`` system call returned): the pre-write work of all
  the orders, which the last order of a fill waits for;
  (``of which in send()``: the CPU spent inside those ``send`` calls, the kernel's TCP
  work; loopback makes it the receiver's work too, and it varies with the machine's load);
- until send_all returned: the same, up to the last ``send_all`` call returning (it
  returns after the loop's next pass, so this adds the other orders' resumptions);
- total: the whole fan-out, answers read and parsed;
- sequential: one order at a time, whole exchange.

    .venv/bin/python bench/order_post_cpu.py --runs 9 --rounds 200
"""

from __future__ import annotations

import argparse
import base64
import os
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import config
from services.platform import runtime, venues, wiring
from services.trading import orders
from services.trading.order_plan import MarketInfo, OrderRequest
from services.wallets import venue_accounts
from venue.models import ApiCreds, FeeSchedule, Level, OrderBook
from venue.order_signer import OrderSigner
from venue.signing import OrderKey
from worker.copy_engine.fill_executor import FillExecutor

ANSWER = (b'{"success":true,"errorMsg":"","orderID":"0x' + b"ab" * 32
          + b'","takingAmount":"0","makingAmount":"0","status":"unmatched"}')
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (len(ANSWER), ANSWER))


def serve() -> None:
    """The answering server (``--serve``): print its port, answer until killed."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(listener.getsockname()[1], flush=True)

    def exit_with_parent() -> None:
        sys.stdin.read()  # EOF: the benchmark that started this server is gone
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True).start()

    def answer(conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = b""
        while data := conn.recv(65536):
            buffer += data
            while b"\r\n\r\n" in buffer:
                head, rest = buffer.split(b"\r\n\r\n", 1)
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                if len(rest) < length:
                    break
                buffer = rest[length:]
                conn.sendall(RESPONSE)

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()


def prepared_orders(count: int) -> list[orders.PreparedOrder]:
    """One signed market buy per copier, each copier with its own key and API creds."""
    token = str(secrets.randbits(250))
    book = OrderBook(
        market="0x" + "ab" * 32, asset_id=token, timestamp_ms=0, hash="",
        bids=tuple(Level(Decimal(p) / 100, Decimal(1000)) for p in range(1, 50)),
        asks=tuple(Level(Decimal(p) / 100, Decimal(1000)) for p in range(99, 50, -1)),
        min_order_size=Decimal(5), tick_size=Decimal("0.01"), neg_risk=False,
        last_trade_price=Decimal("0.5"))
    market = MarketInfo(
        token_id=token, market_slug="bench", market_title="Bench?", outcome="Yes",
        condition_id="0x" + "ab" * 32, tick_size=Decimal("0.01"), min_order_size=Decimal(5),
        neg_risk=False, fee_schedule=FeeSchedule(rate=Decimal("0.02"), exponent=Decimal(1),
                                                 taker_only=True, rebate_rate=Decimal(0)),
        accepting_orders=True, closed=False)
    prepared = []
    for _ in range(count):
        key = "0x" + secrets.token_hex(32)
        opened = OrderKey(key)
        creds = ApiCreds(api_key=str(uuid.uuid4()),
                         secret=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
                         passphrase=secrets.token_hex(16), address=opened.address)
        account = venue_accounts.VenueAccount(
            wallet=SimpleNamespace(address=opened.address, funder_address=None),  # type: ignore[arg-type]
            private_key=key, signature_type=0, creds=creds, key=opened,
            signer=OrderSigner.for_venue(venues.client().config, opened))
        prepared.append(orders.plan_and_sign(
            uuid.uuid4(), account, OrderRequest.checked(token, "buy", Decimal("10"), "market",
                                                        time_in_force="FAK"),
            book=book, market=market,
            origin=orders.Origin("copy", uuid.uuid4(), str(uuid.uuid4())),
            available=Decimal(100000)))
    return prepared


async def measure(prepared: list[orders.PreparedOrder], runs: int, rounds: int
                  ) -> dict[str, list[float]]:
    """Per-run µs of loop CPU per order: until written, total, sequential."""
    client = venues.async_client()
    executor: Any = SimpleNamespace(
        venue=client, place_limiter=trio.CapacityLimiter(64), may_send=lambda: True,
        wallets=SimpleNamespace(accounts=SimpleNamespace(drop=lambda user_id: None)))
    written: list[float] = []
    returned: list[float] = []
    in_send: list[float] = []  # CPU inside the send system calls (the kernel's TCP work)
    send_all = trio.SocketStream.send_all
    with trio.socket.socket() as probe:
        socket_type = type(probe)  # trio's concrete socket class
    send = socket_type.send

    def sent(sock: socket.socket, data: Any, flags: int = 0) -> int:
        before = time.thread_time()
        count = socket.socket.send(sock, data, flags)
        written.append(time.thread_time())
        in_send.append(written[-1] - before)
        return count

    async def stamped_send(self: Any, data: Any, flags: int = 0) -> int:
        # trio's own non-blocking send, with a stamp right after the system call.
        return await self._nonblocking_helper(trio.lowlevel.wait_writable, sent, data, flags)

    async def stamped_send_all(self: trio.SocketStream, data: Any) -> None:
        await send_all(self, data)
        returned.append(time.thread_time())

    async def fan_out() -> float:
        answers: list[Any] = []

        async def send(item: orders.PreparedOrder) -> None:
            answers.append((await FillExecutor.send(executor, item))[1])

        async with trio.open_nursery() as nursery:
            for item in prepared:
                nursery.start_soon(send, item)
        assert len(answers) == len(prepared) and all(a.result is not None for a in answers)
        return time.thread_time()

    for _ in range(20):  # connections opened, caches warm
        await fan_out()
    results: dict[str, list[float]] = {
        "until written": [], "  of which in send()": [], "until send_all returned": [],
        "total": [], "sequential": []}
    trio.SocketStream.send_all = stamped_send_all  # type: ignore[method-assign]
    socket_type.send = stamped_send  # type: ignore[method-assign]
    per_run = rounds * len(prepared) / 1e6
    try:
        for _ in range(runs):
            until = until_returned = total = kernel = 0.0
            for _ in range(rounds):
                written.clear()
                returned.clear()
                in_send.clear()
                start = time.thread_time()
                end = await fan_out()
                until += written[-1] - start
                kernel += sum(in_send)
                until_returned += returned[-1] - start
                total += end - start
            results["until written"].append(until / per_run)
            results["  of which in send()"].append(kernel / per_run)
            results["until send_all returned"].append(until_returned / per_run)
            results["total"].append(total / per_run)
            start = time.thread_time()
            for _ in range(rounds):
                for item in prepared:
                    await orders.post(item, client)
            results["sequential"].append((time.thread_time() - start) / per_run)
    finally:
        trio.SocketStream.send_all = send_all  # type: ignore[method-assign]
        socket_type.send = send  # type: ignore[method-assign]
        await client.aclose()
    return results


def main() -> None:
    """Run the benchmark and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=10)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    server = subprocess.Popen([sys.executable, __file__, "--serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    base = f"http://127.0.0.1:{port}"
    runtime.install(wiring.build_runtime(config.load(env={
        "VENUE": "sandbox", "POLYMARKET_GAMMA_URL": f"{base}/gamma",
        "POLYMARKET_CLOB_URL": f"{base}/clob", "POLYMARKET_DATA_URL": f"{base}/data",
        "POLYMARKET_RTDS_URL": "ws://127.0.0.1:9/rtds", "CHAIN_ID": "137",
        "REDIS_URL": "redis://127.0.0.1:6379/0", "SECRET_KEY": "bench",
        "WALLET_ENCRYPTION_KEY": "11" * 32})))
    prepared = prepared_orders(args.orders)
    try:
        results = trio.run(measure, prepared, args.runs, args.rounds)
    finally:
        server.kill()
    print(f"loop CPU per order, µs (median of {args.runs} runs x {args.rounds} fan-outs "
          f"of {args.orders}; min-max in brackets)")
    for name, values in results.items():
        print(f"  {name:24s} {statistics.median(values):6.0f}  "
              f"[{min(values):.0f}-{max(values):.0f}]")


if __name__ == "__main__":
    main()
