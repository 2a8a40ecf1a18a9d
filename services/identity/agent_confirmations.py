"""Confirmations a person gives before an agent's money-moving tool call runs (issue 47).

Each one is a row (models/agents.py) bound to the credential (an API key, or the OAuth
approval of one app), the tool and a digest of the exact arguments; it lives 15 minutes
and runs one call. Two ways to ask:

- **code**: the call is refused with a ``confirmation_code`` the agent shows the person;
  the call again with the code runs it. The person can also approve or decline the
  pending confirmation on the dashboard (or Telegram): once approved, the agent's retry
  with the same arguments runs with or without the code; once declined, nothing does.
- **form** (an elicitation): the client shows the words and the person accepts or
  declines; the retry carries the answer and a signed ``request_state`` naming the row
  (2026-07-28), or the answer comes back on the client's session while the call waits
  (a server request in a 2025-11-25 session: ``answer`` records it, ``redeem_answered``
  spends it; the waiting is services/identity/confirmation_answers.py).

Whether a credential asks at all is its owner's switch, ``confirm_money_tools`` (on by
default). Marking a row used happens before the tool runs, atomically; if the tool then
fails, ``release`` makes it usable again (the tool's own preview or idempotency key keeps
money moving once).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from models import ApiKey
from models.agents import AgentConfirmation
from models.base import utcnow
from models.oauth import Approval
from services.identity import auth
from services.notifications import events
from services.platform import errors, keyring
from services.platform.principal import Principal, user_id_of
from services.platform.runtime import runtime

TTL = timedelta(minutes=15)
CODE_PURPOSE = "agent-confirmation-code"
STATE_PURPOSE = "mcp-request-state"
# Unambiguous when read aloud or typed from a phone: no 0/O, 1/I/L.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
FIELD = "confirmation_code"
DASHBOARD = "/dashboard/keys"  # where pending confirmations are listed
# Arguments that are not the action itself: they never change what the call does.
NOT_BOUND = frozenset({"idempotency_key", FIELD})


def credential_of(principal: Principal) -> tuple[str, UUID] | None:
    """The (kind, id) confirmations bind to: the API key, or the OAuth approval."""
    if principal.kind == "api_key" and principal.credential_id is not None:
        return "api_key", principal.credential_id
    if principal.kind == "oauth" and principal.extra.get("approval_id") is not None:
        return "oauth", UUID(str(principal.extra["approval_id"]))
    return None


def _row(kind: str, credential_id: UUID) -> ApiKey | Approval | None:
    model = ApiKey if kind == "api_key" else Approval
    return model.get_or_none(model.id == credential_id)


def required(principal: Principal) -> bool:
    """True unless the credential's owner switched confirmations off for it."""
    found = credential_of(principal)
    if found is None:
        return True  # a credential we cannot name is never exempt
    row = _row(*found)
    return row is None or bool(row.confirm_money_tools)


def owned(principal: Principal, kind: str, credential_id: UUID) -> ApiKey | Approval:
    """One of the caller's keys (``api_key``) or app approvals (``oauth``); 404 otherwise."""
    principal.require_session()
    if kind not in ("api_key", "oauth"):
        raise errors.ValidationFailed(fields={"kind": ["api_key or oauth."]})
    row = _row(kind, credential_id)
    if row is None or row.user_id != principal.user_id:
        raise errors.NotFound("No such key or app.")
    return row


def set_required(principal: Principal, kind: str, credential_id: UUID, on: bool
                 ) -> ApiKey | Approval:
    """Switch confirmations on or off for one of the caller's keys or app approvals."""
    row = owned(principal, kind, credential_id)
    row.confirm_money_tools = bool(on)
    row.save()
    return row


def switch(principal: Principal, kind: str, credential_id: UUID, on: bool,
           step_up_token: str | None) -> ApiKey | Approval:
    """``set_required`` over the API: turning the guard off lets an agent move money alone,
    so it needs a fresh step-up, as minting a money-moving key does; turning it on never."""
    if not on:
        auth.require_step_up(principal, step_up_token)
    return set_required(principal, kind, credential_id, on)


