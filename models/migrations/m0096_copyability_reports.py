"""Copyability reports (issue 30 item 2): a target's fills replayed through a user's rules,
priced at our detection delay; one row per question asked, cached by its inputs' hash."""

import uuid

import peewee


class CopyabilityReport(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    address = peewee.CharField(max_length=42)
    window = peewee.CharField(max_length=8)
    inputs_hash = peewee.CharField(max_length=64)
    inputs = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued")
    progress_done = peewee.IntegerField(default=0)
    progress_total = peewee.IntegerField(default=0)
    stage = peewee.CharField(max_length=40, default="")
    report = peewee.TextField(null=True)
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    finished_at = peewee.DateTimeField(null=True)
    expires_at = peewee.DateTimeField()

    class Meta:
        table_name = "copyability_reports"
        indexes = ((("address", "window", "inputs_hash"), False),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create copyability_reports."""
    with database.bind_ctx([CopyabilityReport]):
        database.create_tables([CopyabilityReport])
