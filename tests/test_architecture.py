"""The import floors of ARCHITECTURE.md, checked: no import crosses a floor the wrong way,
no service domain imports one above it, the app reaches the devstack only from the CLI
(lazily), and no modules form a cycle.

Imports are read with ``ast`` (nothing is imported), at module level, inside functions and
under ``if TYPE_CHECKING:`` alike: a lazy or type-only import that closes a cycle counts.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Who may import whom, by top-level place (ARCHITECTURE.md "Layout"). A place may always
# import itself; `config` (settings, a leaf) may be imported by every app place.
FLOORS: dict[str, set[str]] = {
    "config": set(),
    "models": set(),
    "schemas": set(),
    "venue": set(),
    "chain": set(),
    "services": {"models", "venue", "chain", "schemas"},
    "blueprints": {"services", "schemas"},
    "worker": {"services", "models", "venue", "chain", "schemas"},
    "app": {"blueprints", "services", "models", "schemas"},
    "wsgi": {"app"},
    "cli": {"app", "wsgi", "worker", "services", "models", "venue", "chain", "schemas",
            "devstack"},
    "devstack": set(),
}
EVERYWHERE = {"config"}
# The domains of ``services/`` (ARCHITECTURE.md "The service domains"), each with the domains
# it may import: lower ones only, so the domains form no cycle.
SERVICE_DOMAINS: dict[str, set[str]] = {
    "platform": set(),
    "markets": {"platform"},
    "oauth": {"platform"},
    "notifications": {"platform"},
    "wallets": {"platform", "markets", "notifications"},
    "trading": {"platform", "markets", "notifications", "wallets"},
    "copying": {"platform", "markets", "notifications", "wallets", "trading"},
    "identity": {"platform", "markets", "oauth", "notifications", "wallets", "trading",
                 "copying"},
}
# The only modules that may import the devstack, and only inside functions.
DEVSTACK_GATES = {"cli"}


@dataclass(frozen=True)
class Edge:
    """One import of a project module: who, whom, where, and whether inside a function."""

    source: str
    target: str
    line: int
    lazy: bool


def project_modules(root: Path) -> dict[str, Path]:
    """Every module of the app and the devstack under ``root``, by dotted name."""
    modules: dict[str, Path] = {}
    # Only the places FLOORS names are walked: a fresh clone's .venv and node_modules hold
    # tens of thousands of files, and walking them cost most of these tests' time.
    for place in FLOORS:
        paths = [root / f"{place}.py"] if (root / f"{place}.py").is_file() else []
        if (root / place).is_dir():
            paths += sorted((root / place).rglob("*.py"))
        for path in paths:
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imports(name: str, path: Path) -> Iterable[tuple[str, int, bool]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def walk(node: ast.AST, lazy: bool) -> Iterable[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, lazy
            elif isinstance(child, ast.ImportFrom):
                base = package[: len(package) - child.level + 1] if child.level else []
                module = ".".join([*base, child.module] if child.module else base)
                for alias in child.names:
                    yield f"{module}.{alias.name}", child.lineno, lazy
            yield from walk(child, inner)

    yield from walk(tree, False)


@functools.cache
def import_edges(root: Path) -> tuple[Edge, ...]:
    """The imports between distinct project modules under ``root`` (read once a run)."""
    modules = project_modules(root)
    edges = []
    for name, path in modules.items():
        for target, line, lazy in _imports(name, path):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                edges.append(Edge(name, target, line, lazy))
    return tuple(edges)


def floor_violations(edges: Iterable[Edge]) -> list[str]:
    """Each import that crosses a floor the wrong way, as 'module:line -> module (why)'."""
    found = []
    for edge in edges:
        source, target = edge.source.split(".")[0], edge.target.split(".")[0]
        if source == target or (target in EVERYWHERE and source != "devstack"):
            continue
        where = f"{edge.source}:{edge.line} -> {edge.target}"
        if target == "devstack" and (source not in DEVSTACK_GATES or not edge.lazy):
            found.append(f"{where} (the app reaches the devstack only lazily, from the CLI)")
        elif target not in FLOORS.get(source, set()):
            found.append(f"{where} ({source} may not import {target})")
    return sorted(found)


def domain_of(module: str) -> str | None:
    """The service domain of a ``services.<domain>...`` module, None elsewhere."""
    parts = module.split(".")
    return parts[1] if parts[0] == "services" and len(parts) > 2 else None


def domain_violations(edges: Iterable[Edge]) -> list[str]:
    """Each import by a service domain of a domain it may not import."""
    found = []
    for edge in edges:
        source, target = domain_of(edge.source), domain_of(edge.target)
        if source is None or target is None or source == target:
            continue
        if target not in SERVICE_DOMAINS.get(source, set()):
            found.append(f"{edge.source}:{edge.line} -> {edge.target} "
                         f"({source} may not import {target})")
    return sorted(found)


def cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        # Tarjan's strongly connected components, iterative enough for this graph's depth.
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_crosses_a_floor_the_wrong_way() -> None:
    assert floor_violations(import_edges(ROOT)) == []


def test_no_modules_import_each_other_in_a_cycle() -> None:
    assert cycles(import_edges(ROOT)) == []


def test_no_service_domain_imports_one_above_it() -> None:
    assert domain_violations(import_edges(ROOT)) == []


def test_every_service_lives_in_a_domain_that_says_what_it_owns() -> None:
    services = ROOT / "services"
    loose = sorted(p.name for p in services.glob("*.py") if p.name != "__init__.py")
    assert loose == [], "a service module belongs in a domain subpackage"
    domains = {p.name for p in services.iterdir() if (p / "__init__.py").exists()}
    assert domains == set(SERVICE_DOMAINS)
    for name in domains:
        tree = ast.parse((services / name / "__init__.py").read_text())
        doc = ast.get_docstring(tree) or ""
        assert len(doc.split()) >= 15, f"services/{name}/__init__.py: say what it owns"


def test_the_checker_sees_wrong_floors_lazy_devstack_imports_and_cycles(tmp_path: Path) -> None:
    files = {
        "venue/__init__.py": "",
        "venue/client.py": "from services import orders\n",  # venue is a floor below services
        "services/__init__.py": "",
        "services/orders.py": "def f():\n    from services import keys\n",
        "services/keys.py": "from services.orders import f\n",  # a cycle through a lazy import
        "services/typed.py": "from typing import TYPE_CHECKING\n"
                             "if TYPE_CHECKING:\n    from worker import host\n",
        "services/platform/__init__.py": "",
        "services/platform/runtime.py": "from typing import TYPE_CHECKING\n"
                                        "if TYPE_CHECKING:\n"
                                        "    from services.platform.jobs import Config\n",
        # a type-only import that closes a cycle, and a domain importing one above it
        "services/platform/jobs.py": "from services.platform.runtime import runtime\n"
                                     "from services.trading import orders\n",
        "services/trading/__init__.py": "",
        "services/trading/orders.py": "",
        "worker/__init__.py": "",
        "worker/host.py": "import devstack.venue\n",  # only the CLI, lazily
        "cli.py": "def up():\n    from devstack import venue\n",
        "devstack/__init__.py": "",
        "devstack/venue.py": "from config import load\n",  # the devstack imports no app code
        "config.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    edges = import_edges(tmp_path)
    assert floor_violations(edges) == [
        "devstack.venue:1 -> config (devstack may not import config)",
        "services.typed:3 -> worker.host (services may not import worker)",
        "venue.client:1 -> services.orders (venue may not import services)",
        "worker.host:1 -> devstack.venue (the app reaches the devstack only lazily, from the CLI)",
    ]
    assert domain_violations(edges) == [
        "services.platform.jobs:2 -> services.trading.orders (platform may not import trading)"]
    assert cycles(edges) == [["services.keys", "services.orders"],
                             ["services.platform.jobs", "services.platform.runtime"]]


def test_principal_and_vocabulary_are_leaves() -> None:
    # Everything resolves credentials and names scopes: these two must not pull anything in.
    edges = import_edges(ROOT)
    assert {e.target for e in edges if e.source == "schemas.vocabulary"} == set()
    assert {e.target for e in edges if e.source == "services.platform.principal"} <= {
        "models", "models.user", "schemas.vocabulary", "services.platform.errors"}
