"""The ``copytrade`` command: up, serve, worker, migrate, sandbox, and operator commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import click

import config as settings_module
from services.platform.numbers import CENT, money, plural


def _settings() -> settings_module.Settings:
    # The CLI is an entry point: it hands the process environment to config, once per command.
    return settings_module.load(os.environ)


def _without_sandbox_extra(exc: ModuleNotFoundError) -> click.ClickException:
    """The error for a local-stack command on an install without `copytrade[sandbox]`."""
    return click.ClickException(
        f"{exc}: this command is part of the local stack; install it with "
        "pip install 'copytrade[sandbox]'")


@click.group()
def main() -> None:
    """copytrade: copy-trading for Polymarket."""


@main.command()
def migrate() -> None:
    """Apply database migrations."""
    from models import database
    from models import migrate as migrations

    settings = _settings()
    bound = database.bind(settings.database_url)
    with bound.connection_context():
        ran = migrations.migrate(bound)
        moved = _seal_plain_urls(settings)
    click.echo(f"applied {plural(len(ran), 'migration')}" + (f": {', '.join(ran)}" if ran else ""))
    if moved:
        click.echo(f"sealed {moved} notification channel URL(s)")


def _seal_plain_urls(settings: settings_module.Settings) -> int:
    """m0110's move: seal the URL channels stored before URLs were sealed. It needs the
    wallet encryption key, which only a runtime holds, so it runs here, after the schema
    steps (and again in ``wallets reseal``)."""
    from services.notifications import secrets as channel_secrets
    from services.platform import runtime, wiring

    if not channel_secrets.plain_urls_left():
        return 0
    runtime.install(wiring.build_runtime(settings))  # the keys to seal with
    return channel_secrets.seal_plain_urls()


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=None, show_default="2 (WEB_CONCURRENCY)", type=int)
@click.option("--threads", default=4, show_default=True, type=int)
def serve(host: str, port: int, workers: int | None, threads: int) -> None:
    """Serve the web app with gunicorn (the production server)."""
    from gunicorn.app.base import BaseApplication

    settings = _settings()
    _configure_logs(settings)
    if settings.metrics.multiproc_dir is None:
        # prometheus_client reads PROMETHEUS_MULTIPROC_DIR once, at import: start this
        # command afresh with the folder in its environment (gunicorn's processes fork from
        # it and inherit it) rather than write to our own environment.
        env = _with_metrics_folder(settings, dict(os.environ))
        again = ["serve", "--host", host, "--port", str(port), "--threads", str(threads)]
        again += ["--workers", str(workers)] if workers is not None else []
        os.execve(sys.executable, [sys.executable, "-m", "cli", *again], env)
    from services.platform import metrics, redis_client

    # Resolve before forking so every gunicorn worker shares one embedded Redis.
    redis_client.resolve_url(settings.redis_url, settings.instance_path)
    workers = settings.web_concurrency if workers is None else workers
    multiproc_dir = settings.metrics.multiproc_dir

    class Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("graceful_timeout", settings.web_grace_seconds)
            self.cfg.set("post_worker_init", _web_process_ready)
            self.cfg.set("accesslog", None)  # our request log line replaces it
            self.cfg.set("logger_class", _gunicorn_logs())
            # gunicorn's control socket defaults to ~/.gunicorn, one for every server of the
            # user: each deployment keeps its own in its instance folder
            self.cfg.set("control_socket", os.path.join(settings.instance_path, "gunicorn.ctl"))
            # A dead web process's live gauges must not be summed any more.
            self.cfg.set("child_exit", lambda _server, child: metrics.process_exited(
                child.pid, multiproc_dir))

        def load(self) -> Any:
            from wsgi import app

            return app

    Server().run()


@main.command()
@click.option("--drain", is_flag=True,
              help="Do not start a worker: ask running ones to stop taking work, finish or "
                   "hand back what they hold (copy leases included) and exit.")
@click.option("--id", "worker_ids", multiple=True, metavar="ID",
              help="With --drain: the worker id (see `copytrade status`) or a pid on this "
                   "host; repeatable. Default: every worker on this host.")
@click.option("--timeout", default=120.0, show_default=True,
              help="With --drain: seconds to wait for the workers to exit.")
def worker(drain: bool, worker_ids: tuple[str, ...], timeout: float) -> None:
    """Run the Trio worker: RQ jobs and copy executors (or drain running ones)."""
    if not drain:
        from worker import host

        host.main(_settings())
        _exit_now()  # its jobs are back in Redis, its writes committed: nothing left to tear down
    from services.platform import operations

    client, prefix = _operations_store(bind_database=False)
    try:
        names = operations.resolve_workers(client, prefix, worker_ids, this_host=True)
    except LookupError as exc:
        raise click.ClickException(str(exc)) from None
    if not names:
        raise click.ClickException("no live worker on this host; name one with --id")
    operations.request_drain(client, prefix, names)
    click.echo(f"draining {len(names)} worker(s): {', '.join(names)}")
    left = operations.wait_until_gone(client, prefix, names, timeout)
    for name in names:
        click.echo(f"  {name}: {'still running' if name in left else 'exited'}")
    if left:
        raise click.ClickException(f"{len(left)} worker(s) did not exit within {timeout:g}s")


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=settings_module.DEFAULT_SANDBOX_PORT, show_default=True,
              type=int)
@click.option("--state", "state_file", default=None, metavar="PATH",
              help="Start from the venue state saved in PATH (when there) and save it there "
                   "on exit and on POST /_sandbox/snapshot (`copytrade up` uses the instance "
                   "folder).")
def sandbox(host: str, port: int, state_file: str | None) -> None:
    """Run the sandbox venue alone (Gamma /gamma, CLOB /clob, Data /data, RTDS /rtds)."""
    try:
        from devstack import venue as sandbox_venue
    except ModuleNotFoundError as exc:
        raise _without_sandbox_extra(exc) from None

    sandbox_venue.serve(host=host, port=port, state_file=state_file)


@main.group()
def translations() -> None:
    """Market translations."""


@translations.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def translations_import(path: str) -> None:
    """Import translations from a JSON or CSV file (slug, locale, title, description)."""
    from models import database
    from services.markets import translations as service
    from services.platform.errors import ValidationFailed

    settings = _settings()
    bound = database.bind(settings.database_url)
    try:
        with bound.connection_context():
            result = service.import_file(path)
    except ValidationFailed as exc:
        for where, problems in exc.fields.items():
            click.echo(f"{where}: {'; '.join(problems)}", err=True)
        raise click.ClickException(exc.message) from None
    click.echo(f"imported: {result['created']} new, {result['updated']} updated, "
               f"{result['unknown_slugs']} for slugs not in the catalogue yet")


@main.group()
def wallets() -> None:
    """Trading wallets."""


@wallets.command("reseal")
def wallets_reseal() -> None:
    """Re-seal every sealed secret under the current WALLET_ENCRYPTION_KEY and format.

    Trading wallets' keys and venue credentials, and notification channels' webhook signing
    secrets and URLs (a URL still stored plain is sealed). After a key rotation, and once
    after upgrading: older secrets (v1, not bound to their row) move to v2, bound to their
    table, row and column.
    """
    from models import database
    from services.notifications import secrets as channel_secrets
    from services.platform import runtime, wiring
    from services.platform.errors import CryptoError
    from services.wallets import wallets as wallet_service

    settings = _settings()
    runtime.install(wiring.build_runtime(settings))  # the wallet keys to seal with
    bound = database.bind(settings.database_url)
    try:
        with bound.connection_context():
            count = wallet_service.reseal_all()
            channels = channel_secrets.reseal_all()
    except CryptoError as exc:
        raise click.ClickException(
            f"{exc.message} Is the retired key in WALLET_ENCRYPTION_KEY_PREVIOUS?") from None
    click.echo(f"re-sealed {plural(count, 'wallet')} and "
               f"{plural(channels, 'notification channel')}")


@wallets.command("ambiguous")
@click.option("--json", "as_json", is_flag=True, help="Print the same data as JSON.")
def wallets_ambiguous(as_json: bool) -> None:
    """Withdrawals, claims, wraps, approvals and wallet deployments that may have run or may
    still run (``ambiguous``), oldest first: sent, then the answer was lost; nothing is
    made afresh until settled."""
    import json

    from models.base import db
    from services.wallets import wallet_batches

    _operations_store()
    with db.connection_context():
        rows = wallet_batches.ambiguous()
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    click.echo(_ambiguous_table(rows))


def _ambiguous_table(rows: list[dict[str, Any]]) -> str:
    heading = f"AMBIGUOUS WALLET OPERATIONS ({len(rows)})"
    if not rows:
        return heading
    return heading + "\n" + _table(
        [[r["kind"], r["id"], r["wallet"], str(r["amount"]), str(r["nonce"]),
          _ago(r["age_seconds"]), (r["error"] or "-")[:60]] for r in rows],
        ["KIND", "ID", "WALLET", "AMOUNT", "NONCE", "SINCE", "WHY"])


@main.group()
def dev() -> None:
    """Local development helpers (the chain started by `copytrade up`)."""


@dev.command("fund")
@click.argument("address")
@click.option("--pusd", default="1000", show_default=True, help="pUSD to mint.")
@click.option("--usdce", default="0", show_default=True, help="USDC.e to mint.")
@click.option("--matic", default="0", show_default=True,
              help="MATIC balance to top up to: only a plain EOA spends any (its own gas); "
                   "a deposit wallet needs none.")
def dev_fund(address: str, pusd: str, usdce: str, matic: str) -> None:
    """Fund ADDRESS (e.g. your trading wallet's deposit address) on the local chain; MATIC
    only when asked (--matic)."""
    from decimal import Decimal, InvalidOperation

    from web3 import Web3

    try:
        from devstack import faucet
    except ModuleNotFoundError as exc:
        raise _without_sandbox_extra(exc) from None

    if not Web3.is_address(address):
        raise click.BadParameter("not an address", param_hint="ADDRESS")
    try:
        amounts = {name: Decimal(value) for name, value in
                   (("pusd", pusd), ("usdce", usdce), ("matic", matic))}
    except InvalidOperation:
        raise click.BadParameter("amounts are decimal numbers such as 100 or 0.5") from None
    settings = _settings()
    try:
        contracts = faucet.load(settings.instance_path)
    except FileNotFoundError:
        raise click.ClickException(
            "no local chain recorded: start one with `copytrade up` (needs anvil)") from None
    given = faucet.fund(contracts, Web3.to_checksum_address(address), **amounts)
    shown = ", ".join(_minted(amount, FAUCET_UNITS[name]) for name, amount in given.items())
    shown = shown or "nothing"
    click.echo(f"funded {Web3.to_checksum_address(address)} on {contracts.rpc_url}: {shown}")


FAUCET_UNITS = {"pusd": "pUSD", "usdc_e": "USDC.e", "matic": "MATIC"}


def _minted(amount: Any, unit: str) -> str:
    # As money reads (1,000.00 pUSD), but a finer amount asked for is shown whole, not 0.00.
    return money(amount, unit) if amount == amount.quantize(CENT) else f"{amount:,f} {unit}"


@dev.command("reset")
@click.option("--yes", is_flag=True, default=False, help="Do not ask for confirmation.")
def dev_reset(yes: bool) -> None:
    """Wipe the local stack: the database, the dev chain's and the sandbox venue's saved
    state, and the embedded Redis (`copytrade up` then starts afresh)."""
    from pathlib import Path

    try:
        from devstack import stack
    except ModuleNotFoundError as exc:
        raise _without_sandbox_extra(exc) from None
    from models import database

    settings = _settings()
    pid = stack.running_pid(settings.instance_path)
    if pid is not None:
        raise click.ClickException(f"`copytrade up` is running here (pid {pid}): stop it "
                                   "(Ctrl-C) first")
    if not yes:
        click.confirm(f"Wipe the database ({settings.database_url}) and the local chain's and "
                      f"sandbox venue's state in {settings.instance_path}?", abort=True)
    click.echo(database.wipe(settings.database_url))
    folder = Path(settings.instance_path)
    for name in stack.STACK_FILES:
        if (folder / name).exists():
            (folder / name).unlink()
            click.echo(f"removed {folder / name}")
    click.echo("reset: `copytrade up` starts everything afresh")


@dev.command("resolve")
@click.argument("market")
@click.argument("outcome", required=False)
@click.option("--sandbox", "sandbox_url", default=None,
              help="The sandbox venue's URL (default: http://127.0.0.1:SANDBOX_PORT, the one "
                   "`copytrade up` runs on its default port; `up --port P` serves it on P + 10).")
def dev_resolve(market: str, outcome: str | None, sandbox_url: str | None) -> None:
    """Resolve sandbox MARKET (slug or condition id) now; OUTCOME (name or 0/1) wins, the
    leading outcome (priced at least 0.5) by default. With the local chain, the payouts are
    reported there, so its holders can claim."""
    try:
        from devstack.stack import resolve_market
    except ModuleNotFoundError as exc:
        raise _without_sandbox_extra(exc) from None
    import requests

    url = sandbox_url or f"http://127.0.0.1:{_settings().venue.sandbox_port}"
    try:
        resolved = resolve_market(url, market, outcome)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    except requests.RequestException:
        raise click.ClickException(
            f"no sandbox venue answers at {url}. Is `copytrade up` running? Name its sandbox "
            "with --sandbox: the URL its summary prints beside `sandbox venue` (a stack "
            "started with --port P serves it on P + 10).") from None
    winner = resolved["outcomes"][resolved["winner"]]
    click.echo(f"resolved {resolved['slug']} ({resolved['condition_id']}): {winner} won")


@dev.command("soak")
@click.option("--days", default=7.0, show_default=True, type=click.FloatRange(min=0.05),
              help="Simulated days to live through.")
@click.option("--speed", default=1440.0, show_default=True, type=click.FloatRange(min=1),
              help="Simulated seconds per second (1440: a day a minute).")
@click.option("--followers", default=12, show_default=True, type=click.IntRange(1, 100),
              help="Followers, each with its own rules (budgets, stops, caps, breaker, "
                   "inverse, fixed size).")
@click.option("--seed", default=None, type=int, help="Replay a run's random choices.")
@click.option("--instance", "instance", default=None, type=click.Path(file_okay=False),
              help="Folder for the soak's stack (default: a new temporary one).")
@click.option("--database-url", default=None,
              help="A fresh database for the soak's stack (default: SQLite in its folder).")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="The invariants as JSON.")
def dev_soak(days: float, speed: float, followers: int, seed: int | None,
             instance: str | None, database_url: str | None, as_json: bool) -> None:
    """Run a whole local stack of its own (web, two workers, the sandbox on a dev chain)
    through compressed days of whales, market ends, followers and faults, then check the
    invariants; exits 1 when one fails (docs/development/soak.md)."""
    import json
    from pathlib import Path

    try:
        from bench.soak.run import Options, Soak, table
    except ModuleNotFoundError as exc:
        raise click.ClickException(f"the soak runs from a source checkout with the sandbox "
                                   f"extra ({exc})") from None
    options = Options(days=days, speed=speed, followers=followers, seed=seed,
                      instance=Path(instance) if instance else None,
                      database_url=database_url)
    outcome = Soak(options, os.environ, lambda line: click.echo(line, err=True)).run()
    if as_json:
        click.echo(json.dumps({"ok": outcome.ok, "invariants": [r.as_dict() for r in
                                                                  outcome.rows],
                               "run": outcome.figures}, indent=2, default=str))
    else:
        click.echo(table(outcome))
    if not outcome.ok:
        raise SystemExit(1)


def up_environment(environ: Mapping[str, str], port: int = 8000) -> dict[str, str]:
    """The environment of `copytrade up` and its children: a person reads this log in a
    terminal, so lines of text and no line per web request, unless LOG_FORMAT and
    LOG_REQUESTS say otherwise; the person waits on Ctrl-C, so running jobs and requests
    get UP_GRACE_SECONDS to finish, unless WORKER_GRACE_SECONDS and WEB_GRACE_SECONDS say
    otherwise; links (a sign-in link in the log) name the port it serves; the sandbox
    venue serves on the port + 10 unless SANDBOX_PORT says otherwise, so two stacks on two
    ports do not share one."""
    return {**environ, "LOG_FORMAT": environ.get("LOG_FORMAT") or "text",
            "LOG_REQUESTS": environ.get("LOG_REQUESTS") or "debug",
            "WORKER_GRACE_SECONDS": environ.get("WORKER_GRACE_SECONDS") or UP_GRACE_SECONDS,
            "WEB_GRACE_SECONDS": environ.get("WEB_GRACE_SECONDS") or UP_GRACE_SECONDS,
            "BASE_URL": environ.get("BASE_URL") or f"http://127.0.0.1:{port}",
            "SANDBOX_PORT": environ.get("SANDBOX_PORT") or str(port + SANDBOX_PORT_OFFSET)}


# Under `copytrade up`, the seconds a stopping worker's jobs and web's requests get (jobs
# still running then go back to their queue): with the stack's own margin, Ctrl-C is done
# within 10 s.
UP_GRACE_SECONDS = "4"
# `copytrade up --port P` serves the sandbox venue on P + 10 (8010 beside the default 8000).
SANDBOX_PORT_OFFSET = settings_module.DEFAULT_SANDBOX_PORT - 8000


@main.command()
@click.option("--port", default=8000, show_default=True, type=int,
              help="The web app's port; the sandbox venue serves on this + 10.")
@click.option("--whales", "whale_interval", default=15.0, show_default=True, type=float,
              help="Seconds between the sandbox's scripted traders' trades; 0 leaves them "
                   "stopped.")
@click.option("--market-lifetime", "market_minutes", default=20.0, show_default=True,
              type=float,
              help="Minutes a sandbox market lives before it resolves by itself (the first "
                   "ones end one after another over it, each replaced by a new market); "
                   "0: markets never end.")
def up(port: int, whale_interval: float, market_minutes: float) -> None:
    """Run the whole local stack in one process group until Ctrl-C."""
    try:
        from devstack.stack import LocalStack
    except ModuleNotFoundError as exc:
        raise _without_sandbox_extra(exc) from None

    env = up_environment(os.environ, port)
    settings = settings_module.load(env)
    _configure_logs(settings)
    if settings.metrics.multiproc_dir is None:
        env = _with_metrics_folder(settings, env)  # the children share one metrics folder
    LocalStack(settings=settings.flat(), web_port=port, env=env,
               whale_interval=whale_interval or None,
               market_lifetime=market_minutes * 60 or None,
               checks=[_stack_agreement]).run()
    _exit_now()  # every part stopped and its state saved: nothing left to tear down


def _exit_now() -> None:
    """End this process at once, its output flushed: past a calm stop, the interpreter's
    own teardown (every imported module and thread, seconds on a loaded machine) keeps
    Ctrl-C waiting for nothing."""
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _stack_agreement(env: Mapping[str, str]) -> list[str]:
    """What the started stack's database knows that its chain does not, as lines saying
    the fix (``copytrade up`` prints them after starting)."""
    from models import database
    from services.platform import runtime, wiring
    from services.wallets import chain_agreement

    settings = settings_module.load(env)
    if not settings.chain.rpc_url:
        return []
    runtime.install(wiring.build_runtime(settings))
    bound = database.bind(settings.database_url)
    with bound.connection_context():
        missing = chain_agreement.undeployed_wallets()
    if not missing:
        return []
    return [f"copytrade up: the database knows {len(missing)} deposit wallet(s) the local "
            f"chain does not ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}):"
            " the chain started afresh; run `copytrade dev reset` to start everything afresh"]


# -- operations ---------------------------------------------------------------------------


def _gunicorn_logs() -> type:
    """Gunicorn's logger class, writing through the root logger (our one format)."""
    from gunicorn.glogging import Logger

    class Logs(Logger):
        def setup(self, cfg: Any) -> None:
            super().setup(cfg)
            for logger in (self.error_log, self.access_log):
                logger.handlers.clear()  # gunicorn's own text handler: ours formats the line
                logger.propagate = True

    return Logs


def _web_process_ready(worker: Any) -> None:
    """gunicorn's hook in each web process once the app is loaded (the app says what)."""
    from app import web_process_ready

    web_process_ready(worker)


def _configure_logs(settings: settings_module.Settings) -> None:
    """JSON (or LOG_FORMAT) logs at LOG_LEVEL through our redacting handler."""
    from services.platform import logs

    logs.configure(settings.logging.level, settings.logging.format)


def _with_metrics_folder(settings: settings_module.Settings, env: dict[str, str]
                         ) -> dict[str, str]:
    """``env`` naming a clean shared metrics folder, for the processes this command starts."""
    from pathlib import Path

    # Given to gunicorn's processes and, under `up`, to the worker: one /metrics for the
    # machine. prometheus_client reads the variable once, at import, so it goes into the
    # environment of a process about to start, never into ours. Cleaned: files of
    # processes from an earlier run would be summed.
    folder = Path(settings.instance_path) / "prometheus"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()
    return {**env, "PROMETHEUS_MULTIPROC_DIR": str(folder)}


def _operations_store(bind_database: bool = True) -> tuple[Any, str]:
    """The deployment's Redis client and key prefix (and the database bound, when asked)."""
    from services.platform import runtime, wiring

    settings = _settings()
    if bind_database:
        from models import database

        database.bind(settings.database_url)
    built = wiring.build_runtime(settings)
    runtime.install(built)  # the services these commands call may enqueue
    return built.redis(), settings.redis_prefix


def _since(moment: datetime | None) -> str:
    """How long ago ``moment`` was, in the words of ``_ago``."""
    if moment is None:
        return "-"
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return _ago((datetime.now(UTC) - aware).total_seconds())


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.1f}d ago"


