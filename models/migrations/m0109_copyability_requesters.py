"""Who asked for each copyability report (issue 41, finding 3): a user's reports in flight
and of the last day are counted per requester, so one key cannot queue unlimited replays."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add ``requested_by`` (indexed with ``created_at``); earlier rows count for nobody."""
    migrate(migrator.add_column("copyability_reports", "requested_by",
                                peewee.UUIDField(null=True)),
            migrator.add_index("copyability_reports", ("requested_by", "created_at"), False))
