"""The official SDK's interpreter: the one `make sdk-env` pins, found by COPYTRADE_SDK_PYTHON
or in the repository, and its absence a failure naming `make sdk-env` (never a skip)."""

from __future__ import annotations

import re

import pytest

from tests.sdk_env import ROOT, SDK_PYTHON_ENV, run_sdk, sdk_python, sdk_result

SDK_VERSIONS = """
from importlib.metadata import version
result = {name: version(name) for name in ("polymarket-client", "eth-abi", "eth-utils")}
"""


def test_the_sdk_env_holds_the_pinned_sdk_and_its_conflicting_pins() -> None:
    pinned = re.search(r"^SDK_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert pinned is not None
    versions = sdk_result(SDK_VERSIONS, {})
    assert versions["polymarket-client"] == pinned.group(1)
    # Why it is a separate env: these majors cannot sit beside web3 8 (eth-abi>=6).
    assert int(versions["eth-abi"].split(".")[0]) < 6
    assert int(versions["eth-utils"].split(".")[0]) < 6


def test_the_sdk_runs_in_its_own_interpreter() -> None:
    found = run_sdk(
        "import json, sys, polymarket\n"
        "print(json.dumps({'echo': json.load(sys.stdin), 'path': sys.path}))",
        {"x": 1},
    )
    assert found["echo"] == {"x": 1}
    assert not any(str(ROOT) == entry for entry in found["path"])  # our checkout stays out


def test_a_missing_sdk_interpreter_fails_and_names_make_sdk_env(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(SDK_PYTHON_ENV, str(tmp_path / "no-such-python"))
    assert sdk_python() == tmp_path / "no-such-python"
    with pytest.raises(pytest.fail.Exception, match="make sdk-env"):
        run_sdk("print(1)")


def test_the_default_is_the_repo_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SDK_PYTHON_ENV, raising=False)
    assert sdk_python() == ROOT / ".venv-sdk" / "bin" / "python"
