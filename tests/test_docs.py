"""The docs site's generated pages match their sources; every setting has its row."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import config

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("page", sorted(GENERATE.PAGES))
def test_each_generated_page_is_what_its_source_makes_now(page: str) -> None:
    committed = (ROOT / "docs" / page).read_text()
    assert committed == GENERATE.PAGES[page](), f"docs/{page} is stale: run `make docs`"


def test_every_declared_setting_has_its_row_on_the_configuration_page() -> None:
    page = (ROOT / "docs" / "operator" / "configuration.md").read_text()
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    rows = {name: section.splitlines()[0] for section in sections
            for name in re.findall(r"^\| `([^`]+)` \|", section, re.M)}
    assert set(rows) == set(config.DECLARED)  # no row of an undeclared name either
    assert all(rows[name] == declared.group for name, declared in config.DECLARED.items())
    assert [section.splitlines()[0] for section in sections] == list(config.GROUPS)


def test_load_refuses_to_read_an_undeclared_variable(monkeypatch) -> None:
    monkeypatch.delitem(config.DECLARED, "REDIS_PREFIX")
    with pytest.raises(KeyError, match="REDIS_PREFIX"):
        config.load(env={})


def test_the_configuration_page_takes_defaults_from_the_settings() -> None:
    page = (ROOT / "docs" / "operator" / "configuration.md").read_text()
    row = re.search(r"^\| `WORKER_CAPACITY` \|.*\| `(\d+)` \|$", page, re.M)
    assert row is not None and int(row.group(1)) == config.WorkerConfig().capacity


def test_the_market_search_the_docs_show_finds_a_market_on_the_local_stack() -> None:
    """Pasted against `make run` (the sandbox's markets), the trading page's QUERY finds one."""
    from devstack.venue.catalog import SEED_MARKETS

    page = (ROOT / "docs" / "user" / "trading.md").read_text()
    word = re.search(r"\bQUERY=(\S+)", page).group(1)
    assert any(word.lower() in seed.question.lower() for seed in SEED_MARKETS), word
