"""Build hook: vendor the explorer's and dashboard's npm assets into the package.

Everything else is declared in pyproject.toml. Before the sources are collected (sdist,
wheel), the files listed in ``blueprints/vendor_assets.json`` are copied from
``node_modules`` into ``static/vendor/<name>/`` (git-ignored), which the package carries
as data, so an installed copytrade needs neither Node nor a CDN. Building from an sdist
(no node_modules) keeps the copies the sdist carries. A build that has neither stops
with the fix; an editable install does not need them (the checkout serves node_modules).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
NODE_MODULES = ROOT / "node_modules"
VENDORED = ROOT / "static" / "vendor"
TABLE = ROOT / "blueprints" / "vendor_assets.json"


def vendor_assets() -> list[str]:
    """Copy every listed asset from node_modules into static/vendor; return those found nowhere."""
    table = json.loads(TABLE.read_text())
    missing = []
    for name, entry in table.items():
        if name.startswith("_"):
            continue
        for served, inside in entry["files"].items():
            source = NODE_MODULES / entry["package"] / inside
            target = VENDORED / name / served
            if source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
            elif not target.is_file():
                missing.append(f"{entry['package']}/{inside}")
    return missing


def _require_assets() -> None:
    missing = vendor_assets()
    if missing:
        raise SystemExit(
            "copytrade: the front-end assets are missing (" + ", ".join(missing) + "). "
            "Run `npm install` in the checkout first (`make dist` does), so that the "
            "package carries the API explorer and the dashboard's scripts.")


class BuildPyWithAssets(build_py):
    """build_py that vendors the npm assets first (not needed for editable installs)."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            _require_assets()
        super().run()


class SdistWithAssets(sdist):
    """sdist that vendors the npm assets first, so the sdist carries them."""

    def run(self) -> None:
        _require_assets()
        super().run()


setup(cmdclass={"build_py": BuildPyWithAssets, "sdist": SdistWithAssets})
