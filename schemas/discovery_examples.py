"""Example answers of the REST discovery routes (markets and traders), for the OpenAPI
description; tests/api/test_discovery.py loads each through its schema."""

from __future__ import annotations

from typing import Any

_YES = "111877908887333175888306969063329300644662262030909922956861391281840576209082"
_NO = "79854302843090466077398709220480794999991987987624355826340098398128907689345"
_CONDITION = "0x6bc6bf06aea001e1a90a2f5960a976ae3f85b381673bd43d5905745931d56202"
SLUG = "will-bitcoin-reach-150k-2026"
TRADER = "0x0a66896da10eaff49594c108ae9407102de27d4f"

MARKET_SUMMARY: dict[str, Any] = {
    "slug": SLUG, "title": "Will Bitcoin reach $150,000 by December 31, 2026?",
    "category": "Crypto", "condition_id": _CONDITION, "status": "open",
    "outcomes": [{"outcome": "Yes", "token_id": _YES, "price": "0.3"},
                 {"outcome": "No", "token_id": _NO, "price": "0.7"}],
    "volume": "182340.5", "liquidity": "3475", "end_date": "2026-12-31T23:59:59+00:00",
    "tick_size": "0.01",
}

MARKETS = [MARKET_SUMMARY]


def _book(token: str, bid: str, ask: str, mid: str) -> dict[str, Any]:
    return {
        "token_id": token, "best_bid": bid, "best_ask": ask, "midpoint": mid, "spread": "0.02",
        "bids": [{"price": bid, "size": "250", "cumulative_size": "250"}],
        "asks": [{"price": ask, "size": "250", "cumulative_size": "250"}],
        "liquidity": [{"within_cents": 1, "bid_usdc": "72.5", "ask_usdc": "77.5"},
                      {"within_cents": 2, "bid_usdc": "212.5", "ask_usdc": "237.5"},
                      {"within_cents": 5, "bid_usdc": "987.5", "ask_usdc": "1262.5"}],
        "tick_size": "0.01", "min_order_size": "5",
    }


MARKET_PAGE: dict[str, Any] = {
    **MARKET_SUMMARY,
    "description": 'This market will resolve to "Yes" if Bitcoin trades at $150,000 or more '
                   'by December 31, 2026. Otherwise, it will resolve to "No".',
    "neg_risk": False, "accepting_orders": True, "min_order_size": "5",
    "best_bid": "0.29", "best_ask": "0.31", "last_trade_price": "0.3", "volume_24h": "1204.7",
    "fees_enabled": True, "taker_fee_rate": "0.07",
    "books": [{"outcome": "Yes", "token_id": _YES, "depth": _book(_YES, "0.29", "0.31", "0.3")},
              {"outcome": "No", "token_id": _NO, "depth": _book(_NO, "0.69", "0.71", "0.7")}],
}

PRICE_HISTORY: dict[str, Any] = {
    "token_id": _YES, "interval": "1w",
    "points": [{"at": "2026-11-21T00:00:00+00:00", "price": "0.27"},
               {"at": "2026-11-24T00:00:00+00:00", "price": "0.32"},
               {"at": "2026-11-28T00:00:00+00:00", "price": "0.3"}],
    "open": "0.27", "latest": "0.3", "high": "0.32", "low": "0.27", "change": "0.03",
    "change_pct": "11.11",
}

SCREENING: dict[str, Any] = {
    "kind": "replay", "window": "30d",
    "delays": {"p50_ms": 2000, "p95_ms": 25000, "source": "default", "samples": 0},
    "copier_pnl_p50_usdc": "41.2", "copier_pnl_p95_usdc": "18.75", "trader_pnl_usdc": "1840.25",
    "kept_share": "0.0224", "win_rate": "0.625", "trades": 48, "volume_usdc": "27288.4",
    "avg_hold_seconds": 51840, "max_drawdown_usdc": "12.4", "markets": 8,
    "categories": ["Crypto", "Politics"], "last_active_at": "2026-11-28T03:36:20+00:00",
    "fills": 48, "updated_at": "2026-11-28T03:40:00+00:00", "flags": ["toxic_for_copying"],
    "flag_numbers": {"toxic_for_copying": {"edge_usdc": "58.1", "copier_pnl_usdc": "41.2",
                                           "lost_share": "0.2909", "threshold": "0.15"}},
    "cannot_know": ["the book's depth at the time of each fill (today's book shape is moved "
                    "to the price then)", "our place in the queue at a price level"],
}

TRADERS = [
    {"rank": 1, "address": TRADER, "name": "Orca9", "pnl": "1840.25", "volume": "27288.4",
     "verified": False, "screening": SCREENING},
    {"rank": 2, "address": "0x519aef9d3ef193a256838e1cc46e3b5c3c9cfda9", "name": "TideRunner",
     "pnl": "912.6", "volume": "14455.1", "verified": True, "screening": None},
]

TRADER_PROFILE: dict[str, Any] = {
    "address": TRADER, "name": "Orca9", "trades": 2, "volume_usdc": "64",
    "realized_pnl_usdc": "6", "unrealized_pnl_usdc": "-0.4", "pnl_usdc": "5.6",
    "pnl_history": [{"at": "2026-11-26T10:00:00+00:00", "pnl": "0"},
                    {"at": "2026-11-27T15:30:00+00:00", "pnl": "6"},
                    {"at": "2026-11-28T03:36:20+00:00", "pnl": "5.6"}],
    "markets": [{"market_slug": SLUG, "title": MARKET_SUMMARY["title"], "trades": 2,
                 "volume_usdc": "64"}],
    "recent_trades": [
        {"at": "2026-11-27T15:30:00+00:00", "side": "SELL", "outcome": "Yes", "token_id": _YES,
         "market_slug": SLUG, "title": MARKET_SUMMARY["title"], "size": "60", "price": "0.4",
         "usdc": "24", "transaction_hash": "0x" + "b4" * 32},
        {"at": "2026-11-26T10:00:00+00:00", "side": "BUY", "outcome": "Yes", "token_id": _YES,
         "market_slug": SLUG, "title": MARKET_SUMMARY["title"], "size": "100",
         "price": "0.3", "usdc": "30", "transaction_hash": "0x" + "a3" * 32}],
    "positions": [{"market_slug": SLUG, "title": MARKET_SUMMARY["title"], "outcome": "Yes",
                   "token_id": _YES, "size": "40", "average_price": "0.3",
                   "current_price": "0.29", "current_value": "11.6", "pnl_usdc": "-0.4",
                   "redeemable": False, "status": "OPEN"}],
    "window_rows": 2,
    "screening": SCREENING,
}

# Path parameters, documented with an example each.
SLUG_PARAMETER = {"in": "path", "name": "slug", "description": "The market's slug.",
                  "example": SLUG}
ADDRESS_PARAMETER = {"in": "path", "name": "address",
                     "description": "The wallet's address (0x and 40 hex digits; a mixed-case "
                                    "one must pass its EIP-55 checksum).",
                     "example": TRADER}
