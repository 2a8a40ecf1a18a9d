"""Copy configs: validate, preview, create, edit, start/stop, and read their status and PnL.

Every surface (REST, MCP, dashboard) calls these functions with the caller's user (its
gate has checked the scope). The parts: ``rules`` (limits, validation, defaults),
``targets`` (what the venue shows of a target wallet, sizing suggestions), ``crud`` (a
config's life: preview, create, edit, start, stop, delete), ``reports`` (status, PnL,
decisions), ``quality`` (execution quality over a period) and ``sharing`` (a config's
rules shared by link, imported as the module). The other names surfaces call are
importable from here.
"""

from __future__ import annotations

from services.copying.configs.crud import (
    create,
    delete,
    get,
    limits,
    list_configs,
    preview,
    set_limits,
    start,
    stop,
    update,
)
from services.copying.configs.quality import config_quality as quality
from services.copying.configs.reports import decision_view, decisions, pnl, status
from services.copying.configs.rules import validate_fields
from services.copying.configs.targets import suggest_multiplier, target_profile

__all__ = [
    "create", "decision_view", "decisions", "delete", "get", "limits", "list_configs", "pnl",
    "preview", "quality", "set_limits", "start", "status", "stop", "suggest_multiplier",
    "target_profile", "update", "validate_fields",
]
