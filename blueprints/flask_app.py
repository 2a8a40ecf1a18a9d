"""The app's Flask class: Flask's request hooks run as Flask runs them, with what does not
change between requests worked out once."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

from flask import Flask, Response
from flask.globals import request_ctx
from flask.helpers import _split_blueprint_path
from flask.signals import request_tearing_down

# Flask's marker for "no exception given" (do_teardown_request's default).
_UNSET: Any = Flask.do_teardown_request.__defaults__[0]  # type: ignore[index]

Hooks = tuple[Callable[..., Any], ...]


class App(Flask):
    """Flask, with each function's sync-or-async kind read once and each blueprint's hook
    lists put in running order once, not on every request.

    Flask's ``preprocess_request``, ``process_response`` and ``do_teardown_request`` walk
    the blueprint chain, the hook dictionaries and ``ensure_sync`` for every hook of every
    request, looking the request up through its context proxy each time. The overrides
    below run the same hooks in the same order with the same arguments; the order is kept
    per blueprint once the app has served a request (hooks can no longer be added then:
    Flask refuses setup methods after the first request).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Flask asks inspect.iscoroutinefunction about every hook and view on every request
        # (two dozen calls a keyed GET); the answer never changes for a function.
        self._sync_kinds: dict[Any, bool] = {}
        self._hook_plans: dict[tuple[str, str | None], tuple[Hooks, ...]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """``func`` itself when it is a plain function; Flask's async wrapper otherwise."""
        # A bound method is a new object per access: its function is the stable key.
        key = getattr(func, "__func__", func)
        is_sync = self._sync_kinds.get(key)
        if is_sync is None:
            is_sync = self._sync_kinds.setdefault(key, not inspect.iscoroutinefunction(func))
        return func if is_sync else super().ensure_sync(func)

    def _plan(self, stage: str, blueprint: str | None) -> tuple[Hooks, ...]:
        """The hooks of ``stage`` for a request of ``blueprint``, in Flask's running order."""
        key = (stage, blueprint)
        found = self._hook_plans.get(key)
        if found is not None:
            return found
        names = [] if blueprint is None else _split_blueprint_path(blueprint)  # request.blueprints
        outward = (None, *reversed(names))  # app first, then the blueprints inwards
        inward = (*names, None)  # innermost blueprint first, the app last
        ensure = self.ensure_sync
        if stage == "before":
            plan: tuple[Hooks, ...] = (
                tuple(f for n in outward for f in self.url_value_preprocessors.get(n, ())),
                tuple(ensure(f) for n in outward for f in self.before_request_funcs.get(n, ())),
            )
        elif stage == "after":
            plan = (tuple(ensure(f) for n in inward
                          for f in reversed(self.after_request_funcs.get(n, ()))),)
        else:
            plan = (tuple(ensure(f) for n in inward
                          for f in reversed(self.teardown_request_funcs.get(n, ()))),)
        if self._got_first_request:  # hooks are fixed from here on (Flask's own rule)
            self._hook_plans[key] = plan
        return plan

    def preprocess_request(self) -> Any:
        """Flask's: URL value preprocessors, then before-request hooks, app's first."""
        req = request_ctx._get_current_object().request  # type: ignore[attr-defined]
        url_funcs, before_funcs = self._plan("before", req.blueprint)
        for url_func in url_funcs:
            url_func(req.endpoint, req.view_args)
        for before_func in before_funcs:
            rv = before_func()
            if rv is not None:
                return rv
        return None

    def process_response(self, response: Response) -> Response:
        """Flask's: this request's own after-functions, the after-request hooks, the session."""
        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]
        ensure = self.ensure_sync
        for func in ctx._after_request_functions:
            response = ensure(func)(response)
        for func in self._plan("after", ctx.request.blueprint)[0]:
            response = func(response)
        if not self.session_interface.is_null_session(ctx._session):
            self.session_interface.save_session(self, ctx._session, response)
        return response

    def do_teardown_request(self, exc: BaseException | None = _UNSET) -> None:
        """Flask's: teardown hooks, innermost blueprint first, then the signal."""
        if exc is _UNSET:
            exc = sys.exc_info()[1]
        req = request_ctx._get_current_object().request  # type: ignore[attr-defined]
        for func in self._plan("teardown", req.blueprint)[0]:
            func(exc)
        request_tearing_down.send(self, _async_wrapper=self.ensure_sync, exc=exc)

