"""The committed front-end files (static/vendor/, docs/assets/vendor/) are the npm packages'
at the versions package.json pins: a version bump without refreshing them
(`make vendor-assets`) fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = json.loads((ROOT / "blueprints" / "vendor_assets.json").read_text())
BUNDLES = {name: entry for name, entry in TABLE.items() if not name.startswith("_")}


def test_each_bundle_names_the_version_package_json_pins():
    manifest = json.loads((ROOT / "package.json").read_text())
    pins = manifest["dependencies"] | manifest["devDependencies"]
    assert {entry["package"]: entry["version"] for entry in BUNDLES.values()} == {
        entry["package"]: pins[entry["package"]] for entry in BUNDLES.values()}


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_the_committed_files_are_the_packages(name: str):
    entry = BUNDLES[name]
    package = ROOT / "node_modules" / entry["package"]
    if not (package / "package.json").is_file():
        pytest.skip("node_modules is not installed (`npm install`)")
    installed = json.loads((package / "package.json").read_text())["version"]
    if installed != entry["version"]:
        pytest.skip(f"node_modules holds {entry['package']} {installed}: run `npm install`")
    for served, inside in entry["files"].items():
        committed = ROOT / entry.get("dir", "static/vendor") / name / served
        assert committed.read_bytes() == (package / inside).read_bytes(), (
            f"{committed} differs from {entry['package']}/{inside}: `make vendor-assets`")
