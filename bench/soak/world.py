"""The soak's world: the local stack `copytrade up` runs (web, two copy workers, the sandbox
venue on the dev chain, an embedded Redis), started in a folder of its own, and the reads
the soak makes of its venue and chain."""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

# What the soak's stack takes from the environment it runs in: nothing that points at
# another stack (its own Redis, chain, venue and ports are started here).
FOREIGN = ("REDIS_URL", "REDIS_PREFIX", "POLYGON_RPC_URL", "SANDBOX_PORT", "SMTP_URL",
           "BASE_URL", "COPY_CHAIN_WS_URL", "CHAIN_ID", "PROMETHEUS_MULTIPROC_DIR")
# Quick timings, so a killed worker's targets move within seconds and maintenance re-queues
# what it left (the defaults suit a server, not a compressed week).
QUICK = {"WORKER_HEARTBEAT_SECONDS": "0.5", "WORKER_GRACE_SECONDS": "2",
         "COPY_LEASE_MS": "2000", "COPY_HEARTBEAT_SECONDS": "0.3",
         "COPY_SWEEP_SECONDS": "0.3", "COPY_POLL_SECONDS": "0.5",
         "COPY_BACKSTOP_POLL_SECONDS": "1", "COPYTRADE_MAINTENANCE_SECONDS": "3",
         "SIGN_IN_EMAILS_PER_IP": "500", "NOTIFY_TICK_SECONDS": "1", "LOG_FORMAT": "text",
         "LOG_REQUESTS": "debug"}
ERC20_BALANCE = [{"name": "balanceOf", "type": "function", "stateMutability": "view",
                  "inputs": [{"name": "", "type": "address"}],
                  "outputs": [{"name": "", "type": "uint256"}]}]
ERC1155_BALANCE = [{"name": "balanceOf", "type": "function", "stateMutability": "view",
                    "inputs": [{"name": "", "type": "address"}, {"name": "", "type": "uint256"}],
                    "outputs": [{"name": "", "type": "uint256"}]}]
UNIT = Decimal(10) ** 6  # pUSD and outcome tokens: six decimals


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stack_environment(environ: Mapping[str, str], instance: Path, web_port: int,
                      venue_port: int) -> dict[str, str]:
    """The environment of the soak's stack: the caller's, less other stacks' addresses."""
    env = {k: v for k, v in environ.items()
           if k not in FOREIGN and not k.startswith(("POLYMARKET_", "METRICS_"))}
    env.update(QUICK, COPYTRADE_INSTANCE=str(instance), VENUE="sandbox",
               SANDBOX_PORT=str(venue_port), BASE_URL=f"http://127.0.0.1:{web_port}")
    return env


def still_venue(control: Callable[..., Any]) -> None:
    """The sandbox stands still: markets stop ending, its whale thread stops (a tick under
    way ends first), the faults are cleared and the matching engine is open.

    ``control(method, path, body)`` calls its control API (``/_sandbox/...``).
    """
    control("POST", "/lifespans", {"lifetime": 0})
    control("POST", "/whales/stop")
    control("DELETE", "/faults")
    control("POST", "/mode", {"mode": "open"})


