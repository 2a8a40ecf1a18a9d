"""SMTP_URL parsing and delivery failures."""

from __future__ import annotations

import pytest

from services.platform import errors, mailer
from tests.conftest import free_port


def test_parse_smtp_url():
    assert mailer.parse_smtp_url("smtp://mail.local:2525") == mailer.SmtpTarget("mail.local", 2525)
    assert mailer.parse_smtp_url("smtps://u%40x:p%2Fw@mail.local") == mailer.SmtpTarget(
        "mail.local", 465, tls=True, username="u@x", password="p/w")
    assert mailer.parse_smtp_url("smtp://m:587?starttls=1").starttls is True
    for bad in ("http://mail.local", "smtp://"):
        with pytest.raises(ValueError):
            mailer.parse_smtp_url(bad)


def test_unreachable_server_is_unavailable():
    message = mailer.build_message("a@example.com", "b@example.com", "hi", "text")
    with pytest.raises(errors.Unavailable):
        mailer.send(f"smtp://127.0.0.1:{free_port()}", message)
