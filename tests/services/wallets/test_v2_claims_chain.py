"""Claims of protocol-v2 positions on the dev chain (ACCOUNTS.md §11, issue 33 item 2): a v2
market's positions sit on the PositionManager and are redeemed through the Router's
``redeem(bytes31, outcome, amount)``, pUSD out; from a deposit wallet as a relayer WALLET
batch, from a legacy EOA as its own transactions (the Router approved there first). The
sandbox lists the market as Gamma does (``version`` "v2", ``positionIds``) and resolves it;
the Router stand-in pays on anvil."""

from __future__ import annotations

import json
import secrets
from decimal import Decimal
from typing import Any

from chain.tokens import token_balance_base
from models.wallet import Claim
from services.wallets import claims, wallets
from tests.chain_venue import ChainVenue
from tests.services.wallets.test_relayer_claims_chain import _onboarded
from tests.wallet_fixtures import USDC, legacy_eoa_wallet, sandbox_control


def _v2_market_held(dev: Any, holder: str, shares: int) -> list[str]:
    """A v2 market listed by the sandbox, ``shares`` of its Yes held by ``holder`` (on chain
    and in the venue's index), resolved Yes by the sandbox, which reports it on the Router:
    its position ids."""
    slug = f"v2-claim-{secrets.token_hex(4)}"
    sandbox_control("POST", "/markets", {"slug": slug, "question": f"Will {slug} pay?",
                                         "position_ids": True, "liquidity": False})
    market = next(m for m in sandbox_control("GET", "/state")["markets"] if m["slug"] == slug)
    yes, no = market["token_ids"]
    dev.split_v2_position(holder, [yes, no], shares * USDC, outcomes=[0])
    sandbox_control("POST", "/fund", {"address": holder, "token_id": yes,
                                      "shares": str(shares), "seen": True})
    sandbox_control("POST", f"/markets/{market['condition_id']}/resolve", {"winner": 0})
    return [yes, no]


def test_a_deposit_wallets_v2_winnings_are_redeemed_through_the_router(
        accounts_venue: ChainVenue, user) -> None:
    dev = accounts_venue.chain.contracts
    w3 = dev.web3()
    wallet = _onboarded(user)
    maker = wallets.maker(wallet)
    yes, _no = _v2_market_held(dev, maker, 6)

    [held] = claims.maker_claimable(wallet)
    assert (held.token_id, held.size, held.claimable_value) == (yes, Decimal(6), Decimal(6))
    assert held.collateral == dev.pusd
    before = token_balance_base(w3, dev.pusd, maker)
    [row] = claims.request(user)
    assert claims.is_v2(row) and row.payout == Decimal(6)
    assert claims.redeem(row.id) == "confirmed"
    [call] = json.loads(Claim.get_by_id(row.id).relayer_payload)[
        "depositWalletParams"]["calls"]
    assert call["target"].lower() == dev.protocol_v2_router.lower()
    assert token_balance_base(w3, dev.pusd, maker) - before == 6 * USDC
    assert dev.v2_balance(maker, yes) == 0  # burnt on the PositionManager
    assert dev.native_balance_wei(wallet.address) == 0  # the relayer paid


def test_an_eoas_v2_claim_approves_the_router_then_redeems(accounts_venue: ChainVenue,
                                                          user) -> None:
    dev = accounts_venue.chain.contracts
    w3 = dev.web3()
    wallet = legacy_eoa_wallet(user)
    dev.fund_native(wallet.address, 10**18)
    yes, _no = _v2_market_held(dev, wallet.address, 3)

    [position] = claims.claimable_positions(wallet.address)
    assert (position.token_id, position.claimable_value) == (yes, Decimal(3))
    [row] = claims.request(user)
    assert claims.redeem(row.id) == "confirmed"
    stored = Claim.get_by_id(row.id)
    assert stored.approval_transaction.status == "confirmed"
    assert stored.transaction.to_address.lower() == dev.protocol_v2_router.lower()
    assert token_balance_base(w3, dev.pusd, wallet.address) == 3 * USDC
    assert dev.v2_balance(wallet.address, yes) == 0
    assert claims.request(user) == []
