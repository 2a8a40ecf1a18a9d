"""Refresh the vendored front-end files in ``static/vendor/`` from ``node_modules``.

The API explorer's and the dashboard's npm files (``blueprints/vendor_assets.json`` lists
each, with the package version it comes from) are committed under ``static/vendor/``, and
the docs site's (its search shim for pages opened from a file) under
``docs/assets/vendor/``, so every install has them without Node. To update one: change its
version in ``package.json`` and in ``vendor_assets.json``, then ``make vendor-assets``
(``npm install``, then this), and commit what changed. ``tests/test_vendor_assets.py``
fails while the two versions differ or the committed files are not the package's.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "blueprints" / "vendor_assets.json"
VENDORED = ROOT / "static" / "vendor"


def vendored_dir(entry: dict, vendored: Path = VENDORED) -> Path:
    """The folder an entry's files are committed in: its ``dir``, or ``static/vendor``."""
    return ROOT / entry["dir"] if "dir" in entry else vendored


def refresh(node_modules: Path = ROOT / "node_modules", vendored: Path = VENDORED) -> list[str]:
    """Copy every listed file from ``node_modules`` into ``vendored``; those not found."""
    missing = []
    for name, entry in json.loads(TABLE.read_text()).items():
        if name.startswith("_"):
            continue
        package = node_modules / entry["package"]
        installed = json.loads((package / "package.json").read_text())["version"] \
            if (package / "package.json").is_file() else None
        if installed != entry["version"]:
            missing.append(f"{entry['package']}@{entry['version']} (node_modules has "
                           f"{installed or 'none'})")
            continue
        for served, inside in entry["files"].items():
            target = vendored_dir(entry, vendored) / name / served
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(package / inside, target)
    return missing


if __name__ == "__main__":
    absent = refresh()
    if absent:
        sys.exit("not refreshed: " + ", ".join(absent) + "; run `npm install` first")
    print(f"refreshed {VENDORED.relative_to(ROOT)}")
