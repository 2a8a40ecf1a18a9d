"""The sandbox venue's Flask app: Gamma, CLOB, Data API, the relayer, RTDS, the CLOB market
channel and the control API on one port."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import time

from flask import Flask, Response, g, request

from devstack.venue import clob, control, data_api, gamma, rate_tiers, relayer, signer_limits
from devstack.venue.config import SandboxConfig
from devstack.venue.faults import FaultRule
from devstack.venue.lifespans import lifespan_ticker
from devstack.venue.market_ws import install_market_ws
from devstack.venue.responses import error_response, json_response
from devstack.venue.rtds import install_rtds
from devstack.venue.state import SandboxState
from devstack.venue.whales import WhaleRunner

GAMMA_PREFIX = "/gamma"
CLOB_PREFIX = "/clob"
DATA_PREFIX = "/data"
CONTROL_PREFIX = "/_sandbox"
RELAYER_PREFIX = relayer.PREFIX
RTDS_PATH = "/rtds"


def create_sandbox_app(
    state: SandboxState | None = None,
    *,
    seed: int = 0,
    whales: bool = False,
    config: SandboxConfig | None = None,
) -> Flask:
    """Build the sandbox app around `state` (a fresh seeded one by default)."""
    state = state or SandboxState(config, seed=seed)
    app = Flask("copytrade_sandbox_venue")
    app.extensions["sandbox_state"] = state
    runner = WhaleRunner(state)
    app.extensions["sandbox_whales"] = runner
    # markets ending by themselves: the thread runs once a lifetime is set (lifespans.py)
    ending = lifespan_ticker(state.end_due_markets, lambda: state.config.market_lifetime)
    app.extensions["sandbox_lifespans"] = ending
    app.register_blueprint(gamma.bp, url_prefix=GAMMA_PREFIX)
    app.register_blueprint(clob.bp, url_prefix=CLOB_PREFIX)
    app.register_blueprint(data_api.bp, url_prefix=DATA_PREFIX)
    app.register_blueprint(relayer.bp, url_prefix=RELAYER_PREFIX)
    app.register_blueprint(control.bp, url_prefix=CONTROL_PREFIX)
    install_market_ws(install_rtds(app, state), state)

    @app.before_request
    def _stamp_arrival() -> None:
        # When the request reached the venue: a latency benchmark's end point, taken before
        # the venue's own work (auth, signature checks, waiting for the matching lock).
        stamped = request.environ.get("sandbox.received_at")  # by the server, on arrival
        g.venue_received_at = stamped if stamped and state.clock is time.time else state.clock()

    @app.before_request
    def _advance() -> None:
        # time acts before the request is served (lifecycle.py): delayed orders match,
        # trades settle or fail
        if state.lifecycle.busy():
            with state.lock:
                state.lifecycle.advance()

    @app.before_request
    def _tally() -> None:
        # What a client sends, per endpoint and second (compared with the real rate limits).
        if not request.path.startswith(CONTROL_PREFIX):
            rule = request.url_rule
            state.requests.count(f"{request.method} {rule.rule if rule else request.path}")

    @app.before_request
    def _inject_faults() -> Response | None:
        path = request.path
        if path.startswith(CONTROL_PREFIX):
            return None
        rule = state.faults.take(path, request.method)
        if rule is None:
            return None
        if rule.after:
            g.fault_after = rule  # served first; the answer is lost in _lose_answer
            return None
        if rule.delay:
            time.sleep(rule.delay)  # the fault itself: a stalled venue
        if not rule.status:
            return None
        return _fault_response(rule)

    @app.after_request
    def _lose_answer(response: Response) -> Response:
        rule = g.pop("fault_after", None)
        if rule is None:
            return response
        if rule.delay:
            time.sleep(rule.delay)  # the work is done; the answer comes too late
        if rule.reset:
            reset_connection(request.environ.get("werkzeug.socket"))
            return response  # its write fails on the reset socket
        if not rule.status:
            return response
        return _fault_response(rule)

    @app.before_request
    def _trading_mode() -> Response | None:
        # Restarts, restricted modes and throttling (devstack/venue/modes.py).
        path = request.path
        if not path.startswith(CLOB_PREFIX):
            return None
        delay = state.modes.throttle_delay(path)
        if delay:
            time.sleep(delay)  # Cloudflare queues the request rather than refusing it
        refusal = state.modes.gate(path[len(CLOB_PREFIX):], request.method,
                                   request.get_data(cache=True))
        if refusal is None:
            return None
        response = json_response(refusal.body, refusal.status)
        if refusal.retry_after is not None:
            response.headers["Retry-After"] = str(refusal.retry_after)
        return response

    @app.before_request
    def _signer_limits() -> Response | None:
        # Per-signer order and cancel limits (signer_limits.py): a warning header, or 429.
        path = request.path
        if not path.startswith(CLOB_PREFIX) or not (
                state.signer_limits.orders or state.signer_limits.cancels):
            return None
        warning = state.signer_limits.count(request.method, path[len(CLOB_PREFIX):],
                                            request.headers.get("POLY_ADDRESS"),
                                            _batch_size(request.get_data(cache=True)))
        if warning is None:
            return None
        if state.signer_limits.enforce:
            return error_response(f"Too Many Requests: {warning}", 429)
        g.rate_limit_warning = warning
        return None

    @app.before_request
    def _rate_tiers() -> Response | None:
        # Per-signer token buckets by tier (rate_tiers.py): 429 when the bucket is short.
        path = request.path
        if not path.startswith(CLOB_PREFIX) or not state.rate_tiers.enforce:
            return None
        admission = state.rate_tiers.admit(request.method, path[len(CLOB_PREFIX):],
                                           request.headers.get("POLY_ADDRESS"),
                                           _batch_size(request.get_data(cache=True)))
        if admission is None:
            return None
        if not admission.admitted:
            response = error_response(
                f"Too Many Requests: {admission.kind} rate limit of tier {admission.tier}", 429)
            response.headers["Retry-After"] = str(admission.retry_after)
            response.headers[rate_tiers.TIER_HEADER] = admission.tier
            return response
        g.rate_tier = admission
        return None

    @app.after_request
    def _rate_tier_headers(response: Response) -> Response:
        admission = g.pop("rate_tier", None)
        if admission is None:
            return response
        remaining = admission.remaining
        per_cancelled = request.path[len(CLOB_PREFIX):] in rate_tiers.PER_CANCELLED
        if per_cancelled and response.status_code < 300:
            cancelled = (response.get_json(silent=True) or {}).get("canceled") or []
            remaining = state.rate_tiers.charge_cancelled(request.headers["POLY_ADDRESS"],
                                                          len(cancelled))
        response.headers[rate_tiers.REMAINING_HEADER] = f"{remaining:g}"
        response.headers[rate_tiers.TIER_HEADER] = admission.tier
        return response

    @app.after_request
    def _warn(response: Response) -> Response:
        warning = g.pop("rate_limit_warning", None)
        if warning is not None:
            response.headers[signer_limits.HEADER] = warning
        return response

    @app.errorhandler(404)
    def _not_found(_exc) -> Response:
        return error_response("not found", 404)

    @app.errorhandler(405)
    def _bad_method(_exc) -> Response:
        return error_response("method not allowed", 405)

    if whales:
        runner.start()
    if state.config.market_lifetime:
        ending.start()
    return app


def _batch_size(body: bytes) -> int:
    """Orders a request carries: a batch's length, else one."""
    if not body.startswith(b"["):
        return 1
    try:
        items = json.loads(body)
    except ValueError:
        return 1
    return len(items) if isinstance(items, list) else 1


def _fault_text(status: int) -> str:
    if status == 429:
        return "Too Many Requests"
    if status == 503:
        return "Trading is currently disabled. Check polymarket.com for updates"
    return "Internal Server Error"


def _fault_response(rule: FaultRule) -> Response:
    if rule.body is not None:
        response = Response(rule.body, status=rule.status, mimetype="application/json")
    else:
        response = error_response(_fault_text(rule.status), rule.status)
    if rule.retry_after is not None:
        response.headers["Retry-After"] = str(rule.retry_after)
    return response


def reset_connection(sock: socket.socket | None) -> None:
    """Drop a client connection with no answer (reset once the server closes it)."""
    if sock is None:
        return
    with contextlib.suppress(OSError):
        # Linger 0: the final close sends a reset; the shutdown ends the exchange now (the
        # server's own file objects still hold the socket, so a close alone would wait).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
