"""A real SMTP server (aiosmtpd) on a free port, wired in as ``SMTP_URL``: the ``inbox``
fixture, and ``Inbox``, the handler keeping what it receives."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email import message_from_bytes, policy
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from aiosmtpd.controller import Controller

from services.platform import mailer
from tests.conftest import DEADLINE, free_port


class Inbox:
    """An aiosmtpd handler keeping every delivered message."""

    def __init__(self) -> None:
        self.messages: list = []

    async def handle_DATA(self, server, session, envelope):
        message = message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append((envelope.rcpt_tos, message))
        return "250 OK"

    def last_for(self, address: str) -> tuple[str, str]:
        """The (code, link token) of the newest mail to ``address``."""
        for rcpt, message in reversed(self.messages):
            if address in rcpt:
                text = message.get_content()
                code = re.search(r"sign-in code is (\d{6})", text).group(1)
                link = re.search(r"(https?://\S+)", text).group(1)
                return code, parse_qs(urlparse(link).query)["token"][0]
        raise AssertionError(f"no mail to {address}")


def sign_in_over_rest(client: Any, inbox: Inbox, email: str) -> dict[str, str]:
    """Sign ``email`` in as an API user does (a mailed code, then verify-code); its
    Authorization headers."""
    assert client.post("/api/auth/magic", json={"email": email}).status_code == 202
    code, _link = inbox.last_for(email)
    verified = client.post("/api/auth/verify-code", json={"email": email, "code": code})
    assert verified.status_code == 200, verified.get_data(as_text=True)
    return {"Authorization": f"Bearer {verified.get_json()['token']}"}


@pytest.fixture
def inbox(app: Any, set_settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    """A real SMTP server on a free port receiving the app's mail (``SMTP_URL``)."""
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