class World:
    """The started stack and the soak's ways into it (its venue's controls, its chain)."""

    def __init__(self, instance: Path, environ: Mapping[str, str],
                 market_lifetime: float) -> None:
        import config

        self.instance = instance
        instance.mkdir(parents=True, exist_ok=True)
        self.web_port, self.venue_port = free_port(), free_port()
        self.env = stack_environment(environ, instance, self.web_port, self.venue_port)
        self.settings = config.load(self.env)
        self.log_path = instance / "stack.log"
        self.market_lifetime = market_lifetime
        self.stack: Any = None
        self.contracts: Any = None
        self.web = f"http://127.0.0.1:{self.web_port}"
        self.venue_url = f"http://127.0.0.1:{self.venue_port}"
        self.http = httpx.Client(timeout=60)
        self.kills = 0
        self.faucet = threading.Lock()  # one dev key mints: one mint at a time

    # -- the stack ------------------------------------------------------------------------

    def start(self) -> None:
        """Start everything as `copytrade up` does, with two workers, the whales still."""
        from devstack import faucet
        from devstack.stack import LocalStack

        self.log = self.log_path.open("ab")
        self.stack = LocalStack(settings=self.settings.flat(), web_port=self.web_port,
                                env=dict(self.env), workers=2, output=self.log,
                                market_lifetime=self.market_lifetime)
        self.stack.start()
        self.contracts = faucet.load(self.instance)
        self.wait_serving()

    def wait_serving(self, timeout: float = 120) -> None:
        """Until the web app answers /healthz."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.http.get(f"{self.web}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the web app did not answer on {self.web}")
            time.sleep(0.3)

    def stop(self) -> None:
        """Stop the stack (its state is saved in the instance folder) and close the log."""
        if self.stack is not None:
            self.stack.stop()
            self.stack = None
        self.http.close()
        if getattr(self, "log", None) is not None:
            self.log.close()

    def workers(self) -> list[tuple[str, Any]]:
        """The running copy workers, (name, process)."""
        return [(n, p) for n, p in self.stack.children
                if n.startswith("worker") and p.poll() is None]

    def kill_worker(self, index: int) -> str:
        """SIGKILL one worker (its leases, jobs and half-done copies stay behind)."""
        name, proc = self.workers()[index % len(self.workers())]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        self.stack.children.remove((name, proc))
        self.kills += 1
        return name

    def start_worker(self, name: str) -> None:
        """Start a worker in a killed one's place."""
        self.stack.spawn(name, "worker")

    def output(self) -> str:
        """What the stack's processes wrote so far."""
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def sign_in_codes(self, email: str) -> list[str]:
        """The codes (sign-in and step-up) the web app wrote to its log for ``email``: with
        no mail server, that is where a person reads them."""
        pattern = re.compile(rf"(?:sign-in|confirmation) code for {re.escape(email)}"
                             r"(?:, for [^:\n]+)?: (\d{6})")
        return pattern.findall(self.output())

    def next_code(self, email: str, seen: int, timeout: float = 60) -> str:
        """The first code for ``email`` after the ``seen`` ones already in the log."""
        deadline = time.monotonic() + timeout
        while len(codes := self.sign_in_codes(email)) <= seen:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no new code for {email} in {self.log_path}")
            time.sleep(0.2)
        return str(codes[seen])

    # -- the venue ------------------------------------------------------------------------

    def still(self) -> None:
        """Stop the world before it is checked: no market ends, no faults, the engine open,
        and no whale trades, the sandbox's own thread's included (`copytrade sandbox` runs
        one, a trade every few seconds): a copy filled while the checks read would count
        on the chain and not yet in the app's records, or the reverse."""
        still_venue(self.control)

    def control(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        """Call the sandbox's control API (``/_sandbox/...``); its JSON answer."""
        answer = self.http.request(method, f"{self.venue_url}/_sandbox{path}", json=body,
                                   params=params or None, timeout=120)
        if answer.status_code >= 400:
            raise RuntimeError(f"sandbox {method} {path}: {answer.status_code} {answer.text}")
        return answer.json()

    def venue_pusd(self, address: str) -> Decimal:
        """The pUSD the venue holds ``address`` to have (its balance for orders)."""
        return Decimal(self.control("GET", f"/balances/{address}")["pusd"])

    def venue_positions(self, address: str) -> dict[str, Decimal]:
        """The outcome tokens the venue's Data API says ``address`` holds."""
        rows = self.http.get(f"{self.venue_url}/data/positions", params={
            "user": address, "sizeThreshold": 0, "limit": 500}).json()
        return {str(row["asset"]): Decimal(str(row["size"])) for row in rows}

    # -- the chain ------------------------------------------------------------------------

    def fund(self, address: str, pusd: Decimal) -> None:
        """Mint pUSD to ``address`` on the dev chain, as `copytrade dev fund` does (again when
        the sandbox's relayer, which sends from the same dev key, took the nonce first)."""
        from devstack import faucet

        deadline = time.monotonic() + 60
        while True:
            try:
                with self.faucet:
                    faucet.fund(self.contracts, address, pusd=pusd)
                return
            except Exception as exc:
                if "nonce" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def chain_pusd(self, address: str) -> Decimal:
        """``address``'s pUSD on the chain."""
        w3 = self.contracts.web3()
        token = w3.eth.contract(address=w3.to_checksum_address(self.contracts.pusd),
                                abi=ERC20_BALANCE)
        return Decimal(token.functions.balanceOf(w3.to_checksum_address(address)).call()) / UNIT

    def chain_shares(self, address: str, token_id: str) -> Decimal:
        """``address``'s outcome tokens ``token_id`` on the chain's CTF."""
        w3 = self.contracts.web3()
        ctf = w3.eth.contract(address=w3.to_checksum_address(self.contracts.ctf),
                              abi=ERC1155_BALANCE)
        held = ctf.functions.balanceOf(w3.to_checksum_address(address), int(token_id)).call()
        return Decimal(held) / UNIT
