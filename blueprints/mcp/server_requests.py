"""Confirmations asked as server requests, on 2025-11-25 sessions (issue 47).

A client that declared ``elicitation`` at ``initialize`` can answer a server request. A
money-moving ``tools/call`` in its session (confirmations.AskOnSession) is then answered
with an SSE stream, the Streamable HTTP way:

1. ``elicitation/create`` (a form with the call's words), its JSON-RPC id
   ``confirm-<confirmation id>``;
2. the client POSTs its ElicitResult as a JSON-RPC response with that id, on the session
   (``answered``: recorded in the database, any web process);
3. this stream, woken through Redis, runs the call again with the answer and sends its
   result: accepted runs the tool once; declined, cancelled or unanswered when the
   confirmation expires is an ``isError`` result, and nothing is sent.

A stream comments (``:``) every KEEPALIVE_SECONDS while it waits, and takes one of the
process's long-stream slots (listen.py); with none free the call takes the code path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import Any
from uuid import UUID

from flask import Response, g, stream_with_context

from blueprints.mcp import confirmations, listen
from blueprints.mcp.protocol import JsonRpcError
from services.identity import confirmation_answers
from services.platform.principal import Principal

VERSIONS = ("2025-11-25",)  # the revisions whose sessions we ask on
ID_PREFIX = "confirm-"
KEEPALIVE_SECONDS = listen.KEEPALIVE_SECONDS
WAIT_SECONDS = 1.0  # one wait on Redis; the row is read between waits

Rerun = Callable[[confirmations.Asking], dict[str, Any]]


def confirmation_of(message: dict[str, Any]) -> UUID | None:
    """The confirmation a client's JSON-RPC response answers; None when it answers none."""
    rid = message.get("id")
    if not isinstance(rid, str) or not rid.startswith(ID_PREFIX):
        return None
    try:
        return UUID(rid[len(ID_PREFIX) :])
    except ValueError:
        return None


def answered(principal: Principal, message: dict[str, Any]) -> bool:
    """Record a client's answer to our ``elicitation/create``; whether it counted (an error
    response, like a declined form, counts as no)."""
    confirmation_id = confirmation_of(message)
    if confirmation_id is None:
        return False
    result = message.get("result")
    return confirmation_answers.answer(principal, confirmation_id, confirmations.accepted(result))


def stream(
    principal: Principal, request_id: Any, asked: confirmations.AskOnSession, rerun: Rerun
) -> Response:
    """Answer the call with its SSE stream: the form, the wait, then the call's result."""
    row = asked.row
    ask = {
        "jsonrpc": "2.0",
        "id": f"{ID_PREFIX}{row.id}",
        **confirmations.form_request(row.summary),
    }
    # Hold no database connection through a wait of up to 15 minutes (when it is ours).
    waiter = confirmation_answers.Waiter(
        row.id, owns_connection=bool(g.get("opened_db_connection"))
    )

    def frames() -> Generator[str, None, None]:
        try:
            yield listen.frame(ask)
            quiet_since = time.monotonic()
            while not waiter.settled(WAIT_SECONDS):
                if listen.STOPPING.is_set():
                    return  # the row expires unanswered; the client calls again
                if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                    quiet_since = time.monotonic()
                    yield ":\n\n"
            waiter.close()  # the connection back, for the call
            try:
                result = rerun(confirmations.Asking(answered=row.id))
            except JsonRpcError as err:  # the key lost the tool's scope meanwhile
                yield listen.frame(err.body(request_id))
                return
            yield listen.frame({"jsonrpc": "2.0", "id": request_id, "result": result})
        finally:
            waiter.close()

    released: list[bool] = []

    def release() -> None:  # once: the body may be closed before it ever started
        if not released:
            released.append(True)
            listen.give_slot(principal.user_id)

    body = listen.StreamBody(stream_with_context(frames()), release)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
