"""A follower's overview, the dashboard's home: what the account holds, how it has done, and
how each copy config is doing right now.

One read of each source: the wallet's balances (chain), the live positions (venue and
ledger), the fills ledger's PnL, every config's status and PnL, and the latest trades. A
source that is down leaves its part empty with a note, never the whole page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar
from uuid import UUID

from models.user import User
from services.copying import configs, pnl_history
from services.platform import errors
from services.platform.principal import user_id_of
from services.trading import positions, stats, trades
from services.wallets import wallets

log = logging.getLogger(__name__)
ZERO = Decimal(0)
T = TypeVar("T")

# A config's health, worst first: what the follower should look at before the rest.
HEALTH = ("breaker_open", "out_of_funds", "buys_paused", "feed_degraded", "paused", "copying",
          "stopped")


def _read(what: str, read: Callable[[], T], notes: list[str]) -> T | None:
    try:
        return read()
    except (errors.CopytradeError, OSError) as exc:
        log.info("overview: %s unavailable: %s", what, exc)
        notes.append(f"{what}: {getattr(exc, 'message', None) or exc}")
        return None


def health(config: Any, status: dict[str, Any] | None) -> str:
    """One word for a config's state: breaker_open, out_of_funds, buys_paused,
    feed_degraded, paused, copying or stopped."""
    if not config.is_active:
        return "stopped"
    if status is None:
        return "copying"
    breaker = status.get("breaker") or {}
    if breaker.get("state") == "open":
        return "breaker_open"
    if status.get("out_of_funds"):  # the config card's own word (configs.status)
        return "out_of_funds"
    if status.get("buys_paused"):  # the engine paused its buys (a stop without a verdict)
        return "buys_paused"
    if status.get("executor_running") and status.get("detection") in ("poll", "chain"):
        return "feed_degraded"
    if not status.get("executor_running"):
        return "paused"
    return "copying"


def _now(summary: dict[str, Any]) -> dict[str, Decimal]:
    return {"realized_pnl": summary["realized_pnl"], "total_pnl": summary["total_pnl"],
            "unrealized_pnl": summary["total_pnl"] - summary["realized_pnl"]}


def overview(user: User | UUID | str, *, recent: int = 10) -> dict[str, Any]:
    """Portfolio value, cash, PnL (total, realized, unrealized; its change over 24 h and
    7 d), each config with its PnL and health (worst first), and the latest trades;
    ``notes`` names any source that was down."""
    user_id = user_id_of(user)
    notes: list[str] = []
    # Reading the home page never creates the trading wallet (the account page does).
    has_wallet = wallets.for_user(user_id) is not None
    cash = _read("balances", lambda: wallets.balances(user_id), notes) if has_wallet else None
    held = (_read("positions", lambda: positions.list_positions(user_id, True), notes)
            if has_wallet else None) or []
    summary = _read("PnL", lambda: stats.user_summary(user_id), notes) if has_wallet else None
    # The 24 h and 7 d changes read the same curve the PnL chart draws, ending at the total.
    curve = (_read("PnL history", lambda: pnl_history.user_series(user_id, _now(summary)), notes)
             if summary else None)
    changes = pnl_history.windows(curve) if curve is not None else None
    positions_value = sum((p["current_value"] or ZERO for p in held), ZERO)
    unrealized = sum((p["unrealized_pnl"] or ZERO for p in held), ZERO)
    cash_pusd = cash["pusd"] if cash else None
    rows = []
    for config in configs.list_configs(user_id):
        status = _read(f"status of {config.target_name or config.target_address}",
                       lambda c=config: configs.status(user_id, c.id), notes)
        pnl = _read(f"PnL of {config.target_name or config.target_address}",
                    lambda c=config: configs.pnl(user_id, c.id), notes)
        rows.append({"config": config, "status": status, "health": health(config, status),
                     "total_pnl": pnl["total_pnl"] if pnl else None,
                     "realized_pnl": pnl["realized_pnl"] if pnl else None,
                     "unrealized_pnl": pnl["unrealized_pnl"] if pnl else None})
    rows.sort(key=lambda r: HEALTH.index(r["health"]))
    return {
        "has_wallet": has_wallet,
        "cash_pusd": cash_pusd,
        "positions_value": positions_value,
        "portfolio_value": (cash_pusd + positions_value) if cash_pusd is not None else None,
        "total_pnl": summary["total_pnl"] if summary else None,
        "realized_pnl": summary["realized_pnl"] if summary else None,
        "unrealized_pnl": unrealized,
        "pnl_24h": changes["day"] if changes else None,
        "pnl_7d": changes["week"] if changes else None,
        "open_positions": len(held),
        "configs": rows,
        "recent_trades": list(trades.list_trades(user_id, limit=recent).items),
        "notes": notes,
    }