def _table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]
    lines = ["  " + "  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
              for row in rows]
    return "\n".join(line.rstrip() for line in lines)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the same data as JSON.")
def status(as_json: bool) -> None:
    """Workers, queues, failed jobs and copy executors of this deployment."""
    import json

    from models.base import db
    from services.copying import screening
    from services.platform import operations
    from services.wallets import wallet_batches

    client, prefix = _operations_store()
    with db.connection_context():
        data = operations.snapshot(client, prefix)
        data["ambiguous"] = wallet_batches.ambiguous()
        data["screening"] = screening.status(client, prefix, _settings().screening)
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
        return
    click.echo(f"deployment {prefix!r} at {data['generated_at']}")
    click.echo(f"\nWORKERS ({len(data['workers'])})")
    if data["workers"]:
        click.echo(_table([[w["id"], w["host"], str(w["pid"]), w["started_at"] or "-",
                            _ago(w["heartbeat_age_seconds"]),
                            f"{w['running_jobs']}/{w['capacity']}"
                            + (" draining" if w["draining"] else ""),
                            str(len(w["leases"]))] for w in data["workers"]],
                          ["ID", "HOST", "PID", "STARTED", "HEARTBEAT", "JOBS", "LEASES"]))
    click.echo("\nQUEUES")
    click.echo(_table([[q["name"], str(q["depth"]), _ago(q["oldest_job_age_seconds"]),
                        str(q["running"]), str(q["failed"])] for q in data["queues"]],
                      ["QUEUE", "DEPTH", "OLDEST", "RUNNING", "FAILED"]))
    failed = data["failed"]
    click.echo(f"\nFAILED JOBS ({failed['count']})")
    if failed["newest"]:
        click.echo(_table([[j["id"], j["job"], _ago(j["age_seconds"]), j["reason"][:80]]
                           for j in failed["newest"]], ["ID", "JOB", "FAILED", "REASON"]))
    click.echo(f"\nCOPY EXECUTORS ({len(data['executors'])})")
    if data["executors"]:
        click.echo(_table([[e["config_id"], e["target"], e["owner"] or "(unowned)",
                            f"{e['detection']} since {e['detection_since']}"
                            if e.get("detection") else "-",
                            _ago(e["last_detection_age_seconds"]),
                            (e["last_error"] or "-").splitlines()[0][:60]]
                           for e in data["executors"]],
                          ["CONFIG", "TARGET", "OWNER", "DETECTING BY", "LAST DETECTION",
                           "LAST ERROR"]))
    click.echo("\n" + detection_text(data.get("detection") or {},
                                      data.get("detection_sources") or []))
    click.echo("\n" + throttle_text(data.get("venue_throttle") or {}))
    click.echo("\n" + tiers_text(data.get("venue_tiers") or {}))
    click.echo("\n" + _ambiguous_table(data["ambiguous"]))
    click.echo("\n" + screening_text(data["screening"]))


