"""Run a snippet in the official SDK's own interpreter (`polymarket-client`, package `polymarket`).

The SDK pins eth-abi<6 and eth-utils<6, which our web3 8 cannot share, so it lives in a separate
virtualenv (`make sdk-env` builds `.venv-sdk`); `COPYTRADE_SDK_PYTHON` names another interpreter.
A snippet reads one JSON value from stdin and prints one JSON value to stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDK_PYTHON_ENV = "COPYTRADE_SDK_PYTHON"


def sdk_python() -> Path:
    """The SDK interpreter: $COPYTRADE_SDK_PYTHON, else the repository's .venv-sdk."""
    return Path(os.environ.get(SDK_PYTHON_ENV) or ROOT / ".venv-sdk" / "bin" / "python")


def run_sdk(script: str, payload: Any = None, *, timeout: float = 120) -> Any:
    """Run `script` in the SDK interpreter with `payload` as JSON on stdin; return its JSON."""
    python = sdk_python()
    if not python.is_file():
        pytest.fail(f"the official SDK's interpreter {python} is missing: run `make sdk-env` "
                    f"(or set {SDK_PYTHON_ENV})")
    # neither our checkout nor our virtualenv may leak into the SDK's process
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([str(python), "-c", script], input=json.dumps(payload), env=env,
                            capture_output=True, text=True, timeout=timeout, cwd="/")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
