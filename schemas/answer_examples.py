"""Example values of answer fields, by field name, for the REST reference
(``docs/generate.py`` builds each answer's example from its schema): a field without an
example of its own shows one of these, so an answer reads like a real one (a token id, a
price under 1, a latency in milliseconds) instead of ``"string"``, ``0`` or the decimal
type's generic ``"12.5"``. tests/api/test_request_examples.py checks that every documented
answer is made of real values."""

from __future__ import annotations

from typing import Any

from schemas.discovery_examples import TRADER
from schemas.request_examples import _YES

_HASH = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
_CONDITION = "0x9ffe3b4a661eef31a18d6bbdf71844da984dfada9fb56e29544a39c298e8edc6"
_WALLET = "0xd2C50736787e5eeefA6c2E81496AE56d51D6b7B1"
_RELAYER_ID = "0190f3a2-6c1d-7b8e-9f10-2a3b4c5d6e7f"

# Money (pUSD), prices (0 to 1) and shares, as the API writes them: decimal strings.
DECIMALS: dict[str, str] = {
    "amount": "25", "average_price": "0.52", "balance": "987.50", "balance_usdc": "987.50",
    "best_ask": "0.53", "best_bid": "0.51", "claimable_value": "20", "cost_basis": "5.20",
    "current_price": "0.55", "current_value": "5.50", "daily_budget_usdc": "50",
    "estimated_cost": "5.30", "estimated_shares": "10", "exit_hours_before_end": "2",
    "expected_payout": "20", "expected_price": "0.53", "failed_size": "0",
    "fee": "0.05", "fees_paid": "1.25", "filled_price": "0.52", "filled_size": "10",
    "fixed_usdc": "5", "gas_fee": "0.0021", "gas_matic": "0.5", "loss_stop_usdc": "40",
    "matic": "0.5", "max_position_usdc": "100", "max_price": "0.95",
    "max_total_exposure_usdc": "500",
    "max_trade_usdc": "50", "merge_value": "12", "midpoint": "0.52", "min_amount": "1",
    "min_order_size": "5", "min_price": "0.05", "min_target_trade_usdc": "10",
    "min_trade_usdc": "1", "price": "0.52", "pusd": "987.50", "realized_pnl": "3.40",
    "size": "10", "size_multiplier": "0.5", "skip_if_ends_within_hours": "6",
    "slippage_bps": "8.4", "target_exposure_usdc": "1250", "tick_size": "0.01",
    "total_budget_usdc": "500", "total_pnl": "14.80", "total_usdc": "987.50",
    "total_volume_usdc_24h": "48210.75", "typical_trade_usdc": "250",
    "unrealized_pnl": "-0.30", "usdc": "987.50", "usdc_e": "0", "usdc_native": "0",
    "usdc_value": "5.20", "target_price": "0.51", "copier_pnl_p50_usdc": "18.40",
    "copier_pnl_p95_usdc": "9.10", "trader_pnl_usdc": "220", "kept_share": "0.42",
    "win_rate": "0.61", "volume_usdc": "5120", "max_drawdown_usdc": "35.20",
    "pnl_usdc": "220", "fees_usdc": "3.10", "expected_pnl_usdc": "18.40",
    "versus_target_usdc": "-4.60", "capital_needed_usdc": "132.26",
    "target_pnl_usdc": "12", "share": "0.15", "top_market_share": "0.40",
    "low_usdc": "-2.10", "high_usdc": "31.80",
}

# Fields a thing that went well leaves empty: null in the example where the schema allows it.
EMPTY = {"error", "last_error", "disabled_reason", "stopped_reason"}