def screening_text(screening: dict[str, Any]) -> str:
    """The screened leaderboard: traders ranked and replayed, the replays' ages, the flags
    raised and this minute's venue calls against the budget."""
    if not screening["enabled"]:
        return "SCREENED LEADERBOARD (off: SCREENING_INTERVAL_SECONDS=0)"
    calls = screening["venue_calls"]
    flags = ", ".join(f"{name} {count}" for name, count in screening["flags"].items())
    return "\n".join([
        f"SCREENED LEADERBOARD ({screening['screened']} of {screening['ranked']} ranked "
        f"traders replayed, {screening['failed']} failed; a sweep every "
        f"{screening['interval_seconds']:g}s)",
        f"  newest replay {_since(screening['newest_replay'])}, oldest "
        f"{_since(screening['oldest_replay'])}",
        f"  venue calls this minute {calls['used']} of {calls['per_minute']}",
        f"  flags: {flags or 'none'}"])


def detection_text(engines: dict[str, dict[str, Any]], sources: list[dict[str, str]]) -> str:
    """Each copy engine's detection source with what it spends now (Data API polls and chain
    JSON-RPC calls of the last minute), then what each source costs and how late it is."""
    lines = [f"DETECTION ({len(engines)} engines)"]
    if engines:
        lines.append(_table([[name, f"{row['detection'] or '-'} since "
                                    f"{row['detection_since'] or '-'}",
                              str(row["polls_per_minute"] or 0),
                              str(row["chain_calls_per_minute"] or 0),
                              f"{row['detection_chain'] or '-'}"
                              + (f" ({row['detection_chain_mode']})"
                                 if row["detection_chain_mode"] else "")]
                             for name, row in sorted(engines.items())],
                            ["ENGINE", "DETECTING BY", "POLLS/MIN", "RPC CALLS/MIN",
                             "ON CHAIN"]))
    if sources:
        lines.append("\nDETECTION SOURCES (preferred first; delays measured on the sandbox)")
        lines.append(_table([[s["source"], s["cost"], s["measured"], s["venue_lag"]]
                             for s in sources],
                            ["SOURCE", "COSTS", "SANDBOX DELAY", "ON POLYMARKET"]))
    return "\n".join(lines)


