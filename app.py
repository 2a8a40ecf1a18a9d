"""The application factory: config, database, extensions, blueprints, error handlers."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask, g, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

import config as settings_module
from blueprints import (
    access,
    assets,
    dashboard,
    errors,
    health,
    operations,
    ratelimit,
    security_headers,
    telegram,
    unsubscribe,
    wellknown,
)
from blueprints import api as rest
from blueprints import mcp as mcp_server
from blueprints import oauth as oauth_surface
from blueprints.flask_app import App
from blueprints.json_provider import IsoJSONProvider
from models import database, migrate
from models.base import db
from services.platform import errors as domain_errors
from services.platform import json_bodies, wiring
from services.platform import runtime as process_runtime

MAX_BODY_BYTES = 1024 * 1024


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the web app; ``config`` overrides settings read from the environment."""
    overrides = dict(config or {})
    settings = settings_module.load(overrides=overrides)
    setting_names = settings.flat()

    app = App(__name__, instance_path=settings.instance_path,
                template_folder="templates", static_folder="static")
    app.json = IsoJSONProvider(app)  # moments in free-form objects as ISO 8601 UTC
    # Settings are read typed (``runtime().settings``); app.config holds only Flask's own
    # keys: the session cookie's key, and what the caller passed that is no setting
    # (TESTING, REQUIRE_MIGRATED, SESSION_COOKIE_*...).
    app.config["SECRET_KEY"] = settings.secret_key
    app.config.update({k: v for k, v in overrides.items() if k not in setting_names})
    app.config["MAX_CONTENT_LENGTH"] = overrides.get("MAX_CONTENT_LENGTH", MAX_BODY_BYTES)
    app.config.setdefault("REQUIRE_MIGRATED", True)
    if settings.trusted_proxies:
        # The client address (rate-limit bucket, logs) and scheme come from the hops our
        # own proxies appended; without the setting X-Forwarded-* are ignored, since any
        # client can send them.
        hops = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore

    # Enqueues, venue calls and wallets of this process go where this app's settings say.
    built = wiring.build_runtime(settings)
    app.extensions["runtime"] = built
    previous = process_runtime.install(built)
    if previous is not None:
        previous.close()  # its pooled venue connections (reopened if it is used again)
    bound = database.bind(settings.database_url)
    app.extensions["database"] = bound
    if app.config["REQUIRE_MIGRATED"]:
        with bound.connection_context():
            migrate.require_migrated(bound)

    _register_request_hooks(app)
    operations.init_app(app)  # request ids, request log and metrics, /metrics; first
    security_headers.init_app(app)  # unknown Host -> 400 before anything else looks
    ratelimit.init_app(app)  # before the access gate: a flood stops before any lookup
    access.init_app(app)  # every /api route's declared policy, deny by default
    rest.register(app)
    mcp_server.init_app(app)  # POST /api/mcp on the same Api, /.well-known/mcp.json
    oauth_surface.register(app)  # /oauth/..., /api/oauth/approvals, the svco_ resolver
    wellknown.register(app)  # /.well-known discovery documents
    app.register_blueprint(health.bp)
    app.register_blueprint(unsubscribe.bp)  # /notifications/unsubscribe (RFC 8058)
    app.register_blueprint(telegram.bp)  # /notifications/telegram/webhook
    assets.init_app(app)  # the explorer's and dashboard's npm assets; warns when missing
    dashboard.register(app)  # /dashboard (htmx pages), its htmx error renderer, / redirect
    errors.register(app)  # after smorest's, so ours wins for HTTPException
    logging.getLogger(__name__).debug("app created with venue %s", settings.venue.name)
    return app


def _register_request_hooks(app: Flask) -> None:
    @app.before_request
    def open_connection() -> None:
        # Close at teardown only what this request opened (a test or a job
        # running the app in-process may hold its own connection).
        g.opened_db_connection = db.connect(reuse_if_open=True)

    @app.before_request
    def check_body() -> None:
        # webargs reads bodies silently: an oversized or non-JSON body would
        # surface as "missing field" errors. Say what is really wrong.
        current = request._get_current_object()  # type: ignore[attr-defined]  # one lookup
        length = current.content_length
        if not length:  # no body (every GET): nothing to check
            return
        limit = app.config["MAX_CONTENT_LENGTH"]
        if limit and length > limit:
            raise RequestEntityTooLarge()
        if (current.path.startswith("/api/") and current.method in ("POST", "PUT", "PATCH")
                and not current.is_json):
            err = domain_errors.BadRequest(
                "Unsupported media type: send application/json.")
            err.status = 415
            raise err
        # Before any parser: deep nesting can crash it (see services/platform/json_bodies.py).
        # /api/mcp answers this itself, as a JSON-RPC parse error (-32700).
        if (current.path != "/api/mcp" and current.is_json
                and json_bodies.too_deep(current.get_data(cache=True))):
            raise domain_errors.BadRequest(
                f"The JSON body nests deeper than {json_bodies.MAX_DEPTH} levels.")

    @app.teardown_appcontext
    def close_connection(exc: BaseException | None) -> None:
        if g.pop("opened_db_connection", False) and not db.is_closed():
            db.close()


def web_process_ready(_worker: Any) -> None:
    """In a gunicorn worker, once the app is loaded: its stop signals also end the open MCP
    listen streams, whose threads would otherwise keep the stopping process alive until it
    is killed; and the loaded app is left out of the collector's work."""
    import gc
    import signal

    from blueprints.mcp import listen

    # The app's modules live as long as the process: frozen, the collector no longer walks
    # them, at each full collection nor at exit, where that walk took seconds and
    # outlived the grace period (the process then killed, "Perhaps out of memory?").
    gc.freeze()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        handler = signal.getsignal(signum)

        def ending(number: int, frame: Any, handler: Any = handler) -> None:
            listen.STOPPING.set()
            handler(number, frame)

        signal.signal(signum, ending)
    # as gunicorn has it: a stop signal never interrupts a system call of a request
    signal.siginterrupt(signal.SIGTERM, False)
