"""Shared fixtures: each database test runs on SQLite and on PostgreSQL.

PostgreSQL: TEST_DATABASE_URL (default: the local server), a fresh schema per
test run, dropped at the end. Redis: REDIS_URL (default: the local server),
with a key prefix per run so parallel runs never see each other's keys.
When PostgreSQL or Redis cannot be reached the run fails; it never skips.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import peewee
import psycopg2
import pytest
import redis

from models import database as database_module
from models import migrate
from models.base import db

PG_URL = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
RUN_ID = secrets.token_hex(4)
# How long a test waits for something to happen (a child process to come up, a worker to
# take a job or a lease) before it fails: generous, so that a busy machine slows a test but
# never fails it; a wait returns as soon as its condition holds, so it costs nothing more.
DEADLINE = 120.0

# Fixture modules shared across test packages.
pytest_plugins = [
    "tests.wallet_fixtures", "tests.operations.log_capture", "tests.chain_venue",
    "tests.mail_inbox", "tests.trading_support",
]

# The modules holding the longest tests (15 s to 90 s each, `make test`'s --durations):
# started first, they spread over the xdist workers at once and end while the short tests
# run, instead of one of them running alone at the end of the suite. xdist hands each
# worker consecutive runs of the collection; --maxschedchunk=2 (pyproject.toml) keeps
# those runs short, so the slow tests go one to each free worker, not all to the first.
# Longest first, in this order: the simulated day (3 to 5 minutes) starts at once and
# overlaps the rest of the suite instead of ending it.
SLOW_FIRST = (
    "tests/bench/test_soak.py",
    "tests/services/wallets/test_money_soak.py",
    "tests/operations/test_commands.py",
    "tests/api/test_openapi_fuzz.py",
    "tests/operations/test_listen_gunicorn.py",
    "tests/notifications/test_new_events.py",
    "tests/worker/copy_engine/test_connected_accounts.py",
    "tests/operations/test_multiprocess.py",
    "tests/test_source_install.py",
    "tests/test_wheel.py",
    "tests/notifications/test_end_to_end.py",
    "tests/notifications/test_wallet_events.py",
    "tests/dashboard/test_feed_fallback.py",
    "tests/operations/test_slow_clients.py",
)
_SLOW_RANK = {module: rank for rank, module in enumerate(SLOW_FIRST)}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slowest modules first, in SLOW_FIRST's order (the order is otherwise kept)."""
    items.sort(key=lambda item: _SLOW_RANK.get(item.nodeid.split("::")[0], len(SLOW_FIRST)))


