"""`make run` installs nothing system-wide (issue 29, "First five minutes"): everything it
would do stays in the checkout (.venv, node_modules); only `make test` brings Debian's
Chromium, for the browser tests. Read from make's own dry run of every step (-n -B)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What reaches outside the checkout: a system package manager, root, a global npm or a
# user-site pip install.
SYSTEM_WIDE = re.compile(r"\b(apt-get|apt|dnf|yum|brew|sudo)\b|npm (install|i) (-g|--global)"
                         r"|pip install[^\n]*--user")


def _dry_run(target: str) -> str:
    return subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def test_make_run_installs_nothing_system_wide() -> None:
    steps = _dry_run("run")
    assert "copytrade up" in steps and "npm install" in steps  # the dry run saw the setup
    assert not SYSTEM_WIDE.search(steps), steps


def test_only_make_test_brings_chromium() -> None:
    assert "apt-get install -y chromium" in _dry_run("test")