def throttle_text(throttle: dict[str, dict[str, dict[str, float]]]) -> str:
    """The status's signers backed off after a venue rate-limit warning, per engine."""
    lines = [f"VENUE RATE-LIMIT WARNINGS ({sum(len(s) for s in throttle.values())} "
             "signers backed off)"]
    if throttle:
        lines.append(_table([[engine, signer, kind, f"{limit:g}/10s"]
                             for engine, signers in throttle.items()
                             for signer, kinds in signers.items()
                             for kind, limit in kinds.items()],
                            ["ENGINE", "SIGNER", "BUDGET", "NOW"]))
    return "\n".join(lines)


def tiers_text(tiers: dict[str, dict[str, str]]) -> str:
    """The status's signers by the rate-limit tier the venue names for them (ACCOUNTS.md
    §12), per engine, with the buckets that tier gives."""
    from venue import rate_tiers

    lines = [f"VENUE RATE-LIMIT TIERS ({sum(len(s) for s in tiers.values())} signers)"]
    rows = []
    for engine, signers in tiers.items():
        for signer, name in signers.items():
            tier = rate_tiers.tier_named(name)
            rows.append([engine, signer, name,
                         f"{tier.order_rate}/s, {tier.order_burst}" if tier else "-",
                         f"{tier.cancel_rate}/s, {tier.cancel_burst}" if tier else "-"])
    if rows:
        lines.append(_table(rows, ["ENGINE", "SIGNER", "TIER", "ORDERS", "CANCELS"]))
    return "\n".join(lines)


