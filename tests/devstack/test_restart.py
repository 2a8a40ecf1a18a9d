"""`copytrade up` keeps the dev chain and the sandbox venue across a restart, beside a second
stack on another port, and `copytrade dev reset` wipes it all (real processes, free ports)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import httpx
from eth_account import Account
from web3.exceptions import Web3RPCError

from cli import SANDBOX_PORT_OFFSET
from devstack import faucet
from devstack.chain.devchain import die_with_parent, has_code
from devstack.stack import CHAIN_STATE_FILE, PID_FILE, SANDBOX_STATE_FILE
from tests.conftest import DEADLINE, free_port
from tests.devstack.venue.conftest import Control
from venue.models import ApiCreds
from venue.signing.auth import l1_headers, l2_headers


def _env(instance: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "SANDBOX_PORT", "POLYGON_RPC_URL")}
    env["COPYTRADE_INSTANCE"] = str(instance)
    return env


def stack_port() -> int:
    """A port for a stack's web app, free with its sandbox venue's (the port + 10): another
    run's servers on this machine may hold either."""
    return free_port(also=SANDBOX_PORT_OFFSET)


def _as_at_a_terminal() -> None:
    """``preexec_fn`` of the stack: it dies with the test, and Ctrl-C's SIGINT reaches it as
    it does a command run at a terminal. A run started in the background (`make test &`,
    nohup, a CI step) hands its children SIGINT ignored, and Python then leaves it ignored:
    the stack would never hear the test's Ctrl-C."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Stack:
    """A `copytrade up --port PORT` child and its output."""

    def __init__(self, instance: Path, port: int) -> None:
        self.instance, self.port = instance, port
        self.log = instance.parent / f"up-{port}-{time.monotonic_ns()}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cli", "up", "--port", str(port), "--whales", "0"],
                env=_env(instance), stdout=out, stderr=subprocess.STDOUT,
                preexec_fn=_as_at_a_terminal, start_new_session=True)
        deadline = time.monotonic() + DEADLINE
        while "Ctrl-C stops everything" not in self.output():
            assert self.proc.poll() is None, self.output()
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.2)
        self.venue_url = f"http://127.0.0.1:{port + SANDBOX_PORT_OFFSET}"
        self.venue = Control(SimpleNamespace(url=self.venue_url))

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """Ctrl-C at a terminal: SIGINT to the whole foreground process group."""
        self.venue.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(timeout=DEADLINE)


def _signed_in(stack: Stack, email: str) -> dict[str, str]:
    """A session for ``email`` on the stack's web app (the code read from its log)."""
    web = f"http://127.0.0.1:{stack.port}"
    assert httpx.post(f"{web}/api/auth/magic", json={"email": email},
                      timeout=DEADLINE).status_code == 202
    deadline = time.monotonic() + DEADLINE
    while not (code := re.search(rf"sign-in code for {re.escape(email)}: (\d{{6}})",
                                 stack.output())):
        assert time.monotonic() < deadline, stack.output()
        time.sleep(0.2)
    session = httpx.post(f"{web}/api/auth/verify-code",
                         json={"email": email, "code": code.group(1)}, timeout=DEADLINE)
    assert session.status_code == 200, session.text
    return {"Authorization": f"Bearer {session.json()['token']}"}


def _account(stack: Stack, headers: dict[str, str], path: str = "trading-account") -> dict:
    answer = httpx.get(f"http://127.0.0.1:{stack.port}/api/{path}", headers=headers,
                       timeout=DEADLINE)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _cli(instance: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], env=_env(instance),
                          capture_output=True, text=True, timeout=DEADLINE)


def _fund(instance: Path, address: str, pusd: str) -> None:
    """``copytrade dev fund ADDRESS --pusd N``. The faucet and the sandbox's relayer send
    from one dev key in two processes: a send racing the relayer's is refused "nonce too
    low" and sent again (a loaded machine holds the relayer's sends longer)."""
    deadline = time.monotonic() + DEADLINE
    while (funded := _cli(instance, "dev", "fund", address, "--pusd", pusd)).returncode:
        assert "nonce too low" in funded.stderr and time.monotonic() < deadline, funded.stderr
        time.sleep(0.5)


