"""Build hook: refuse to build a package without the explorer's and dashboard's files.

Everything else is declared in pyproject.toml. The npm files listed in
``blueprints/vendor_assets.json`` are committed under ``static/vendor/`` (the package
carries them as data), so a build needs no Node; this only stops a build from a tree
where some are missing, naming them, rather than ship an explorer that cannot load.
"""

from __future__ import annotations

import json
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
VENDORED = ROOT / "static" / "vendor"
TABLE = ROOT / "blueprints" / "vendor_assets.json"


def _require_assets() -> None:
    table = json.loads(TABLE.read_text())
    # Entries with a ``dir`` are the docs site's, not the package's.
    missing = [f"static/vendor/{name}/{served}" for name, entry in table.items()
               if not name.startswith("_") and "dir" not in entry for served in entry["files"]
               if not (VENDORED / name / served).is_file()]
    if missing:
        raise SystemExit(
            "copytrade: the front-end files are missing (" + ", ".join(missing) + "). "
            "They are committed: restore them with `git checkout -- static/vendor`.")


class BuildPyWithAssets(build_py):
    """build_py that checks the vendored files first."""

    def run(self) -> None:
        _require_assets()
        super().run()


class SdistWithAssets(sdist):
    """sdist that checks the vendored files first, so the sdist carries them."""

    def run(self) -> None:
        _require_assets()
        super().run()


setup(cmdclass={"build_py": BuildPyWithAssets, "sdist": SdistWithAssets})
