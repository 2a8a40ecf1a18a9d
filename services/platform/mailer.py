"""Outgoing email over SMTP (smtplib), configured by SMTP_URL.

``smtp://host:port`` (plain), ``smtp://host:port?starttls=1`` (upgrade), or
``smtps://host:port`` (TLS from the start); ``user:password@`` logs in.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import parse_qs, unquote, urlparse

from services.platform import errors

log = logging.getLogger(__name__)

SMTP_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class SmtpTarget:
    """Where and how to deliver mail."""

    host: str
    port: int
    tls: bool = False
    starttls: bool = False
    username: str | None = None
    password: str | None = None


def parse_smtp_url(url: str) -> SmtpTarget:
    """The SmtpTarget described by an SMTP_URL; ValueError when it is malformed."""
    parsed = urlparse(url)
    if parsed.scheme not in ("smtp", "smtps"):
        raise ValueError(f"SMTP_URL must start with smtp:// or smtps://, not {url!r}")
    if not parsed.hostname:
        raise ValueError("SMTP_URL names no host")
    tls = parsed.scheme == "smtps"
    query = parse_qs(parsed.query)
    starttls = query.get("starttls", ["0"])[0].lower() in ("1", "true", "yes")
    return SmtpTarget(
        host=parsed.hostname, port=parsed.port or (465 if tls else 25), tls=tls,
        starttls=starttls,
        username=unquote(parsed.username) if parsed.username else None,
        password=unquote(parsed.password) if parsed.password else None,
    )


def build_message(mail_from: str, to: str, subject: str, text: str) -> EmailMessage:
    """A plain-text message with the headers a mail server expects."""
    message = EmailMessage()
    message["From"] = mail_from
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain="copytrade.local")
    message.set_content(text)
    return message


def send(smtp_url: str, message: EmailMessage, timeout: float | None = None) -> None:
    """Deliver ``message`` through the server at ``smtp_url``, each exchange within
    ``timeout`` seconds (SMTP_TIMEOUT_SECONDS when None); Unavailable (503) on failure."""
    target = parse_smtp_url(smtp_url)
    seconds = timeout or SMTP_TIMEOUT_SECONDS
    try:
        if target.tls:
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                target.host, target.port, timeout=seconds,
                context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(target.host, target.port, timeout=seconds)
        with client:
            if target.starttls:
                client.starttls(context=ssl.create_default_context())
            if target.username:
                client.login(target.username, target.password or "")
            client.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        # The message holds a login secret: name the failure, never the content.
        log.warning("email to the SMTP server %s:%s failed: %s", target.host, target.port,
                    type(exc).__name__)
        raise errors.Unavailable("The email could not be sent; try again shortly.") from exc
