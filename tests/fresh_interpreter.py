"""Run a Python snippet in a fresh interpreter with this checkout first on the path.

For tests that must import our modules into a process whose libraries they altered first
(a library without a private name we reach for, say), without touching the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import DEADLINE

ROOT = Path(__file__).resolve().parent.parent


def run_python(script: str, *args: str, env: Mapping[str, str] | None = None,
               timeout: float = DEADLINE) -> str:
    """``script``'s standard output; fails the test with its standard error if it fails.

    ``env``: the process's whole environment (default: this one's)."""
    env = os.environ if env is None else env
    path = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT,
                            env={**env, "PYTHONPATH": path},
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout
