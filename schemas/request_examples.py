"""Example request bodies of the REST routes, for the OpenAPI description and the REST
reference (``docs/generate.py`` prints them): each a whole request a user could send, not
its required fields alone. tests/api/test_request_examples.py checks every JSON body route
has one and that it passes the route's schema and the rules behind it."""

from __future__ import annotations

from typing import Any

from schemas.discovery_examples import TRADER

_YES = "111877908887333175888306969063329300644662262030909922956861391281840576209082"
_ID = "3f6c1e0a-8d2b-4c7e-9a51-2b7d4e8f0c19"
# A well-known throwaway key (web3's documentation example) and its Polygon deposit wallet:
# the pair is consistent, as connecting requires (tests check it with the SDK's rules).
_SIGNER_KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
_DEPOSIT_WALLET = "0xd2C50736787e5eeefA6c2E81496AE56d51D6b7B1"

MAGIC: dict[str, Any] = {"email": "ada@example.com"}
VERIFY_CODE: dict[str, Any] = {"email": "ada@example.com", "code": "123456"}
STEP_UP: dict[str, Any] = {"code": "123456"}

ORDER_PREVIEW: dict[str, Any] = {
    "token_id": _YES,
    "side": "buy",
    "size": "10",
    "order_type": "market",
}
ORDER: dict[str, Any] = {**ORDER_PREVIEW, "preview_id": _ID}

CONFIG_PREVIEW: dict[str, Any] = {
    "target_address": TRADER,
    "target_name": "Bitcoin whale",
    "size_multiplier": "0.5",
    "max_position_usdc": "100",
    "price_deviation_bps": 200,
    "paper_trading": True,
}
CONFIG_CREATE: dict[str, Any] = {"preview_id": _ID}
CONFIG_EDIT: dict[str, Any] = {"max_position_usdc": "250", "daily_budget_usdc": "50"}
SHARE: dict[str, Any] = {"show_results": False}
COPYABILITY: dict[str, Any] = {
    "window": "30d",
    "rules": {"size_multiplier": "0.5", "max_position_usdc": "100"},
}

API_KEY: dict[str, Any] = {
    "name": "trading bot",
    "scopes": ["read:account", "read:markets", "trade:execute"],
    "expires_in_days": 90,
}
# Turning confirmations on needs nothing; off needs X-Step-Up-Token (docs/user/agents.md).
API_KEY_UPDATE: dict[str, Any] = {"confirm_money_tools": True}
USER_LIMITS: dict[str, Any] = {"max_total_exposure_usdc": "500"}

CONNECT: dict[str, Any] = {"wallet_address": _DEPOSIT_WALLET, "private_key": _SIGNER_KEY}
WRAP: dict[str, Any] = {"amount": "25"}
WITHDRAW: dict[str, Any] = {"to_address": TRADER, "amount": "25", "token": "usdc"}
CLAIM: dict[str, Any] = {"token_ids": [_YES]}
SELL: dict[str, Any] = {"token_ids": [_YES]}

CHANNEL: dict[str, Any] = {
    "kind": "webhook",
    "url": "https://example.com/hooks/copytrade",
    "label": "My server",
}
PREFERENCES: dict[str, Any] = {
    "preferences": [{"event_type": "copy.skipped", "channel_id": _ID, "enabled": True}]
}
MARK_READ: dict[str, Any] = {"ids": [_ID]}

JSON_RPC: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "search_markets", "arguments": {"query": "bitcoin"}},
}

OAUTH_CLIENT: dict[str, Any] = {
    "redirect_uris": ["https://agent.example.com/oauth/callback"],
    "client_name": "My agent",
    "token_endpoint_auth_method": "none",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "scope": "read:account read:markets",
}
