"""The Error ``code`` list is the SPEC's, exactly: the published enum, the codes the error
tree can raise and the status list in the OpenAPI description, each against SPEC.md."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from schemas.vocabulary import ERROR_CODES
from services.platform import errors
from tests.conftest import one_database

ROOT = Path(__file__).resolve().parents[2]


def _spec_path() -> Path:
    """SPEC.md in the ``shared`` folder beside the repo (or beside one of its parents: a
    worktree sits a level deeper than the checkout)."""
    for folder in ROOT.parents:
        candidate = folder / "shared" / "SPEC.md"
        if candidate.is_file():
            return candidate
    pytest.skip("SPEC.md is not beside the repository (../shared/SPEC.md)")


def spec_error_codes() -> set[str]:
    """The codes listed under the SPEC's "Error codes:" line."""
    text = _spec_path().read_text()
    listing = text.split("Error codes:", 1)[1].strip().split("\n\n", 1)[0]
    codes = set(re.findall(r"`([a-z_]+)`", listing))
    assert len(codes) == 18, f"the SPEC lists 18 codes, parsed {sorted(codes)}"
    return codes


def raisable_codes() -> set[str]:
    """Every code a domain error can carry: the whole tree under CopytradeError."""
    seen: set[str] = set()
    pending = [errors.CopytradeError]
    while pending:
        cls = pending.pop()
        seen.add(cls.code)
        pending.extend(cls.__subclasses__())
    return seen


def test_vocabulary_is_the_spec_list():
    assert set(ERROR_CODES) == spec_error_codes()
    assert len(ERROR_CODES) == len(set(ERROR_CODES))


def test_every_code_the_services_raise_is_in_the_spec():
    assert raisable_codes() <= spec_error_codes()


@one_database
def test_openapi_error_enum_is_the_spec_list(client):
    document = client.get("/openapi.json").get_json()
    enum = document["components"]["schemas"]["Error"]["properties"]["code"]["enum"]
    assert set(enum) == spec_error_codes()


@one_database
def test_openapi_description_gives_a_status_for_each_spec_code_and_no_other(client):
    description = client.get("/openapi.json").get_json()["info"]["description"]
    statuses = description.split("Status per code:", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", statuses)) - {"blockers"}
    assert named == spec_error_codes()


def test_an_account_not_ready_answers_with_a_spec_code_and_its_blockers(
        client, auth_headers, user):
    """A wrap before the deposit wallet is onboarded: 409 ``wallet_error``, blockers kept."""
    from services.wallets import wallets

    wallets.get_or_create_deposit_wallet(user)
    early = client.post("/api/trading-account/wrap", json={"amount": "5"},
                        headers={**auth_headers, "Idempotency-Key": str(uuid.uuid4())})
    body = early.get_json()
    assert early.status_code == 409 and body["code"] == "wallet_error"
    assert body["code"] in spec_error_codes()
    assert [b["code"] for b in body["blockers"]] == ["onboarding_incomplete"]
