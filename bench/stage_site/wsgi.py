"""The product with its request hooks timed per stage, for ``bench/api_throughput.py
--stages`` only.

Run from this folder (the bench does), this module shadows the product's ``wsgi`` so
``copytrade serve`` loads it: the app is built as production builds it, then each before,
after and teardown hook and each view is wrapped by ``bench/stages.py``'s clock (a thread's
CPU, less the stages it calls) under the stage its module belongs to. Every half second
each gunicorn worker writes its totals to ``$API_STAGES_DIR/<pid>.json``; the harness reads
them around each round. What no stage claims (gunicorn, Flask and werkzeug themselves, the
response's serialization) is the process's CPU less the stages'.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from app import create_app

_spec = importlib.util.spec_from_file_location(
    "bench_stages", Path(__file__).resolve().parent.parent / "stages.py")
assert _spec is not None and _spec.loader is not None
stages = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = stages
_spec.loader.exec_module(stages)

# A hook's stage by the module it lives in (the first prefix that matches).
MODULE_STAGES: list[tuple[str, str]] = [
    ("flask_limiter", "limiter"),
    ("blueprints.ratelimit", "limiter"),
    ("services.platform.ratelimit", "limiter"),
    ("blueprints.access", "access"),
    ("blueprints.operations", "operations"),
    ("blueprints.security_headers", "security"),
]


def _stage_of(function: Any) -> str:
    module = getattr(function, "__module__", "") or ""
    owner = getattr(getattr(function, "__self__", None), "__class__", None)
    module = module if module != "builtins" else getattr(owner, "__module__", "")
    for prefix, stage in MODULE_STAGES:
        if module.startswith(prefix):
            return stage
    return "hooks"  # another app hook (request id in app.py, sessions, well-known headers)


app = create_app()
for table in (app.before_request_funcs, app.after_request_funcs,
              app.teardown_request_funcs):
    for blueprint, functions in table.items():
        table[blueprint] = [stages.timed(f, _stage_of(f)) for f in functions]
for endpoint, view in list(app.view_functions.items()):
    if endpoint != "static":
        app.view_functions[endpoint] = stages.timed(view, "view")


def _report() -> None:
    folder = Path(os.environ["API_STAGES_DIR"])
    while True:
        path = folder / f"{os.getpid()}.json"
        path.with_suffix(".tmp").write_text(json.dumps(stages.snapshot()))
        path.with_suffix(".tmp").replace(path)
        time.sleep(0.5)


if os.environ.get("API_STAGES_DIR"):
    threading.Thread(target=_report, daemon=True).start()
