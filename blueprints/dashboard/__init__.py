"""The htmx dashboard under /dashboard: sign-in, keys, copy configs, wallet, positions, apps.

``register(app)`` mounts the views (one module per area), the htmx error renderer, the
session-cookie settings and ``/`` -> ``/dashboard``.
"""

from __future__ import annotations

from flask import Flask, redirect

from blueprints import errors as error_mapping
from blueprints.dashboard import (  # noqa: F401
    account,
    agent_confirmations,
    apps,
    auth,
    configs,
    error_pages,
    explore,
    keys,
    notification_settings,
    notifications,
    numbers,
    positions,
    refresh,
    session,
    sharing,
    wallet,
    words,
)
from blueprints.dashboard.base import bp
from services.platform.runtime import runtime

# Set up once, at import: a blueprint cannot change after its first registration, and
# the factory may build several apps in one process (tests do).
bp.register_error_handler(Exception, error_pages.handle)


def register(app: Flask) -> None:
    """Mount the dashboard on ``app``."""
    # The sign-in cookie: not sent on cross-site POSTs; https-only when served over https.
    if not app.config.get("SESSION_COOKIE_SAMESITE"):
        app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    if runtime().settings.base_url.startswith("https://"):
        app.config["SESSION_COOKIE_SECURE"] = True
    app.session_interface = session.SigningSessionInterface()
    app.register_blueprint(bp)
    error_mapping.register_renderer("htmx", error_pages.render_fragment)

    @app.get("/")
    def root():
        """The site's front page is the dashboard."""
        return redirect("/dashboard", 302)
