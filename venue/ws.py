"""The venue's websockets (RTDS activity, CLOB market channel): connecting and reconnecting.

Both feeds (``ReconnectingFeed``) keep one connection open forever: connect, run a session
until the link ends, then wait a jittered, doubling backoff (reset once a link carried
something) and connect again. A bad URL is a configuration error and is raised, never retried.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import anyio
import sniffio
from websockets.exceptions import InvalidURI, WebSocketException
from websockets.uri import parse_uri

log = logging.getLogger(__name__)

LINK_ERRORS: tuple[type[BaseException], ...] = (OSError, TimeoutError, WebSocketException)


def connect(url: str, open_timeout: float) -> Any:
    """The websockets client for the running event loop (trio or asyncio)."""
    if sniffio.current_async_library() == "trio":
        from websockets.trio.client import connect as trio_connect

        return trio_connect(url, open_timeout=open_timeout, close_timeout=2)
    from websockets.asyncio.client import connect as asyncio_connect

    return asyncio_connect(url, open_timeout=open_timeout, close_timeout=2)


class ReconnectingFeed:
    """One websocket kept open forever: the link bookkeeping the venue's feeds share.

    A subclass names itself (``name``), runs one connection in ``_session`` (calling
    ``_link_up`` once subscribed), counts what links carry in ``_heard`` and may widen
    ``link_errors``; ``_run_links`` reconnects until cancelled.
    """

    name = "feed"
    link_errors: tuple[type[BaseException], ...] = LINK_ERRORS

    def __init__(self, url: str, *, ping_interval: float, open_timeout: float,
                 backoff_initial: float, backoff_max: float) -> None:
        parse_uri(url)  # a bad URL is a configuration error, not something to retry
        self.url = url
        self.ping_interval = ping_interval
        self.open_timeout = open_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.connected = False
        self.connections = 0
        self.last_error: str | None = None
        self._up = anyio.Event()

    async def wait_connected(self) -> None:
        """Return once a connection is up and subscribed."""
        await self._up.wait()

    async def _session(self, websocket: Any) -> None:
        raise NotImplementedError

    def _heard(self) -> int:
        raise NotImplementedError

    def _link_up(self) -> None:
        self.connected = True
        self.connections += 1
        self._up.set()

    def _link_down(self) -> None:
        if self.connected:
            self.connected = False
            self._up = anyio.Event()

    async def _run_links(self) -> None:
        """Run ``_session`` on a fresh connection forever (until cancelled)."""
        delay = self.backoff_initial
        while True:
            before = self._heard()
            try:
                async with connect(self.url, self.open_timeout) as websocket:
                    await self._session(websocket)
            except InvalidURI:
                raise
            except self.link_errors as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.info("%s disconnected: %s", self.name, self.last_error)
            finally:
                self._link_down()
            if self._heard() > before:
                delay = self.backoff_initial  # the link worked: start backoff over
            await anyio.sleep(delay * (0.5 + random.random() / 2))
            delay = min(self.backoff_max, delay * 2)


__all__ = ["LINK_ERRORS", "ReconnectingFeed", "connect"]
