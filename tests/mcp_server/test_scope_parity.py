"""Each MCP tool and the REST route that does the same thing declare the same scope.

The pairs are derived, not listed: a tool and a route are counterparts when they call
the same service function (read from their bytecode), so a new tool or route is
checked without editing this file.
"""

from __future__ import annotations

import dataclasses
import dis
import inspect
import itertools
import types
from collections.abc import Callable, Iterable
from typing import Any

from blueprints import access
from blueprints.mcp.tools import TOOLS, Tool
from services.copying import configs
from services.trading import stats

API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# Tools with no REST route of their own: REST serves them through wider calls (GET
# /api/markets: browse_markets, which search runs on; GET /api/markets/{slug}: market_page,
# details with every outcome's depth).
MCP_ONLY = {"search_markets", "get_market_details", "get_market_depth"}


def service_calls(func: Callable[..., Any]) -> set[str]:
    """The ``services`` functions ``func`` calls as ``module.function(...)``, by qualified name."""
    func = inspect.unwrap(func)
    found: set[str] = set()

    def walk(code: types.CodeType) -> None:
        instructions = list(dis.get_instructions(code))
        for load, attr in itertools.pairwise(instructions):
            if load.opname != "LOAD_GLOBAL" or attr.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
                continue
            module = func.__globals__.get(load.argval)
            if not (isinstance(module, types.ModuleType)
                    and module.__name__.startswith("services.")):
                continue
            target = getattr(module, attr.argval, None)
            if inspect.isfunction(target):
                found.add(f"{target.__module__}.{target.__qualname__}")
        for const in code.co_consts:
            if isinstance(const, types.CodeType):  # nested lambdas and comprehensions
                walk(const)

    walk(func.__code__)
    return found


def _declared_scope(policy: access.Policy) -> str | None:
    # A tool's scope None means public; other policies have no tool equivalent.
    if policy.kind == "public":
        return None
    return policy.scope if policy.kind == "scope" else f"<{policy.kind}>"


def rest_routes_by_service(app) -> dict[str, set[tuple[str, str, str | None]]]:
    """Service function -> the (method, path, declared scope) of each /api route calling it."""
    routes: dict[str, set[tuple[str, str, str | None]]] = {}
    for rule in app.url_map.iter_rules():
        view_class = getattr(app.view_functions[rule.endpoint], "view_class", None)
        if view_class is None or not rule.rule.startswith(access.API_PREFIX + "/"):
            continue
        for method in sorted(set(rule.methods or ()) & set(API_METHODS)):
            policy = access.policy_for(app, rule.endpoint, method)
            if policy is None:  # refused outright; tests/api/test_access.py forbids shipping one
                continue
            for called in service_calls(getattr(view_class, method.lower())):
                routes.setdefault(called, set()).add(
                    (method, rule.rule, _declared_scope(policy)))
    return routes


Route = tuple[str, str, str | None]


def pair(tools: Iterable[Tool], routes: dict[str, set[Route]]
         ) -> tuple[set[str], list[tuple[str, str | None, str, str, str | None]]]:
    """The tools that have a REST counterpart, and each counterpart declaring another scope."""
    paired: set[str] = set()
    mismatches = []
    for tool in tools:
        calls = service_calls(tool.call)
        assert calls, f"{tool.name}: no service call found in its table entry"
        counterparts = {route for called in calls for route in routes.get(called, ())}
        if counterparts:
            paired.add(tool.name)
        mismatches += [(tool.name, tool.scope, method, path, scope)
                       for method, path, scope in sorted(counterparts, key=str)
                       if scope != tool.scope]
    return paired, mismatches


def test_every_tool_declares_the_scope_of_its_rest_counterpart(app):
    paired, mismatches = pair(TOOLS, rest_routes_by_service(app))
    assert mismatches == []
    assert {tool.name for tool in TOOLS} - paired == MCP_ONLY


def test_a_tool_declaring_another_scope_is_caught(app):
    cancel = next(tool for tool in TOOLS if tool.name == "cancel_order")
    wrong = dataclasses.replace(cancel, scope="trade:execute")
    _, mismatches = pair([wrong], rest_routes_by_service(app))
    assert mismatches == [("cancel_order", "trade:execute", "DELETE",
                           "/api/markets/orders/<string:order_id>", "trade:cancel")]


def test_service_calls_reads_lambdas_and_views():
    assert service_calls(lambda principal, args: stats.user_summary(principal.user)) == {
        "services.trading.stats.user_summary"}
    assert service_calls(lambda principal, args: [configs.get(principal.user, i)
                                                  for i in args]) == {
        "services.copying.configs.crud.get"}


def test_no_tool_takes_in_a_private_key():
    # Connecting an account (a signer key) is session-JWT only: no MCP tool reaches it or
    # accepts a key or secret as an argument (issue 16).
    for tool in TOOLS:
        connect = "services.wallets.trading_accounts.connect"
        assert connect not in service_calls(tool.call), tool.name
        fields = set(tool.input().fields)
        assert not fields & {"private_key", "relayer_api_key", "secret"}, tool.name
