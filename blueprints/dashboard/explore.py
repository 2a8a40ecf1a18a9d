"""The trader's pages: the overview (home), traders to discover (leaderboard -> profile ->
copy), and markets (search -> market page with chart, depth and an order ticket).

Views stay thin: each calls the service its REST route calls (``/api/traders``,
``/api/markets``, ``/api/markets/order/preview`` and ``/api/markets/order``) and shows what it
answers, formatted by ``numbers``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask import Response, render_template, request
from markupsafe import Markup

from blueprints.dashboard import refresh
from blueprints.dashboard.base import (
    bp,
    current_principal,
    form_text,
    go,
    is_htmx,
    parse,
    present,
)
from schemas.configs import CopyConfigSchema
from schemas.copyability import CopyabilityOperationSchema
from schemas.markets import (
    MarketPageSchema,
    MarketSummarySchema,
    TraderProfileSchema,
    TradersArgsSchema,
    TraderSchema,
)
from schemas.screening import RANGED, SORTS, TRADER_FLAGS, ComparedTraderSchema
from schemas.trading import (
    OrderPreviewSchema,
    PlaceOrderRequestSchema,
    PlaceOrderResponseSchema,
    PlaceOrderSchema,
    TradeSchema,
)
from services.copying import copyability_reports, leaderboard, traders
from services.copying import overview as overview_service
from services.copying.configs import list_configs, suggest_multiplier
from services.markets import markets
from services.platform import addresses, errors
from services.trading import order_reads, orders, positions, previews

PERIODS = ("day", "week", "month", "all")


@bp.get("")
@bp.get("/")
def home() -> str:
    """The overview: portfolio, cash, PnL, each config's health and PnL, recent activity."""
    view = overview_service.overview(current_principal().user)
    view["configs"] = [{**row, "config": present(CopyConfigSchema(), row["config"])}
                       for row in view["configs"]]
    view["recent_trades"] = present(TradeSchema(many=True), view["recent_trades"])
    return render_template("dashboard/overview.html", view=view)


@bp.get("/traders")
def traders_page() -> str:
    """The screened leaderboard for a period, ranked by PnL or volume, sorted, filtered and
    searched by the replay's columns (GET /api/traders)."""
    raw: dict[str, Any] = {name: value for name, value in request.args.items()
                           if value and name not in ("flag", "without_flag", "column", "low",
                                                     "high")}
    for name in ("flag", "without_flag"):
        chosen = [value for value in request.args.getlist(name) if value]
        if chosen:
            raw[name] = chosen
    column = request.args.get("column") or ""
    for edge, field in (("min", "low"), ("max", "high")):
        if column and request.args.get(field):
            raw[f"{edge}_{column}"] = request.args[field]
    args = parse(TradersArgsSchema(), raw)
    args["limit"] = 50
    rows = leaderboard.top_traders(args.pop("period").upper(),
                                   "VOL" if args.pop("order_by") == "volume" else "PNL",
                                   args.pop("limit"), args.pop("category"), **args)
    return render_template("dashboard/traders.html", traders=present(TraderSchema(many=True),
                                                                    rows),
                           args=request.args, periods=PERIODS, sorts=SORTS, flags=TRADER_FLAGS,
                           ranged=RANGED)


@bp.get("/traders/compare")
def compare_page() -> str:
    """Up to five traders' replays side by side (GET /api/traders/compare): equity curves
    at our typical delay, the rules that skipped their trades, the capital each needs."""
    shown = present(ComparedTraderSchema(many=True),
                    leaderboard.compare(request.args.get("addresses") or ""))
    times = sorted({point["at"] for trader in shown for point in trader["equity"]})
    lines = []
    for trader in shown:
        by_time = {point["at"]: point["pnl_usdc"] for point in trader["equity"]}
        value, values = "0", []
        for moment in times:  # a curve holds its last value until its next copy
            value = by_time.get(moment, value)
            values.append(value)
        # named as the table names them (0xe8e7…b134), not by the address's first 10 signs
        lines.append({"label": trader["name"] or addresses.short_address(trader["address"]),
                      "values": values})
    return render_template("dashboard/traders_compare.html", traders=shown,
                           chart_json=json.dumps({"at": times, "lines": lines}))