@main.group()
def jobs() -> None:
    """Background jobs: retry and purge failed ones."""


@jobs.command("retry")
@click.argument("job_id", required=False)
@click.option("--all-failed", is_flag=True, help="Re-queue every failed job.")
def jobs_retry(job_id: str | None, all_failed: bool) -> None:
    """Put a failed job (ID) or every failed job back on its queue."""
    from services.platform import operations

    if bool(job_id) == all_failed:
        raise click.UsageError("give a job ID or --all-failed (not both)")
    client, prefix = _operations_store(bind_database=False)
    if all_failed:
        done = operations.retry_all_failed(client, prefix)
    else:
        try:
            done = [operations.retry_job(client, prefix, job_id or "")]
        except LookupError as exc:
            raise click.ClickException(str(exc)) from None
    for item in done:
        click.echo(f"re-queued {item['id']} ({item['job']}) on {item['queue']}")
    click.echo(f"{len(done)} job(s) re-queued")


@jobs.command("purge")
@click.option("--failed", is_flag=True, required=True, help="Purge failed jobs (required).")
@click.option("--older-than", "older_than", default="7d", show_default=True,
              help="Only jobs that failed longer ago than this (s, m, h, d, w).")
def jobs_purge(failed: bool, older_than: str) -> None:
    """Delete failed jobs older than --older-than."""
    from services.platform import operations

    try:
        age = operations.parse_age(older_than)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from None
    client, prefix = _operations_store(bind_database=False)
    purged = operations.purge_failed(client, prefix, age)
    click.echo(f"purged {len(purged)} failed job(s) older than {older_than}")


