"""Operator surfaces of the web: request ids, a log line and metrics per request, /metrics.

``init_app`` installs the request hooks (before the rate limiter, so refused requests are
counted and logged too):

- the request id: the caller's ``X-Request-Id`` when sane, else a new one; echoed on the
  response, stamped on every log line of the request and copied into the meta of any job
  the request enqueues (``services.platform.jobs``), so one id follows the work into the worker;
- one structured log line per request (method, route, path, status, duration);
- request count and latency by route and status.

``GET /metrics`` is the Prometheus text exposition. It is not public: with
``METRICS_TOKEN`` set it needs ``Authorization: Bearer <METRICS_TOKEN>``; without it only
loopback clients (a scraper on the same machine) may read it, and only while ``BASE_URL`` is
a loopback URL (behind a proxy on the same host every client looks like loopback).
"""

from __future__ import annotations

import logging
import time

from flask import Blueprint, Flask, Response, g, request

from services.platform import logs, metrics
from services.platform.runtime import runtime

log = logging.getLogger("copytrade.request")

bp = Blueprint("operations", __name__)


@bp.route("/metrics")
def metrics_view() -> Response:
    """The Prometheus exposition of every series (all local processes when shared)."""
    settings = runtime().settings
    if not metrics.authorized(
            request.headers.get("Authorization"), request.remote_addr, settings.metrics.token,
            loopback_trusted=metrics.is_loopback_url(settings.base_url)):
        return Response("metrics need the operator token (Authorization: Bearer ...)\n",
                        status=401, mimetype="text/plain",
                        headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    body, content_type = metrics.exposition(settings.metrics.multiproc_dir)
    return Response(body, status=200, headers={"Content-Type": content_type})


def _start() -> None:
    # The request and g read once each (every proxy access looks the context up again).
    state = g._get_current_object()  # type: ignore[attr-defined]
    state.request_started = time.perf_counter()
    state.request_id = logs.accept_request_id(request.headers.get(logs.REQUEST_ID_HEADER))
    state.request_id_token = logs.request_id.set(state.request_id)


def _finish(response: Response) -> Response:
    current = request._get_current_object()  # type: ignore[attr-defined]
    state = g._get_current_object()  # type: ignore[attr-defined]
    started = getattr(state, "request_started", None)
    seconds = time.perf_counter() - started if started is not None else 0.0
    rule = current.url_rule
    route = rule.rule if rule is not None else "<unmatched>"
    method, path, status = current.method, current.path, response.status_code
    metrics.observe_request(method, route, status, seconds)
    request_id = getattr(state, "request_id", None)
    if request_id:
        response.headers[logs.REQUEST_ID_HEADER] = request_id
    # A dashboard that is open refreshes its panels every few seconds: those successful
    # htmx reads are counted in the metrics but logged only at DEBUG, or they drown the log.
    # Under `copytrade up` (LOG_REQUESTS=debug) a person reads the log: none at INFO.
    quiet = (runtime().settings.logging.requests == "debug"
             or (method in ("GET", "HEAD") and status < 400
                 and current.headers.get("HX-Request") == "true"))
    level = logging.DEBUG if quiet else logging.INFO
    fields = {"event": "request", "method": method, "route": route, "path": path,
              "status": status, "duration_ms": round(seconds * 1000, 2),
              "remote_addr": current.remote_addr}
    message = f"{method} {path} {status} {seconds * 1000:.1f}ms"
    # The line written straight to the JSON handler when nothing else would see its record
    # (a tenth of the record's way); through logging otherwise (tests' captures, text logs).
    if not logs.write_line(log, level, message, fields):
        log.log(level, "%s", message, extra=fields)
    return response


def _end(exc: BaseException | None) -> None:
    token = g.pop("request_id_token", None)
    if token is not None:
        try:
            logs.request_id.reset(token)
        except ValueError:  # set in another context (a streamed response): just clear it
            logs.request_id.set(None)


def init_app(app: Flask) -> None:
    """Install the request hooks and the /metrics route (call before the rate limiter)."""
    app.before_request(_start)
    app.after_request(_finish)
    app.teardown_request(_end)
    app.register_blueprint(bp)
