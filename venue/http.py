"""HTTP transport to the venue: one request description, a sync and an async runner.

Every API call is a ``Call``: a ``VenueRequest`` (pure data) plus a parser. ``SyncTransport``
(Flask, RQ threads) and ``AsyncTransport`` (the Trio worker; httpx runs on trio via anyio)
share the URL building, error mapping, metadata cache and the one retry loop below and differ
only in how they send and sleep.

Failure mapping: timeouts -> VenueTimeout; 425, 429 and the restricted modes' 503 ->
VenueRestricted (``venue.restrictions``: refused, never carried out); connection errors
and other 5xx -> VenueUnavailable (with retry_after); 404 -> VenueNotFound; other 4xx ->
VenueRejected(status, body). Each request first takes a slot of its endpoint family's rate
budget (``venue.budgets``), and an order or cancel one of its signer's too, waiting while
either is spent. Every answer is read for ``Poly-RateLimit-Warning`` (the venue's per-signer
limits, in warning mode: ACCOUNTS.md §11); a warning backs that signer's budget off and is
reported to the warning observers (metrics, the engine's status). Only
``retryable`` requests (idempotent reads and cancels) are retried, with small bounded
exponential backoff; order POSTs are never resent, so a timeout there surfaces as
VenueTimeout for the caller to reconcile.
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

import anyio
import httpx
import trio

from venue.budgets import RateBudgets
from venue.cache import MetadataCache
from venue.config import VenueConfig
from venue.errors import (
    VenueError,
    VenueNotFound,
    VenueRateLimited,
    VenueRejected,
    VenueRestricted,
    VenueTimeout,
    VenueUnavailable,
)
from venue.http11 import Http11Pool, Http11Response, Http11Transport
from venue.parse.values import MalformedResponse, loads
from venue.restrictions import body_retry_after, restricted_mode
from venue.tls import client_context

T = TypeVar("T")
logger = logging.getLogger(__name__)

# An answer as a runner got it: httpx's, or the lean pool's (status, fields, body). The
# runner reads only what both have: ``status_code``, ``headers.get``, ``content``, ``text``.
Answer = httpx.Response | Http11Response

_MISSING = object()
_DEFAULT_RETRY_AFTER = 5

VenueObserver = Callable[["VenueRequest", float, "VenueError | None"], None]
_observers: list[VenueObserver] = []
RATE_LIMIT_WARNING = "Poly-RateLimit-Warning"
SIGNER_HEADER = "POLY_ADDRESS"
# (signer, kind, its new limit per window or None without budgets, the header's text)
WarningObserver = Callable[[str, str, "float | None", str], None]
_warning_observers: list[WarningObserver] = []


def add_warning_observer(observer: WarningObserver) -> None:
    """Call ``observer(signer, kind, limit, text)`` on every rate-limit warning (metrics)."""
    if observer not in _warning_observers:
        _warning_observers.append(observer)


def _warned(budgets: RateBudgets | None, request: VenueRequest, response: Answer) -> None:
    """Read the answer's rate-limit warning: back the signer off and tell the observers."""
    text = response.headers.get(RATE_LIMIT_WARNING)
    if text is None:
        return
    signer = request.headers.get(SIGNER_HEADER) or ""
    backed = None if budgets is None else budgets.warned(request.api, request.method,
                                                         request.path, signer)
    kind, limit = backed if backed is not None else ("other", None)
    for observer in _warning_observers:
        with contextlib.suppress(Exception):  # an observer must never break a venue call
            observer(signer.lower(), kind, limit, text)


def add_observer(observer: VenueObserver) -> None:
    """Call ``observer(request, seconds, error_or_None)`` after every HTTP exchange (metrics)."""
    if observer not in _observers:
        _observers.append(observer)


def _observe(request: VenueRequest, started: float, error: VenueError | None) -> None:
    seconds = time.perf_counter() - started
    for observer in _observers:
        with contextlib.suppress(Exception):  # an observer must never break a venue call
            observer(request, seconds, error)


@dataclass(frozen=True, slots=True)
class VenueRequest:
    """What to send: API (``gamma``/``clob``/``data``), method, path, query, body, headers."""

    api: str
    method: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retryable: bool = True
    weight: int = 1  # orders a batch carries (its signer's budget counts each)


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """A request and how to read its JSON answer; optionally cached for ``cache_ttl``
    (``refresh``: asked of the venue even when cached, and cached again)."""

    request: VenueRequest
    parse: Callable[[Any], T]
    cache_key: str | None = None
    cache_ttl: float | None = None
    refresh: bool = False
    # An order or cancel: what makes its signer's rate-limit tier lookup, asked first when
    # due (``RateBudgets.tier_due``; made only then: orders are the hot path), and the
    # tokens its answer costs beyond the request's weight (a cancel-all's cancelled
    # orders: ACCOUNTS.md §12).
    tier: Callable[[], Call[Any]] | None = None
    charge: Callable[[T], int] | None = None