@main.group()
def executors() -> None:
    """Copy executors (each runs the configs of one target wallet on one worker)."""


@executors.command("move")
@click.argument("config_id")
@click.option("--wait", "wait_seconds", default=15.0, show_default=True,
              help="Seconds to wait for another worker to take it (0: do not wait).")
def executors_move(config_id: str, wait_seconds: float) -> None:
    """Release the lease running CONFIG_ID so another worker takes it now."""
    from models.base import db
    from services.platform import operations

    client, prefix = _operations_store()
    try:
        with db.connection_context():
            moved = operations.move_executor(client, prefix, config_id)
    except LookupError as exc:
        raise click.ClickException(str(exc)) from None
    except operations.OperationRefused as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"released target {moved['target']} from {moved['from']} "
               f"({len(moved['configs'])} config(s) move together)")
    if wait_seconds > 0:
        owner = operations.wait_for_owner(client, prefix, moved["target"],
                                          not_owner=moved["from"], timeout=wait_seconds)
        if owner is None:
            raise click.ClickException(f"no other worker took it within {wait_seconds:g}s")
        click.echo(f"now run by {owner}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


@main.group()
def users() -> None:
    """Accounts: list them, move one to another tier, disable or enable one."""


def _user_command(action: Any) -> Any:
    """Run ``action`` against this deployment's database; a service error exits non-zero."""
    from models.base import db
    from services.platform.errors import CopytradeError

    _operations_store()  # binds the database; the runtime carries the tier table
    try:
        with db.connection_context():
            return action()
    except CopytradeError as exc:
        raise click.ClickException(exc.message) from None


def _limit(limit: int | None) -> str:
    return "unlimited" if limit is None else str(limit)


@users.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the same data as JSON.")
def users_list(as_json: bool) -> None:
    """Every account: tier, active configs and API keys against the tier's limits."""
    import json

    from services.identity import users as user_service

    rows = _user_command(user_service.overview)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    click.echo(_table([[r["email"], r["tier"] if r["tier"] == r["effective_tier"]
                        else f"{r['tier']} (unknown: {r['effective_tier']} limits)",
                        f"{r['active_configs']}/{_limit(r['max_active_configs'])}",
                        f"{r['api_keys']}/{_limit(r['max_api_keys'])}",
                        "disabled" if r["disabled_at"] else "-"] for r in rows],
                      ["EMAIL", "TIER", "CONFIGS", "KEYS", "DISABLED"]) if rows
               else "no accounts yet")


@users.command("set-tier")
@click.argument("email")
@click.argument("tier")
def users_set_tier(email: str, tier: str) -> None:
    """Move the account of EMAIL to TIER (its limits apply at once)."""
    from services.identity import users as user_service
    from services.platform import tiers

    user = _user_command(lambda: user_service.set_tier(email, tier))
    limits = tiers.limits_for(user.tier)
    click.echo(f"{user.email}: tier {user.tier} (active configs "
               f"{_limit(limits.max_active_configs)}, API keys {_limit(limits.max_api_keys)})")


@users.command("disable")
@click.argument("email")
def users_disable(email: str) -> None:
    """Refuse the account's sign-in and every credential of it; stop its copy configs."""
    from services.identity import users as user_service

    user, stopped = _user_command(lambda: user_service.disable(email))
    click.echo(f"{user.email}: disabled; stopped {plural(stopped, 'copy config')}")


@users.command("enable")
@click.argument("email")
def users_enable(email: str) -> None:
    """Accept the account's sign-in and credentials again (stopped configs stay stopped)."""
    from services.identity import users as user_service

    user = _user_command(lambda: user_service.enable(email))
    click.echo(f"{user.email}: enabled")
