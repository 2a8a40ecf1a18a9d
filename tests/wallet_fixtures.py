"""Fixtures for wallet, withdrawal and claim tests: services pointed at the session's anvil.

Registered for the whole suite by ``pytest_plugins`` in tests/conftest.py.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from web3 import Web3

import config
from chain.errors import ChainUnavailable
from chain.rpc import connect
from devstack.chain.devchain import DevCondition
from services.markets import catalogue
from services.platform import runtime
from services.platform.chain_settings import ChainAccess, ChainSettings, from_settings
from services.wallets import trading_accounts, wallets
from tests.conftest import app_settings
from venue.signing import OrderKey
from venue.tls import client_context

USDC = 10**6  # base units of one pUSD / USDC.e
ONE_MATIC = 10**18


def chain_settings(app: Any, chain: Any, **extra: Any) -> ChainSettings:
    """The app's settings pointed at the dev chain (``extra``: more settings by env name)."""
    overrides = {**app_settings(app).flat(), **chain.contracts.env(),
                 "WITHDRAW_WAIT_SECONDS": "5", "RECEIPT_TIMEOUT_SECONDS": "30", **extra}
    return from_settings(config.load(env={}, overrides=overrides))


def use_chain(settings: ChainSettings, *, web3: Web3 | None = None) -> None:
    """Point the runtime's chain part at ``settings`` (``web3``: a faulty connection)."""
    runtime.install(replace(runtime.runtime(),
                            chain=ChainAccess(settings, web3=web3)))


def sandbox_control(method: str, path: str, body: Any = None) -> Any:
    """Call the sandbox venue's control API (the port of its Gamma, ARCHITECTURE.md)."""
    base = runtime.runtime().settings.venue.gamma_url.removesuffix("/gamma") + "/_sandbox"
    response = httpx.request(method, base + path, json=body, timeout=30,
                             verify=client_context())
    response.raise_for_status()
    return response.json()


@pytest.fixture
def wallet_chain(app: Any, chain: Any) -> Iterator[Any]:
    """The wallet services configured for the session's anvil (restored afterwards).

    The sandbox venue indexes the same chain meanwhile, as the real Data API indexes Polygon.
    """
    previous = runtime.runtime()
    use_chain(chain_settings(app, chain))
    sandbox_control("POST", "/chain", {"rpc_url": chain.rpc_url, "ctf": chain.contracts.ctf})
    yield chain
    sandbox_control("POST", "/chain", {"rpc_url": ""})
    runtime.install(previous)


@pytest.fixture
def fund(wallet_chain: Any) -> Callable[..., None]:
    """``fund(address, pusd=0, usdce=0, matic_wei=ONE_MATIC)``: give an address dev money."""

    def give(address: str, *, pusd: int = 0, usdce: int = 0, matic_wei: int = ONE_MATIC) -> None:
        dev = wallet_chain.contracts
        if pusd:
            dev.mint(dev.pusd, address, pusd)
        if usdce:
            dev.mint(dev.usdce, address, usdce)
        dev.fund_native(address, matic_wei)

    return give


def faulty_web3(rpc_url: str, *, fail_send: str) -> Web3:
    """A Web3 whose eth_sendRawTransaction fails: ``before`` sending, or ``after`` it reached
    the node (the process 'dies' between broadcasting and recording the broadcast)."""
    w3 = connect(rpc_url)
    forward = w3.provider.make_request

    def make_request(method: Any, params: Any) -> Any:
        if method == "eth_sendRawTransaction":
            if fail_send == "after":
                forward(method, params)
            raise ChainUnavailable("injected: connection lost during broadcast")
        return forward(method, params)

    w3.provider.make_request = make_request  # type: ignore[method-assign]
    return w3


def list_on_venue(condition: DevCondition, slug: str | None = None) -> dict[str, Any]:
    """List a dev-chain condition as a sandbox market (Gamma, Data API); its Gamma object."""
    slug = slug or f"dev-market-{secrets.token_hex(4)}"
    return sandbox_control("POST", "/markets", {
        "slug": slug, "question": f"Dev question {slug}?", "liquidity": False,
        "question_id": condition.question_id, "condition_id": condition.condition_id,
        "collateral": condition.collateral, "neg_risk": condition.neg_risk})


def catalogue_market(condition: DevCondition, *, closed: bool = True) -> str:
    """Insert a catalogue market for a dev condition (Yes/No) the venue lists; return its slug."""
    slug = f"dev-market-{secrets.token_hex(4)}"
    if condition.outcome_slot_count == 2:
        list_on_venue(condition, slug)
    outcomes = ["Yes", "No"] if condition.outcome_slot_count == 2 else [
        f"Outcome {i}" for i in range(condition.outcome_slot_count)]
    catalogue.upsert_markets([SimpleNamespace(
        id=secrets.randbelow(10**9), slug=slug, condition_id=condition.condition_id,
        question=f"Dev question {slug}?", description="", tags=(), outcomes=outcomes,
        token_ids=[str(t) for t in condition.token_ids], active=not closed, closed=closed,
        neg_risk=condition.neg_risk)])
    return slug


def allow_eoa_operator(address: str) -> None:
    """The operator's TRADING_EOA_ALLOWLIST also holds ``address`` (this runtime's settings;
    the ``app`` fixture installs the shared runtime again for the next test)."""
    current = runtime.runtime()
    listed = (*current.settings.eoa_allowlist, address.lower())
    runtime.install(replace(current, settings=replace(current.settings, eoa_allowlist=listed)))


def legacy_eoa_wallet(user: Any) -> Any:
    """The user's trading wallet as a legacy plain EOA (type 0), the only way the product
    keeps one: a fresh key the operator allowlists, connected as an existing account. For
    tests about accounts that send their own transactions and pay gas in POL."""
    key = OrderKey("0x" + secrets.token_hex(32))
    allow_eoa_operator(key.address)
    return trading_accounts.connect(user, wallet_address=key.address,
                                    private_key=key.private_key)


def wallet_with_position(chain: Any, user: Any, condition: DevCondition, amount: int,
                         outcomes: list[int] | None = None) -> Any:
    """The user's trading wallet (a legacy EOA unless they have one), with gas and
    ``amount`` of the chosen outcomes' tokens sent to it on chain by another address (all
    outcomes by default)."""
    wallet = wallets.for_user(user) or legacy_eoa_wallet(user)
    chain.contracts.fund_native(wallet.address, 10**18)
    chain.contracts.split_position(wallet.address, condition, amount, outcomes=outcomes)
    return wallet


def neg_risk_holding(chain: Any, user: Any, register: Callable[[DevCondition], Any]
                     ) -> tuple[Any, DevCondition, DevCondition]:
    """Two questions of one neg-risk market, each passed to ``register``; the user's wallet
    holds 5 Yes of the first and 1 No of the second. Answers (wallet, first, second)."""
    dev = chain.contracts
    question = dev.prepare_neg_risk_question()
    sibling = dev.prepare_neg_risk_question(question.market_id)
    register(question)
    register(sibling)
    wallet = wallet_with_position(chain, user, question, 5 * USDC, outcomes=[0])
    dev.split_position(wallet.address, sibling, 1 * USDC, outcomes=[1])
    return wallet, question, sibling


__all__ = ["USDC", "allow_eoa_operator", "catalogue_market", "chain_settings", "faulty_web3",
           "fund", "legacy_eoa_wallet", "list_on_venue", "neg_risk_holding", "sandbox_control",
           "wallet_chain", "wallet_with_position"]
