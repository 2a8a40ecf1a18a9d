"""Asking a person before a money-moving tool runs: the MCP side of services' confirmations.

``check`` runs inside the tool call, before the service: it returns the confirmation the
call spends (None when no confirmation is needed), raises ``InputRequired`` to ask with a
form (2026-07-28 clients that declared elicitation: an ``InputRequiredResult`` with an
``elicitation/create`` form and a signed ``requestState``), or raises ValidationFailed
naming ``confirmation_code`` (every other client: the body's ``confirmation`` carries the
code, the words to show and when it expires). A 2025-11-25 session whose client declared
elicitation is asked with a server request instead: ``check`` raises ``AskOnSession`` and
the transport answers the call with an SSE stream carrying ``elicitation/create``
(server_requests.py), then runs the call again with the answer (``Asking.answered``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from services.identity import agent_confirmations, money_tools
from services.platform import errors
from services.platform.principal import Principal

INPUT_KEY = "confirm"
FIELD = agent_confirmations.FIELD


@dataclass(frozen=True)
class Asking:
    """What the client can do and what it sent back: a form, and its answer on a retry."""

    form: bool = False
    responses: Any = None  # params.inputResponses of a retry
    state: str | None = None  # params.requestState of a retry
    on_session: bool = False  # a server request can ask (a 2025-11-25 session's stream)
    answered: UUID | None = None  # the confirmation answered on the session


CODE_ONLY = Asking()


class InputRequired(Exception):
    """The call needs the person's answer first: carries the InputRequiredResult."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input required")
        self.result = result


class AskOnSession(Exception):
    """The call needs the person's answer, asked with a server request on the session."""

    def __init__(self, row: agent_confirmations.AgentConfirmation) -> None:
        super().__init__("ask on the session")
        self.row = row


def form_request(words: str) -> dict[str, Any]:
    """The ``elicitation/create`` request (method and params) showing ``words``."""
    schema = {"type": "object", "required": [INPUT_KEY], "properties": {INPUT_KEY: {
        "type": "boolean", "title": "I confirm", "default": False,
        "description": "Tick to let the agent do exactly this."}}}
    return {"method": "elicitation/create", "params": {
        "mode": "form", "message": words, "requestedSchema": schema}}


def _form(words: str, state: str) -> dict[str, Any]:
    return {"resultType": "input_required", "inputRequests": {INPUT_KEY: form_request(words)},
            "requestState": state}


def accepted(answer: Any) -> bool:
    """Whether an ElicitResult says yes: accepted, with the box ticked."""
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return False
    content = answer.get("content")
    return isinstance(content, dict) and content.get(INPUT_KEY) is True


def _accepted(responses: Any) -> bool:
    return accepted(responses.get(INPUT_KEY) if isinstance(responses, dict) else None)


def _needed(row: agent_confirmations.AgentConfirmation, code: str | None,
            message: str) -> errors.ValidationFailed:
    shown: dict[str, Any] = {"id": str(row.id), "summary": row.summary,
                             "expires_at": row.expires_at.isoformat(), "status": row.status}
    if code is not None:
        shown["code"] = code
    return errors.ValidationFailed(message, fields={FIELD: [message]}, confirmation=shown)


def check(principal: Principal, tool: str, args: dict[str, Any], code: str | None,
          asking: Asking) -> agent_confirmations.AgentConfirmation | None:
    """The confirmation this call spends; raises when a person must answer first."""
    if asking.answered is not None:  # asked on the session: its answer decides, whatever
        return agent_confirmations.redeem_answered(principal, tool, args, asking.answered)
    if not money_tools.guarded(tool) or not agent_confirmations.required(principal):
        return None
    words = money_tools.summary(principal.user, tool, args)
    if words is None:
        return None
    if asking.state is not None:
        return agent_confirmations.redeem_form(principal, tool, args, asking.state,
                                               _accepted(asking.responses))
    if code:
        return agent_confirmations.redeem_code(principal, tool, args, code)
    waiting = agent_confirmations.waiting(principal, tool, args)
    if waiting is not None and waiting.status == "approved":
        agent_confirmations.redeem_approved(waiting)
        return waiting
    if asking.on_session:
        raise AskOnSession(agent_confirmations.ask_on_session(principal, tool, args, words))
    if asking.form:
        _, state = agent_confirmations.ask_form(principal, tool, args, words)
        raise InputRequired(_form(words, state))
    if waiting is not None:
        raise _needed(waiting, None, (
            "This call still waits for a person: call again with its confirmation_code, or "
            "once they approve it on the dashboard. Nothing was sent."))
    row, new_code = agent_confirmations.ask_code(principal, tool, args, words)
    raise _needed(row, new_code, (
        "A person must confirm this call. Show them confirmation.summary; when they agree, "
        "call again with the same arguments and confirmation_code (valid 15 minutes, once). "
        "They can also approve it on the dashboard. Nothing was sent."))


def release(row: agent_confirmations.AgentConfirmation | None) -> None:
    """The confirmed call failed before it acted: its confirmation is usable again."""
    if row is not None:
        agent_confirmations.release(row)