@bp.get("/traders/<address>")
def trader_page(address: str) -> str:
    """One trader (GET /api/traders/{address}) with PnL over time and "Copy this trader"."""
    wallet = traders.wallet_address(address)
    profile = present(TraderProfileSchema(), traders.trader_profile(wallet))
    try:
        suggestion = suggest_multiplier(current_principal().user, wallet)
    except errors.CopytradeError:  # the venue said no: the form asks
        suggestion = None
    # With nothing to trade yet (no deposit seen) a suggestion would be a meaningless floor.
    suggested = (suggestion["size_multiplier"]
                 if suggestion and suggestion["balance"] > 0 else None)
    chart = {"at": [int(_epoch(p["at"])) for p in profile["pnl_history"]],
             "total": [p["pnl"] for p in profile["pnl_history"]]}
    mine = [{"id": str(c.id), "label": c.target_name or c.target_address}
            for c in list_configs(current_principal().user)]
    return render_template("dashboard/trader.html", profile=profile, suggested=suggested,
                           chart_json=json.dumps(chart), configs=mine)


@bp.post("/traders/<address>/copyability")
def copyability(address: str) -> str:
    """Ask for the copyability report (POST /api/traders/{address}/copyability) with one of
    your configs, a preview's fields, or the multiplier and cap typed in; the fragment polls
    until it is built."""
    body: dict[str, Any] = {"window": form_text("window") or "30d"}
    if form_text("config_id"):
        body["config_id"] = form_text("config_id")
    elif form_text("preview_id"):
        body["preview_id"] = form_text("preview_id")
    else:
        body["rules"] = {"size_multiplier": form_text("size_multiplier") or "1",
                         "max_position_usdc": form_text("max_position_usdc") or "100"}
    _, operation = copyability_reports.request(current_principal().user, address, body)
    return _copyability_fragment(operation)


@bp.get("/traders/<address>/copyability/<uuid:report_id>")
def copyability_progress(address: str, report_id: Any) -> str:
    """One copyability report's progress, then the report (polled by the fragment)."""
    row = copyability_reports.get(report_id, address)
    return _copyability_fragment(copyability_reports.describe(row))


def _copyability_fragment(operation: dict[str, Any]) -> str:
    shown = present(CopyabilityOperationSchema(), operation)
    return render_template("dashboard/_copyability.html", op=shown)


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


@bp.get("/markets")
def markets_page() -> str:
    """Search markets, or browse them by 24-hour volume (GET /api/markets)."""
    q = (request.args.get("q") or "").strip() or None
    page = markets.browse_markets(q, limit=25)
    return render_template("dashboard/markets.html", q=q or "",
                           markets=present(MarketSummarySchema(many=True), page.items))


@bp.get("/markets/<slug>")
def market_page(slug: str) -> str:
    """One market: price chart, each outcome's book, the order ticket and your position (and
    the order ``?order=`` names, where a form posted without JavaScript was sent)."""
    placed = None
    if request.args.get("order"):
        order = order_reads.get_order(current_principal().user, request.args["order"])
        placed = _placed_html(slug, order.token_id, orders.placed_view(order))
    return _market_page(slug, request.args.get("token"), placed)


def _market_page(slug: str, token: str | None, ticket_result: str | None = None) -> str:
    market = present(MarketPageSchema(), markets.market_page(slug, levels=8))
    token = token or market["outcomes"][0]["token_id"]
    history = markets.price_history(token, request.args.get("interval", "1w"))
    chart = {"at": [int(p["at"].timestamp()) for p in history["points"]],
             "total": [str(p["price"]) for p in history["points"]]}
    held = _held(token)
    return render_template("dashboard/market.html", market=market, token=token,
                           chart_json=json.dumps(chart), held=held,
                           side=request.args.get("side", "buy"),
                           size=request.args.get("size", ""),
                           ticket_result=Markup(ticket_result) if ticket_result else None)


