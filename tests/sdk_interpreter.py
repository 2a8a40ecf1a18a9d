"""Run a snippet in the official SDK's interpreter (``polymarket-client``), JSON in and out.

The SDK pins ``eth-abi<6``/``eth-utils<6`` while our web3 needs ``eth-abi>=6``, so it lives
in its own test-only virtualenv (``make sdk-env`` builds ``.venv-sdk``); tests compare our
account primitives with it byte for byte. ``COPYTRADE_SDK_PYTHON`` names another
interpreter. A missing SDK env fails the test (never skips): the cross-checks are the proof.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

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
    """The SDK interpreter: ``$COPYTRADE_SDK_PYTHON``, else ``<repo>/.venv-sdk/bin/python``."""
    return Path(os.environ.get("COPYTRADE_SDK_PYTHON") or ROOT / ".venv-sdk" / "bin" / "python")


def run_sdk(script: str, payload: Any, timeout: float = 120) -> Any:
    """``result`` as ``script`` sets it, given ``payload`` (both through JSON)."""
    python = sdk_python()
    if not python.exists():
        pytest.fail(f"the official SDK's interpreter {python} is missing: run `make sdk-env` "
                    "(or point COPYTRADE_SDK_PYTHON at one with polymarket-client==0.14.0)")
    program = ("import json, sys\npayload = json.load(sys.stdin)\n" + script
               + "\nprint(json.dumps(result))\n")
    # Not our PYTHONPATH: the SDK's interpreter must see only its own libraries.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    completed = subprocess.run([str(python), "-c", program], input=json.dumps(payload),
                               capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                               env=env)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)
