"""The API explorer works however the product is installed: pip from a clean source tree
(no ``node_modules``, no npm), as a package or editable, serves ``/api/docs`` and Chromium
renders it; and a page never references an asset that is missing (it says so instead).

The clean tree is the checkout's files as git sees them (tracked and new, nothing ignored:
no ``node_modules``, no build output), copied to a temporary folder.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DEADLINE
from tests.installed_app import clean_source_tree, install, serving

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module", params=["package", "editable"])
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``copytrade serve`` after ``pip install TREE`` (or ``-e TREE``) of a clean tree."""
    work = tmp_path_factory.mktemp(f"source-{request.param}")
    tree = clean_source_tree(work / "copytrade")
    what = [tree] if request.param == "package" else ["-e", tree]
    bin_dir = install(work, *what)
    with serving(bin_dir, tmp_path_factory.mktemp("home"), f"src-{request.param}") as running:
        yield running


def test_chromium_renders_the_explorer_of_a_source_install(served) -> None:
    from playwright.sync_api import sync_playwright

    base, log = served
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    failed: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.set_default_timeout(DEADLINE * 1000)  # a busy machine renders slowly
            page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                    if r.status >= 400 else None)
            page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
            page.goto(base + "/api/docs")
            page.wait_for_selector(".swagger-ui .opblock")
            assert page.locator(".swagger-ui .info .title").inner_text().startswith(
                "copytrade")
            assert page.locator(".opblock").count() > 20  # every operation, rendered
            assert page.locator("#missing-assets").count() == 0
        finally:
            browser.close()
    assert failed == []
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