def _held(token: str) -> dict[str, Any] | None:
    try:
        rows = positions.list_positions(current_principal().user, True)
    except errors.CopytradeError:
        return None
    return next((p for p in rows if p["token_id"] == token), None)


def _ticket() -> dict[str, Any]:
    """The order ticket's fields as the REST body of POST /api/markets/order/preview."""
    data: dict[str, Any] = {"token_id": form_text("token_id") or "",
                            "side": (form_text("side") or "").lower(),
                            "order_type": form_text("order_type") or "market"}
    # "Spend pUSD" sizes a market buy by the amount it spends; "Shares" (the default) by size.
    if form_text("sizing") == "amount":
        data["amount"] = form_text("amount") or ""
    else:
        data["size"] = form_text("size") or ""
    limit = form_text("limit_price")
    if data["order_type"] == "limit" and limit is not None:
        data["price"] = limit
    return data


@bp.post("/markets/<slug>/preview")
def order_preview(slug: str) -> str:
    """Quote the ticket (POST /api/markets/order/preview); the answer asks to confirm."""
    body = parse(PlaceOrderRequestSchema(), _ticket())
    quote = previews.create(current_principal().user, **body)
    html = render_template("dashboard/_order_preview.html", slug=slug,
                           preview=present(OrderPreviewSchema(), quote))
    # A form posted without JavaScript gets the market's page with the preview in place.
    return html if is_htmx() else _market_page(slug, body["token_id"], html)


@bp.post("/markets/<slug>/order")
def place_order(slug: str) -> Response:
    """Place the previewed order (POST /api/markets/order with its preview_id)."""
    data = {**_ticket(), "preview_id": form_text("preview_id") or ""}
    body = parse(PlaceOrderSchema(), data)
    order = orders.place_order(current_principal().user, source="manual", **body)
    if not is_htmx():  # posted without JavaScript: the market's page shows the order
        return go(f"/dashboard/markets/{slug}?" + urlencode(
            {"token": body["token_id"], "order": order.order_hash}))
    return _placed_fragment(slug, body["token_id"], orders.placed_view(order), placed=True)


@bp.get("/markets/<slug>/orders/<order_id>")
def order_progress(slug: str, order_id: str) -> Response:
    """A placed order as its record stands now: the fragment polls it while it is accepted
    (resting, or waiting out the market's delay) and stops once it filled or ended."""
    order = order_reads.get_order(current_principal().user, order_id)
    return _placed_fragment(slug, order.token_id, orders.placed_view(order), placed=False)


def _placed_fragment(slug: str, token_id: str, answer: dict[str, Any], *,
                     placed: bool) -> Response:
    """The placed order's fragment; a fill announces that cash, shares and orders changed,
    an order just placed to rest on the book (not each poll of it) that the orders did, an
    order that left the book unfilled that they did again."""
    shown = present(PlaceOrderResponseSchema(), answer)
    html = _placed_html(slug, token_id, answer)
    if shown["status"] == "filled":
        return refresh.announce(html, *refresh.FILLED)
    if shown["status"] == "accepted" and not placed:
        return refresh.announce(html)
    return refresh.announce(html, refresh.ORDERS)


def _placed_html(slug: str, token_id: str, answer: dict[str, Any]) -> str:
    return render_template("dashboard/_order_placed.html", slug=slug, token_id=token_id,
                           placed=present(PlaceOrderResponseSchema(), answer))


@bp.get("/markets/<slug>/position")
def market_position(slug: str) -> str:
    """The ticket's "Your position" in one outcome (re-read when shares change)."""
    return render_template("dashboard/_held.html", held=_held(request.args.get("token", "")))
