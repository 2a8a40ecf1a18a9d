"""Confirmations a person sees for agents' money-moving tool calls (issue 47).

``agent_confirmations`` records each one durably (asked, approved or declined, used), bound
to the credential, the tool and a digest of the exact arguments. ``api_keys`` and
``oauth_approvals`` gain ``confirm_money_tools`` (on by default): the owner's switch to
let that key or that app move money without asking."""

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


def apply(database: peewee.Database, migrator: object) -> None:
    """Create agent_confirmations; add confirm_money_tools to keys and OAuth approvals."""
    with database.bind_ctx([AgentConfirmation]):
        database.create_tables([AgentConfirmation])
    migrate(migrator.add_column("api_keys", "confirm_money_tools",
                                peewee.BooleanField(default=True)),
            migrator.add_column("oauth_approvals", "confirm_money_tools",
                                peewee.BooleanField(default=True)))
