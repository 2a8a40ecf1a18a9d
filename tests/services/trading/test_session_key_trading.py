"""An account connected with a session key trades end to end (issue 16, ACCOUNTS.md §2.6,
§8) against a strict sandbox whose relayer runs the deposit wallet on anvil: the owner
deploys, approves and authorizes a session key on "polymarket.com" (the relayer, builder
auth); the user connects with the session key over REST; onboarding sends nothing (the
wallet exists and is approved); a live order fills as type 3 in the session-signer
envelope. Revoked or expired, the key's orders get the venue's refusal and readiness says
why; a wallet without approvals fails onboarding clearly instead of the session key
sending them."""

from __future__ import annotations

import math
import secrets
import time
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from eth_account import Account

from models.wallet import AccountOnboarding, WalletApproval, WalletDeployment
from services.platform import errors
from services.trading import orders, previews
from services.wallets import onboarding, readiness, wallets
from tests.chain_venue import ChainVenue
from venue.signing import OrderKey

USDC = 10**6


def _key() -> OrderKey:
    return OrderKey("0x" + Account.create().key.hex())


def _owned_wallet(cv: ChainVenue, *, approved: bool = True) -> tuple[OrderKey, str, OrderKey]:
    """(owner, its deployed deposit wallet holding 100 pUSD, a session key it authorized)."""
    owner, session = _key(), _key()
    wallet = cv.deploy(owner)
    if approved:
        cv.run(owner, wallet, cv.approvals())
    cv.authorize(owner, wallet, session.address)
    cv.chain.contracts.mint(cv.chain.contracts.pusd, wallet, 100 * USDC)
    return owner, wallet, session


def _connect(client: Any, headers: dict, wallet: str, session: OrderKey) -> dict:
    answer = client.post("/api/trading-account/connect", headers=headers, json={
        "wallet_address": wallet, "private_key": session.private_key[2:]})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    return answer.get_json()


def _onboard(user: Any) -> AccountOnboarding:
    row = onboarding.record(wallets.for_user(user))  # the one REST connect started
    onboarding.run(row.id)
    return AccountOnboarding.get_by_id(row.id)


def _ready_account(cv: ChainVenue, client: Any, headers: dict, user: Any
                   ) -> tuple[OrderKey, str, OrderKey]:
    """``_owned_wallet``, connected over REST with its session key and onboarded (ready)."""
    owner, wallet, session = _owned_wallet(cv)
    _connect(client, headers, wallet, session)
    assert _onboard(user).status == "ready"
    return owner, wallet, session


def _token(cv: ChainVenue) -> str:
    slug = f"sk-{secrets.token_hex(4)}"
    return cv.control.add_market(slug, liquidity=True, fair_price="0.5")["token_ids"][0]


def _market_order(user: Any, token: str, side: str = "buy") -> Any:
    """What placing answers (PlaceOrderResponse's fields, the status as stored)."""
    quote = previews.create(user, token, side, "10", "market", None)
    return SimpleNamespace(**orders.placed_view(orders.place_order(
        user, token_id=token, side=side, size="10", order_type="market",
        preview_id=quote["preview_id"])))


def test_a_session_key_account_connects_onboards_and_fills_a_live_order(
        accounts_venue, client, auth_headers, stepped_up_headers,
        user) -> None:
    cv = accounts_venue
    _owner, wallet, session = _owned_wallet(cv)
    connected = _connect(client, stepped_up_headers, wallet, session)
    account = connected["account"]
    assert (account["wallet_address"], account["signer_address"]) == (wallet, session.address)
    assert account["session_key"] is True and account["signature_type"] == 3

    done = _onboard(user)
    assert done.status == "ready", done.error
    # The wallet existed and was approved: nothing was deployed or sent from the session key.
    assert not WalletDeployment.select().where(WalletDeployment.wallet == done.wallet_id).exists()
    assert not WalletApproval.select().where(WalletApproval.wallet == done.wallet_id).exists()
    ready = client.get("/api/trading-account", headers=auth_headers).get_json()
    assert ready["status"] == "ready"
    state = readiness.readiness(user)
    assert state["ready_to_trade"], state["blockers"]
    assert state["balance_usdc"] == Decimal(100)

    placed = _market_order(user, _token(cv))
    assert placed.status == "matched", placed.reason
    [sent] = [o["body"]["order"] for o in cv.control.received_orders()]
    assert (sent["maker"], sent["signer"], sent["signatureType"]) == (wallet, wallet, 3)
    assert sent["signature"].endswith("6492" * 16)  # the session-signer envelope


def test_a_revoked_session_key_gets_the_venues_refusal_and_readiness_says_why(
        accounts_venue, client, auth_headers, stepped_up_headers,
        user) -> None:
    cv = accounts_venue
    owner, wallet, session = _ready_account(cv, client, stepped_up_headers, user)
    token = _token(cv)
    assert _market_order(user, token).status == "matched"
    cv.revoke(owner, wallet, session.address)

    # The venue's own words, and why: the wallet no longer takes the key.
    refused = _market_order(user, token, "sell")
    assert refused.status == "rejected"
    assert "invalid signature" in refused.reason
    assert session.address in refused.reason and "revoked or expired" in refused.reason
    # A buy: the venue no longer shows the key the wallet's pUSD; that is why, not "0 pUSD".
    with pytest.raises(errors.AccountNotReady) as not_ready:
        _market_order(user, token)
    assert "revoked or expired" in not_ready.value.message
    state = readiness.readiness(user)
    assert state["ready_to_trade"] is False
    [blocker] = [b for b in state["blockers"] if b["code"] == "session_key_not_authorized"]
    assert session.address in blocker["message"] and "revoked or expired" in blocker["message"]


def test_an_expired_session_key_is_refused_the_same_way(accounts_venue, client, auth_headers,
                                                       stepped_up_headers, user) -> None:
    cv = accounts_venue
    owner, wallet, session = _ready_account(cv, client, stepped_up_headers, user)
    # Re-authorized to lapse soon: the relayer refuses a validUntil already past on its clock
    # and the wallet one past in the block that takes it, so the key is given several times
    # what an authorization takes on this machine right now.
    started = time.monotonic()
    cv.authorize(owner, wallet, session.address)
    took = time.monotonic() - started
    until = cv.clock() + max(4, math.ceil(5 * took))
    cv.authorize(owner, wallet, session.address, valid_until=until)
    cv.pass_time(until)
    with pytest.raises(errors.AccountNotReady) as not_ready:
        _market_order(user, _token(cv))
    assert "revoked or expired" in not_ready.value.message
    state = readiness.readiness(user)
    assert "session_key_not_authorized" in [b["code"] for b in state["blockers"]]


def test_a_session_key_does_not_send_missing_approvals_and_says_so(
        accounts_venue, client, auth_headers, stepped_up_headers,
        user) -> None:
    cv = accounts_venue
    _owner, wallet, session = _owned_wallet(cv, approved=False)
    _connect(client, stepped_up_headers, wallet, session)
    failed = _onboard(user)
    assert (failed.status, failed.step) == ("failed", "approvals")
    assert "session key" in failed.error and "polymarket.com" in failed.error
    # nothing was sent
    assert not WalletApproval.select().where(WalletApproval.wallet == failed.wallet_id).exists()