# Everything else a field of that name holds, in any answer.
FIELDS: dict[str, Any] = {
    **DECIMALS,
    # ids, addresses, hashes
    "token_id": _YES, "token_ids": [_YES], "condition_id": _CONDITION, "address": TRADER,
    "target_address": TRADER, "target": TRADER, "wallet_address": _WALLET,
    "trading_wallet_address": _WALLET,
    "contract_address": "0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB",
    "order_id": "0x0385b2a0426464b0df1ff44a151a67abf24309b0f9e59aa3e6efffc4f6994d7b",
    "tx_hash": _HASH, "approval_tx_hash": _HASH, "transaction_id": _RELAYER_ID,
    "relayer_transaction_id": _RELAYER_ID, "deploy_transaction_id": _RELAYER_ID,
    "approvals_transaction_id": _RELAYER_ID, "id": "1", "client_id": "agent-7f3c2a",
    "worker": "vm.10437.4953cdd5", "block_number": 51234567, "nonce": 42, "chain_id": 137,
    "decimals": 6, "outcome_index": 0,
    # markets and trades
    "market_slug": "will-bitcoin-reach-150k-2026", "slug": "will-bitcoin-reach-150k-2026",
    "title": "Will Bitcoin reach $150k in 2026?",
    "market_title": "Will Bitcoin reach $150k in 2026?", "outcome": "Yes", "side": "buy",
    "order_type": "market", "time_in_force": "FOK", "status": "confirmed",
    "intent_status": "filled", "reason": "price_deviation_exceeded",
    "reasons": ["price_deviation_exceeded"], "canceled": [
        "0x0385b2a0426464b0df1ff44a151a67abf24309b0f9e59aa3e6efffc4f6994d7b"],
    "stage": "placement", "kind": "copy", "mode": "live", "window": "30d", "days": 30,
    "target_name": "Bitcoin whale", "name": "trading bot", "label": "Bitcoin whale",
    # copy rules (integers), as a config holds them
    "price_deviation_bps": 200, "max_deviation_bps": 300, "take_profit_bps": 5000,
    "stop_loss_bps": 3000, "max_drawdown_bps": 2000, "max_consecutive_failures": 5,
    "max_adds_count": 2, "max_open_positions": 10, "market_cooldown_seconds": 60,
    "blocked_categories": ["sports"], "include_keywords": ["bitcoin"],
    "exclude_keywords": ["election"], "stopped_reason": "loss_stop",
    "disabled_reason": "loss_stop",
    # a copy's execution: where its target's fill was seen, each stage's milliseconds
    "source": "feed", "detection_ms": 95, "decision_ms": 3, "placement_ms": 41,
    "ack_ms": 136, "settlement_ms": 2100, "taker_delay_ms": 250,
    # a trader's replay
    "trades": 48, "avg_hold_seconds": 5400, "markets": 12, "categories": ["crypto"],
    "flags": ["thin_history"], "cannot_know": ["book_depth"], "delay_ms": 180,
    "copies": 22, "skips": 2, "seed": 7, "resamples": 1000, "level": "90%",
    # counts and timings
    "count": 3, "samples": 240, "exits": 3, "fills": 24, "done": 2, "total": 3,
    "attempts": 1, "failures": 1, "marked": 3,
    "unread": 2, "fills_last_hour": 4, "fills_last_day": 37, "skips_last_hour": 1,
    "skips_last_day": 9, "recent_trades": 12, "active_configs": 2, "active_live_configs": 1,
    "trade_count": 128, "total_users": 14, "total_trades_24h": 312, "polls_per_minute": 12,
    "chain_calls_per_minute": 30, "latency_ms": 182, "p50_ms": 180, "p95_ms": 420,
    "p99_ms": 910, "max_ms": 1350, "median_latency_ms": 180, "p95_latency_ms": 420,
    "detection_delay_ms": 95, "detection_last_gap_seconds": 4.2, "status_code": 204,
    "code": -32602, "client_id_issued_at": 1796644800, "client_secret_expires_at": 0,
    # accounts, keys, tiers
    "signature_type": 3, "signer_address": "0x8Ba1f109551bD432803012645Ac136ddd64DBA72",
    "email": "ada@example.com", "tier": "free", "max_active_configs": 5, "max_api_keys": 10,
    "locale": "en", "requested_locale": "en", "scope": "read:account trade:execute",
    "secret": "svck_live_2b7d4e8f0c193f6c1e0a8d2b4c7e9a51", "token": "3q2-7wEXAMPLEsession",
    "step_up_token": "st_7f3c2a9e1b4d", "client_secret": "cs_9e1b4d7f3c2a",
    "client_name": "My agent", "redirect_uris": ["http://127.0.0.1:33418/callback"],
    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
    "token_endpoint_auth_method": "none", "link_code": "K7QF2M",
    "link_url": "https://t.me/copytrade_bot?start=K7QF2M",
    # words
    "message": "1 claim submitted.", "error": "The book moved: the price is now 0.56.",
    "last_error": "The venue did not answer in time.", "detail": "5.00 pUSD per copy",
    "description": "Resolves Yes if Bitcoin trades at or above $150,000 in 2026.",
    "explanation": "Bought 9.62 shares: 5.00 pUSD at 0.52, on the 0.01 tick.",
    "note": "Sent once; follow it at status_url.", "text": "Order filled",
    "warnings": ["The book is thin: 40 shares within 1 %."],
    "missing_approvals": ["ctf_exchange"], "confirmation": "not_required",
    "type": "order.filled", "event_type": "order.filled", "link": "/dashboard/positions",
    "location": "/api/positions/claims/3f6c1e0a-8d2b-4c7e-9a51-2b7d4e8f0c19",
    "status_url": "/api/trading-wallet/withdrawals/3f6c1e0a-8d2b-4c7e-9a51-2b7d4e8f0c19",
    "jsonrpc": "2.0", "detection": "feed", "detection_chain": "websocket",
    "detection_chain_mode": "live", "detection_since": "2026-12-07T12:00:00Z",
    "detection_chain_since": "2026-12-07T12:00:00Z",
    "detection_last_gap_at": "2026-12-07T11:58:00Z",
    "worker_heartbeat_at": "2026-12-07T12:00:00Z",
}
