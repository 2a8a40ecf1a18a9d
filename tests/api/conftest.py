"""Fixtures shared by the REST API tests."""

import pytest
from aiosmtpd.controller import Controller

from tests.api.test_auth import Inbox
from tests.conftest import free_port
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
def inbox(app, set_settings):
    """A real SMTP server on a free port, wired in as SMTP_URL."""
    handler = Inbox()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    set_settings(smtp_url=f"smtp://127.0.0.1:{port}")
    yield handler
    controller.stop()
