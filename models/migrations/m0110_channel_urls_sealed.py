"""Channel URLs sealed at rest (issue 41): ``notification_channels.url_sealed``. A webhook,
Discord or Slack URL carries its receiver's token in its path or query, so it is stored
sealed like the signing secrets, and ``target`` keeps only what may be shown (scheme, host,
``…``).

The rows already stored are moved by ``copytrade migrate`` right after this step
(``services/notifications/secrets.py``, ``seal_plain_urls``): sealing needs the wallet
encryption key, which a migration (models floor) does not hold. Until then a row's plain
``target`` still sends.

And a Telegram channel linked to a group (its chat id is negative; a person's is not) is
turned off: in a group every member could command the account, and links are now taken in a
private chat only (services/identity/telegram_bot.py). Its owner links it again there."""

import peewee
from playhouse.migrate import migrate

GROUP_LINK = "linked to a group: send the /start code again in a private chat with the bot"


class NotificationChannel(peewee.Model):
    kind = peewee.CharField(max_length=16)
    target = peewee.TextField(default="")
    enabled = peewee.BooleanField(default=True)
    disabled_reason = peewee.CharField(max_length=200, null=True)

    class Meta:
        table_name = "notification_channels"


def apply(database: peewee.Database, migrator: object) -> None:
    """Add ``url_sealed``; turn off Telegram channels linked to a group."""
    migrate(migrator.add_column("notification_channels", "url_sealed",
                                peewee.TextField(null=True)))
    unlink_groups(database)


def unlink_groups(database: peewee.Database) -> int:
    """Turn off (and unlink) every Telegram channel whose chat is a group; how many."""
    with database.bind_ctx([NotificationChannel]):
        return (NotificationChannel.update(enabled=False, target="",
                                           disabled_reason=GROUP_LINK)
                .where(NotificationChannel.kind == "telegram",
                       NotificationChannel.target.startswith("-")).execute())
