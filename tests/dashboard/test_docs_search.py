"""The docs site built by `make docs` searches when opened from disk (a ``file://`` URL)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_site_opened_from_a_file_finds_a_page_by_search(
    browser: Any, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    tab = browser.new_page()
    elsewhere: list[str] = []  # offline means no other host: not unpkg's shim, no web fonts
    tab.on(
        "request",
        lambda request: (
            elsewhere.append(request.url)
            if not request.url.startswith(("file:", "data:", "blob:", "about:"))
            else None
        ),
    )
    tab.goto((site / "user" / "accounts.html").as_uri())
    tab.click("input.md-search__input")
    tab.keyboard.type("withdrawal", delay=20)  # typed keys, as a reader's: fill() sends none
    expect(tab.locator(".md-search-result__meta")).to_contain_text("matching document")
    # A result opens its page's file (offline links name .html files, not folders).
    tab.locator(".md-search-result__item a").first.click()
    tab.wait_for_load_state()
    assert tab.url.startswith(site.as_uri()) and ".html" in tab.url, tab.url
    expect(tab.locator("article h1")).to_be_visible()
    assert elsewhere == []
    tab.close()
