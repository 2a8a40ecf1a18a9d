"""The SDK interpreter is the one ``make sdk-env`` pins, and its absence fails loudly."""

from __future__ import annotations

import re

import pytest

from tests.sdk_interpreter import ROOT, run_sdk, sdk_python

SDK_VERSIONS = """
from importlib.metadata import version
result = {name: version(name) for name in ("polymarket-client", "eth-abi", "eth-utils")}
"""


def test_the_sdk_env_holds_the_pinned_sdk_and_its_conflicting_pins() -> None:
    pinned = re.search(r"^SDK_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert pinned is not None
    versions = run_sdk(SDK_VERSIONS, {})
    assert versions["polymarket-client"] == pinned.group(1)
    # Why it is a separate env: these majors cannot sit beside web3 8 (eth-abi>=6).
    assert int(versions["eth-abi"].split(".")[0]) < 6
    assert int(versions["eth-utils"].split(".")[0]) < 6


def test_a_missing_sdk_env_fails_naming_make_sdk_env(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path) -> None:
    monkeypatch.setenv("COPYTRADE_SDK_PYTHON", str(tmp_path / "no-python"))
    assert sdk_python() == tmp_path / "no-python"
    with pytest.raises(pytest.fail.Exception, match="make sdk-env"):
        run_sdk("result = 1", {})


def test_the_default_is_the_repo_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COPYTRADE_SDK_PYTHON", raising=False)
    assert sdk_python() == ROOT / ".venv-sdk" / "bin" / "python"
