"""Webhook signing secrets: ``whsec_`` + base64 of 32 random bytes, shown once, stored sealed
(they must be read back to sign). A rotation keeps the previous secret signing beside the
new one for NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS, so a receiver can switch without a gap."""

from __future__ import annotations

import base64
import secrets

from chain.keys import decrypt_secret, encrypt_secret
from models.base import utcnow
from models.notifications import NotificationChannel
from services.platform import chain_access

PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh signing secret."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def _context(channel_id: object) -> str:
    # Bound to the row: a sealed secret copied to another channel does not open.
    return f"notification_channels:{channel_id}"


def seal(channel_id: object, secret: str) -> str:
    """``secret`` sealed for storage on channel ``channel_id``."""
    keys = chain_access.current().sealing
    return encrypt_secret(secret.encode(), keys.keys[keys.current_id], keys.current_id,
                          _context(channel_id))


def unseal(channel_id: object, sealed: str) -> str:
    """The secret stored sealed on channel ``channel_id``."""
    return decrypt_secret(sealed, chain_access.current().sealing.keys,
                          _context(channel_id)).decode()


def signing_secrets(channel: NotificationChannel) -> list[str]:
    """The secrets a message is signed with now: the current one, and the previous one
    while its overlap lasts."""
    found = [unseal(channel.id, channel.secret_sealed)] if channel.secret_sealed else []
    if (channel.previous_secret_sealed and channel.previous_secret_until
            and channel.previous_secret_until > utcnow()):
        found.append(unseal(channel.id, channel.previous_secret_sealed))
    return found
