"""Traders worth following, as a follower sizes them up: one wallet's profile from the venue.

The profile is what the venue's Data API shows of a wallet: its recent trades, the markets
it traded, its open positions, volume, and PnL over time. The PnL curve replays the wallet's
recent trades and redemptions oldest first with the average-cost rule every ledger of ours
uses (``trading.holdings``); its last point adds the open positions' unrealized PnL as the
venue reports it. It covers the window read (``limit`` rows), not the wallet's whole life.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from services.copying import screening_rows
from services.platform import errors, venues
from services.platform.addresses import checked_address
from services.trading.holdings import Holding, apply_fill
from venue.models import ActivityItem, Side

ZERO = Decimal(0)
ACTIVITY_TYPES = ("TRADE", "REDEEM")


def _when(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _value(row: ActivityItem) -> Decimal:
    return row.usdc_size if row.usdc_size is not None else row.size * row.price


def pnl_curve(rows: list[ActivityItem], unrealized: Decimal = ZERO) -> list[dict[str, Any]]:
    """Cumulative realized PnL after each trade or redemption (oldest first), then now with
    ``unrealized`` added: [{at, pnl}]."""
    holdings: dict[str, Holding] = {}
    realized = ZERO
    points: list[dict[str, Any]] = []
    for row in sorted(rows, key=lambda r: r.timestamp):
        # A redemption pays the winning shares out: for the position, a sale at the payout.
        side = Side.SELL if row.type == "REDEEM" else row.side
        held, gained = apply_fill(holdings.get(row.asset, Holding()), side, row.size,
                                  _value(row))
        holdings[row.asset] = held
        realized += gained
        points.append({"at": _when(row.timestamp), "pnl": realized})
    points.append({"at": datetime.now(UTC), "pnl": realized + unrealized})
    return points


def wallet_address(text: str) -> str:
    """``text`` as a lower-case wallet address; ValidationFailed (``address``) otherwise
    (a mixed-case one must pass its EIP-55 checksum: ``checked_address``)."""
    return checked_address(text, "address").lower()


def trader_profile(address: str, *, limit: int = 500) -> dict[str, Any]:
    """What the venue shows of ``address``: PnL over time, volume, markets traded, recent
    trades and open positions; with its screened replay and flags (null before one)."""
    client = venues.client()
    try:
        rows = [r for r in client.activity_history(address, types=ACTIVITY_TYPES,
                                                   max_rows=limit)
                if r.is_trade or r.type == "REDEEM"]
        positions = client.data.positions(address, limit=100)
    except Exception as exc:
        raise errors.from_external(exc) or exc from None
    trades = [r for r in rows if r.is_trade]
    unrealized = sum((p.cash_pnl or ZERO for p in positions), ZERO)
    markets: dict[str, dict[str, Any]] = {}
    for row in trades:
        entry = markets.setdefault(row.slug, {"market_slug": row.slug, "title": row.title,
                                              "trades": 0, "volume_usdc": ZERO})
        entry["trades"] += 1
        entry["volume_usdc"] += _value(row)
    curve = pnl_curve(rows, unrealized)
    return {
        "address": address,
        "name": next((r.name or r.pseudonym for r in rows if r.name or r.pseudonym), ""),
        "trades": len(trades),
        "volume_usdc": sum((_value(r) for r in trades), ZERO),
        "realized_pnl_usdc": curve[-2]["pnl"] if len(curve) > 1 else ZERO,
        "unrealized_pnl_usdc": unrealized,
        "pnl_usdc": curve[-1]["pnl"],
        "pnl_history": curve,
        "markets": sorted(markets.values(), key=lambda m: -m["volume_usdc"]),
        "recent_trades": [{
            "at": _when(r.timestamp), "side": r.side, "outcome": r.outcome,
            "token_id": r.asset, "market_slug": r.slug, "title": r.title, "size": r.size,
            "price": r.price, "usdc": _value(r), "transaction_hash": r.transaction_hash}
            for r in sorted(trades, key=lambda r: -r.timestamp)[:20]],
        "positions": [{
            "market_slug": p.slug, "title": p.title, "outcome": p.outcome,
            "token_id": p.asset, "size": p.size, "average_price": p.avg_price,
            "current_price": p.cur_price, "current_value": p.current_value,
            "pnl_usdc": p.cash_pnl, "redeemable": p.redeemable, "status": p.status}
            for p in sorted(positions, key=lambda p: -p.current_value)],
        "window_rows": len(rows),
        "screening": screening_rows.of(address),
    }
