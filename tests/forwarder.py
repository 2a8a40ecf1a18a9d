"""A TCP forwarder for tests that cut, delay or silence a link to a real server."""

from __future__ import annotations

import contextlib
import socket
import threading


class Forwarder:
    """Accepts on ``host``:(a free port) and pipes each connection to 127.0.0.1:``port``;
    while ``silent``, it takes connections and says nothing (a server not answering yet)."""

    def __init__(self, host: str, port: int, *, silent: bool = False) -> None:
        self.listener = socket.create_server((host, 0))
        self.host, self.port = host, self.listener.getsockname()[1]
        self.upstream = port
        self.sockets: list[socket.socket] = []
        self.closed = False
        self.silent = silent
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            if self.silent:
                self.sockets.append(client)  # held open, unanswered: the client times out
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()
