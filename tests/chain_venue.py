"""A sandbox venue of the test's own whose relayer runs deposit wallets on the session's anvil
(as ``copytrade up`` wires it), with the services pointed at both: money really moves on
chain (a USDC.e deposit is a mint, a wrap is the onramp's, a claim the adapters'), and the
CLOB's cached balance changes only on ``/balance-allowance/update``, as on the venue.

``chain_venue`` yields the sandbox's control client. Import it into a test module (``from
tests.chain_venue import chain_venue``), with queues of the test's own
(``tests.dashboard.conftest.job_prefix``), and override ``venue_control`` there with
``chain_venue`` so ``make_trader`` onboards on this venue. ``accounts_venue`` is the same
venue with the venue's account rules on (strict), as a ``ChainVenue``: also what the owner
does on "polymarket.com" (deploy, approve, authorize or revoke a session key) through the
same relayer with the operator's builder credentials.

The shared session venue is not used: attaching a chain rewires its contracts and relayer
for good.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from rq.job import JobStatus
from web3 import Web3

import config
from devstack.stack import sandbox_contracts
from devstack.venue import SandboxServer
from services.platform import chain_settings, jobs, runtime, venue_access, venues
from services.wallets import trading_accounts
from tests.devstack.venue.conftest import Control
from venue.accounts.approvals import required_approvals
from venue.accounts.batch import Call, sign_batch
from venue.accounts.wallet_calls import authorize_session_signer_call, revoke_session_signer_call
from venue.models import BuilderCreds
from venue.relayer import await_final, create_wallet, wallet_batch
from venue.signing import OrderKey
from venue.signing.auth import builder_headers
from venue.tls import client_context

SESSION_LIFETIME = 4_315 * 3600  # what the official SDK asks for (ACCOUNTS.md §2.6)


@dataclass
class ChainVenue:
    """The sandbox (``control``), the dev chain (``chain``) and what the owner does on
    polymarket.com through the relayer."""

    venue: SandboxServer
    control: Control
    chain: Any

    @property
    def builder(self) -> BuilderCreds:
        """The operator's builder key (the sandbox's dev triple)."""
        return BuilderCreds(*self.venue.state.config.dev_builder)

    def now(self) -> int:
        """The chain's clock (what the wallet contract checks deadlines against)."""
        return int(self.chain.contracts.web3().eth.get_block("latest")["timestamp"])

    def clock(self) -> int:
        """Now for the relayer (its wall clock) and for the wallet (its chain's latest block,
        which lags the wall clock while no block is mined and leads it after a quick run of
        blocks): the later of the two."""
        return max(int(time.time()), self.now())

    def pass_time(self, moment: int) -> None:
        """Wait until ``moment`` has passed on the wall clock and in a block mined since."""
        time.sleep(max(0.0, moment + 1 - time.time()))
        while self.now() <= moment:  # a new block is stamped max(wall clock, last + 1)
            self.chain.contracts.web3().provider.make_request("evm_mine", [])

    def deploy(self, owner: OrderKey) -> str:
        """WALLET-CREATE for ``owner`` through the relayer, waited on; the wallet's address."""
        client = venues.client()
        factory = trading_accounts.contracts().deposit_wallet_factory
        sent = client.run_steps(create_wallet(self.builder, owner=owner.address,
                                              factory=factory))
        client.run_steps(await_final(sent.transaction_id, self.builder))
        wallet = trading_accounts.deposit_wallet_of(owner.address)
        assert self.chain.contracts.web3().eth.get_code(wallet), "not deployed where derived"
        return wallet

    def run(self, key: OrderKey, wallet: str, calls: list[Call], *,
            session_signer: bool = False) -> Any:
        """One WALLET batch from ``wallet`` signed by ``key``, waited on to a final state."""
        client = venues.client()
        contracts = trading_accounts.contracts()
        sent = client.run_steps(wallet_batch(
            self.builder, key, chain_id=contracts.chain_id,
            factory=contracts.deposit_wallet_factory, wallet=wallet, calls=calls,
            session_signer=session_signer))
        return client.run_steps(await_final(sent.transaction_id, self.builder))

    def approvals(self) -> list[Call]:
        """The required approvals (ACCOUNTS.md §5) of the tokens the dev chain has."""
        w3 = self.chain.contracts.web3()
        return [a.call() for a in required_approvals(trading_accounts.contracts())
                if w3.eth.get_code(Web3.to_checksum_address(a.token))]

    def _session_operation(self, path: str, owner: OrderKey, wallet: str, session: str,
                           valid_until: int | None) -> dict:
        """POST the owner's signed one-call batch to the relayer's session-signer route."""
        http = httpx.Client(base_url=self.venue.relayer_url, timeout=10,
                            verify=client_context())
        nonce = int(http.get("/nonce", params={"address": owner.address}).json()["nonce"])
        deadline = self.now() + 600
        call = (revoke_session_signer_call(wallet, session) if valid_until is None
                else authorize_session_signer_call(wallet, session, valid_until))
        body: dict = {"deadline": str(deadline), "nonce": str(nonce),
                      "sessionSignerAddress": session, "walletAddress": wallet,
                      "signature": sign_batch(owner, chain_id=self.chain.chain_id,
                                              wallet=wallet, nonce=nonce, deadline=deadline,
                                              calls=[call])}
        if valid_until is not None:
            body |= {"scopes": ["CLOB"], "validUntil": str(valid_until)}
        text = json.dumps(body)
        headers = builder_headers(self.builder, "POST", path, text) | {
            "Idempotency-Key": secrets.token_hex(8), "Content-Type": "application/json"}
        answer = http.post(path, content=text, headers=headers)
        assert answer.status_code == 200, answer.text
        tx_id = answer.json()["transactionId"]
        for _ in range(200):
            state = http.get("/transaction", params={"id": tx_id}).json()[0]
            if state["state"] in ("STATE_CONFIRMED", "STATE_FAILED", "STATE_INVALID"):
                assert state["state"] == "STATE_CONFIRMED", state
                return state
            time.sleep(0.05)
        raise AssertionError(f"{path} {tx_id} never finished")

    def authorize(self, owner: OrderKey, wallet: str, session: str,
                  valid_until: int | None = None) -> dict:
        """The owner authorizes ``session`` (scope CLOB) as polymarket.com does."""
        until = valid_until or self.now() + SESSION_LIFETIME
        return self._session_operation("/v1/session-signers/authorizations", owner, wallet,
                                       session, until)

    def revoke(self, owner: OrderKey, wallet: str, session: str) -> dict:
        """The owner revokes ``session``."""
        return self._session_operation("/v1/session-signers/revocations", owner, wallet,
                                       session, None)


