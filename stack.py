"""``copytrade up``: the whole local stack in one process group, stopped together."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import config as settings_module


def wait_for_port(host: str, port: int, timeout: float = 30.0) -> bool:
    """True once something accepts TCP connections on host:port, False after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


@dataclass
class LocalStack:
    """Starts migrations, Redis, the sandbox venue, a chain, the worker and the web app."""

    web_port: int = 8000
    # The children's environment: the CLI passes its own; what starts here is added to it
    # (this process's environment is never written).
    env: dict[str, str] = field(default_factory=dict)
    children: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    started: list[tuple[str, str]] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        """Start ``copytrade ARGS`` as a child with the stack's environment."""
        proc = subprocess.Popen([sys.executable, "-m", "cli", *args], env=dict(self.env))
        self.children.append((name, proc))
        return proc

    def run(self) -> None:
        """Start everything, print where it is, and stop it all on Ctrl-C or SIGTERM."""
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            self.start()
            self.report()
            while True:
                for name, proc in self.children:
                    if proc.poll() is not None:
                        print(f"copytrade up: {name} exited with {proc.returncode}; stopping")
                        return
                time.sleep(0.5)
        except KeyboardInterrupt:
            print("\ncopytrade up: stopping")
        finally:
            self.stop()

    def start(self) -> None:
        """Bring up each part in dependency order, exporting what the next part needs."""
        settings = settings_module.load(self.env).flat()
        from models import database, migrate
        from services import redis_client

        bound = database.bind(settings["DATABASE_URL"])
        with bound.connection_context():
            ran = migrate.migrate(bound)
        self.started.append(("database", f"{settings['DATABASE_URL']} ({len(ran)} migrated)"))

        self.env["REDIS_URL"] = redis_client.resolve_url(settings["REDIS_URL"],
                                                         settings["INSTANCE_PATH"])
        self.started.append(("redis", self.env["REDIS_URL"]))

        if settings["VENUE"] == "sandbox":
            port = settings["SANDBOX_PORT"]
            self.spawn("sandbox venue", "sandbox", "--port", str(port))
            if not wait_for_port("127.0.0.1", port):
                raise SystemExit(f"sandbox venue did not start on port {port}")
            self.started.append(("sandbox venue", f"http://127.0.0.1:{port}"))

        self.start_chain(settings)

        self.spawn("worker", "worker")
        self.started.append(("worker", "copytrade worker"))

        self.spawn("web", "serve", "--port", str(self.web_port))
        if not wait_for_port("127.0.0.1", self.web_port, timeout=60):
            raise SystemExit(f"web did not start on port {self.web_port}")
        self.started.append(("web", f"http://127.0.0.1:{self.web_port}"))

    def start_chain(self, settings: dict[str, Any]) -> None:
        """Start anvil with our dev contracts unless a chain is configured or anvil is absent."""
        if settings["POLYGON_RPC_URL"]:
            self.started.append(("chain", settings["POLYGON_RPC_URL"]))
            return
        from chain import devchain

        if devchain.find_anvil() is None:
            print("copytrade up: anvil is not installed (npm install); running without a chain")
            self.started.append(("chain", "none: anvil not installed"))
            return
        anvil = devchain.start_anvil()
        self.keep.append(anvil)
        contracts = devchain.deploy_dev_contracts(anvil.rpc_url, anvil.accounts[0].private_key)
        from services import dev_faucet

        # recorded for `copytrade dev fund ADDRESS`, the local faucet
        dev_faucet.save(settings["INSTANCE_PATH"], contracts)
        self.env.update({"POLYGON_RPC_URL": anvil.rpc_url, "CHAIN_ID": str(anvil.chain_id),
                           **contracts.env()})
        self.started.append(("chain", f"anvil {anvil.rpc_url} (chain id {anvil.chain_id}); "
                                      "fund a wallet: copytrade dev fund ADDRESS"))

    def report(self) -> None:
        """Print what runs where."""
        width = max(len(name) for name, _ in self.started)
        print("copytrade up: running (Ctrl-C stops everything)")
        for name, where in self.started:
            print(f"  {name.ljust(width)}  {where}")

    def stop(self) -> None:
        """Stop children in reverse start order, then the chain."""
        for _name, proc in reversed(self.children):
            if proc.poll() is None:
                proc.terminate()
        for _name, proc in reversed(self.children):
            try:
                proc.wait(timeout=25)
            except subprocess.TimeoutExpired:
                proc.kill()
        for item in self.keep:
            item.stop()
