"""Run a Python snippet in a fresh interpreter with this checkout first on the path.

For tests that must import our modules into a process whose libraries they altered first
(a library without a private name we reach for, say), without touching the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_python(script: str, *args: str, timeout: float = 120) -> str:
    """``script``'s standard output; fails the test with its standard error if it fails."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": path},
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout
