"""CPU per stage of the copy path, counted inside a worker (``bench/copy_scale.py --stages``).

Each stage is a set of the engine's functions, wrapped here (the bench may reach anything):
their CPU (``time.thread_time``, so a database thread's own CPU counts and its waits do not)
and their SQL statements are charged to the innermost stage running on the thread, so a
stage's figure excludes the stages it calls (planning excludes signing). Async functions
are timed step by step, only while their coroutine runs: the time a copy waits for the
venue or the database is nobody's CPU. What no stage claims (the Trio loop, the websocket's
frames, thread hand-offs) stays in the process total the harness measures, as "the rest".

The wrappers cost about a microsecond a call; a copy passes through a dozen. The API's
stages (``bench/stage_site/``) are counted with the same clock.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Generator
from decimal import Decimal
from typing import Any

# The stages in the order a copy passes them; (key, label).
STAGES: list[tuple[str, str]] = [
    ("detect", "detection and parsing (feed frame, the target's watcher)"),
    ("decide", "the decision (quote, contexts, the rules per config, drafts)"),
    ("plan", "planning (the order's plan, collateral check, reservation)"),
    ("sign", "signing (EIP-712 digest and signature)"),
    ("record", "the durable record (intents, orders, trades: one transaction)"),
    ("http", "the HTTP exchange (request body, POST /order, its answer)"),
    ("settle", "settlement and its records (intents, positions, breaker)"),
    ("orchestrate", "the fill's orchestration (tickets, tasks, thread hand-offs)"),
    ("background", "background work per copy (leases, sweeps, the feed, polls, balances)"),
]

# The background stage's floor, per second of copying: what an engine must do each second
# whatever it runs: one lease renewal and one heartbeat (two ~15 µs round trips on a plain
# socket, bench/floors/api_floors.py's EVALSHA), and a sweep's one indexed read of the
# config revisions since its mark (~70 µs of client CPU). Charged to the copies made
# meanwhile, so it falls as the copy rate rises.
BACKGROUND_FLOOR_MS_PER_S = 0.1

# Target CPU per copy order (ms) for each stage, their sum the 1.0 ms goal; and
# the way to 0.5 ms (what each stage may cost there), with what would take it there.
TARGETS: dict[str, tuple[Decimal, Decimal, str]] = {
    "detect": (Decimal("0.03"), Decimal("0.02"), "one parse per frame, shared by its copies"),
    "decide": (Decimal("0.10"), Decimal("0.05"), "rules over snapshots, no per-copy SQL"),
    "plan": (Decimal("0.10"), Decimal("0.05"), "a per-config plan template: amounts only"),
    "sign": (Decimal("0.15"), Decimal("0.10"), "one keccak of a templated struct, one ECDSA"),
    "record": (Decimal("0.15"), Decimal("0.07"), "one multi-row statement, one commit a fill"),
    "http": (Decimal("0.20"), Decimal("0.10"), "request bytes built once, one write a copy"),
    "settle": (Decimal("0.12"), Decimal("0.05"), "one statement per table a fill"),
    "orchestrate": (Decimal("0.05"), Decimal("0.02"), "fewer tasks and thread hops a fill"),
    "background": (Decimal("0.10"), Decimal("0.04"),
                   "by exception: one renewal command, sweeps and balances of what changed"),
    "rest": (Decimal("0.05"), Decimal("0.02"), "the Trio loop and thread hand-offs"),
}


class _Book:
    """CPU seconds and SQL statements per stage, and each thread's stack of running stages."""

    cpu: defaultdict[str, float] = defaultdict(float)
    sql: defaultdict[str, int] = defaultdict(int)
    calls: defaultdict[str, int] = defaultdict(int)
    # The longest single step of each stage's coroutines (wall seconds): while a step runs,
    # the Trio loop runs nothing else, so a copy that comes meanwhile waits at least that.
    longest: defaultdict[str, float] = defaultdict(float)
    local = threading.local()
    lock = threading.Lock()


def _stack() -> list[list[Any]]:
    stack = getattr(_Book.local, "stack", None)
    if stack is None:
        stack = _Book.local.stack = []
    return stack


def _enter(stage: str) -> None:
    now = time.thread_time()
    stack = _stack()
    if stack:
        outer = stack[-1]
        with _Book.lock:
            _Book.cpu[outer[0]] += now - outer[1]
    stack.append([stage, now])


