"""Positions and trades, live and paper, with unrealized PnL; open orders with cancel
(services/trading/positions.py, paper.py, trades.py, orders.py). Each section loads as a fragment,
so a venue outage shows inline in its section and leaves the others working."""

from __future__ import annotations

from flask import render_template

from blueprints.dashboard.base import bp, current_principal, present
from schemas.trading import (
    CancelResultSchema,
    OpenOrderSchema,
    PaperTradeSchema,
    PositionSchema,
    TradeSchema,
)
from services.trading import order_cancels, order_reads, paper, positions, trades

TRADES_SHOWN = 50


@bp.get("/positions")
def positions_page() -> str:
    """The page; its sections are fragments below."""
    return render_template("dashboard/positions.html")


@bp.get("/positions/live")
def live_positions() -> str:
    """Live positions (GET /api/positions)."""
    rows = present(PositionSchema(many=True),
                   positions.list_positions(current_principal().user, True))
    return render_template("dashboard/_positions.html", positions=rows, paper=False)


@bp.get("/positions/paper")
def paper_positions() -> str:
    """Paper positions (GET /api/paper/positions)."""
    rows = present(PositionSchema(many=True), paper.list_positions(current_principal().user,
                                                                   True))
    return render_template("dashboard/_positions.html", positions=rows, paper=True)


@bp.get("/orders")
def open_orders() -> str:
    """Resting orders (GET /api/markets/orders), each with a cancel button."""
    rows = present(OpenOrderSchema(many=True), order_reads.open_orders(current_principal().user))
    return render_template("dashboard/_orders.html", orders=rows, result=None)


@bp.post("/orders/<string:order_id>/cancel")
def cancel_order(order_id: str) -> str:
    """Cancel one order (DELETE /api/markets/orders/{id}); the refreshed list."""
    user = current_principal().user
    result = present(CancelResultSchema(), order_cancels.cancel_order(user, order_id))
    rows = present(OpenOrderSchema(many=True), order_reads.open_orders(user))
    return render_template("dashboard/_orders.html", orders=rows, result=result)


@bp.get("/trades/live")
def live_trades() -> str:
    """Live trades, newest first (GET /api/trades)."""
    page = trades.list_trades(current_principal().user, limit=TRADES_SHOWN)
    return render_template("dashboard/_trades.html", paper=False,
                           trades=present(TradeSchema(many=True), page.items))


@bp.get("/trades/paper")
def paper_trades() -> str:
    """Paper fills, newest first (GET /api/paper/trades)."""
    page = paper.list_trades(current_principal().user, limit=TRADES_SHOWN)
    return render_template("dashboard/_trades.html", paper=True,
                           trades=present(PaperTradeSchema(many=True), page.items))