def test_the_stack_keeps_chain_and_venue_across_a_restart_and_reset_wipes_them(tmp_path):
    instance = tmp_path / "instance"
    port = stack_port()
    first = Stack(instance, port)
    try:
        # a user through the app: a deposit wallet onboarded by the worker on the local
        # chain through the sandbox relayer (its CLOB API key derived), then funded
        headers = _signed_in(first, "restart@example.com")
        httpx.get(f"http://127.0.0.1:{port}/api/wallets/deposit-address", headers=headers,
                  timeout=DEADLINE).raise_for_status()
        deadline = time.monotonic() + DEADLINE
        while not (onboarded := _account(first, headers))["ready"]:
            assert onboarded["status"] != "failed", onboarded
            assert time.monotonic() < deadline, onboarded
            time.sleep(0.5)
        maker = onboarded["account"]["wallet_address"]
        _fund(instance, maker, "30")
        deadline = time.monotonic() + DEADLINE
        while Decimal((ready := _account(first, headers, "helpers/trading-readiness"))
                      ["balance_usdc"] or 0) != 30:
            assert time.monotonic() < deadline, ready
            time.sleep(0.5)
        # the venue: an API key, a balance, a trade on the tape
        key = "0x" + secrets.token_hex(32)
        trader = Account.from_key(key).address
        chain_id = first.venue.state()["chain_id"]
        creds = httpx.post(f"{first.venue_url}/clob/auth/api-key",
                           headers=l1_headers(key, chain_id), timeout=10).json()
        first.venue.fund(trader, "40")
        market = first.venue.market()
        first.venue.call("POST", "/trades", {"condition_id": market["condition_id"],
                                             "wallet": trader, "side": "BUY",
                                             "price": "0.6", "size": "10"}, expect=201)
        # the chain, last and just before Ctrl-C (the final save, not a periodic one,
        # keeps it): a deposit wallet deployed and an address funded through the faucet
        contracts = faucet.load(instance)
        owner = Account.from_key("0x" + secrets.token_hex(32)).address
        deadline = time.monotonic() + DEADLINE
        while True:  # the dev key again, beside the relayer's sends (_fund)
            try:
                wallet = contracts.deploy_deposit_wallet(owner)
                break
            except Web3RPCError as exc:
                assert "nonce too low" in str(exc) and time.monotonic() < deadline, exc
                time.sleep(0.5)
        _fund(instance, owner, "25")
        # read last: the trade has settled by now (the house's book refilled after it)
        before = first.venue.balances(trader)
        book = first.venue.get("/clob/book", token_id=market["token_ids"][0])
    finally:
        first.stop()
    assert (instance / CHAIN_STATE_FILE).is_file() and (instance / SANDBOX_STATE_FILE).is_file()
    assert not (instance / PID_FILE).exists()

    again = Stack(instance, port)
    other = None
    try:
        assert "resumed" in again.output()
        assert "does not" not in again.output()  # database and chain agree
        # the user's account as it was: deployed, funded, its venue API key still taken
        assert _account(again, headers)["ready"]
        ready = _account(again, headers, "helpers/trading-readiness")
        assert Decimal(ready["balance_usdc"]) == 30 and ready["venue_credentials"]
        assert ready["ready_to_trade"], ready["blockers"]
        contracts = faucet.load(instance)
        assert has_code(contracts.rpc_url, wallet)
        assert contracts.web3().eth.contract(
            address=contracts.pusd, abi=[{"name": "balanceOf", "type": "function",
                                          "stateMutability": "view",
                                          "inputs": [{"name": "", "type": "address"}],
                                          "outputs": [{"name": "", "type": "uint256"}]}]
        ).functions.balanceOf(owner).call() == 25 * 10**6
        assert again.venue.balances(trader) == before
        # the house's resting orders, each where it stood
        kept = again.venue.get("/clob/book", token_id=market["token_ids"][0])
        assert (kept["bids"], kept["asks"]) == (book["bids"], book["asks"]) and book["bids"]
        path = "/data/orders"
        signed = l2_headers(ApiCreds(creds["apiKey"], creds["secret"], creds["passphrase"],
                                     trader), "GET", path)
        listed = httpx.get(f"{again.venue_url}/clob{path}", headers=signed,
                           timeout=10)
        assert listed.status_code == 200, listed.text  # the API key is still valid
        # a second stack on another port: its own venue, its own gunicorn control socket
        other = Stack(tmp_path / "other", stack_port())
        assert other.venue.state()["markets"]
        deadline = time.monotonic() + DEADLINE  # gunicorn opens it once its master runs
        while not (tmp_path / "other" / "gunicorn.ctl").exists():
            assert time.monotonic() < deadline, other.output()
            time.sleep(0.2)
        assert (instance / "gunicorn.ctl").exists()
        refused = _cli(instance, "dev", "reset", "--yes")
        assert refused.returncode != 0 and "is running" in refused.stderr
        twice = _cli(instance, "up", "--port", str(free_port()))
        assert twice.returncode != 0 and "already running" in twice.stdout + twice.stderr
    finally:
        if other is not None:
            other.stop()
        again.stop()

    # the chain lost, the database kept: one line says so and names the fix, and the
    # account is not shown ready beside a wallet the venue says is not deployed
    (instance / CHAIN_STATE_FILE).unlink()
    (instance / SANDBOX_STATE_FILE).unlink()
    lost = Stack(instance, port)
    try:
        deadline = time.monotonic() + DEADLINE  # said after the summary
        while not (lines := [line for line in lost.output().splitlines()
                             if "the local chain does not" in line]):
            assert "could not check" not in lost.output() and time.monotonic() < deadline, \
                lost.output()
            time.sleep(0.2)
        assert len(lines) == 1 and maker in lines[0] and "copytrade dev reset" in lines[0]
        account = _account(lost, headers)
        assert not account["ready"] and "copytrade dev reset" in account["error"]
    finally:
        lost.stop()

    kept = subprocess.run([sys.executable, "-m", "cli", "dev", "reset"], input="n\n",
                          env=_env(instance), capture_output=True, text=True, timeout=DEADLINE)
    assert kept.returncode != 0 and (instance / CHAIN_STATE_FILE).is_file()  # it asked first
    wiped = _cli(instance, "dev", "reset", "--yes")
    assert wiped.returncode == 0, wiped.stderr
    assert not (instance / "copytrade.db").exists()
    for name in (CHAIN_STATE_FILE, SANDBOX_STATE_FILE, faucet.DEV_CHAIN_FILE):
        assert not (instance / name).exists()