def query(**params: Any) -> tuple[tuple[str, str], ...]:
    """Query pairs without the None values; lists repeat the key; booleans as true/false."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, bool):
                pairs.append((key, "true" if item else "false"))
            else:
                pairs.append((key, str(item)))
    return tuple(pairs)


# --- shared policy -------------------------------------------------------------------------


def parse_retry_after(value: str | None, now: float | None = None) -> int | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0, int(when.timestamp() - current + 0.999))


def _error_message(body: Any, fallback: str) -> str:
    if isinstance(body, Mapping):
        for key in ("error", "errorMsg", "message", "detail"):
            if body.get(key):
                return str(body[key])
    if isinstance(body, str) and body.strip():
        return body.strip()[:300]
    return fallback


def _decode_error_body(response: Answer) -> Any:
    try:
        return loads(response.content)
    except VenueError:
        return response.text


def error_for_response(response: Answer, request: VenueRequest) -> VenueError | None:
    """The venue error a non-2xx answer means, or None for success."""
    status = response.status_code
    if status < 400:
        return None
    body = _decode_error_body(response)
    where = f"{request.method} {request.api}{request.path}"
    if status == 404:
        return VenueNotFound(_error_message(body, f"{where}: not found"))
    mode = restricted_mode(status, body)
    if mode is not None:
        hint = parse_retry_after(response.headers.get("Retry-After"))
        hint = body_retry_after(body) if hint is None else hint
        kind = VenueRateLimited if status == 429 else VenueRestricted
        return kind(f"{where}: {_error_message(body, mode)}", mode=mode,
                    retry_after=_DEFAULT_RETRY_AFTER if hint is None else hint)
    if status >= 500:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        message = f"{where}: venue error {status}: {_error_message(body, '')}".rstrip(": ")
        kwargs = {"retry_after": _DEFAULT_RETRY_AFTER if retry_after is None else retry_after}
        if status == 504:
            # A gateway timeout does not tell whether the upstream acted: same as a timeout.
            return VenueTimeout(message, **kwargs)
        return VenueUnavailable(message, **kwargs)
    message = _error_message(body, f"{where}: rejected ({status})")
    return VenueRejected(message, status=status, body=body)


def error_for_exception(exc: httpx.HTTPError, request: VenueRequest) -> VenueError:
    """Map an httpx transport failure to a venue error."""
    where = f"{request.method} {request.api}{request.path}"
    if isinstance(exc, httpx.TimeoutException):
        return VenueTimeout(f"{where}: timed out ({type(exc).__name__})", retry_after=1)
    return VenueUnavailable(f"{where}: {type(exc).__name__}: {exc}", retry_after=1)


def retry_delay(
    config: VenueConfig, attempt: int, error: VenueError, wait_hint: int | None = None
) -> float | None:
    """Seconds to wait before retry number ``attempt`` (1-based), or None to give up.

    ``wait_hint`` is the venue's Retry-After: honoured when short, and when long we give up
    at once so the caller can reschedule with ``retry_after`` instead of blocking.
    """
    if not isinstance(error, VenueUnavailable) or attempt > config.max_retries:
        return None
    backoff = min(config.backoff_cap, config.backoff_base * (2 ** (attempt - 1)))
    backoff *= 0.5 + random.random() / 2  # jitter so many workers do not retry in lockstep
    if wait_hint is not None:
        if wait_hint > config.max_retry_after:
            return None
        return max(backoff, float(wait_hint))
    return backoff


def _cached(cache: MetadataCache | None, call: Call[Any]) -> Any:
    if cache is None or call.cache_key is None or call.refresh:
        return _MISSING
    return cache.get(call.cache_key, _MISSING)


def _store(cache: MetadataCache | None, call: Call[Any], config: VenueConfig, value: Any) -> None:
    if cache is not None and call.cache_key is not None:
        ttl = config.cache_ttl if call.cache_ttl is None else call.cache_ttl
        if ttl > 0:
            cache.set(call.cache_key, value, ttl)


def _timeout(config: VenueConfig) -> httpx.Timeout:
    return httpx.Timeout(config.timeout, connect=config.connect_timeout)


def _limits(config: VenueConfig) -> httpx.Limits:
    return httpx.Limits(
        max_connections=config.max_connections,
        max_keepalive_connections=config.max_connections,
    )


def _build(client: httpx.Client | httpx.AsyncClient, config: VenueConfig,
           req: VenueRequest) -> httpx.Request:
    headers = {"Accept": "application/json", "User-Agent": config.user_agent, **req.headers}
    if req.body is not None:
        headers.setdefault("Content-Type", "application/json")
    return client.build_request(
        req.method,
        config.base_url(req.api) + req.path,
        params=list(req.params) if req.params else None,
        content=req.body.encode("utf-8") if req.body is not None else None,
        headers=headers,
    )


def _result(response: Answer, call: Call[T]) -> T:
    error = error_for_response(response, call.request)
    if error is not None:
        raise error
    decoded = loads(response.content) if response.content else None
    try:
        return call.parse(decoded)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        where = f"{call.request.method} {call.request.api}{call.request.path}"
        raise MalformedResponse(f"{where}: unreadable answer: {exc!r}") from exc


class _Attempt:
    """Outcome of one send: the parsed value, or the error and the venue's Retry-After."""

    __slots__ = ("error", "value", "wait_hint")

    def __init__(self) -> None:
        self.value: Any = _MISSING
        self.error: VenueError | None = None
        self.wait_hint: int | None = None

    def settle(self, call: Call[Any], response: Answer) -> None:
        try:
            self.value = _result(response, call)
        except VenueUnavailable as exc:
            self.error = exc
            retry_after = response.headers.get("Retry-After")
            self.wait_hint = parse_retry_after(retry_after)

    def fail(self, call: Call[Any], exc: httpx.HTTPError) -> None:
        self.error = error_for_exception(exc, call.request)

    def next_delay(self, config: VenueConfig, call: Call[Any], attempt: int) -> float | None:
        assert self.error is not None
        if not call.request.retryable:
            return None
        return retry_delay(config, attempt, self.error, self.wait_hint)


