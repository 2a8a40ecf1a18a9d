"""Every Prometheus series copytrade exports, defined once, with the small calls that feed them.

The places where things happen call one function here each (the request hooks, the rate
limiter's breach handler, the idempotency service, the venue transport's observer, the
job recorder, the copy engine's decision and settlement records); nothing else defines a
metric.

Processes: gunicorn runs several web processes and the worker is another one, so values
live in ``prometheus_client``'s multiprocess files when ``PROMETHEUS_MULTIPROC_DIR`` is
set (``copytrade serve`` and ``copytrade up`` set it to ``instance/prometheus`` and clean
it at start). Then the web's ``GET /metrics`` adds up every process of the machine,
workers included. A worker on another machine serves its own ``/metrics`` on
``WORKER_METRICS_PORT`` (see ``serve_worker_metrics``). Without the variable (tests, a
single process) the default in-process registry is used.

prometheus_client itself reads ``PROMETHEUS_MULTIPROC_DIR`` from the environment once, at
import, to choose where values live; so the variable must be in a process's environment
when it starts (the CLI gives it to the processes it starts). Our own functions take the
folder from Settings as an argument and read no environment.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from venue import http as venue_http

log = logging.getLogger(__name__)


# Web requests and venue calls: milliseconds to tens of seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Jobs: claims and withdrawals can wait minutes on the chain.
JOB_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 180.0, 600.0)
# Copy latency (target trade seen -> our order sent) and detection delay.
COPY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)

# -- the web ------------------------------------------------------------------------------

HTTP_REQUESTS = Counter("copytrade_http_requests_total", "HTTP requests answered.",
                        ["method", "route", "status"])
HTTP_LATENCY = Histogram("copytrade_http_request_duration_seconds",
                         "Time to answer an HTTP request.", ["method", "route", "status"],
                         buckets=LATENCY_BUCKETS)
RATE_LIMITED = Counter("copytrade_rate_limit_rejections_total",
                       "Requests refused with 429 by the per-IP rate limit.")
IDEMPOTENCY_REPLAYS = Counter("copytrade_idempotency_replays_total",
                              "Keyed writes answered with the saved first response.")
IDEMPOTENCY_CONFLICTS = Counter(
    "copytrade_idempotency_conflicts_total",
    "Keyed writes refused: in_flight (409, the first still runs) or mismatch (400, the key "
    "was used for another request).", ["kind"])

# -- the venue ----------------------------------------------------------------------------

VENUE_LATENCY = Histogram("copytrade_venue_request_duration_seconds",
                          "Time of one HTTP exchange with the venue.",
                          ["api", "method", "endpoint"], buckets=LATENCY_BUCKETS)
VENUE_ERRORS = Counter("copytrade_venue_request_errors_total",
                       "Venue exchanges that failed, by error class.",
                       ["api", "method", "endpoint", "error"])
VENUE_RATE_WARNINGS = Counter(
    "copytrade_venue_rate_limit_warnings_total",
    "Venue answers carrying Poly-RateLimit-Warning (per-signer limits in warning mode), by "
    "the budget they backed off (orders, cancels, other).", ["kind"])
VENUE_SIGNER_LIMIT = Gauge(
    "copytrade_venue_signer_limit",
    "The lowest per-signer budget (requests per 10 s) among the copy engines' signers now: "
    "below the ceiling after a Poly-RateLimit-Warning, rising as it recovers; lowest over "
    "live engines.", ["kind"], multiprocess_mode="livemin")

# -- copying ------------------------------------------------------------------------------

COPY_DETECTIONS = Counter("copytrade_copy_detections_total",
                          "Target fills detected (new, de-duplicated), by source.", ["source"])
COPIES = Counter("copytrade_copies_total", "Copy decisions to trade, by kind (mirror or exit).",
                 ["kind"])
COPY_SKIPS = Counter("copytrade_copy_skips_total", "Copy decisions not to trade, by reason.",
                     ["reason"])
COPY_OUTCOMES = Counter("copytrade_copy_outcomes_total",
                        "Copy orders settled, by final status (and reason when failed).",
                        ["status", "reason"])
COPY_LATENCY = Histogram("copytrade_copy_latency_seconds",
                         "Target trade seen -> copy order sent.", buckets=COPY_BUCKETS)
COPY_DETECTION_DELAY = Histogram("copytrade_copy_detection_delay_seconds",
                                 "Target trade time -> seen by the copy engine.",
                                 buckets=COPY_BUCKETS)
COPY_EXECUTORS = Gauge("copytrade_copy_executors",
                       "Copy executors running: targets leased and configs run, summed over "
                       "live worker processes.", ["kind"], multiprocess_mode="livesum")

DETECTION_SOURCE = Gauge("copytrade_detection_source",
                        "Copy engines detecting trades by each source (feed: RTDS "
                        "activity/trades; matched: RTDS activity/orders_matched; chain: "
                        "OrderFilled logs with the feed degraded; poll: Data API polls), "
                        "summed over live workers.",
                        ["source"], multiprocess_mode="livesum")
DETECTION_SINCE = Gauge("copytrade_detection_source_since_seconds",
                        "Unix time the engine's current detection source became live.",
                        ["source"], multiprocess_mode="livemax")
FEED_STALE = Counter("copytrade_feed_stale_reconnects_total",
                     "RTDS connections dropped for carrying no trade frame (stale).")

# -- jobs ---------------------------------------------------------------------------------

JOB_DURATION = Histogram("copytrade_job_duration_seconds",
                         "Background job run time, by job and outcome.", ["job", "outcome"],
                         buckets=JOB_BUCKETS)
JOB_FAILURES = Counter("copytrade_job_failures_total", "Background jobs that failed.", ["job"])

_IDISH = re.compile(r"^(0x[0-9a-fA-F]+|\d+|[0-9a-fA-F-]{16,}|[A-Za-z0-9_-]{24,})$")


def _safe(fn: Any) -> Any:
    """Metrics must never break the work they watch: log and carry on."""
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception:  # pragma: no cover - a bug here must not fail a request
            log.exception("recording metric %s failed", fn.__name__)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


# -- recording ----------------------------------------------------------------------------


@_safe
def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """One answered HTTP request (route is the URL rule, not the raw path)."""
    labels = (method, route, status)
    series = _REQUEST_SERIES.get(labels)
    if series is None:
        text = (method, route, str(status))
        series = _REQUEST_SERIES.setdefault(
            labels, (HTTP_REQUESTS.labels(*text), HTTP_LATENCY.labels(*text)))
    series[0].inc()
    series[1].observe(seconds)


# Each (method, route, status)'s two children, found once: ``labels()`` validates and locks
# on every call, which cost more than the increments. As bounded as the series themselves.
_REQUEST_SERIES: dict[tuple[str, str, int], tuple[Any, Any]] = {}


@_safe
def rate_limit_rejected() -> None:
    """A request refused by the rate limit."""
    RATE_LIMITED.inc()


@_safe
def idempotency_replayed() -> None:
    """A keyed write answered from its saved response."""
    IDEMPOTENCY_REPLAYS.inc()


@_safe
def idempotency_conflict(kind: str) -> None:
    """A keyed write refused (``in_flight`` or ``mismatch``)."""
    IDEMPOTENCY_CONFLICTS.labels(kind).inc()


def venue_endpoint(path: str) -> str:
    """The path with ids and slugs replaced, so the label set stays small."""
    parts = path.split("?")[0].split("/")
    out = []
    for i, part in enumerate(parts):
        if i > 0 and parts[i - 1] == "slug":
            out.append("{slug}")
        elif part and _IDISH.match(part):
            out.append("{id}")
        else:
            out.append(part)
    return "/".join(out)


@_safe
def observe_venue(api: str, method: str, path: str, seconds: float,
                  error: BaseException | None) -> None:
    """One HTTP exchange with the venue (the transport's observer calls this)."""
    endpoint = venue_endpoint(path)
    VENUE_LATENCY.labels(api, method, endpoint).observe(seconds)
    if error is not None:
        VENUE_ERRORS.labels(api, method, endpoint, type(error).__name__).inc()


@_safe
def copy_detected(source: str) -> None:
    """A new target fill queued for an executor (by ``feed``, ``matched``, ``poll``, ``chain``
    or ``pending``)."""
    COPY_DETECTIONS.labels(source).inc()


@_safe
def copy_decisions(rows: Iterable[Mapping[str, Any]]) -> None:
    """The intents just recorded: copies by kind, skips by reason, detection delays."""
    for row in rows:
        if row.get("status") == "skipped":
            COPY_SKIPS.labels(row.get("reason") or "unknown").inc()
        else:
            COPIES.labels(row.get("kind") or "mirror").inc()
        delay = row.get("detection_delay_ms")
        if delay is not None:
            COPY_DETECTION_DELAY.observe(int(delay) / 1000)


@_safe
def copy_settled(changes: Mapping[str, Any]) -> None:
    """An intent's order outcome was recorded: its final status and its latency."""
    status = changes.get("status")
    if status in ("filled", "failed", "cancelled", "skipped"):
        reason = "" if status == "filled" else str(changes.get("reason") or "")
        COPY_OUTCOMES.labels(status, reason).inc()
    latency = changes.get("latency_ms")
    if latency is not None:
        COPY_LATENCY.observe(int(latency) / 1000)


@_safe
def copy_executors(targets: int, configs: int) -> None:
    """This process's copy engine runs ``targets`` leased targets with ``configs`` configs."""
    COPY_EXECUTORS.labels("targets").set(targets)
    COPY_EXECUTORS.labels("configs").set(configs)


@_safe
def detection_source(source: str) -> None:
    """This process's copy engine now detects trades by ``source`` (feed, matched, chain or
    poll)."""
    for kind in ("feed", "matched", "chain", "poll"):
        DETECTION_SOURCE.labels(kind).set(1 if kind == source else 0)
    DETECTION_SINCE.labels(source).set_to_current_time()


@_safe
def feed_stale(count: int = 1) -> None:
    """RTDS connections were dropped for carrying no trades."""
    FEED_STALE.inc(count)


@_safe
def job_finished(job: str, outcome: str, seconds: float) -> None:
    """A background job ended: ``succeeded``, ``failed`` or ``requeued``."""
    JOB_DURATION.labels(job or "unknown", outcome).observe(seconds)
    if outcome == "failed":
        JOB_FAILURES.labels(job or "unknown").inc()


# -- exporting ----------------------------------------------------------------------------


def exposition(multiproc_dir: str | None = None) -> tuple[bytes, str]:
    """The text exposition of every series (all processes of the machine when shared)."""
    if multiproc_dir:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=multiproc_dir)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def process_exited(pid: int, multiproc_dir: str | None = None) -> None:
    """Forget a dead process's live gauges (gunicorn's child_exit, the worker at exit)."""
    if multiproc_dir:
        multiprocess.mark_process_dead(pid, path=multiproc_dir)


