"""One-click unsubscribe links for notification email (RFC 8058): the channel's id and a keyed
hash of it, so the link works without signing in and cannot be made for another channel."""

from __future__ import annotations

from uuid import UUID

from models.notifications import EMAIL, NotificationChannel
from services.platform import keyring
from services.platform.runtime import runtime

PURPOSE = "notification-unsubscribe"


def token(channel_id: UUID | str) -> str:
    """The unsubscribe token of one email channel."""
    digest = keyring.keyed_hash(runtime().settings.secret_key, PURPOSE, str(channel_id))
    return f"{channel_id}.{digest[:40]}"


def unsubscribe_url(channel_id: UUID | str) -> str:
    """The link an email's List-Unsubscribe header and footer carry."""
    return f"{runtime().settings.base_url}/notifications/unsubscribe/{token(channel_id)}"


def channel_for(value: str) -> NotificationChannel | None:
    """The email channel a token names, when the token is genuine."""
    channel_id, _, _digest = value.partition(".")
    try:
        UUID(channel_id)
    except ValueError:
        return None
    if not keyring.same(token(channel_id), value):
        return None
    return NotificationChannel.get_or_none(NotificationChannel.id == channel_id,
                                           NotificationChannel.kind == EMAIL)


def unsubscribe(value: str) -> bool:
    """Turn off the email channel ``value`` names; whether the token was genuine."""
    channel = channel_for(value)
    if channel is None:
        return False
    NotificationChannel.update(enabled=False, disabled_reason="unsubscribed from the email").where(
        NotificationChannel.id == channel.id).execute()
    return True
