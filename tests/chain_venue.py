"""A sandbox venue of the test's own whose relayer runs deposit wallets on the session's anvil
(as ``copytrade up`` wires it), with the services pointed at both: money really moves on
chain (a USDC.e deposit is a mint, a wrap is the onramp's), and the CLOB's cached balance
changes only on ``/balance-allowance/update``, as on the venue.

Import the fixture into a test module (``from tests.chain_venue import chain_venue``), with
queues of the test's own (``tests.dashboard.conftest.job_prefix``), and override
``venue_control`` there with ``chain_venue`` so ``make_trader`` onboards on this venue.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from rq.job import JobStatus

import config
from devstack.stack import sandbox_contracts
from services import chain_access, jobs, runtime, venues


@pytest.fixture
def chain_venue(app: Any, chain: Any, wallet_chain: Any) -> Iterator[Any]:
    """The chain-backed sandbox's control client; the runtime points at it and at anvil."""
    from devstack.venue import SandboxServer
    from tests.devstack.venue.conftest import Control

    dev = chain.contracts
    server = SandboxServer(seed=23).start()
    control = Control(server)
    control.call("POST", "/chain", {
        "rpc_url": dev.rpc_url, "ctf": dev.ctf,
        "deposit_wallet_factory": dev.deposit_wallet_factory,
        "deposit_wallet_beacon": dev.deposit_wallet_beacon, "operator_key": dev.deployer_key,
        "contracts": sandbox_contracts(dev)}, expect=200)
    control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    settings = config.load(env={}, overrides={
        **app.config, **dev.env(), "POLYMARKET_GAMMA_URL": server.gamma_url,
        "POLYMARKET_CLOB_URL": server.clob_url, "POLYMARKET_DATA_URL": server.data_url,
        "POLYMARKET_RTDS_URL": server.rtds_url,
        "POLYMARKET_RELAYER_URL": f"{server.url}/relayer"})
    previous = runtime.runtime()
    runtime.install(replace(previous, settings=settings,
                            venue=venues.VenueAccess(venues.venue_config(settings)),
                            chain=chain_access.ChainAccess(chain_access.from_settings(settings))))
    yield control
    runtime.install(previous)
    control.close()
    server.stop()


def run_queued_jobs() -> list[str]:
    """Run what is queued on this test's queues, as a worker thread would (the worker's job
    table, in this thread), until nothing is left; the names of the jobs run."""
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
        table.resolve(job.func_name).function(*job.args)
        job.set_status(JobStatus.FINISHED)  # ended: the same job id may be queued again
        ran.append(job.func_name)