def _leave() -> None:
    now = time.thread_time()
    stack = _stack()
    stage, since = stack.pop()
    with _Book.lock:
        _Book.cpu[stage] += now - since
    if stack:
        stack[-1][1] = now


def current() -> str | None:
    """The innermost stage running on this thread (None outside every stage)."""
    stack = getattr(_Book.local, "stack", None)
    return stack[-1][0] if stack else None


def count_sql() -> None:
    """Charge one SQL statement to this thread's stage (called by the harness's cursor)."""
    stage = current()
    if stage is not None:
        with _Book.lock:
            _Book.sql[stage] += 1


class _Steps:
    """Await a coroutine, timing only its steps (not the waits between them)."""

    def __init__(self, coro: Any, stage: str) -> None:
        self.coro, self.stage = coro, stage

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, stage = self.coro, self.stage
        value: Any = None
        error: BaseException | None = None
        while True:
            _enter(stage)
            began = time.perf_counter()
            try:
                step = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                return stop.value
            finally:
                _leave()
                took = time.perf_counter() - began
                if took > _Book.longest[stage]:
                    _Book.longest[stage] = took
            try:
                value, error = (yield step), None
            except BaseException as exc:  # delivered into the coroutine on its next step
                value, error = None, exc


def timed(function: Callable[..., Any], stage: str, is_async: bool = False
          ) -> Callable[..., Any]:
    """``function`` with its CPU (less the stages it calls) charged to ``stage``."""
    if is_async:
        @functools.wraps(function)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            _Book.calls[stage] += 1
            return await _Steps(function(*args, **kwargs), stage)
        return timed_async

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        _Book.calls[stage] += 1
        _enter(stage)
        try:
            return function(*args, **kwargs)
        finally:
            _leave()
    return timed


def _wrap(owner: Any, name: str, stage: str) -> None:
    import inspect

    function = inspect.getattr_static(owner, name)
    if isinstance(function, staticmethod):
        setattr(owner, name, staticmethod(timed(function.__func__, stage)))
        return
    setattr(owner, name, timed(function, stage, inspect.iscoroutinefunction(function)))


def install() -> None:
    """Wrap the copy path's functions (before the engine is built: it binds some of them)."""
    from services.copying import execution
    from services.platform import copy_leases
    from services.trading import orders
    from venue import rtds
    from worker.copy_engine import copier_wallets, engine, fan_in, fill_executor, polls, watcher

    for owner, name, stage in [
        (rtds, "parse_rtds_activity", "detect"),
        (watcher.TargetWatcher, "offer", "detect"),
        (fill_executor.FillExecutor, "_handle_fill", "decide"),
        (execution, "prepare", "plan"),
        (orders, "_sign", "sign"),
        (execution, "record", "record"),
        (orders, "_body", "http"),
        (fill_executor.FillExecutor, "send", "http"),
        (execution, "settle", "settle"),
        (fill_executor.FillExecutor, "_breaker", "settle"),
        (fill_executor.FillExecutor, "_apply", "settle"),
        (fill_executor.FillExecutor, "execute_by_token", "orchestrate"),
        (fill_executor.FillExecutor, "execute", "orchestrate"),
        (execution, "execute", "orchestrate"),
        # The background owners: their loops (timed only while they run) and the Redis
        # calls they make on threads.
        (engine.CopyEngine, "_heartbeat_loop", "background"),
        (engine.CopyEngine, "_lease_clock_loop", "background"),
        (engine.CopyEngine, "_sweep_loop", "background"),
        (engine.CopyEngine, "_control_loop", "background"),
        (polls.PollScheduler, "run", "background"),
        (watcher.TargetWatcher, "_poll_loop", "background"),
        (fan_in.DetectionFanIn, "_feed_loop", "background"),
        (fan_in.DetectionFanIn, "_detection_loop", "background"),
        (copier_wallets.CopierWallets, "run", "background"),
        (copy_leases.TargetLeases, "renew", "background"),
        (copy_leases.TargetLeases, "heartbeat", "background"),
        (copy_leases.TargetLeases, "holders", "background"),
        (copy_leases.TargetLeases, "claim", "background"),
        (copy_leases.TargetLeases, "moved_from", "background"),
        (copy_leases.TargetLeases, "live_engines", "background"),
    ]:
        _wrap(owner, name, stage)


