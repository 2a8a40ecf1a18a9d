"""Helpers for tests over HTTP: a JSON body read with Decimal numbers, the app on a real
threaded server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from werkzeug.serving import make_server

from models.base import db
from tests.conftest import free_port


def json_body(response: Any) -> Any:
    """A Flask test response's JSON body, its numbers read as Decimal (money never as float)."""
    return json.loads(response.get_data(as_text=True), parse_float=Decimal)


@contextmanager
def serving(app: Any, port: int | None = None) -> Iterator[str]:
    """``app`` on a real threaded HTTP server (the test client is serial); its base URL."""
    port = port or free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="test-http-server",
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        thread.join(10)
        # The rest of the test (and its teardown) on the app's database, whatever the
        # server's request threads bound the shared proxy to.
        db.initialize(app.extensions["database"])
