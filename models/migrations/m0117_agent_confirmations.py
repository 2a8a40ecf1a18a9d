"""Confirmations a person sees for agents' money-moving tool calls (issue 47).

``agent_confirmations`` records each one durably (asked, approved or declined, used), bound
to the credential, the tool and a digest of the exact arguments. ``api_keys`` and
``oauth_approvals`` gain ``confirm_money_tools`` (on by default): the owner's switch to
let that key or that app move money without asking. ``agent_tasks``: MCP tasks (a
task-augmented tools/call), each the saved answer of one call and the order it follows."""

import uuid

import peewee
from playhouse.migrate import migrate


class AgentConfirmation(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user_id = peewee.UUIDField()
    credential_kind = peewee.CharField(max_length=16)
    credential_id = peewee.UUIDField()
    credential_name = peewee.CharField(max_length=200, default="")
    tool = peewee.CharField(max_length=64)
    arguments_digest = peewee.CharField(max_length=64)
    code_hash = peewee.CharField(max_length=64, null=True)
    channel = peewee.CharField(max_length=16)
    summary = peewee.TextField()
    status = peewee.CharField(max_length=16, default="pending")
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField()
    decided_at = peewee.DateTimeField(null=True)
    decided_by = peewee.CharField(max_length=16, null=True)
    used_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "agent_confirmations"
        indexes = ((("user_id", "status", "created_at"), False),
                   (("credential_id", "tool", "arguments_digest"), False))


class AgentTask(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user_id = peewee.UUIDField()
    tool = peewee.CharField(max_length=64)
    order_hash = peewee.CharField(max_length=66, null=True)
    result = peewee.TextField()
    failed = peewee.BooleanField(default=False)
    created_at = peewee.DateTimeField()
    ttl_ms = peewee.IntegerField(null=True)

    class Meta:
        table_name = "agent_tasks"
        indexes = ((("user_id", "created_at"), False),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create agent_confirmations and agent_tasks; add confirm_money_tools to keys and OAuth
    approvals."""
    with database.bind_ctx([AgentConfirmation, AgentTask]):
        database.create_tables([AgentConfirmation, AgentTask])
    migrate(migrator.add_column("api_keys", "confirm_money_tools",
                                peewee.BooleanField(default=True)),
            migrator.add_column("oauth_approvals", "confirm_money_tools",
                                peewee.BooleanField(default=True)))
