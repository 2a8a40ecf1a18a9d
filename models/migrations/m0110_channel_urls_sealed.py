"""Channel URLs sealed at rest (issue 41): ``notification_channels.url_sealed``. A webhook,
Discord or Slack URL carries its receiver's token in its path or query, so it is stored
sealed like the signing secrets, and ``target`` keeps only what may be shown (scheme, host,
``…``).

The rows already stored are moved by ``copytrade migrate`` right after this step
(``services/notifications/secrets.py``, ``seal_plain_urls``): sealing needs the wallet
encryption key, which a migration (models floor) does not hold. Until then a row's plain
``target`` still sends."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add ``url_sealed``."""
    migrate(migrator.add_column("notification_channels", "url_sealed",
                                peewee.TextField(null=True)))
