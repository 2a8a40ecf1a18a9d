"""The session interface builds its cookie serializer once per key set, and follows key changes."""

from __future__ import annotations

import pytest
from flask import Flask
from itsdangerous import BadSignature

from blueprints.dashboard.session import SigningSessionInterface


def _app(secret: str, fallbacks: list[str] | None = None) -> Flask:
    app = Flask("session-test")
    app.secret_key = secret
    app.config["SECRET_KEY_FALLBACKS"] = fallbacks or []
    app.session_interface = SigningSessionInterface()
    return app


def test_one_serializer_per_key_set_and_key_changes_are_followed():
    app = _app("first")
    interface = app.session_interface
    serializer = interface.get_signing_serializer(app)
    assert interface.get_signing_serializer(app) is serializer  # built once
    cookie = serializer.dumps({"n": 1})

    app.secret_key = "second"  # rotated: the old cookie no longer opens
    rotated = interface.get_signing_serializer(app)
    assert rotated is not serializer
    assert rotated.loads(rotated.dumps({"n": 2})) == {"n": 2}
    with pytest.raises(BadSignature):
        rotated.loads(cookie)

    app.config["SECRET_KEY_FALLBACKS"] = ["first"]  # ...unless the old key is a fallback
    assert interface.get_signing_serializer(app).loads(cookie) == {"n": 1}


def test_no_secret_no_session():
    app = _app("")
    assert app.session_interface.get_signing_serializer(app) is None