# --- runners -------------------------------------------------------------------------------


class _Runner:
    """The request loop both runners share: cache, rate budget, send, map, retry.

    Written once as a coroutine over the runner's ``_send`` and ``_pause``. The async runner
    awaits it as its ``run``; the blocking runner's ``_send`` and ``_pause`` block instead
    of suspending, so the loop never yields there and ``_blocking`` finishes it in one step.
    """

    config: VenueConfig
    cache: MetadataCache | None
    budgets: RateBudgets | None

    async def _send(self, req: VenueRequest) -> Answer:
        raise NotImplementedError

    async def _pause(self, seconds: float) -> None:
        raise NotImplementedError

    async def _exchange(self, call: Call[T]) -> T:
        """Send ``call`` (from cache when fresh), retrying reads; return its parsed answer."""
        hit = _cached(self.cache, call)
        if hit is not _MISSING:
            return hit
        attempt = 0
        while True:
            attempt += 1
            outcome = _Attempt()
            if self.budgets is not None:
                if call.tier is not None and attempt == 1:
                    await self._tier(call.tier, call.request.headers.get(SIGNER_HEADER))
                while (wait := _take(self.budgets, call.request)) > 0:
                    await self._pause(wait)  # this family's budget is spent: wait for room
            started = time.perf_counter()
            try:
                response = await self._send(call.request)
                _warned(self.budgets, call.request, response)
                outcome.settle(call, response)
            except httpx.HTTPError as exc:
                outcome.fail(call, exc)
            except VenueError as exc:
                _observe(call.request, started, exc)
                raise
            _observe(call.request, started, outcome.error)
            if outcome.error is None:
                _store(self.cache, call, self.config, outcome.value)
                if call.charge is not None and self.budgets is not None:
                    req = call.request
                    self.budgets.charge(req.api, req.method, req.path,
                                        req.headers.get(SIGNER_HEADER),
                                        call.charge(outcome.value))
                return outcome.value
            delay = outcome.next_delay(self.config, call, attempt)
            if delay is None:
                raise outcome.error
            await self._pause(delay)


    async def _tier(self, lookup: Callable[[], Call[Any]], signer: str | None) -> None:
        """Ask the signer's rate-limit tier when due and size its budgets by it; a venue
        that cannot say now leaves the last one known (asked again at the next refresh)."""
        assert self.budgets is not None
        if not signer or not self.budgets.tier_due(signer):
            return
        try:
            tier = await self._exchange(lookup())
        except VenueError as exc:
            logger.info("rate-limit tier of %s not read: %s", signer, exc)
            tier = None
        self.budgets.set_tier(signer, tier)