def attachment(dev: Any) -> dict[str, Any]:
    """``POST /_sandbox/chain``'s body running the relayer on dev chain ``dev`` (its deployer
    the factory's operator), orders and the balance cache keyed on its contracts."""
    return {"rpc_url": dev.rpc_url, "ctf": dev.ctf,
            "deposit_wallet_factory": dev.deposit_wallet_factory,
            "deposit_wallet_beacon": dev.deposit_wallet_beacon,
            "operator_key": dev.deployer_key, "contracts": sandbox_contracts(dev)}


@pytest.fixture
def chain_venue(app: Any, chain: Any, wallet_chain: Any) -> Iterator[Control]:
    """The chain-backed sandbox's control client; the runtime points at it and at anvil."""
    dev = chain.contracts
    server = SandboxServer(seed=23).start()
    control = Control(server)
    control.call("POST", "/chain", attachment(dev), expect=200)
    control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    # Over the settings in force (a test's mail server and BASE_URL included).
    settings = config.load(env={}, overrides={
        **runtime.runtime().settings.flat(), **dev.env(),
        "POLYMARKET_GAMMA_URL": server.gamma_url,
        "POLYMARKET_CLOB_URL": server.clob_url, "POLYMARKET_DATA_URL": server.data_url,
        "POLYMARKET_RTDS_URL": server.rtds_url, "POLYMARKET_RELAYER_URL": server.relayer_url})
    previous = runtime.runtime()
    runtime.install(replace(previous, settings=settings,
                            venue=venue_access.VenueAccess(venue_access.venue_config(settings)),
                            chain=chain_settings.ChainAccess(chain_settings.from_settings(settings))))
    try:
        yield control
    finally:
        runtime.install(previous)
        control.close()
        server.stop()


@pytest.fixture
def accounts_venue(chain_venue: Control, chain: Any) -> ChainVenue:
    """``chain_venue`` with the venue's account rules on (strict), as a ``ChainVenue``."""
    chain_venue.call("POST", "/strict-accounts", {"enabled": True}, expect=200)
    return ChainVenue(venue=chain_venue.venue, control=chain_venue, chain=chain)


def run_queued_jobs(only: Collection[str] | None = None) -> list[str]:
    """Run what is queued on this test's queues, as a worker thread would (the worker's job
    table, in this thread), until nothing is left; the names of the jobs run. With ``only``,
    other jobs are dropped unrun: an earlier test on this xdist worker may have left one
    whose rows live in its own database."""
    from worker import jobs as table

    table.load_modules("")
    ran: list[str] = []
    while True:
        for name in jobs.QUEUES:
            queue = jobs.queue(name)
            raw = queue.connection.lpop(queue.key)
            if raw is not None:
                job_id = raw.decode()
                break
        else:
            return ran
        job = jobs.fetch(job_id)
        assert job is not None, job_id
        if only is not None and job.func_name not in only:
            continue
        table.resolve(job.func_name).function(*job.args)
        job.set_status(JobStatus.FINISHED)  # ended: the same job id may be queued again
        ran.append(job.func_name)


__all__ = ["SESSION_LIFETIME", "ChainVenue", "accounts_venue", "attachment", "chain_venue",
           "run_queued_jobs"]
