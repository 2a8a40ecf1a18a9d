"""The venue's websockets (RTDS activity, CLOB market channel): connecting and reconnecting.

Both feeds keep one connection open forever: connect, run a session until the link ends,
then wait a jittered, doubling backoff (reset once a link carried something) and connect
again. A bad URL is a configuration error and is raised, never retried.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import sniffio
from websockets.exceptions import InvalidURI, WebSocketException

log = logging.getLogger(__name__)

LINK_ERRORS: tuple[type[BaseException], ...] = (OSError, TimeoutError, WebSocketException)


def connect(url: str, open_timeout: float) -> Any:
    """The websockets client for the running event loop (trio or asyncio)."""
    if sniffio.current_async_library() == "trio":
        from websockets.trio.client import connect as trio_connect

        return trio_connect(url, open_timeout=open_timeout, close_timeout=2)
    from websockets.asyncio.client import connect as asyncio_connect

    return asyncio_connect(url, open_timeout=open_timeout, close_timeout=2)


async def keep_connected(url: str, session: Callable[[Any], Awaitable[None]], *,
                         name: str, open_timeout: float, backoff_initial: float,
                         backoff_max: float, heard: Callable[[], int],
                         on_error: Callable[[str], None], on_end: Callable[[], None],
                         errors: tuple[type[BaseException], ...] = LINK_ERRORS) -> None:
    """Run ``session(websocket)`` on a fresh connection forever (until cancelled).

    ``heard()`` counts what links carried (a link that carried something resets the
    backoff); ``on_error`` gets each link's end as text; ``on_end`` runs after every link.
    """
    delay = backoff_initial
    while True:
        before = heard()
        try:
            async with connect(url, open_timeout) as websocket:
                await session(websocket)
        except InvalidURI:
            raise
        except errors as exc:
            message = f"{type(exc).__name__}: {exc}"
            on_error(message)
            log.info("%s disconnected: %s", name, message)
        finally:
            on_end()
        if heard() > before:
            delay = backoff_initial  # the link worked: start backoff over
        await anyio.sleep(delay * (0.5 + random.random() / 2))
        delay = min(backoff_max, delay * 2)


__all__ = ["LINK_ERRORS", "connect", "keep_connected"]