def _blocking(loop: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (the blocking runner's loop)."""
    try:
        loop.send(None)
    except StopIteration as done:
        return done.value
    loop.close()
    raise RuntimeError("the blocking venue runner's loop suspended")


class SyncTransport(_Runner):
    """Blocking runner over one pooled ``httpx.Client`` (keep-alive connection reuse)."""

    def __init__(
        self,
        config: VenueConfig,
        http_client: httpx.Client | None = None,
        cache: MetadataCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.cache = cache
        self._sleep = sleep
        self.budgets = _budgets(config)
        self._client = http_client or httpx.Client(
            timeout=_timeout(config), limits=_limits(config), follow_redirects=True,
            verify=client_context(),
        )

    async def _send(self, req: VenueRequest) -> Answer:
        return self._client.send(_build(self._client, self.config, req))  # blocks: see _Runner

    async def _pause(self, seconds: float) -> None:
        self._sleep(seconds)

    def run(self, call: Call[T]) -> T:
        """Send ``call`` (from cache when fresh), retrying reads; return its parsed answer."""
        return _blocking(self._exchange(call))

    def close(self) -> None:
        """Close pooled connections."""
        self._client.close()


def _lean_request(client: Http11Pool, config: VenueConfig, req: VenueRequest
                  ) -> Awaitable[Http11Response]:
    url = config.base_url(req.api) + req.path
    if req.params:
        url += "?" + urlencode(req.params)
    headers = {"Accept": "application/json", **req.headers}
    body = req.body.encode("utf-8") if req.body is not None else None
    if body is not None:
        headers.setdefault("Content-Type", "application/json")
    return client.fetch(req.method, url, headers, body)


def lean_transport(config: VenueConfig) -> Http11Transport | None:
    """The lean HTTP/1.1 transport for an async client, or None for httpx's own.

    httpx's own when ``lean_http`` is off, a proxy is configured (the pool does not do
    proxies) or the caller is not under trio (the pool is trio's).
    """
    if not config.lean_http or config.behind_proxy or not _running_trio():
        return None
    return Http11Transport(Http11Pool(timeout=config.timeout,
                                      connect_timeout=config.connect_timeout,
                                      max_connections=config.max_connections,
                                      user_agent=config.user_agent))


class AsyncTransport(_Runner):
    """Async runner over one ``httpx.AsyncClient``; works under trio and asyncio.

    The client's transport is chosen here, once: the one given with ``http_client``, else
    ``lean_transport``'s (the lean kept-alive HTTP/1.1 pool of ``venue.http11``, a fraction
    of httpx's CPU per request, which the copy engine's order fan-out and polling pay on one
    loop), else httpx's default. Both raise httpx's errors, mapped below.

    Fast path: with the lean transport, requests go to its pool directly instead of through
    ``AsyncClient.send`` (httpx's request building and client layers cost more CPU than the
    whole lean exchange: ``bench/order_post_cpu.py`` measured ~100 µs of loop CPU per order
    until written and ~190 µs in all on this path, ~220 and ~400 µs through
    ``AsyncClient.send`` over the same transport), and its answer is read as the pool's
    ``Http11Response`` (the fields the runner reads, without an ``httpx.Response``).
    """

    def __init__(
        self,
        config: VenueConfig,
        http_client: httpx.AsyncClient | None = None,
        cache: MetadataCache | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        lean = lean_transport(config) if http_client is None else None
        self._client = http_client or httpx.AsyncClient(
            transport=lean, timeout=_timeout(config), limits=_limits(config),
            follow_redirects=True, verify=client_context(),
        )
        # The fast path's pool (see the class docstring): the lean transport's own.
        self._lean: Http11Pool | None = lean.pool if lean is not None else None
        self.budgets = _budgets(config)

    async def _send(self, req: VenueRequest) -> Answer:
        if self._lean is not None:
            return await _lean_request(self._lean, self.config, req)
        return await self._client.send(_build(self._client, self.config, req))

    async def _pause(self, seconds: float) -> None:
        await anyio.sleep(seconds)

    run = _Runner._exchange  # awaited as it is: no extra coroutine on the hot path

    async def aclose(self) -> None:
        """Close pooled connections (the lean pool's too: it is the client's transport)."""
        await self._client.aclose()


def _budgets(config: VenueConfig) -> RateBudgets | None:
    share = config.rate_budget_share
    return RateBudgets(share) if share > 0 else None


def _take(budgets: RateBudgets, req: VenueRequest) -> float:
    return budgets.take(req.api, req.method, req.path, req.headers.get(SIGNER_HEADER),
                        req.weight)


def _running_trio() -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


def join_ids(ids: Sequence[str]) -> str:
    """Comma-joined ids for query parameters that take lists."""
    return ",".join(ids)
