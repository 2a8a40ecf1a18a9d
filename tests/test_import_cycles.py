"""Floors of the import graph: no cycles among services and schemas, schemas below services."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> project modules it imports (at any depth of the file), within ``packages``."""
    modules = {_module_name(path): path for package in packages
               for path in (ROOT / package).rglob("*.py")}

    def owner(name: str) -> str | None:
        # "services.errors.NotFound" -> "services.errors"; "services" -> "services"
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")[: len(name.split(".")) - node.level
                                              + (1 if is_package else 0)]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            deps.update(found for target in targets if (found := owner(target)))
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in graph[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_among_services_and_schemas():
    assert cycles(import_graph(("services", "schemas"))) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_schemas_import_nothing_from_services():
    graph = import_graph(("services", "schemas"))
    offenders = {module: sorted(dep for dep in deps if dep.startswith("services"))
                 for module, deps in graph.items() if module.startswith("schemas")}
    assert {module: deps for module, deps in offenders.items() if deps} == {}


def test_principal_and_vocabulary_are_leaves():
    graph = import_graph(("services", "schemas", "models"))
    assert graph["schemas.vocabulary"] == set()
    assert graph["services.principal"] <= {"models", "schemas.vocabulary", "services.errors"}
