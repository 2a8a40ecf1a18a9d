"""The ``copytrade`` command: up, serve, worker, migrate, sandbox."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

import config as settings_module


def _settings() -> dict[str, Any]:
    return settings_module.load()


@click.group()
def main() -> None:
    """copytrade: copy-trading for Polymarket."""


@main.command()
def migrate() -> None:
    """Apply database migrations."""
    from models import database
    from models import migrate as migrations

    settings = _settings()
    bound = database.bind(settings["DATABASE_URL"])
    with bound.connection_context():
        ran = migrations.migrate(bound)
    click.echo(f"applied {len(ran)} migration(s)" + (f": {', '.join(ran)}" if ran else ""))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=lambda: int(os.environ.get("WEB_CONCURRENCY", "2")),
              show_default="2 (WEB_CONCURRENCY)", type=int)
@click.option("--threads", default=4, show_default=True, type=int)
def serve(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the web app with gunicorn (the production server)."""
    from gunicorn.app.base import BaseApplication

    from services import redis_client

    settings = _settings()
    # Resolve before forking so every gunicorn worker shares one embedded Redis.
    redis_client.resolve_url(settings["REDIS_URL"], settings["INSTANCE_PATH"])

    class Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("graceful_timeout", 20)
            self.cfg.set("accesslog", None)

        def load(self) -> Any:
            from wsgi import app

            return app

    Server().run()


@main.command()
def worker() -> None:
    """Run the Trio worker: RQ jobs and copy executors."""
    from worker import host

    host.main()


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=settings_module.DEFAULT_SANDBOX_PORT, show_default=True,
              type=int)
def sandbox(host: str, port: int) -> None:
    """Run the sandbox venue alone (Gamma /gamma, CLOB /clob, Data /data, RTDS /rtds)."""
    from venue import sandbox as sandbox_venue

    sandbox_venue.serve(host=host, port=port)


@main.group()
def translations() -> None:
    """Market translations."""


@translations.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def translations_import(path: str) -> None:
    """Import translations from a JSON or CSV file (slug, locale, title, description)."""
    from models import database
    from services import translations as service
    from services.errors import ValidationFailed

    settings = _settings()
    bound = database.bind(settings["DATABASE_URL"])
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
    """Re-seal every wallet secret under the current WALLET_ENCRYPTION_KEY (after rotation)."""
    from models import database
    from services import chain_access
    from services import wallets as wallet_service
    from services.errors import CryptoError

    settings = _settings()
    chain_access.configure(settings)
    bound = database.bind(settings["DATABASE_URL"])
    try:
        with bound.connection_context():
            count = wallet_service.reseal_all()
    except CryptoError as exc:
        raise click.ClickException(
            f"{exc.message} Is the retired key in WALLET_ENCRYPTION_KEY_PREVIOUS?") from None
    click.echo(f"re-sealed {count} wallet(s)")


@main.group()
def dev() -> None:
    """Local development helpers (the chain started by `copytrade up`)."""


@dev.command("fund")
@click.argument("address")
@click.option("--pusd", default="1000", show_default=True, help="pUSD to mint.")
@click.option("--usdce", default="0", show_default=True, help="USDC.e to mint.")
@click.option("--matic", default="10", show_default=True, help="MATIC balance to top up to.")
def dev_fund(address: str, pusd: str, usdce: str, matic: str) -> None:
    """Fund ADDRESS (e.g. your trading wallet's deposit address) on the local chain."""
    from decimal import Decimal, InvalidOperation

    from web3 import Web3

    from services import dev_faucet

    if not Web3.is_address(address):
        raise click.BadParameter("not an address", param_hint="ADDRESS")
    try:
        amounts = {name: Decimal(value) for name, value in
                   (("pusd", pusd), ("usdce", usdce), ("matic", matic))}
    except InvalidOperation:
        raise click.BadParameter("amounts are decimal numbers such as 100 or 0.5") from None
    settings = _settings()
    try:
        contracts = dev_faucet.load(settings["INSTANCE_PATH"])
    except FileNotFoundError:
        raise click.ClickException(
            "no local chain recorded: start one with `copytrade up` (needs anvil)") from None
    given = dev_faucet.fund(contracts, Web3.to_checksum_address(address), **amounts)
    shown = ", ".join(f"{amount} {name}" for name, amount in given.items()) or "nothing"
    click.echo(f"funded {Web3.to_checksum_address(address)} on {contracts.rpc_url}: {shown}")


@main.command()
@click.option("--port", default=8000, show_default=True, type=int)
def up(port: int) -> None:
    """Run the whole local stack in one process group until Ctrl-C."""
    from stack import LocalStack

    LocalStack(web_port=port).run()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
