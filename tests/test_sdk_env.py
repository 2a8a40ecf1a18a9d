"""The official SDK's interpreter: found by COPYTRADE_SDK_PYTHON, and missing means a failure."""

from __future__ import annotations

import pytest

from tests.sdk_env import SDK_PYTHON_ENV, run_sdk


def test_a_missing_sdk_interpreter_fails_and_names_make_sdk_env(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(SDK_PYTHON_ENV, str(tmp_path / "no-such-python"))
    with pytest.raises(pytest.fail.Exception, match="make sdk-env"):
        run_sdk("print(1)")


def test_the_sdk_runs_in_its_own_interpreter() -> None:
    found = run_sdk(
        "import json, sys, eth_abi, polymarket\n"
        "print(json.dumps({'echo': json.load(sys.stdin), 'eth_abi': eth_abi.__version__}))",
        {"x": 1},
    )
    assert found["echo"] == {"x": 1}
    assert int(found["eth_abi"].split(".")[0]) < 6  # the pin that keeps it out of our venv
