"""The API explorer works however the product is installed: pip from a clean source tree
(no ``node_modules``, no npm), as a package (tests/test_wheel.py) or editable, serves
``/api/docs`` and Chromium renders it; and a page never references an asset that is
missing (it says so instead).

The clean tree is the checkout's files as git sees them (tracked and new, nothing ignored:
no ``node_modules``, no build output), copied to a temporary folder.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.installed_app import (
    assert_chromium_renders_the_explorer,
    clean_source_tree,
    install,
    serving,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``copytrade serve`` after ``pip install -e TREE`` of a clean tree. (``pip install
    TREE`` builds the wheel tests/test_wheel.py installs, and is rendered there.)"""
    work = tmp_path_factory.mktemp("source-editable")
    tree = clean_source_tree(work / "copytrade")
    bin_dir = install(work, "-e", tree)
    with serving(bin_dir, tmp_path_factory.mktemp("home"), "src-editable") as running:
        yield running


def test_chromium_renders_the_explorer_of_an_editable_source_install(served) -> None:
    base, log = served
    assert_chromium_renders_the_explorer(base)
    assert "front-end assets missing" not in log.read_text()


def test_a_missing_explorer_asset_is_named_on_the_page_and_in_the_log(
        app_config, tmp_path, monkeypatch, caplog) -> None:
    """With a vendored file gone, /api/docs references none of the explorer's files (no
    404, no blank page): it says which are missing and how to fix it, and so does the log."""
    from app import create_app
    from blueprints import assets

    vendored = tmp_path / "vendor"
    shutil.copytree(assets.VENDORED, vendored)
    (vendored / "swagger-ui" / "swagger-ui-bundle.js").unlink()
    monkeypatch.setattr(assets, "VENDORED", vendored)
    with caplog.at_level(logging.WARNING, logger="blueprints.assets"):
        app = create_app(app_config)
    assert "swagger-ui/swagger-ui-bundle.js" in caplog.text
    html = app.test_client().get("/api/docs").get_data(as_text=True)
    assert 'id="missing-assets"' in html and "swagger-ui/swagger-ui-bundle.js" in html
    assert "/api/docs/assets/" not in html  # no reference to a file that is not there
    assert "/openapi.json" in html  # the description itself is still offered
