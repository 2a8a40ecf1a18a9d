"""The built wheel alone serves a working API explorer and dashboard (no checkout, no Node).

The wheel is built from this checkout (it carries the committed npm files), installed with
``--no-deps`` into a fresh virtualenv, and run as ``copytrade serve`` from an empty
folder. The fresh venv borrows only third-party dependencies from the running
interpreter's site-packages (a path in a ``.pth`` file: the editable copytrade install
there is not activated, and the checkout is never on ``sys.path``), so every file of
copytrade itself comes from the wheel. Then every script and stylesheet that
``/api/docs`` and a dashboard page reference must answer 200 with a body.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import DEADLINE
from tests.installed_app import (
    assert_chromium_renders_the_explorer,
    clean_source_tree,
    install,
    run,
    serving,
)

ASSET_REFERENCE = re.compile(r'<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"')


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the wheel built from this checkout; its bin folder.

    Built from a clean copy of the tree: a build writes build/ and *.egg-info in the tree it
    builds, and xdist may run this fixture in two workers at once (each holds some of this
    module's tests), whose builds in one checkout collided ("File exists")."""
    work = tmp_path_factory.mktemp("wheel")
    tree = clean_source_tree(work / "copytrade")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist",
        tree, cwd=work)
    (wheel,) = (work / "dist").glob("copytrade-*.whl")
    return install(work, wheel)


@pytest.fixture(scope="module")
def served(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``copytrade serve`` from the fresh venv, in an empty folder; its base URL."""
    with serving(installed, tmp_path_factory.mktemp("served"), "wheel") as (base, log):
        yield base
    assert "front-end assets missing" not in log.read_text()


def test_the_installed_wheel_serves_every_asset_and_renders_the_explorer(served: str):
    # One test for the one install: its module fixture built, installed and served the
    # wheel again in each xdist worker that held one of several tests (about 2 minutes of
    # CPU each), so every check of the installed wheel is here.
    for page in ("/api/docs", "/dashboard/login"):
        html = httpx.get(served + page, timeout=DEADLINE)
        assert html.status_code == 200, page
        assert "missing-assets" not in html.text, page
        references = ASSET_REFERENCE.findall(html.text)
        assert any(ref.endswith(".js") for ref in references), (page, references)
        for ref in references:
            asset = httpx.get(served + ref, timeout=DEADLINE)
            assert asset.status_code == 200 and asset.content, (page, ref)
    # the config page's chart library
    for name in ("uPlot.iife.min.js", "uPlot.min.css"):
        asset = httpx.get(f"{served}/assets/vendor/uplot/{name}", timeout=DEADLINE)
        assert asset.status_code == 200 and asset.content, name
    # pip installing a source tree as a package builds this same wheel: Chromium renders
    # the explorer it serves (tests/test_source_install.py does the editable install)
    assert_chromium_renders_the_explorer(served)


def test_missing_assets_are_named(tmp_path: Path):
    from blueprints import assets

    listed = {f"{name}/{filename}" for name, files in assets.vendor_table().items()
              for filename in files}
    assert set(assets.missing_assets(tmp_path)) == listed
    assert assets.missing_assets() == []  # the checkout carries every one
    htmx = tmp_path / "htmx" / "htmx.min.js"
    htmx.parent.mkdir()
    htmx.write_text("htmx")
    assert assets.locate("htmx", "htmx.min.js", tmp_path) == htmx
    assert assets.locate("htmx", "not-listed.js", tmp_path) is None
    assert "htmx/htmx.min.js" not in assets.missing_assets(tmp_path)


def test_a_build_says_nothing_about_the_packages_it_carries(tmp_path: Path):
    """Every folder the package carries is declared (templates/ and static/ with their
    subfolders): setuptools printed some 400 lines of "Package would be ignored" at each
    `make setup` for the ones it added by itself."""
    import subprocess

    tree = clean_source_tree(tmp_path / "copytrade")
    done = subprocess.run([sys.executable, "setup.py", "build_py", "--build-lib",
                           str(tmp_path / "lib")], cwd=tree, capture_output=True, text=True,
                          timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "would be ignored" not in said and "as data is deprecated" not in said, said
    built = tmp_path / "lib"
    assert (built / "templates" / "dashboard" / "login.html").is_file()
    assert any((built / "static" / "vendor").rglob("*.js"))
