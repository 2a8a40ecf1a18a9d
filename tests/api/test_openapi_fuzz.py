"""Schemathesis against /openapi.json: no server error, no response the description forbids.

Every operation of the published description gets a few generated requests, valid ones
and (negative mode) invalid ones, sent to the app with real credentials: a session JWT
where the operation takes only sessions, otherwise an API key holding every scope. Each
response must not be a 5xx and must match the status, content type and schema documented
for it. The venue is the sandbox and the chain the session's anvil, so nothing is
excluded: routes that would move money meet an unfunded account and answer the
documented 402 or 400.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from schemas.vocabulary import SCOPES

# A few examples keep the run short; FUZZ_EXAMPLES=200 (random, not derandomized) digs deeper.
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "4"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def _credential(operation: Any, session: str, key: str) -> dict[str, str]:
    """The Authorization header that operation's ``security`` asks for (none if public)."""
    schemes = {name for requirement in operation.definition.raw.get("security", [])
               for name in requirement}
    if not schemes:
        return {}
    token = session if schemes == {"sessionJWT"} else key
    return {"Authorization": f"Bearer {token}"}


def _exercise(operation: Any, mode: GenerationMode, headers: dict[str, str]) -> None:
    @given(case=operation.as_strategy(mode))
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
              derandomize="FUZZ_EXAMPLES" not in os.environ,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()


TEST_ONLY_PREFIX = "/api/_"


@pytest.mark.usefixtures("wallet_chain")
def test_every_operation_answers_as_documented(app, session_token, api_key):
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    key = api_key(*SCOPES)
    failures: dict[str, str] = {}
    # Other test modules may register test-only routes (/api/_access/...) on the shared app.
    operations = [op for op in (result.ok() for result in schema.get_all_operations())
                  if not op.path.startswith(TEST_ONLY_PREFIX)]
    assert len(operations) > 50
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _exercise(operation, mode, _credential(operation, session_token, key))
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # no input to get wrong (no parameters)
            except Exception as exc:  # every operation runs; all failures are reported at once
                failures[f"{operation.label} ({mode.value})"] = str(exc)[:2000]
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
