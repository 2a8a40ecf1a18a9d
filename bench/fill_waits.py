"""Where a fill's time goes before its fan-out, counted inside a worker
(``bench/copy_scale.py --waits``).

Each fill is timed from the feed's hand-over (its detection clock, when the watcher queued
it) to its first order leaving, by part: the wait in its watcher's queue (and what ran ahead
of it there: exit checks, earlier fills of the target), then, while the fill's task runs,
the wall time of each awaited part: the quote (Gamma, the book, the market's parameters),
the rules' contexts, the database thread calls, the balance re-read before a skip, the
venue requests by path and the rate budgets' waits among them. The parts are wall clock
(waits included) and may nest (a request inside the quote), so they are shown side by side,
not summed. The bench's own code: nothing in the product changes.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

# The fill whose task is running (its parts are charged to it); child tasks inherit it.
_current: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "fill_waits", default=None)
_done: deque[dict[str, Any]] = deque(maxlen=500)
# Per target: (start, end, kind) of the work its watcher's executor did, the latest few.
_ran: defaultdict[str, deque[tuple[float, float, str]]] = defaultdict(lambda: deque(maxlen=20))
# The engine's database thread calls under way (queued or running), by id: the function's name.
_in_db: dict[int, str] = {}


def _charge(part: str, seconds: float) -> None:
    record = _current.get()
    if record is not None:
        parts = record["parts"]
        parts[part] = parts.get(part, 0.0) + seconds


def _timed(function: Callable[..., Any], part: Callable[..., str] | str) -> Callable[..., Any]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _current.get() is None:
            return await function(*args, **kwargs)
        started = time.monotonic()
        try:
            return await function(*args, **kwargs)
        finally:
            _charge(part if isinstance(part, str) else part(*args, **kwargs),
                    time.monotonic() - started)
    return wrapper


def install() -> None:
    """Wrap the engine's fill path (before the engine is built: it binds some of them)."""
    from venue import http
    from worker.copy_engine import copier_wallets, engine, fill_executor, quotes

    executor_class = fill_executor.FillExecutor
    handle_fill = executor_class.handle_fill

    @functools.wraps(handle_fill)
    async def timed_fill(self: Any, target: str, configs: Any, item: Any, seen: Any) -> Any:
        started = time.monotonic()
        ahead = [(kind, max(start, seen.clock), end) for start, end, kind in _ran[target]
                 if end > seen.clock]
        record: dict[str, Any] = {
            "target": target, "source": seen.source, "clock": seen.clock,
            "queued": started - seen.clock,
            "ahead": {}, "parts": {}, "first_send": None, "copies": len(configs)}
        for kind, start, end in ahead:
            record["ahead"][kind] = record["ahead"].get(kind, 0.0) + (end - start)
        token = _current.set(record)
        try:
            return await handle_fill(self, target, configs, item, seen)
        finally:
            _current.reset(token)
            end = time.monotonic()
            record["handled"] = end - seen.clock
            _ran[target].append((started, end, "fill"))
            _done.append(record)

    executor_class.handle_fill = timed_fill  # type: ignore[method-assign]

    check_exits = executor_class.check_exits

    @functools.wraps(check_exits)
    async def timed_exits(self: Any, configs: Any, tokens: Any = None) -> Any:
        started = time.monotonic()
        target = next(iter(configs.values())).target if configs else ""
        try:
            return await check_exits(self, configs, tokens)
        finally:
            _ran[target].append((started, time.monotonic(),
                                 "exits (all)" if tokens is None else "exits (tokens)"))

    executor_class.check_exits = timed_exits  # type: ignore[method-assign]

    send = executor_class.send

    @functools.wraps(send)
    async def first_send(self: Any, prepared: Any) -> Any:
        record = _current.get()
        if record is not None and record["first_send"] is None:
            record["first_send"] = time.monotonic() - record["clock"]
        return await send(self, prepared)

    executor_class.send = first_send  # type: ignore[method-assign]

    for owner, name, part in [
        (quotes.QuoteSource, "quote", "quote"),
        (quotes.QuoteSource, "book", "quote: book"),
        (executor_class, "contexts", "contexts"),
        (executor_class, "_breaker", "breaker"),
        (copier_wallets.CopierWallets, "recheck", "balance recheck"),
    ]:
        setattr(owner, name, _timed(getattr(owner, name), part))
    engine.CopyEngine.db = _split_db(engine.CopyEngine.db)  # type: ignore[method-assign]
    http.AsyncTransport.run = _timed(  # type: ignore[method-assign]
        http.AsyncTransport.run,
        lambda self, call: f"venue {call.request.method} {call.request.path}")
    http.AsyncTransport._pause = _timed(  # type: ignore[method-assign]
        http.AsyncTransport._pause, "venue budget waits")


def _split_db(db: Callable[..., Any]) -> Callable[..., Any]:
    """Time a database call as its wait for a thread and a connection, then its statements,
    and note what other database calls were under way when a fill's call was made."""
    @functools.wraps(db)
    async def wrapper(self: Any, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        name = getattr(function, "__qualname__", repr(function))
        module = getattr(function, "__module__", "") or ""
        label = f"{module.rsplit('.', 1)[-1]}.{name}"
        record = _current.get()
        key = object()
        if record is not None:
            busy = record.setdefault("busy", {})
            under_way: dict[str, int] = {}
            for other in _in_db.values():
                under_way[other] = under_way.get(other, 0) + 1
            for other, count in under_way.items():
                busy[other] = max(busy.get(other, 0), count)
            record["busy_total"] = max(record.get("busy_total", 0), len(_in_db))
        _in_db[id(key)] = label
        called = time.monotonic()
        marks: dict[str, float] = {}

        def timed(*a: Any, **k: Any) -> Any:
            marks["start"] = time.monotonic()
            try:
                return function(*a, **k)
            finally:
                marks["end"] = time.monotonic()
        try:
            return await db(self, timed, *args, **kwargs)
        finally:
            _in_db.pop(id(key), None)
            done = time.monotonic()
            if record is not None:
                start = marks.get("start", done)
                _charge("database thread", done - called)
                _charge("database: thread + connection wait", start - called)
                _charge("database: statements", marks.get("end", done) - start)
                _charge(f"database: {label}", done - called)
    return wrapper


def snapshot() -> list[dict[str, Any]]:
    """The fills timed so far (the latest 500): seconds from the hand-over."""
    return [dict(record) for record in list(_done)]
