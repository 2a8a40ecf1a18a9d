"""Where the venue lives and how patiently we talk to it: base URLs, chain id, timeouts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlsplit, urlunsplit

from config import POLYGON_CHAIN_ID

POLYMARKET_GAMMA_URL = "https://gamma-api.polymarket.com"
POLYMARKET_CLOB_URL = "https://clob.polymarket.com"
POLYMARKET_DATA_URL = "https://data-api.polymarket.com"
POLYMARKET_RTDS_URL = "wss://ws-live-data.polymarket.com"
POLYMARKET_MARKET_WS_URL = "wss://ws-subscriptions-clob.polymarket.com/ws/market"
SANDBOX_CLOB_PREFIX = "/clob"
SANDBOX_MARKET_WS_PATH = "/ws/market"
POLYMARKET_RELAYER_URL = "https://relayer-v2.polymarket.com"
SANDBOX_RELAYER_PREFIX = "/relayer"


@dataclass(frozen=True, slots=True)
class VenueConfig:
    """Base URLs of the three HTTP APIs and the feeds, plus signing and transport settings.

    ``rtds_url`` is the activity feed, ``market_ws_url`` the CLOB market channel (order
    books pushed live); "" means not configured.

    ``exchange_address``/``neg_risk_exchange_address`` override the V2 exchange contracts
    that orders are signed for (None = py-clob-client-v2's table for ``chain_id``);
    ``exchange_v3_address`` the same for Exchange V3.
    """

    gamma_url: str
    clob_url: str
    data_url: str
    rtds_url: str = ""
    market_ws_url: str = ""
    chain_id: int = POLYGON_CHAIN_ID
    exchange_address: str | None = None
    neg_risk_exchange_address: str | None = None
    exchange_v3_address: str | None = None  # Exchange V3 (position-id markets, version 3)
    timeout: float = 10.0
    connect_timeout: float = 5.0
    max_retries: int = 2
    backoff_base: float = 0.25
    backoff_cap: float = 2.0
    max_retry_after: float = 3.0
    cache_ttl: float = 30.0
    max_connections: int = 20
    lean_http: bool = True  # async clients on trio use venue.http11 (see venue.http)
    # An HTTP(S) proxy is configured (HTTP_PROXY and kin): only httpx goes through it, so
    # the lean pool is not used. Set from Settings; the venue layer reads no environment.
    behind_proxy: bool = False
    user_agent: str = "copytrade/0.1"
    # The part of each documented rate limit this process may use (venue.budgets); 0: off.
    rate_budget_share: float = 1.0
    relayer_url: str = ""  # gasless wallet transactions; "" means not configured

    @classmethod
    def polymarket(cls, **overrides: object) -> VenueConfig:
        """Polymarket's public hosts."""
        base = cls(
            gamma_url=POLYMARKET_GAMMA_URL,
            clob_url=POLYMARKET_CLOB_URL,
            data_url=POLYMARKET_DATA_URL,
            rtds_url=POLYMARKET_RTDS_URL,
            market_ws_url=POLYMARKET_MARKET_WS_URL,
            relayer_url=POLYMARKET_RELAYER_URL,
        )
        return replace(base, **overrides)  # type: ignore[arg-type]

    @classmethod
    def for_sandbox(cls, base_url: str, **overrides: object) -> VenueConfig:
        """The sandbox venue's layout: one host, APIs under ``/gamma``, ``/clob``, ``/data``."""
        root = base_url.rstrip("/")
        ws_root = "ws" + root[len("http") :] if root.startswith("http") else root
        base = cls(
            gamma_url=f"{root}/gamma",
            clob_url=f"{root}/clob",
            data_url=f"{root}/data",
            rtds_url=f"{ws_root}/rtds",
            market_ws_url=f"{ws_root}{SANDBOX_MARKET_WS_PATH}",
            relayer_url=f"{root}{SANDBOX_RELAYER_PREFIX}",
        )
        return replace(base, **overrides)  # type: ignore[arg-type]

    def base_url(self, api: str) -> str:
        """Base URL of ``gamma``, ``clob``, ``data`` or ``relayer``, without a trailing slash."""
        urls = {"gamma": self.gamma_url, "clob": self.clob_url, "data": self.data_url,
                "relayer": self.relayer_url}
        return urls[api].rstrip("/")


def sandbox_market_ws_url(clob_url: str) -> str:
    """The sandbox's market channel from its CLOB base (same host, ws scheme, /ws/market)."""
    parts = urlsplit(clob_url.rstrip("/"))
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    root = parts.path.removesuffix(SANDBOX_CLOB_PREFIX)  # the CLOB is mounted at <root>/clob
    return urlunsplit((scheme, parts.netloc, root + SANDBOX_MARKET_WS_PATH, "", ""))


__all__ = ["POLYGON_CHAIN_ID", "VenueConfig", "sandbox_market_ws_url"]