def is_internal(address: str | None) -> bool:
    """True for loopback addresses (allowed to scrape without a token)."""
    try:
        return ipaddress.ip_address((address or "").split("%")[0]).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str | None) -> bool:
    """True when ``url``'s host is a loopback address or ``localhost``."""
    host = urlsplit(url or "").hostname or ""
    return host == "localhost" or is_internal(host)


def authorized(authorization: str | None, remote_addr: str | None,
               token: str | None, *, loopback_trusted: bool = True) -> bool:
    """Whether a scrape may read /metrics: the Bearer METRICS_TOKEN, or loopback without one.

    ``loopback_trusted`` False (a public BASE_URL) takes the loopback exemption away: a
    reverse proxy on the same host makes every outside client a loopback peer.
    """
    if token:
        scheme, _, given = (authorization or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(),
                                                                  token.encode())
    return loopback_trusted and is_internal(remote_addr)


def serve_worker_metrics(host: str, port: int, token: str | None,
                         multiproc_dir: str | None = None) -> threading.Thread:
    """Serve /metrics for this (worker) process in a daemon thread; same access rule as web."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ.get("PATH_INFO") != "/metrics":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        if not authorized(environ.get("HTTP_AUTHORIZATION"), environ.get("REMOTE_ADDR"),
                          token):
            start_response("401 Unauthorized", [("Content-Type", "text/plain"),
                                                ("WWW-Authenticate", "Bearer")])
            return [b"unauthorized\n"]
        body, content_type = exposition(multiproc_dir)
        start_response("200 OK", [("Content-Type", content_type)])
        return [body]

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:  # scrapes are not worth a log line
            pass

    server = make_server(host, port, app, handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True)
    thread.start()
    log.info("worker metrics on http://%s:%d/metrics", host, port)
    return thread


def _venue_observer(request: Any, seconds: float, error: BaseException | None) -> None:
    observe_venue(request.api, request.method, request.path, seconds, error)


@_safe
def venue_rate_warning(signer: str, kind: str, limit: float | None, text: str) -> None:
    """The venue warned a signer (``Poly-RateLimit-Warning``); its budget backed off."""
    VENUE_RATE_WARNINGS.labels(kind).inc()
    log.warning("venue rate-limit warning for signer %s (%s): %s; budget now %s per 10 s",
                signer, kind, text, limit)


@_safe
def venue_signer_limits(lowest: Mapping[str, float]) -> None:
    """A copy engine's lowest per-signer budget of each kind now (``RateBudgets.lowest``),
    set each heartbeat so the gauge follows the slow recovery, not only the warning."""
    for kind, limit in lowest.items():
        VENUE_SIGNER_LIMIT.labels(kind).set(limit)


# The venue layer knows nothing of ours; it reports every exchange to its observers.
venue_http.add_observer(_venue_observer)
venue_http.add_warning_observer(venue_rate_warning)
