"""The htmx events an action announces when it changed something a card shows, named once.

A view that moved money or shares answers with ``HX-Trigger`` naming what changed
(``announce``); each card that shows it reloads on ``hx-trigger="<event> from:body"``
(``refresh_on`` in templates), so a fill updates the ticket's position and the balance
without a reload.
"""

from __future__ import annotations

from flask import Response, make_response

from blueprints.dashboard.base import bp

BALANCE = "balance-changed"      # the wallet's pUSD, USDC.e or MATIC
POSITIONS = "positions-changed"  # shares held (a fill, a claim)
ORDERS = "orders-changed"        # open orders and trades (placed, filled, cancelled)
WRAP = "wrap-confirmed"          # USDC.e wrapped into pUSD: the account's readiness

EVENTS = {"balance": BALANCE, "positions": POSITIONS, "orders": ORDERS, "wrap": WRAP}

# What a filled order changed: cash, shares, the order and trade lists.
FILLED = (BALANCE, POSITIONS, ORDERS)


def announce(body: str | Response, *events: str) -> Response:
    """``body`` as a response whose ``HX-Trigger`` names ``events`` (none: unchanged)."""
    response = make_response(body)
    named = list(dict.fromkeys(e for e in events if e))
    if named:
        response.headers["HX-Trigger"] = ", ".join(named)
    return response


@bp.app_template_global("refresh_on")
def refresh_on(*names: str, also: str = "") -> str:
    """An ``hx-trigger`` value reloading a card when any of ``names`` (keys of EVENTS) is
    announced, after ``also`` (e.g. "load")."""
    listened = [f"{EVENTS[name]} from:body" for name in names]
    return ", ".join(([also] if also else []) + listened)
