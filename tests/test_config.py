"""Settings: environment names, embedded defaults, generated secrets."""

from __future__ import annotations

import ast
import dataclasses
import re
import stat
from pathlib import Path

import pytest

import config
from tests.source_files import python_files

ROOT = Path(config.__file__).resolve().parent


def test_secrets_generated_once_with_private_mode(tmp_path):
    first = config.load(env={}, instance=tmp_path)
    second = config.load(env={}, instance=tmp_path)
    assert first.secret_key == second.secret_key
    assert first.wallet_encryption_key == second.wallet_encryption_key
    assert first.secret_key != first.wallet_encryption_key
    for name in ("secret_key", "wallet_encryption_key"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_embedded_defaults(tmp_path):
    settings = config.load(env={}, instance=tmp_path)
    assert settings.database_url == f"sqlite:///{tmp_path / 'copytrade.db'}"
    assert settings.redis_url is None
    assert settings.venue.name == "sandbox"
    assert settings.venue.clob_url == "http://127.0.0.1:8010/clob"
    assert settings.venue.rtds_url == "ws://127.0.0.1:8010/rtds"


def test_polymarket_venue_and_overrides(tmp_path):
    env = {"VENUE": "polymarket", "SECRET_KEY": "s", "POLYMARKET_RTDS_URL": "",
           "CHAIN_ID": "80002", "BASE_URL": "https://ct.example/"}
    settings = config.load(env=env, instance=tmp_path)
    assert settings.venue.gamma_url == "https://gamma-api.polymarket.com"
    assert settings.venue.rtds_url == ""  # empty: poll only
    assert settings.secret_key == "s"
    assert settings.chain.chain_id == 80002
    assert settings.base_url == "https://ct.example"


def test_every_knob_is_typed_and_read_from_its_variable(tmp_path):
    env = {"WORKER_CAPACITY": "3", "WORKER_METRICS_PORT": "9101", "METRICS_TOKEN": "tok-123",
           "PROMETHEUS_MULTIPROC_DIR": "/tmp/prom", "LOG_FORMAT": "TEXT", "LOG_LEVEL": "debug",
           "COPY_LEASE_MS": "1500", "COPY_USE_FEED": "0", "COPYTRADE_JOB_MODULES": "a.b, c",
           "COPYTRADE_MAINTENANCE_SECONDS": "0.5", "WITHDRAW_WAIT_SECONDS": "0.2",
           "HTTPS_PROXY": "http://proxy:3128", "WEB_CONCURRENCY": "5",
           "ORDER_NOT_FOUND_GRACE_SECONDS": "30", "ORDER_RESOLVE_DEADLINE_SECONDS": "90",
           "COPY_POLLS_PER_SECOND": "40", "COPY_BACKSTOP_POLLS_PER_SECOND": "10",
           "COPY_BALANCE_READS_PER_SECOND": "7.5", "STEP_UP_SECONDS": "60",
           "MCP_ALLOWED_ORIGINS": "https://Agent.example/, https://b.example",
           "RATE_LIMIT_ENABLED": "false", "OAUTH_FETCH_CONCURRENCY": "3"}
    settings = config.load(env=env, instance=tmp_path)
    assert settings.worker.capacity == 3 and settings.worker.metrics_port == 9101
    assert settings.worker.job_modules == ("a.b", "c")
    assert settings.worker.maintenance_seconds == 0.5
    assert settings.metrics.token == "tok-123" and settings.metrics.multiproc_dir == "/tmp/prom"
    assert (settings.logging.format, settings.logging.level) == ("text", "DEBUG")
    assert settings.engine.lease_ms == 1500 and settings.engine.use_feed is False
    assert (settings.engine.polls_per_second, settings.engine.backstop_polls_per_second,
            settings.engine.balance_reads_per_second) == (40.0, 10.0, 7.5)
    assert settings.chain.withdraw_wait_seconds == 0.2
    assert settings.venue.behind_proxy is True
    assert settings.web_concurrency == 5
    assert settings.order_not_found_grace_seconds == 30.0
    assert settings.order_resolve_deadline_seconds == 90.0
    assert settings.sign_in.step_up_seconds == 60
    assert settings.mcp_allowed_origins == ("https://agent.example", "https://b.example")
    assert settings.rate_limit_enabled is False
    assert settings.oauth_fetch.concurrency == 3
    assert "tok-123" not in repr(settings)  # secrets stay out of logs


def test_overrides_win_over_the_environment(tmp_path):
    settings = config.load(env={"REDIS_PREFIX": "env:", "COPYTRADE_INSTANCE": "/nowhere"},
                           overrides={"REDIS_PREFIX": "mine:", "RATE_LIMIT_BURST": 7,
                                      "INSTANCE_PATH": str(tmp_path)})
    assert settings.redis_prefix == "mine:"
    assert settings.rate_limit_burst == 7
    assert settings.instance_path == str(tmp_path)
    assert settings.flat()["RATE_LIMIT_BURST"] == 7


def test_flat_settings_load_back_to_the_same_settings(tmp_path):
    """Tests and the devstack hand settings on by their names: nothing is lost on the way."""
    env = {"MCP_ALLOWED_ORIGINS": "https://a.example", "RATE_LIMIT_ENABLED": "0",
           "TRADING_EOA_ALLOWLIST": "0x" + "ab" * 20, "ALLOWED_HOSTS": "internal.lan"}
    settings = config.load(env=env, instance=tmp_path)
    assert config.load(env={}, overrides=settings.flat()) == settings


def test_settings_are_frozen(tmp_path):
    settings = config.load(env={}, instance=tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.redis_prefix = "other:"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.worker.capacity = 1  # type: ignore[misc]


# The process environment is read in config.py only; the CLI hands it over. The sandbox
# venue, the dev chain and `copytrade up` (devstack/) are dev tools of their own.
ENVIRONMENT_READERS = {"config.py", "cli.py"}
# The devstack is local tooling beside the app, not the app: it may read its own knobs.
NOT_THE_APP = ("tests", "bench", "node_modules", "instance", "devstack", "build")
_ENVIRONMENT = re.compile(r"\bos\.(environ|getenv|putenv|unsetenv)\b|\bgetenv\(")


def test_only_config_reads_the_environment():
    found = []
    for path in python_files(skip=NOT_THE_APP):
        relative = path.relative_to(ROOT).as_posix()
        if relative in ENVIRONMENT_READERS or relative.startswith("docs/examples/"):
            continue  # the docs' examples are a user's own scripts, not the app
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _ENVIRONMENT.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert found == []


def test_nothing_writes_the_environment():
    found = []
    writes = re.compile(r"os\.environ(\[[^]]+\]\s*=(?!=)|\.(setdefault|update|pop)\()"
                        r"|\bputenv\(")
    for path in python_files(skip=("tests", "bench", "node_modules")):
        relative = path.relative_to(ROOT).as_posix()
        found += [f"{relative}: {line.strip()}" for line in path.read_text().splitlines()
                  if writes.search(line)]
    assert found == []


# ---- tiers: the built-in table, TIERS_FILE and DEFAULT_TIER ------------------------------

def test_default_tier_fits_a_self_hosted_install(tmp_path):
    plans = config.load(env={}, instance=tmp_path).tiers
    default = plans.table[plans.default]
    for limit in (default.max_active_configs, default.max_api_keys):
        assert limit is None or limit >= 10  # None: unlimited
    # the names stored on existing rows keep their limits
    assert {"free", "pro", "elite"} <= set(plans.table)
    assert plans.table["free"] == config.PlanLimits(max_active_configs=1, max_api_keys=3)
    assert plans.source is None


def test_tiers_file_adds_and_replaces_tiers(tmp_path):
    path = tmp_path / "tiers.toml"
    path.write_text('default_tier = "household"\n'
                    '[tiers.household]\nmax_active_configs = 2\nmax_api_keys = "unlimited"\n'
                    '[tiers.free]\nmax_active_configs = 0\nmax_api_keys = 1\n')
    settings = config.load(env={"TIERS_FILE": str(path)}, instance=tmp_path)
    plans = settings.tiers
    assert plans.default == "household" and plans.source == str(path)
    assert plans.table["household"] == config.PlanLimits(2, None)
    assert plans.table["free"] == config.PlanLimits(0, 1)
    assert plans.table["pro"] == config.PlanLimits(10, 10)  # untouched built-in
    assert settings.flat()["TIERS_FILE"] == str(path)
    with pytest.raises(TypeError):
        plans.table["x"] = config.PlanLimits(1, 1)  # type: ignore[index]
    # DEFAULT_TIER wins over the file's default_tier
    env = {"TIERS_FILE": str(path), "DEFAULT_TIER": "pro"}
    assert config.load(env=env, instance=tmp_path).tiers.default == "pro"
    assert config.load(env={"DEFAULT_TIER": "elite"}, instance=tmp_path).tiers.default == "elite"


@pytest.mark.parametrize(("text", "named"), [
    ('[tiers.a]\nmax_active_configs = -1\nmax_api_keys = 1\n', "tiers.a.max_active_configs"),
    ('[tiers.a]\nmax_active_configs = 1\nmax_api_keys = "lots"\n', "tiers.a.max_api_keys"),
    ('[tiers.a]\nmax_active_configs = 1.5\nmax_api_keys = 1\n', "tiers.a.max_active_configs"),
    ('[tiers.a]\nmax_active_configs = true\nmax_api_keys = 1\n', "tiers.a.max_active_configs"),
    ('[tiers.a]\nmax_active_configs = 1\n', "max_api_keys"),
    ('[tiers.a]\nmax_active_configs = 1\nmax_api_keys = 1\nmax_x = 1\n', "max_x"),
    ('[tiers.Big_Name]\nmax_active_configs = 1\nmax_api_keys = 1\n', "tiers.Big_Name"),
    ('default_tier = "gold"\n', "default_tier 'gold'"),
    ('default_tiers = "free"\n', "default_tiers"),
    ('[tiers\n', "not valid TOML"),
])
def test_a_bad_tiers_file_names_the_file_and_the_key(tmp_path, text, named):
    path = tmp_path / "tiers.toml"
    path.write_text(text)
    with pytest.raises(config.TierSettingsError) as refused:
        config.load(env={"TIERS_FILE": str(path)}, instance=tmp_path)
    assert str(path) in str(refused.value) and named in str(refused.value)


def test_a_missing_tiers_file_or_unknown_default_tier_stops_start_up(tmp_path):
    with pytest.raises(config.TierSettingsError, match=r"nowhere\.toml: cannot be read"):
        config.load(env={"TIERS_FILE": str(tmp_path / "nowhere.toml")}, instance=tmp_path)
    with pytest.raises(config.TierSettingsError, match="DEFAULT_TIER 'gold' is not a tier"):
        config.load(env={"DEFAULT_TIER": "gold"}, instance=tmp_path)


def test_relayer_builder_credentials_allowlist_and_account_contracts(tmp_path):
    from services.platform.venue_access import account_contracts, venue_config

    sandbox = config.load(env={"SANDBOX_PORT": "8123"}, instance=tmp_path)
    assert sandbox.relayer.url == "http://127.0.0.1:8123/relayer"
    assert not sandbox.relayer.has_builder_credentials and sandbox.eoa_allowlist == ()
    assert account_contracts(sandbox).deposit_wallet_factory == (
        "0x00000000000Fb5C9ADea0298D729A0CB3823Cc07")
    env = {"VENUE": "polymarket", "POLYMARKET_BUILDER_API_KEY": "bk",
           "POLYMARKET_BUILDER_SECRET": "sec-123", "POLYMARKET_BUILDER_PASSPHRASE": "pp-456",
           "TRADING_EOA_ALLOWLIST": " 0xAbCd" + "0" * 36 + ", ",
           "DEPOSIT_WALLET_FACTORY_ADDRESS": "0x" + "f1" * 20, "CHAIN_ID": "31337",
           "CTF_COLLATERAL_ADAPTER_ADDRESS": "0x" + "ad" * 20}
    settings = config.load(env=env, instance=tmp_path)
    assert settings.relayer.url == "https://relayer-v2.polymarket.com"
    assert settings.relayer.has_builder_credentials
    assert settings.eoa_allowlist == ("0xabcd" + "0" * 36,)
    assert "sec-123" not in repr(settings) and "pp-456" not in repr(settings)
    contracts = account_contracts(settings)
    assert (contracts.chain_id, contracts.deposit_wallet_factory, contracts.collateral_adapter) \
        == (31337, "0x" + "f1" * 20, "0x" + "ad" * 20)
    assert contracts.collateral_token == settings.contracts.pusd
    assert venue_config(settings).relayer_url == "https://relayer-v2.polymarket.com"
    assert settings.flat()["POLYMARKET_BUILDER_API_KEY"] == "bk"
    with pytest.raises(ValueError, match="TRADING_EOA_ALLOWLIST"):
        config.load(env={"TRADING_EOA_ALLOWLIST": "0x123"}, instance=tmp_path)


def test_loopback_webhooks_are_on_with_the_sandbox_and_never_with_polymarket(tmp_path):
    # A user trying the dev stack points a webhook at http://127.0.0.1:...; a server trading
    # on Polymarket must never post to its own host.
    assert config.load(env={}, instance=tmp_path).notifications.allow_loopback_urls is True
    off = config.load(env={"NOTIFY_ALLOW_LOOPBACK_URLS": "false"}, instance=tmp_path)
    assert off.notifications.allow_loopback_urls is False
    live = {"VENUE": "polymarket", "SECRET_KEY": "s"}
    assert config.load(env=live, instance=tmp_path).notifications.allow_loopback_urls is False
    with pytest.raises(ValueError, match="NOTIFY_ALLOW_LOOPBACK_URLS"):
        config.load(env={**live, "NOTIFY_ALLOW_LOOPBACK_URLS": "true"}, instance=tmp_path)


# -- each setting declared once: load, flat and the page are walked from the declarations --

A = "0x" + "ab" * 20
# Every declared variable (but the proxies) set to a value other than its default: a setting
# added without a line here fails the tests below, so each is read, carried and loaded back.
EVERY = {
    "COPYTRADE_INSTANCE": "elsewhere", "DATABASE_URL": "postgresql://u@h:5432/db",
    "REDIS_URL": "redis://r:6379/1", "REDIS_PREFIX": "p:", "SECRET_KEY": "sk",
    "WALLET_ENCRYPTION_KEY": "wk", "WALLET_ENCRYPTION_KEY_PREVIOUS": "old1,old2",
    "WALLET_ENCRYPTION_SALT": "salt", "BASE_URL": "https://ct.example/",
    "ALLOWED_HOSTS": "A.lan, b.lan", "TRUSTED_PROXIES": "2", "WEB_CONCURRENCY": "6",
    "WEB_GRACE_SECONDS": "7", "RATE_LIMIT_PER_SECOND": "9", "RATE_LIMIT_BURST": "99",
    "RATE_LIMIT_ENABLED": "no", "API_KEY_CACHE_SECONDS": "2.5",
    "MCP_ALLOWED_ORIGINS": "https://X.example/", "MCP_LISTEN_STREAMS": "3",
    "MCP_LISTEN_STREAMS_PER_USER": "2", "MCP_LISTEN_MAX_SECONDS": "100",
    "SMTP_URL": "smtp://m:25", "MAIL_FROM": "me <m@x>", "SIGN_IN_EMAILS_PER_ADDRESS": "6",
    "SIGN_IN_EMAILS_PER_IP": "21", "SIGN_IN_MISSES_PER_ADDRESS": "11",
    "SIGN_IN_MISSES_PER_IP": "51", "SIGN_IN_WINDOW_SECONDS": "3601", "STEP_UP_SECONDS": "301",
    "AUTH_RETENTION_DAYS": "8", "OAUTH_FETCH_DEADLINE_SECONDS": "4",
    "OAUTH_FETCH_CONCURRENCY": "3", "OAUTH_FETCH_FAILURE_TTL_SECONDS": "61",
    "OAUTH_ALLOW_HTTP_CLIENT_ID_URLS": "yes", "VENUE": "Polymarket", "SANDBOX_PORT": "8011",
    "POLYMARKET_GAMMA_URL": "https://g", "POLYMARKET_CLOB_URL": "https://c",
    "POLYMARKET_DATA_URL": "https://d", "POLYMARKET_RTDS_URL": "",
    "POLYMARKET_RELAYER_URL": "https://rel/", "POLYMARKET_BUILDER_API_KEY": "k",
    "POLYMARKET_BUILDER_SECRET": "s", "POLYMARKET_BUILDER_PASSPHRASE": "p",
    "VENUE_RATE_BUDGET_SHARE": "0.5", "TRADING_EOA_ALLOWLIST": A.upper().replace("0X", "0x"),
    "POLYGON_RPC_URL": "https://rpc", "CHAIN_ID": "80002", "POLYGON_RPC_TIMEOUT": "11",
    **{name: "0x" + f"{number:040x}" for number, name in enumerate(config.POLYGON_CONTRACTS)
       if name in config.DECLARED},  # the table's other addresses name no variable
    "WITHDRAW_WAIT_SECONDS": "6", "WITHDRAW_MAX_WAITERS": "3", "RECEIPT_TIMEOUT_SECONDS": "121",
    "WALLET_SIGNING_LEASE_SECONDS": "61",
    "DEPOSIT_SWEEP_SECONDS": "61", "CLAIM_SWEEP_SECONDS": "601",
    "DEPOSIT_SWEEP_CONCURRENCY": "5", "AUTO_WRAP_USDC_E": "false", "AUTO_WRAP_MIN_USDC_E": "2.5",
    "ORDER_RESOLVE_DEADLINE_SECONDS": "601", "ORDER_NOT_FOUND_GRACE_SECONDS": "121",
    "WORKER_CAPACITY": "9", "WORKER_REPLAY_SLOTS": "2", "WORKER_GRACE_SECONDS": "26",
    "WORKER_HEARTBEAT_SECONDS": "11", "COPYTRADE_JOB_MODULES": "a.b, c",
    "COPYTRADE_MAINTENANCE_SECONDS": "31", "COPYABILITY_MAX_IN_FLIGHT": "3",
    "COPYABILITY_REPORTS_PER_DAY": "21", "SCREENING_INTERVAL_SECONDS": "301",
    "SCREENING_VENUE_CALLS_PER_MINUTE": "121", "SCREENING_THIN_MIN_FILLS": "21",
    "SCREENING_INACTIVE_DAYS": "8", "SCREENING_TOXIC_EDGE_SHARE": "0.16",
    "SCREENING_HF_MEDIAN_HOLD_SECONDS": "301", "SCREENING_HF_MIN_ROUND_TRIPS": "11",
    "SCREENING_MM_TWO_SIDED_SHARE": "0.51", "SCREENING_MM_QUOTE_SECONDS": "3",
    "SCREENING_WASH_SHARE": "0.21", "COPY_USE_FEED": "0", "COPY_FEED_STALE_SECONDS": "31",
    "COPY_CHAIN_DETECTION": "true", "COPY_CHAIN_WS_URL": "wss://ws",
    "COPY_CHAIN_POLL_SECONDS": "3", "COPY_CHAIN_PENDING": "yes",
    "COPY_PENDING_OPERATORS": A, "COPY_CHAIN_FALLBACK": "false",
    "COPY_CHAIN_FALLBACK_LINGER_SECONDS": "12", "COPY_POLLS_PER_SECOND": "81",
    "COPY_BACKSTOP_POLLS_PER_SECOND": "21", "COPY_POLL_SECONDS": "2",
    "COPY_BACKSTOP_POLL_SECONDS": "6", "COPY_BALANCE_CONCURRENCY": "5",
    "COPY_BALANCE_READS_PER_SECOND": "16", "COPY_RECHECK_SECONDS": "11",
    "COPY_RECHECK_AFTER_SECONDS": "31", "COPY_LEASE_MS": "5001.7", "COPY_LEASE_MARGIN": "0.4",
    "COPY_HEARTBEAT_SECONDS": "2", "COPY_SWEEP_SECONDS": "2", "COPY_EXIT_CHECK_SECONDS": "3",
    "COPY_STALE_INTENT_SECONDS": "121", "COPY_STOP_MARK_MAX_AGE_SECONDS": "901",
    "COPY_STOP_NO_VERDICT_SECONDS": "61", "NOTIFY_RETRY_SECONDS": "1, 2,3.5",
    "NOTIFY_TICK_SECONDS": "6", "NOTIFY_BURST": "6", "NOTIFY_BURST_WINDOW_SECONDS": "301",
    "NOTIFY_SEND_DEADLINE_SECONDS": "11", "NOTIFY_ALLOW_LOOPBACK_URLS": "0",
    "NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS": "86401",
    "DISCORD_WEBHOOK_URL_PREFIX": "https://d/", "SLACK_WEBHOOK_URL_PREFIX": "https://s/",
    "TELEGRAM_BOT_TOKEN": "tg", "TELEGRAM_BOT_USERNAME": "bot",
    "TELEGRAM_API_URL": "https://tg/", "TELEGRAM_POLL_SECONDS": "26", "LOG_FORMAT": "TEXT",
    "LOG_LEVEL": "debug", "LOG_REQUESTS": "DEBUG", "METRICS_TOKEN": "mt",
    "PROMETHEUS_MULTIPROC_DIR": "/tmp/prom", "WORKER_METRICS_PORT": "9101",
    "WORKER_METRICS_HOST": "0.0.0.0", "DEFAULT_TIER": "pro", "TIERS_FILE": "",
}
# Variables whose value only flags that one of them is set (httpx reads the proxies itself).
ANY_OF = {name for declared in config.DECLARED.values() if declared.also
          for name in declared.names}


def _at(settings: config.Settings, name: str):
    value = settings
    for attribute in config.SETTINGS_PATHS[name]:
        value = getattr(value, attribute)
    return value


def test_every_declared_setting_is_in_flat_under_its_name(tmp_path):
    flat = config.load(env={}, instance=tmp_path).flat()
    assert set(config.DECLARED) - ANY_OF <= set(flat)
    assert set(config.PROXY_VARIABLES) == ANY_OF  # the only setting of several variables
    assert set(EVERY) | {"TIERS_FILE"} >= set(config.DECLARED) - ANY_OF, "add it to EVERY"


def _every(tmp_path: Path) -> dict[str, str]:
    return {**EVERY, "COPYTRADE_INSTANCE": str(tmp_path / "elsewhere")}


def test_every_setting_set_loads_back_from_flat(tmp_path):
    settings = config.load(env=_every(tmp_path), instance=tmp_path)
    assert config.load(env={}, overrides=settings.flat()) == settings
    assert (settings.engine.use_chain, settings.engine.use_pending,
            settings.engine.chain_fallback) == (True, True, False)


@pytest.mark.parametrize("name", sorted(set(EVERY) - {"TIERS_FILE"}))
def test_each_variable_sets_its_own_setting(tmp_path, name):
    """Unsetting one variable of EVERY moves its setting (back to what the others derive)."""
    every = _every(tmp_path)
    rest = {key: value for key, value in every.items() if key != name}
    if name == "COPY_CHAIN_DETECTION":  # with the websocket it is on by default: say no
        rest = {**rest, "COPY_CHAIN_DETECTION": "false"}
    if name == "NOTIFY_ALLOW_LOOPBACK_URLS":  # only the sandbox may say anything but no
        every, rest = {**every, "VENUE": "sandbox"}, {**rest, "VENUE": "sandbox"}
    given = config.load(env=every, instance=tmp_path)
    without = config.load(env=rest, instance=tmp_path)
    assert _at(given, name) != _at(without, name)


def test_derived_switches_are_left_to_derive_in_flat(tmp_path):
    """A chain switch nobody set stays unset in flat, so an RPC added later still turns it on
    (tests hand flat on with the dev chain's variables over it)."""
    bare = config.load(env={}, instance=tmp_path).flat()
    assert bare["COPY_CHAIN_DETECTION"] is None and bare["COPY_CHAIN_PENDING"] is None
    chained = config.load(env={}, overrides={**bare, "POLYGON_RPC_URL": "http://127.0.0.1:1",
                                             "COPY_CHAIN_WS_URL": "ws://127.0.0.1:1"})
    assert chained.engine.use_chain and chained.engine.use_pending
    assert chained.engine.chain_fallback
    refused = config.load(env={"COPY_CHAIN_DETECTION": "no", "POLYGON_RPC_URL": "http://r"},
                          instance=tmp_path)
    assert config.load(env={}, overrides=refused.flat()).engine.use_chain is False


def test_config_reads_no_undeclared_variable():
    """Every name config.py reads by text is declared; the environment is read whole, once."""
    tree = ast.parse((ROOT / "config.py").read_text())
    read, environ = set(), 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "text", "value", "getenv") and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and node.args[0].value.isupper()):
            read.add(node.args[0].value)
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            environ += 1
    assert read, "the scan found no read: it no longer understands config.py"
    # INSTANCE_PATH is load's own override name (the instance folder), no variable.
    assert read - set(config.DECLARED) == {"INSTANCE_PATH"}
    assert environ == 1  # load's ``os.environ if env is None``
