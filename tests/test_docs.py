"""The docs site's generated pages match their sources, and the environment table is whole."""

from __future__ import annotations

import ast
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


def _names_read_by_load() -> set[str]:
    """Every variable name config.py's load reads, found in its source (nothing is run)."""
    tree = ast.parse((ROOT / "config.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("get", "number", "flag") and node.args
                and isinstance(node.args[0], ast.Constant)):
            names.add(node.args[0].value)
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_VARIABLES")):
            value = node.value
            items = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", [])
            names |= {item.value for item in items if isinstance(item, ast.Constant)}
    return names | set(config.POLYMARKET_URLS)


def test_every_variable_load_reads_is_documented_and_every_documented_one_is_read() -> None:
    read = _names_read_by_load()
    assert read, "the scan found no variable: it no longer understands config.py"
    assert read - set(config.ENVIRONMENT) == set(), "document these in config.ENVIRONMENT"
    contracts = set(config.POLYGON_CONTRACTS)  # read by name from the contracts table
    assert set(config.ENVIRONMENT) - read - contracts == set(), "documented but never read"
    grouped = [name for _, names in config.ENVIRONMENT_GROUPS for name in names]
    assert sorted(grouped) == sorted(config.ENVIRONMENT)


def test_load_refuses_to_read_an_undocumented_variable(monkeypatch) -> None:
    monkeypatch.delitem(config.ENVIRONMENT, "REDIS_PREFIX")
    with pytest.raises(KeyError, match="REDIS_PREFIX"):
        config.load(env={})


def test_the_configuration_page_takes_defaults_from_the_settings() -> None:
    page = (ROOT / "docs" / "operator" / "configuration.md").read_text()
    row = re.search(r"^\| `WORKER_CAPACITY` \|.*\| `(\d+)` \|$", page, re.M)
    assert row is not None and int(row.group(1)) == config.WorkerConfig().capacity