def free_port(also: int = 0) -> int:
    """A TCP port nobody listens on right now (nor on the port + ``also``, when given: a
    process that serves on both, as `copytrade up` does its sandbox venue on the port + 10)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if not also or _bindable(port + also):
            return port


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def use_queue(redis_url: str, prefix: str) -> Any:
    """Send this process's enqueues to ``prefix`` on ``redis_url`` (the runtime's job queue).

    Returns the runtime it replaced, None if there was none (restore: ``runtime.install``).
    Without one (a test without the app), a runtime of test settings is built.
    """
    from services.platform import runtime, wiring
    from services.platform.runtime import JobsConfig

    previous = runtime.install(None)
    base = previous or wiring.build_runtime(bare_settings(redis_url))
    runtime.install(replace(base, jobs=JobsConfig(redis_url=redis_url, prefix=prefix)))
    return previous


def app_settings(app: Any) -> Any:
    """The typed settings ``app`` was built with (whatever runtime is installed now)."""
    return app.extensions["runtime"].settings


def bare_settings(redis_url: str, **overrides: Any) -> Any:
    """Settings for a test without the app: ``config.load`` of ``overrides`` (environment
    names) over test secrets and ``redis_url``."""
    import config

    return config.load(env={}, overrides={
        "REDIS_URL": redis_url, "SECRET_KEY": "test-secret-key-" + RUN_ID,
        "WALLET_ENCRYPTION_KEY": secrets.token_hex(32), **overrides})


@pytest.fixture
def use_settings(redis_url: str) -> Iterator[Any]:
    """``use_settings(**overrides)`` runs the rest of a test without the app on
    ``bare_settings(redis_url, **overrides)`` (a runtime of them installed); returns them."""
    from services.platform import runtime, wiring

    before = runtime.install(None)  # this test's runtimes replace it; put back afterwards
    runtime.install(before)
    built_here: list[Any] = []

    def use(**overrides: Any) -> Any:
        built = wiring.build_runtime(bare_settings(redis_url, **overrides))
        built_here.append(built)
        runtime.install(built)
        return built.settings

    yield use
    runtime.install(before)
    for built in built_here:
        built.close()


def _pg_schema_url(schema: str) -> str:
    # A test's commits do not wait for the WAL to reach the disk: a crash of the test
    # server loses nothing a test needs, and every commit returns in microseconds.
    sep = "&" if "?" in PG_URL else "?"
    options = f"-c search_path={schema} -c synchronous_commit=off"
    return f"{PG_URL}{sep}options={quote(options)}"


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The test Redis; the run fails if it does not answer."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is unreachable: {exc}")
    return REDIS_URL


# For a test that runs no SQL and starts no process (each statement and process counted over
# a run of it; docs/development/tests.md): the database is not what it tests, so its
# PostgreSQL run would only repeat its SQLite one.
one_database = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    """A migrated, empty database of each kind for this test run."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("db") / "copytrade.db"
        url = f"sqlite:///{path}"
        schema = None
    else:
        schema = f"t_{RUN_ID}_{os.getpid()}"
        conn = _connect_postgresql()
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE SCHEMA "{schema}"')
        url = _pg_schema_url(schema)
    bound = database_module.open_database(url)
    with bound.connection_context():
        migrate.migrate(bound)
    bound.close_all() if hasattr(bound, "close_all") else None
    yield url
    if schema is not None:
        with conn.cursor() as cur:
            cur.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.close()


def _connect_postgresql() -> Any:
    """A connection to the test server; while every connection slot is taken (other runs on
    the same server), wait for one up to DEADLINE rather than fail the whole session."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            return psycopg2.connect(PG_URL, connect_timeout=3)
        except psycopg2.OperationalError as exc:
            if "too many clients" not in str(exc) or time.monotonic() > deadline:
                pytest.fail(f"PostgreSQL at {PG_URL} is unreachable: {exc}")
            time.sleep(0.5)


def _empty_tables(database: peewee.Database) -> None:
    """Delete every row a test left. Only the tables that hold rows are touched (one probe
    finds them): TRUNCATE of every table took 100-400 ms a test on PostgreSQL, the probe
    and a few DELETEs take a few."""
    tables = [t for t in database.get_tables() if t != "schema_migrations"]
    if not tables:
        return
    probe = " UNION ALL ".join(f"SELECT '{t}' WHERE EXISTS (SELECT 1 FROM \"{t}\")"
                               for t in tables)
    full = [row[0] for row in database.execute_sql(probe).fetchall()]
    if not full:
        return
    with database.atomic():
        if isinstance(database, peewee.PostgresqlDatabase):
            # Foreign keys are not checked while everything goes (the test user is superuser).
            database.execute_sql("SET LOCAL session_replication_role = replica")
        else:
            database.execute_sql("PRAGMA defer_foreign_keys = ON")
        for table in full:
            database.execute_sql(f'DELETE FROM "{table}"')


@pytest.fixture(scope="session")
def instance_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An instance folder for the run (generated secrets live here)."""
    return tmp_path_factory.mktemp("instance")


@pytest.fixture(scope="session")
def venue_server() -> Iterator[Any]:
    """The sandbox venue over real HTTP on a free port, shared by the whole run, with the
    venue's account rules on from construction (a reset keeps them): deposit-wallet makers
    only unless allowlisted, and orders checked against the CLOB's cached balance and
    allowance (ACCOUNTS.md)."""
    from devstack.venue import SandboxServer
    from devstack.venue.config import SandboxConfig

    server = SandboxServer(seed=11, config=SandboxConfig(strict_accounts=True)).start()
    yield server
    server.stop()


