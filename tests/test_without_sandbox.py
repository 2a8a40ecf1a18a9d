"""A production install (no `sandbox` extra) runs the app; devstack and the app stay apart."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.source_files import python_files

ROOT = Path(__file__).resolve().parents[1]
# what `pip install copytrade` lacks: the devstack's own code paths and the extra's packages
BLOCKED = ("devstack", "flask_sock", "simple_websocket")
APP_MODULES = {"app", "wsgi", "config", "cli", "models", "services", "schemas", "venue", "chain",
               "blueprints", "worker"}
NOT_APP = {"devstack", "tests", "bench", "node_modules", "build", "instance"}

PRODUCTION_RUN = textwrap.dedent("""
    import importlib.abc, json, sys

    BLOCKED = set(json.loads(sys.argv[1]))

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    config = json.loads(sys.argv[2])

    from models import database, migrate
    bound = database.bind(config["DATABASE_URL"])
    with bound.connection_context():
        migrate.migrate(bound)

    from app import create_app
    app = create_app(config)
    answer = app.test_client().get("/openapi.json")
    assert answer.status_code == 200, answer.status_code

    import worker.host
    from worker import jobs
    jobs.load_modules()

    import cli
    from click.testing import CliRunner
    shown = CliRunner().invoke(cli.main, ["--help"])
    assert shown.exit_code == 0 and "sandbox" in shown.output, shown.output
    refused = CliRunner().invoke(cli.main, ["sandbox"])
    assert refused.exit_code != 0 and "copytrade[sandbox]" in refused.output, refused.output

    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not loaded, loaded
    print("production app ran without the sandbox")
""")


def test_the_app_runs_without_the_sandbox_extra(tmp_path, redis_url) -> None:
    config = {
        "VENUE": "polymarket",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": f"ct-test-nosandbox-{tmp_path.name}:",
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "SECRET_KEY": "test-secret-key-without-sandbox",
        "WALLET_ENCRYPTION_KEY": "ab" * 32,
        "TESTING": True,
    }
    done = subprocess.run(
        [sys.executable, "-c", PRODUCTION_RUN, json.dumps(BLOCKED), json.dumps(config)],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "production app ran without the sandbox" in done.stdout


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, str]]:
    """Every absolute import in a module with the top-level package it names."""
    found: list[tuple[ast.stmt, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node, node.module.split(".")[0]))
    return found


def _module_level(tree: ast.Module) -> set[int]:
    """ids of the import statements that run when the module is imported (not in a def)."""
    inside_defs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside_defs |= {id(child) for child in ast.walk(node)}
    return {id(node) for node, _ in _imports(tree) if id(node) not in inside_defs}


def _app_files() -> list[Path]:
    """The app's Python files: the top-level modules and packages that are not tooling."""
    return python_files(skip=NOT_APP)


def test_only_the_cli_reaches_devstack_and_only_lazily() -> None:
    offenders = []
    for path in _app_files():
        tree = ast.parse(path.read_text(), str(path))
        eager = _module_level(tree)
        for node, top in _imports(tree):
            if top != "devstack":
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if path.relative_to(ROOT) != Path("cli.py") or id(node) in eager:
                offenders.append(where)
    assert not offenders, f"the app imports devstack outside cli.py's commands: {offenders}"


def test_devstack_imports_nothing_from_the_app() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno} imports {top}"
        for path in (ROOT / "devstack").rglob("*.py")
        for node, top in _imports(ast.parse(path.read_text(), str(path)))
        if top in APP_MODULES
    ]
    assert not offenders, offenders
