"""Shared setups (issue 45): a link that carries one config's rules to another user.

A link is a random token (``secrets.token_urlsafe``); only its SHA-256 is stored, so the
database cannot hand links out and a lookup by hash tells a timing attacker nothing about
the token. Each config has at most one link: sharing again rotates it (the old link stops
working, the new one is shown once, like an API key's secret), revoking deletes it, and
deleting the config ends it.

What a link shows is read live from the config: the followed trader's address and the
rules (``shared_rules``), never the owner's name for the trader, wallet, balance or PnL.
With ``show_results`` it adds the config's results, exactly ``RESULT_FIELDS``.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any
from uuid import UUID

from models.base import db, utcnow
from models.copying import INTENT_FILLED, CopyConfig, CopyIntent, SharedConfig
from models.user import User
from services.copying.configs.crud import get, rule_fields
from services.copying.configs.reports import pnl
from services.platform import errors
from services.platform.runtime import runtime

TOKEN_BYTES = 32  # 256 bits: unguessable, 43 characters in the link
PAGE_PATH = "/dashboard/shared/"  # the page a link opens (blueprints/dashboard/sharing.py)
# The config's own label for its trader and its paper/live mode stay with the owner: a new
# config made from a link starts on paper and is named by its new owner.
_NOT_SHARED = ("target_name", "paper_trading")
# What "show my results" adds, all of it: PnL and the number of filled copies, and whether
# those were paper fills. Never the owner's wallet, balance or positions.
RESULT_FIELDS = ("realized_pnl", "unrealized_pnl", "total_pnl", "copies", "paper_trading",
                 "since")


def shared_rules(config: CopyConfig) -> dict[str, Any]:
    """The rules a link carries: the config's editable fields but its name and mode."""
    return {name: value for name, value in rule_fields(config).items()
            if name not in _NOT_SHARED}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _link(config: CopyConfig, token: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"config_id": config.id, "token": token,
            "url": f"{runtime().settings.base_url}{PAGE_PATH}{token}",
            "show_results": fields["show_results"], "created_at": fields["created_at"]}


def share(user: User | UUID | str, config_id: UUID | str, *,
          show_results: bool = False) -> dict[str, Any]:
    """A new link to the config's rules (any earlier link of it stops working)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    fields = {"token_hash": _digest(token), "show_results": show_results,
              "created_at": utcnow()}
    with db.atomic():
        config = get(user, config_id)
        # One statement, so two shares at once leave one link (the later), not a conflict.
        (SharedConfig.insert(config=config.id, **fields)
         .on_conflict(conflict_target=[SharedConfig.config],
                      update={getattr(SharedConfig, name): value
                              for name, value in fields.items()})
         .execute())
    return _link(config, token, fields)


def revoke(user: User | UUID | str, config_id: UUID | str) -> None:
    """End the config's link (nothing to end is not an error)."""
    with db.atomic():
        config = get(user, config_id)
        SharedConfig.delete().where(SharedConfig.config == config.id).execute()


def link_of(user: User | UUID | str, config_id: UUID | str) -> dict[str, Any] | None:
    """Whether the config has a link, when it was made and if it shows results (no token)."""
    config = get(user, config_id)
    row = SharedConfig.get_or_none(SharedConfig.config == config.id)
    if row is None:
        return None
    return {"show_results": row.show_results, "created_at": row.created_at}


def read(token: str) -> dict[str, Any]:
    """What a link shows: the trader followed, the rules and, if shared, the results."""
    if not isinstance(token, str) or not 0 < len(token) <= 100:
        raise errors.NotFound("No such shared setup.")
    row = (SharedConfig.select(SharedConfig, CopyConfig).join(CopyConfig)
           .where(SharedConfig.token_hash == _digest(token), CopyConfig.deleted_at.is_null())
           .first())
    if row is None:
        raise errors.NotFound("No such shared setup.")
    config = row.config
    return {"target_address": config.target_address, "rules": shared_rules(config),
            "shared_at": row.created_at,
            "results": _results(config) if row.show_results else None}


def _results(config: CopyConfig) -> dict[str, Any]:
    """The config's results as a link shows them (RESULT_FIELDS)."""
    figures = pnl(config.user_id, config.id)
    copies = CopyIntent.select().where(CopyIntent.config == config.id,
                                       CopyIntent.status == INTENT_FILLED).count()
    return {"realized_pnl": figures["realized_pnl"], "unrealized_pnl": figures["unrealized_pnl"],
            "total_pnl": figures["total_pnl"], "copies": copies,
            "paper_trading": config.paper_trading, "since": config.created_at}