@pytest.fixture
def venue_control(venue_server: Any) -> Iterator[Any]:
    """The sandbox's control API (/_sandbox) for the shared venue."""
    from tests.devstack.venue.conftest import Control

    control = Control(venue_server)
    yield control
    control.close()


@pytest.fixture
def venue_clock(venue_server: Any, venue_control: Any) -> Iterator[Any]:
    """The sandbox's clock, moved by hand (``advance``): delays and settlement steps; the
    venue's own clock again after the test."""
    from tests.venue_lifecycle import hand_moved_clock

    with hand_moved_clock(venue_server, venue_control) as clock:
        yield clock


@pytest.fixture
def version_bump(venue_control: Any, bound_db: Any) -> Iterator[Any]:
    """``bump(n)``: the shared sandbox announces order version n; after the test, the venue
    and the runtime's signers are back at version 2 (the venue is session-wide)."""
    from services.platform import venues

    def bump(version: int) -> None:
        venue_control.call("POST", "/version", {"version": version}, expect=200)

    yield bump
    venue_control.call("POST", "/version", {"version": 2}, expect=200)
    venues.order_version().update(2)


@pytest.fixture(scope="session")
def app_config(database_url: str, redis_url: str, instance_path: Path,
               venue_server: Any) -> dict[str, Any]:
    """Settings for the app under test: real PostgreSQL/SQLite, Redis and sandbox venue."""
    from devstack.stack import sandbox_builder_env

    return {
        "VENUE": "sandbox",
        "POLYMARKET_GAMMA_URL": venue_server.gamma_url,
        "POLYMARKET_CLOB_URL": venue_server.clob_url,
        "POLYMARKET_DATA_URL": venue_server.data_url,
        "POLYMARKET_RTDS_URL": venue_server.rtds_url,
        "POLYMARKET_RELAYER_URL": f"{venue_server.url}/relayer",
        # The sandbox relayer's own builder credentials, as `copytrade up` gives them.
        **sandbox_builder_env({}),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": f"ct-test-{RUN_ID}-{os.getpid()}:",
        "INSTANCE_PATH": str(instance_path),
        "SECRET_KEY": "test-secret-key-" + RUN_ID,
        "WALLET_ENCRYPTION_KEY": secrets.token_hex(32),
        "TESTING": True,
        # The shared test app must not throttle the suite; tests/api/test_ratelimit.py
        # builds its own apps with the real default (60/s, burst 500) and others.
        "RATE_LIMIT_PER_SECOND": 100_000,
        "RATE_LIMIT_BURST": 100_000,
    }


@pytest.fixture(scope="session")
def _session_app(app_config: dict[str, Any]):
    from app import create_app

    return create_app(app_config)


@pytest.fixture
def app(_session_app):
    """The app, bound to this test's database, with every table empty afterwards."""
    from services.platform import runtime

    # Another test may have built an app of its own (create_app installs its runtime for
    # the process, e.g. one with a Redis that is down): this test runs on the shared one.
    # A runtime derived from the shared app's settings (use_queue's) is this test's choice.
    shared = _session_app.extensions["runtime"]
    current = runtime.install(None)
    runtime.install(current if current is not None and current.settings is shared.settings
                    else shared)
    database = _session_app.extensions["database"]
    db.initialize(database)
    yield _session_app
    db.initialize(database)
    with database.connection_context():
        _empty_tables(database)


@pytest.fixture
def settings(app):
    """The typed settings this test runs with (the installed runtime's)."""
    from services.platform.runtime import runtime

    return runtime().settings


@pytest.fixture
def set_settings(app):
    """``set_settings(base_url=..., smtp_url=...)`` changes settings for the rest of the test
    (fields of ``config.Settings``; a group is replaced whole, e.g. ``sign_in=...``) and
    returns them; the runtime is put back afterwards."""
    from services.platform import runtime

    before = runtime.runtime()

    def change(**fields: Any):
        current = runtime.runtime()
        runtime.install(replace(current, settings=replace(current.settings, **fields)))
        return runtime.runtime().settings

    yield change
    runtime.install(before)


