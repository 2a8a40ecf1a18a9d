"""Fixtures shared by the REST API tests."""

import pytest
from aiosmtpd.controller import Controller

from services.platform import mailer
from tests.api.test_auth import Inbox
from tests.conftest import DEADLINE, free_port
from tests.trading_support import (  # noqa: F401 - fixtures registered for this directory
    eoa_allowlist,
    fresh_venue_cache,
    make_eoa_trader,
    make_sandbox_market,
    make_trader,
    market,
    trader,
)


@pytest.fixture
def inbox(app, set_settings, monkeypatch):
    """A real SMTP server on a free port, wired in as SMTP_URL."""
    # Sign-in mail waits DEADLINE for this server, not the product's 10 s: a loaded machine
    # starved the server's thread (in this process) past 10 s at load 31.
    monkeypatch.setattr(mailer, "SMTP_TIMEOUT_SECONDS", DEADLINE)
    handler = Inbox()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    set_settings(smtp_url=f"smtp://127.0.0.1:{port}")
    yield handler
    controller.stop()
