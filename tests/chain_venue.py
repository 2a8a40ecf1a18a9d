"""A sandbox venue whose relayer runs deposit wallets on the session's anvil, with the app
pointed at both: the product's own services (connect, onboarding, orders, claims) against a
venue that executes WALLET batches through the dev chain's factory and wallet contracts.

The shared session venue is not used: attaching a chain rewires its contracts and relayer
for good, so each test gets its own sandbox, with the venue's account rules on (strict).
Also here: "polymarket.com" for these tests, i.e. what the owner does there (deploy, approve,
authorize a session key) through the same relayer with the operator's builder credentials.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from web3 import Web3

import config
from devstack.stack import sandbox_contracts
from devstack.venue import SandboxServer
from services import chain_access, runtime, trading_accounts, venues
from tests.devstack.venue.conftest import Control
from venue.accounts.approvals import required_approvals
from venue.accounts.batch import Call, sign_batch
from venue.accounts.wallet_calls import authorize_session_signer_call, revoke_session_signer_call
from venue.models import BuilderCreds
from venue.relayer import await_final, create_wallet, wallet_batch
from venue.signing import OrderKey
from venue.signing.auth import builder_headers

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
        http = httpx.Client(base_url=self.venue.relayer_url, timeout=10)
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
def chain_venue(app: Any, chain: Any) -> Iterator[ChainVenue]:
    """A strict sandbox running deposit wallets on anvil, the app's runtime pointed at both
    (settings, venue and chain; restored afterwards)."""
    venue = SandboxServer(seed=29).start()
    control = Control(venue)
    dev = chain.contracts
    control.call("POST", "/chain", attachment(dev), expect=200)
    control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    control.call("POST", "/strict-accounts", {"enabled": True}, expect=200)
    settings = config.load(env={}, overrides={
        **app.config, **dev.env(), "POLYMARKET_GAMMA_URL": venue.gamma_url,
        "POLYMARKET_CLOB_URL": venue.clob_url, "POLYMARKET_DATA_URL": venue.data_url,
        "POLYMARKET_RTDS_URL": venue.rtds_url, "POLYMARKET_RELAYER_URL": venue.relayer_url,
        "WITHDRAW_WAIT_SECONDS": "5", "RECEIPT_TIMEOUT_SECONDS": "30"})
    previous = runtime.runtime()
    runtime.install(replace(previous, settings=settings,
                            venue=venues.VenueAccess(venues.venue_config(settings)),
                            chain=chain_access.ChainAccess(chain_access.from_settings(settings))))
    try:
        yield ChainVenue(venue=venue, control=control, chain=chain)
    finally:
        runtime.install(previous)
        control.close()
        venue.stop()


__all__ = ["SESSION_LIFETIME", "ChainVenue", "attachment", "chain_venue"]