def digest(tool: str, arguments: dict[str, Any]) -> str:
    """SHA-256 of the tool and its exact arguments (minus the idempotency key and code)."""
    bound = {k: v for k, v in arguments.items() if k not in NOT_BOUND}
    text = json.dumps([tool, bound], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _name(principal: Principal, kind: str, credential_id: UUID) -> str:
    row = _row(kind, credential_id)
    if isinstance(row, ApiKey):
        return f"API key “{row.name}”"
    if isinstance(row, Approval):
        return f"app “{row.client.client_name or row.client.client_id}”"
    return "an agent"


def _code_hash(code: str) -> str:
    normalized = code.strip().upper().replace("-", "").replace(" ", "")
    return keyring.keyed_hash(runtime().settings.secret_key, CODE_PURPOSE, normalized)


def _ask(principal: Principal, tool: str, arguments: dict[str, Any], summary: str,
         channel: str, code_hash: str | None, now: datetime) -> AgentConfirmation:
    found = credential_of(principal)
    if found is None:
        raise errors.Forbidden("Money-moving tools need an API key or an OAuth token.")
    kind, credential_id = found
    return AgentConfirmation.create(
        user_id=principal.user_id, credential_kind=kind, credential_id=credential_id,
        credential_name=_name(principal, kind, credential_id), tool=tool,
        arguments_digest=digest(tool, arguments), code_hash=code_hash, channel=channel,
        summary=summary, created_at=now, expires_at=now + TTL)


def ask_code(principal: Principal, tool: str, arguments: dict[str, Any], summary: str, *,
             now: datetime | None = None) -> tuple[AgentConfirmation, str]:
    """Record a pending confirmation; the row and its code (shown this once)."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    code = f"{raw[:4]}-{raw[4:]}"
    row = _ask(principal, tool, arguments, summary, "code", _code_hash(code), now or utcnow())
    # The person hears of it on their channels (Telegram with one-tap buttons); never the
    # code, which only the agent is shown.
    events.emit(row.user_id, "agent.confirmation", f"agent.confirmation:{row.id}",
                link=DASHBOARD, agent=row.credential_name, summary=summary,
                confirmation_id=str(row.id))
    return row, code


def waiting(principal: Principal, tool: str, arguments: dict[str, Any], *,
            now: datetime | None = None) -> AgentConfirmation | None:
    """The newest live code-path confirmation for exactly this call (pending or approved)."""
    found = credential_of(principal)
    if found is None:
        return None
    return (AgentConfirmation.select()
            .where(AgentConfirmation.credential_id == found[1],
                   AgentConfirmation.tool == tool, AgentConfirmation.channel == "code",
                   AgentConfirmation.arguments_digest == digest(tool, arguments),
                   AgentConfirmation.status.in_(("pending", "approved")),
                   AgentConfirmation.expires_at > (now or utcnow()))
            .order_by(AgentConfirmation.created_at.desc()).first())


def _refuse(message: str) -> errors.ValidationFailed:
    return errors.ValidationFailed(message + " Nothing was sent.", fields={FIELD: [message]})


def _use(row: AgentConfirmation, now: datetime, *, from_status: tuple[str, ...]) -> None:
    """Mark the row used, atomically: another request using it first makes this one fail."""
    updated = (AgentConfirmation.update(status="used", used_at=now)
               .where(AgentConfirmation.id == row.id,
                      AgentConfirmation.status.in_(from_status),
                      AgentConfirmation.expires_at > now).execute())
    if updated != 1:
        raise _refuse("This confirmation was already used (or just expired).")
    row.status, row.used_at = "used", now


def _check_live(row: AgentConfirmation, tool: str, arguments: dict[str, Any],
                now: datetime) -> None:
    if row.tool != tool or row.arguments_digest != digest(tool, arguments):
        raise _refuse("This confirmation was given for a different call: the tool or its "
                      "arguments changed. Call again without it to ask for a new one.")
    if row.status == "declined":
        raise _refuse("The person declined this call.")
    if row.status == "used":
        raise _refuse("This confirmation was already used; each one runs a single call.")
    if row.expires_at <= now:
        raise _refuse(f"This confirmation expired at {row.expires_at.isoformat()}; they last "
                      f"{int(TTL.total_seconds() // 60)} minutes. Call again without it to "
                      "ask for a new one.")


def redeem_code(principal: Principal, tool: str, arguments: dict[str, Any], code: str, *,
                now: datetime | None = None) -> AgentConfirmation:
    """The confirmation the code names, marked used; ValidationFailed (nothing runs) otherwise."""
    now = now or utcnow()
    found = credential_of(principal)
    row = None if found is None else AgentConfirmation.get_or_none(
        AgentConfirmation.code_hash == _code_hash(code),
        AgentConfirmation.credential_id == found[1])
    if row is None:
        raise _refuse("Unknown confirmation_code for this credential.")
    _check_live(row, tool, arguments, now)
    _use(row, now, from_status=("pending", "approved"))
    return row


def redeem_approved(row: AgentConfirmation, *, now: datetime | None = None) -> None:
    """Use a confirmation a person approved on the dashboard or Telegram."""
    _use(row, now or utcnow(), from_status=("approved",))


def release(row: AgentConfirmation) -> None:
    """The confirmed call failed before it acted: the confirmation is usable again."""
    (AgentConfirmation.update(status="approved" if row.decided_by not in (None, "agent")
                              else "pending", used_at=None)
     .where(AgentConfirmation.id == row.id, AgentConfirmation.status == "used").execute())


# ---- the form path: a signed request_state names the row --------------------------------

def _state_key() -> bytes:
    return keyring.derive_key(runtime().settings.secret_key, STATE_PURPOSE)


def ask_on_session(principal: Principal, tool: str, arguments: dict[str, Any], summary: str,
                   *, now: datetime | None = None) -> AgentConfirmation:
    """Record a pending form confirmation whose answer comes back on the client's session."""
    return _ask(principal, tool, arguments, summary, "form", None, now or utcnow())


def ask_form(principal: Principal, tool: str, arguments: dict[str, Any], summary: str, *,
             now: datetime | None = None) -> tuple[AgentConfirmation, str]:
    """Record a pending form confirmation; the row and its integrity-protected state."""
    row = ask_on_session(principal, tool, arguments, summary, now=now)
    payload = json.dumps({"c": str(row.id), "k": str(row.credential_id), "t": tool,
                          "d": row.arguments_digest,
                          "e": int(row.expires_at.timestamp())}, separators=(",", ":"))
    body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
    mac = hmac.new(_state_key(), body.encode(), hashlib.sha256).hexdigest()
    return row, f"{body}.{mac}"


def redeem_form(principal: Principal, tool: str, arguments: dict[str, Any], state: str,
                accepted: bool, *, now: datetime | None = None) -> AgentConfirmation:
    """Check the state; accepted: the row marked used; declined: the row declined and refused."""
    now = now or utcnow()
    body, _, mac = state.partition(".")
    expected = hmac.new(_state_key(), body.encode(), hashlib.sha256).hexdigest()
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        payload = None
    found = credential_of(principal)
    if (not keyring.same(mac, expected) or not isinstance(payload, dict) or found is None
            or payload.get("k") != str(found[1])):
        raise _refuse("The requestState is not one this server gave this credential.")
    row = AgentConfirmation.get_or_none(AgentConfirmation.id == UUID(str(payload["c"])))
    if row is None:
        raise _refuse("The requestState names no confirmation.")
    _check_live(row, tool, arguments, now)
    if not accepted:
        decide_row(row, approve=False, by="agent", now=now)
        raise _refuse("The person declined this call.")
    _use(row, now, from_status=("pending",))
    return row


def _own_form(principal: Principal, confirmation_id: UUID) -> AgentConfirmation | None:
    found = credential_of(principal)
    if found is None:
        return None
    return AgentConfirmation.get_or_none(AgentConfirmation.id == confirmation_id,
                                         AgentConfirmation.credential_id == found[1],
                                         AgentConfirmation.channel == "form")


def answer(principal: Principal, confirmation_id: UUID, accepted: bool, *,
           now: datetime | None = None) -> bool:
    """Record the person's answer to a form asked on the session; False when it came too
    late (expired, already answered) or names no form of this credential."""
    row = _own_form(principal, confirmation_id)
    if row is None:
        return False
    try:
        decide_row(row, approve=accepted, by="agent", now=now)
    except errors.ValidationFailed:
        return False
    return True


def redeem_answered(principal: Principal, tool: str, arguments: dict[str, Any],
                    confirmation_id: UUID, *, now: datetime | None = None) -> AgentConfirmation:
    """The form answered on the session, marked used; ValidationFailed (nothing runs) when
    it was declined, never answered in time, or is for another call."""
    now = now or utcnow()
    row = _own_form(principal, confirmation_id)
    if row is None:
        raise _refuse("No such confirmation for this credential.")
    _check_live(row, tool, arguments, now)
    if row.status == "pending":  # asked, and the time to answer ran out
        raise _refuse("Nobody answered the confirmation in time. Call again to ask anew.")
    _use(row, now, from_status=("approved",))
    return row


# ---- the person's side: the dashboard and Telegram ------------------------------------

def pending(user: Any, *, now: datetime | None = None) -> list[AgentConfirmation]:
    """The user's live code-path confirmations awaiting a decision, newest first."""
    return list(AgentConfirmation.select()
                .where(AgentConfirmation.user_id == user_id_of(user),
                       AgentConfirmation.channel == "code",
                       AgentConfirmation.status == "pending",
                       AgentConfirmation.expires_at > (now or utcnow()))
                .order_by(AgentConfirmation.created_at.desc()))


def decide_row(row: AgentConfirmation, *, approve: bool, by: str,
               now: datetime | None = None) -> None:
    """Approve or decline a pending confirmation; ValidationFailed once it is not pending."""
    now = now or utcnow()
    updated = (AgentConfirmation.update(status="approved" if approve else "declined",
                                        decided_at=now, decided_by=by)
               .where(AgentConfirmation.id == row.id, AgentConfirmation.status == "pending",
                      AgentConfirmation.expires_at > now).execute())
    if updated != 1:
        raise errors.ValidationFailed("This confirmation was already decided, used or has "
                                      "expired.", fields={"confirmation": ["Not pending."]})


def decide(user: Any, confirmation_id: UUID, *, approve: bool, by: str) -> AgentConfirmation:
    """The user approves or declines one of their pending confirmations."""
    row = AgentConfirmation.get_or_none(AgentConfirmation.id == confirmation_id,
                                        AgentConfirmation.user_id == user_id_of(user))
    if row is None:
        raise errors.NotFound("No such confirmation.")
    decide_row(row, approve=approve, by=by)
    return AgentConfirmation.get_by_id(row.id)
