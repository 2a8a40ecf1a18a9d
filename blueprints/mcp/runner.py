"""Run one tool call: scope, arguments, idempotency, the service call, the result or the error.

The same steps a REST route takes through its decorators, in the order they take them:
the credential must hold the tool's scope (else ScopeRequired, which the transport
answers with 403 and an ``insufficient_scope`` challenge); the arguments are loaded with
the tool's marshmallow schema; a write with an ``idempotency_key`` runs through
``services.platform.idempotency.run_once`` (the store REST's Idempotency-Key uses, failing
closed when it is down); the result is dumped with the REST response schema. Business
failures become ``isError`` results carrying the REST error body ``{error, code, ...}``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from flask import current_app
from marshmallow import ValidationError

from blueprints.mcp import confirmations, untrusted
from blueprints.mcp.catalogue import CatalogueEntry
from blueprints.mcp.protocol import META_REPLAY
from services.platform import errors, idempotency
from services.platform.principal import Principal

log = logging.getLogger(__name__)

OK = 200


@dataclass(frozen=True)
class ToolResult:
    """A CallToolResult: structured content (or the error body), and whether it failed."""

    structured: Any
    is_error: bool = False
    replayed: bool = False
    untrusted: tuple[str, ...] = ()  # where third-party text is (Tool.untrusted)
    input_required: dict[str, Any] | None = None  # an InputRequiredResult instead

    def as_json(self) -> dict[str, Any]:
        """The ``result`` object of a tools/call response: a text block mirrors the data,
        with third-party text in the untrusted-data envelope (blueprints/mcp/untrusted.py)."""
        if self.input_required is not None:
            return dict(self.input_required)
        meta: dict[str, Any] = {}
        shown = self.structured
        found = [] if self.is_error else untrusted.pointers(self.structured, self.untrusted)
        if found:
            shown = untrusted.enveloped(self.structured, found)
            meta[untrusted.META_UNTRUSTED] = untrusted.meta(found)
        if self.replayed:
            meta[META_REPLAY] = True
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": json.dumps(shown, sort_keys=True)}],
            "structuredContent": self.structured,
            "isError": self.is_error,
        }
        if meta:
            result["_meta"] = meta
        return result


def failure(err: errors.CopytradeError) -> ToolResult:
    """The isError result for a domain error: the REST body, plus Retry-After as a field."""
    body = err.to_dict()
    if err.retry_after is not None:
        body.setdefault("retry_after", int(err.retry_after))
    return ToolResult(body, is_error=True)


def _translate(exc: Exception, tool_name: str) -> errors.CopytradeError:
    if isinstance(exc, ValidationError):
        fields = exc.normalized_messages()
        if isinstance(fields, dict) and list(fields) == ["_schema"]:
            return errors.ValidationFailed(str(fields["_schema"][0]))
        names = ", ".join(sorted(str(k) for k in fields)) if isinstance(fields, dict) else ""
        return errors.ValidationFailed(f"Validation failed: {names}." if names else None,
                                       fields=fields if isinstance(fields, dict) else None)
    translated = errors.from_external(exc)
    if translated is None:
        log.exception("tool %s failed unexpectedly", tool_name)
        return errors.InternalError()
    if translated.status >= 500:
        log.warning("tool %s: %s: %r", tool_name, translated.code, exc)
    return translated


def run(entry: CatalogueEntry, principal: Principal, arguments: dict[str, Any],
        asking: confirmations.Asking = confirmations.CODE_ONLY) -> ToolResult:
    """Call the tool for ``principal``; raises ScopeRequired when the credential lacks it."""
    tool = entry.tool
    if tool.scope is not None:
        principal.require_scope(tool.scope)
    try:
        args = entry.input_schema().load(arguments)
        key = args.pop("idempotency_key", None)
        code = args.pop(confirmations.FIELD, None)
        output = tool.output.schema()

        def execute() -> tuple[int, Any]:
            # Inside the idempotency run: a replay of a finished call needs no new
            # confirmation, and a refusal is never saved as the key's answer.
            confirmed = confirmations.check(principal, tool.name, args, code, asking)
            try:
                result = tool.call(principal, args)
            except Exception:
                confirmations.release(confirmed)
                raise
            dumped = output.dump(tool.output.present(result))
            # Through the app's JSON provider, as a REST response body would be: free-form
            # Dict fields may still hold Decimals or datetimes.
            return OK, json.loads(current_app.json.dumps(dumped))

        if key is None:
            return ToolResult(execute()[1], untrusted=tool.untrusted)
        digest = idempotency.fingerprint("mcp", tool.name, args)
        outcome = idempotency.run_once(principal.user_id, key, digest, execute)
        return ToolResult(outcome.body, replayed=outcome.replayed, untrusted=tool.untrusted)
    except confirmations.InputRequired as asked:
        return ToolResult(None, input_required=asked.result)
    except confirmations.AskOnSession:
        raise  # the transport asks on the session's stream, then runs the call again
    except Exception as exc:  # every failure is the agent's to read, never a 500
        return failure(_translate(exc, tool.name))
