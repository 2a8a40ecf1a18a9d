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

# Builds ``config``, an SDK environment config, from ``payload["contracts"]`` (our
# AccountContracts as a dict, whose field names are the SDK's where the SDK has the field).
SDK_CONFIG = """
import dataclasses
from polymarket._internal.environment import PRODUCTION_CONFIG, WalletDerivationConfig
_known = {f.name for f in dataclasses.fields(PRODUCTION_CONFIG)}
_derivation_fields = {f.name for f in dataclasses.fields(WalletDerivationConfig)}
_table = {k: v for k, v in payload["contracts"].items()
          if k in _known or k in _derivation_fields}  # ours alone (the ramps) stay out
_derivation = {f.name: _table.pop(f.name) for f in dataclasses.fields(WalletDerivationConfig)}
config = dataclasses.replace(PRODUCTION_CONFIG, wallet_derivation=WalletDerivationConfig(
    **_derivation), **_table)
"""


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


def sdk_result(script: str, payload: Any, *, timeout: float = 120) -> Any:
    """``result`` as ``script`` sets it, given ``payload`` (both through JSON)."""
    program = ("import json, sys\npayload = json.load(sys.stdin)\n" + script
               + "\nprint(json.dumps(result))\n")
    return run_sdk(program, payload, timeout=timeout)
