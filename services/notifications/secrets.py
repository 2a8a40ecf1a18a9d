"""What a channel keeps sealed: a webhook's signing secrets, and a URL channel's URL.

Signing secrets are ``whsec_`` + base64 of 32 random bytes, shown once, stored sealed (they
must be read back to sign). A rotation keeps the previous secret signing beside the new one
for NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS, so a receiver can switch without a gap.

A webhook, Discord or Slack URL carries its receiver's token in its path or query: it is
sealed too (``url_sealed``), and ``target`` holds only what may be shown (``shown_url``).
Every seal is bound to its row and column, and re-sealed with the wallets' after a key
rotation (``reseal_all``, run by ``copytrade wallets reseal``)."""

from __future__ import annotations

import base64
import secrets
from urllib.parse import urlsplit

from chain.errors import CryptoFailure
from chain.keys import decrypt_secret, encrypt_secret, is_current, reseal_secret
from models.base import atomic, utcnow
from models.notifications import DISCORD, SLACK, WEBHOOK, NotificationChannel
from services.platform import chain_access, errors

PREFIX = "whsec_"
# The kinds that kept their URL plain before m0110; a kind added since seals it from the
# start (services/notifications/providers/sealed_urls.py), so this list is history, not
# the kinds there are now.
PLAIN_BEFORE_M0110 = (WEBHOOK, DISCORD, SLACK)
SEALED_COLUMNS = ("secret_sealed", "previous_secret_sealed", "url_sealed")


def new_secret() -> str:
    """A fresh signing secret."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def _context(channel_id: object, column: str = "secret_sealed") -> str:
    # Bound to the row (and a URL to its column): a sealed value copied elsewhere does not open.
    if column == "url_sealed":
        return f"notification_channels:{channel_id}:url"
    return f"notification_channels:{channel_id}"


def seal(channel_id: object, secret: str, column: str = "secret_sealed") -> str:
    """``secret`` sealed for storage in ``column`` of channel ``channel_id``."""
    keys = chain_access.current().sealing
    return encrypt_secret(secret.encode(), keys.keys[keys.current_id], keys.current_id,
                          _context(channel_id, column))


def unseal(channel_id: object, sealed: str, column: str = "secret_sealed") -> str:
    """The value stored sealed in ``column`` of channel ``channel_id``."""
    return decrypt_secret(sealed, chain_access.current().sealing.keys,
                          _context(channel_id, column)).decode()


def signing_secrets(channel: NotificationChannel) -> list[str]:
    """The secrets a message is signed with now: the current one, and the previous one
    while its overlap lasts."""
    found = [unseal(channel.id, channel.secret_sealed)] if channel.secret_sealed else []
    if (channel.previous_secret_sealed and channel.previous_secret_until
            and channel.previous_secret_until > utcnow()):
        found.append(unseal(channel.id, channel.previous_secret_sealed))
    return found


def shown_url(url: str) -> str:
    """What of a channel's URL may be shown: scheme and host, the rest (a token) cut."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…"


def url_of(channel: NotificationChannel) -> str:
    """The whole URL a channel posts to (a row not moved yet by ``copytrade migrate``
    still holds it plain in ``target``)."""
    if channel.url_sealed:
        return unseal(channel.id, channel.url_sealed, "url_sealed")
    return channel.target


def seal_url(channel: NotificationChannel, url: str) -> None:
    """Store ``url`` sealed on ``channel`` (saved), showing only its scheme and host."""
    channel.url_sealed = seal(channel.id, url, "url_sealed")
    channel.target = shown_url(url)
    channel.save(only=[NotificationChannel.url_sealed, NotificationChannel.target])


def _plain_urls() -> list[NotificationChannel]:
    return list(NotificationChannel.select().where(
        NotificationChannel.kind.in_(PLAIN_BEFORE_M0110), NotificationChannel.url_sealed.is_null()))


def plain_urls_left() -> bool:
    """Whether a URL channel still holds its URL in plain text (stored before m0110)."""
    return bool(_plain_urls())


def seal_plain_urls() -> int:
    """Seal every URL still stored plain (the move of m0110); how many."""
    moved = 0
    for channel in _plain_urls():
        with atomic():
            seal_url(channel, channel.target)
        moved += 1
    return moved


def reseal_all() -> int:
    """Re-seal every channel's sealed values under the current key and format, and seal any
    URL still plain; how many channels changed. CryptoError when one does not open."""
    keys = chain_access.current().sealing
    changed = seal_plain_urls()
    for channel in NotificationChannel.select().where(
            NotificationChannel.secret_sealed.is_null(False)
            | NotificationChannel.previous_secret_sealed.is_null(False)
            | NotificationChannel.url_sealed.is_null(False)):
        try:
            stale = [name for name in SEALED_COLUMNS
                     if getattr(channel, name) and not is_current(getattr(channel, name),
                                                                 keys.current_id)]
            for name in stale:
                setattr(channel, name, reseal_secret(
                    getattr(channel, name), keys.keys, keys.current, keys.current_id,
                    _context(channel.id, name)))
        except CryptoFailure as exc:
            raise errors.CryptoError() from exc
        if not stale:
            continue
        channel.save(only=[getattr(NotificationChannel, name) for name in stale])
        changed += 1
    return changed