@pytest.fixture
def client(app):
    """A Flask test client."""
    return app.test_client()


@pytest.fixture
def bound_db(app) -> Iterator[peewee.Database]:
    """An open connection to the test database for direct model use in a test."""
    database = app.extensions["database"]
    with database.connection_context():
        yield database


@pytest.fixture
def user(bound_db):
    """A signed-up user on the free tier."""
    from models import User

    return User.create(email=f"{secrets.token_hex(6)}@example.com")


@pytest.fixture
def session_token(app, user) -> str:
    """A session JWT for ``user`` (full account scope)."""
    from services.identity import auth

    return auth.issue_session(user).token


@pytest.fixture
def auth_headers(session_token) -> dict[str, str]:
    """Authorization headers carrying ``session_token``."""
    return {"Authorization": f"Bearer {session_token}"}


def step_up_headers(app, session_token: str) -> dict[str, str]:
    """Authorization plus a live step-up token for ``session_token`` (as if a fresh
    confirmation code had been exchanged at POST /api/auth/step-up)."""
    from services.identity import auth, credentials

    principal = credentials.resolve_token(session_token)
    return {"Authorization": f"Bearer {session_token}",
            auth.STEP_UP_HEADER: auth.issue_step_up(principal).token}


@pytest.fixture
def stepped_up_headers(app, session_token) -> dict[str, str]:
    """``auth_headers`` plus a live step-up token (what moving money with a session needs)."""
    return step_up_headers(app, session_token)


@pytest.fixture
def api_key(app, user):
    """``api_key(*scopes, owner=None, expires_in_days=90)`` mints a key and returns its secret.

    Minted as the owner's session would after a step-up (a ``wallet:write`` key needs one).
    """
    import uuid

    from schemas.vocabulary import ALL_SCOPES
    from services.identity import auth, keys
    from services.platform.principal import Principal

    def mint(*scopes: str, owner=None, expires_in_days: int = 90) -> str:
        principal = Principal(user=owner or user, kind="session", scopes=ALL_SCOPES,
                              credential_id=uuid.uuid4())
        step_up = auth.issue_step_up(principal).token
        return keys.create(principal, "test key", list(scopes), expires_in_days,
                           step_up_token=step_up).secret

    return mint


# ---- the local chain: one anvil per test session, our contracts deployed ----------------

ONE_MATIC = 10**18


@dataclass
class DevChain:
    """A running dev chain: node, deployed contracts, funded accounts."""

    anvil: Any
    contracts: Any
    _w3: Any = None

    @property
    def rpc_url(self) -> str:
        """The node's JSON-RPC URL."""
        return self.anvil.rpc_url

    @property
    def chain_id(self) -> int:
        """The node's chain id."""
        return self.anvil.chain_id

    @property
    def accounts(self) -> list[Any]:
        """anvil's funded accounts; account 0 deployed the contracts."""
        return self.anvil.accounts

    def web3(self) -> Any:
        """A Web3 for the node, through the app's connection (RPC failures: ChainUnavailable)."""
        if self._w3 is None:
            from chain.rpc import connect

            self._w3 = connect(self.rpc_url)
        return self._w3

    def new_wallet(self, native_wei: int = ONE_MATIC) -> Any:
        """A fresh EOA holding native_wei of MATIC."""
        from chain.keys import generate_keypair

        wallet = generate_keypair()
        if native_wei:
            self.contracts.fund_native(wallet.address, native_wei)
        return wallet


@pytest.fixture(scope="session")
def chain() -> Iterator[DevChain]:
    """Start anvil on a free port, deploy the dev contracts, stop anvil at the end."""
    from devstack.chain.devchain import deploy_dev_contracts, find_anvil, start_anvil

    if find_anvil() is None:
        pytest.fail("anvil is not installed: run `make setup` (npm install @foundry-rs/anvil)")
    anvil = start_anvil()
    try:
        contracts = deploy_dev_contracts(anvil.rpc_url, anvil.accounts[0].private_key)
        yield DevChain(anvil=anvil, contracts=contracts)
    finally:
        anvil.stop()