def snapshot() -> dict[str, Any]:
    """The counters so far (CPU seconds, statements and calls per stage)."""
    with _Book.lock:
        return {"cpu": dict(_Book.cpu), "sql": dict(_Book.sql), "calls": dict(_Book.calls),
                "longest": dict(_Book.longest)}


# -- the harness's side ------------------------------------------------------------------

def add(statuses: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The workers' stage counters summed (``snapshot()``s as the workers reported them)."""
    out: dict[str, dict[str, float]] = {"cpu": {}, "sql": {}, "calls": {}, "longest": {}}
    for status in statuses:
        for kind, values in status.get("stages", {}).items():
            for stage, value in values.items():
                before = out[kind].get(stage, 0)
                out[kind][stage] = max(before, value) if kind == "longest" else before + value
    return out


def figures(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]],
            orders: int, cpu_per_copy_s: float, idle_cpu_per_s: float, elapsed_s: float
            ) -> dict[str, float]:
    """Per copy order: each stage's CPU (ms) and SQL statements, their sum, and the rest of
    the process's CPU while copying (the loop, the feed, leases, sweeps, balances)."""
    copies = max(1, orders)
    out: dict[str, float] = {}
    for key, _ in STAGES:
        out[f"stage_{key}_ms"] = (after["cpu"].get(key, 0) - before["cpu"].get(key, 0)
                                  ) * 1000 / copies
        out[f"stage_{key}_sql"] = (after["sql"].get(key, 0) - before["sql"].get(key, 0)
                                   ) / copies
    out["stage_path_ms"] = sum(out[f"stage_{key}_ms"] for key, _ in STAGES)
    for key, _ in STAGES:  # since the start (the harness reads no maximum over a window)
        out[f"stage_{key}_longest_ms"] = after.get("longest", {}).get(key, 0) * 1000
    out["floor_background_ms"] = BACKGROUND_FLOOR_MS_PER_S * elapsed_s / copies
    # The process's whole CPU while copying, per copy, less the stages': measured, not the
    # idle rate subtracted (that rate, taken earlier, is not what the loop does meanwhile).
    whole = cpu_per_copy_s * 1000 + idle_cpu_per_s * elapsed_s * 1000 / copies
    out["stage_whole_ms"] = whole
    out["stage_rest_ms"] = whole - out["stage_path_ms"]
    return out


def table(found: dict[str, float], floors: dict[str, float]) -> list[str]:
    """The budget as Markdown rows: stage, CPU and SQL per copy, floor, target, on to 0.5."""
    rows = ["| stage | CPU ms / copy | SQL / copy | floor ms | target ms | on to 0.5 ms |",
            "|---|---|---|---|---|---|"]
    for key, label in STAGES:
        target, further, how = TARGETS[key]
        floor = floors.get(key) if key != "background" else found.get("floor_background_ms")
        rows.append(f"| {label} | {found[f'stage_{key}_ms']:.3f} | "
                    f"{found[f'stage_{key}_sql']:.2f} | "
                    f"{'-' if floor is None else f'{floor:.3f}'} | {target} | "
                    f"{further}: {how} |")
    path_target = sum(TARGETS[key][0] for key, _ in STAGES)
    path_further = sum(TARGETS[key][1] for key, _ in STAGES)
    rows.append(f"| **the copy path** (the stages' sum) | **{found['stage_path_ms']:.3f}** | "
                f"{sum(found[f'stage_{key}_sql'] for key, _ in STAGES):.2f} | "
                f"{sum(floors.values()) + found.get('floor_background_ms', 0):.3f} | "
                f"{path_target} | {path_further} |")
    target, further, how = TARGETS["rest"]
    rows.append(f"| the rest while copying, per copy (the Trio loop, thread hand-offs) | "
                f"{found['stage_rest_ms']:.3f} | - | - | {target} | "
                f"{further}: {how} |")
    rows.append("| the longest single loop step of each stage since the start, ms | "
                + ", ".join(f"{key} {found.get(f'stage_{key}_longest_ms', 0):.1f}"
                            for key, _ in STAGES) + " | - | - | - | - |")
    rows.append(f"| process CPU per copy, the idle rate subtracted (the bench's figure) | "
                f"{found['cpu_ms_per_copy']:.3f} | {found['sql_per_copy']:.2f} | - | "
                f"{path_target + target} | {path_further + further} |")
    return rows
