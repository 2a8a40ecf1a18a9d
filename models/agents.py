"""Confirmations a person gives (or refuses) before an agent's money-moving tool call runs,
and the MCP tasks that follow such a call to its end."""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow

# pending: asked, not answered; approved: a person said yes on the dashboard or Telegram;
# declined: a person said no; used: the call it confirms ran (once).
STATUSES = ("pending", "approved", "declined", "used")


class AgentConfirmation(BaseModel):
    """One confirmation: bound to a credential, a tool and the digest of its exact arguments."""

    user_id = peewee.UUIDField()
    credential_kind = peewee.CharField(max_length=16)  # api_key or oauth
    credential_id = peewee.UUIDField()  # the key's id, or the OAuth approval's
    credential_name = peewee.CharField(max_length=200, default="")
    tool = peewee.CharField(max_length=64)
    arguments_digest = peewee.CharField(max_length=64)
    code_hash = peewee.CharField(max_length=64, null=True)  # the code path only
    channel = peewee.CharField(max_length=16)  # code or elicitation
    summary = peewee.TextField()  # the words and numbers the person confirms
    status = peewee.CharField(max_length=16, default="pending")
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField()
    decided_at = UTCDateTimeField(null=True)
    decided_by = peewee.CharField(max_length=16, null=True)  # agent, dashboard, telegram
    used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "agent_confirmations"
        indexes = ((("user_id", "status", "created_at"), False),
                   (("credential_id", "tool", "arguments_digest"), False))


class AgentTask(BaseModel):
    """An MCP task: one task-augmented tool call, its saved answer and the order it follows."""

    user_id = peewee.UUIDField()
    tool = peewee.CharField(max_length=64)
    order_hash = peewee.CharField(max_length=66, null=True)  # the venue's order id
    result = peewee.TextField()  # the CallToolResult JSON the call answered
    failed = peewee.BooleanField(default=False)  # the call itself was an error
    created_at = UTCDateTimeField(default=utcnow)
    ttl_ms = peewee.IntegerField(null=True)

    class Meta:
        table_name = "agent_tasks"
        indexes = ((("user_id", "created_at"), False),)
