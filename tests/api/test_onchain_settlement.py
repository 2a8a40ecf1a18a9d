"""Balances, positions and PnL agree everywhere once the sandbox settles on chain (issue 29,
"Why" 1: the wallet page said 50 pUSD after 48 pUSD of fills). On the strict sandbox whose
relayer runs the deposit wallet on anvil, a live order's fill takes its cost and taker fee
from the wallet's pUSD on chain (what ``/api/wallets/balance`` reads) and puts its tokens
there; readiness (the venue's balance) and the venue's ledger say the same; a sell moves them
back; a trade whose settlement FAILED (the venue's fault switch) moves nothing. PnL agrees
with the money at each step: the positions', the summary's and the overview's total is the
portfolio (pUSD on chain plus the positions at the book) less what was funded. The scripted
whales' fills settle on the same chain: the trader profile the app shows holds what the
chain holds."""

from __future__ import annotations

import secrets
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

from web3 import Web3

from models.notifications import Notification
from models.trading import Trade
from services.copying import overview
from services.trading import order_reconcile
from services.wallets import deposits, readiness
from tests.chain_venue import ChainVenue
from tests.http_helpers import json_body
from tests.services.trading.test_session_key_trading import _market_order, _ready_account

USDC = 10**6
_ERC1155 = [{"type": "function", "name": "balanceOf", "stateMutability": "view",
             "inputs": [{"name": "o", "type": "address"}, {"name": "i", "type": "uint256"}],
             "outputs": [{"name": "", "type": "uint256"}]}]

_ERC20 = [{"type": "function", "name": "balanceOf", "stateMutability": "view",
           "inputs": [{"name": "o", "type": "address"}],
           "outputs": [{"name": "", "type": "uint256"}]}]


def _json(response: Any) -> Any:
    assert response.status_code == 200, response.get_data(as_text=True)
    return json_body(response)


def _shares_on_chain(cv: ChainVenue, wallet: str, token: str) -> Decimal:
    dev = cv.chain.contracts
    ctf = dev.web3().eth.contract(address=dev.ctf, abi=_ERC1155)
    return Decimal(ctf.functions.balanceOf(Web3.to_checksum_address(wallet),
                                           int(token)).call()) / USDC


def _agree(cv: ChainVenue, client: Any, headers: dict, user: Any, wallet: str,
           pusd: Decimal) -> None:
    """The wallet page, the chain, readiness and the venue's ledger all hold ``pusd``."""
    shown = _json(client.get("/api/wallets/balance", headers=headers))
    assert Decimal(shown["pusd"]) == pusd, shown
    dev = cv.chain.contracts
    token = dev.web3().eth.contract(address=dev.pusd, abi=_ERC20)
    assert Decimal(token.functions.balanceOf(wallet).call()) / USDC == pusd
    assert readiness.readiness(user)["balance_usdc"] == pusd
    assert Decimal(cv.control.balances(wallet)["pusd"]) == pusd


def _pnl_agrees(client: Any, headers: dict, user: Any, funded: Decimal) -> Decimal:
    """Positions, the PnL summary and the overview tell one PnL: the portfolio less
    ``funded``; returns it."""
    held = _json(client.get("/api/positions?active_only=false", headers=headers))
    summary = _json(client.get("/api/stats/summary", headers=headers))
    realized = sum((Decimal(p["realized_pnl"]) for p in held), Decimal(0))
    unrealized = sum((Decimal(p["unrealized_pnl"]) for p in held), Decimal(0))
    for p in held:  # each position's unrealized PnL is its value at the book less its cost
        assert Decimal(p["unrealized_pnl"]) == (Decimal(p["current_value"])
                                                - Decimal(p["cost_basis"])), p
    assert Decimal(summary["realized_pnl"]) == realized
    assert Decimal(summary["total_pnl"]) == realized + unrealized
    home = overview.overview(user)
    assert home["notes"] == [], home["notes"]
    assert (home["total_pnl"], home["realized_pnl"], home["unrealized_pnl"]) == (
        realized + unrealized, realized, unrealized)
    assert home["portfolio_value"] - funded == realized + unrealized
    return realized + unrealized


def test_fills_sells_and_a_failed_settlement_agree_everywhere(
        accounts_venue, client, auth_headers, stepped_up_headers, user) -> None:
    cv = accounts_venue
    _owner, wallet, _session = _ready_account(cv, client, stepped_up_headers, user)
    token = cv.control.add_market(f"settle-{secrets.token_hex(4)}", liquidity=True,
                                  fair_price="0.5", fee_rate="0.04")["token_ids"][0]
    _agree(cv, client, auth_headers, user, wallet, Decimal(100))

    # 10 shares at the house's best ask 0.51, and the taker fee 10 x 0.04 x 0.51 x 0.49
    assert _market_order(user, token).status == "matched"
    fee = Decimal("0.09996")
    _agree(cv, client, auth_headers, user, wallet, 100 - Decimal("5.10") - fee)
    assert _shares_on_chain(cv, wallet, token) == 10
    # marked at the midpoint 0.50: 5.00 of value against 5.10 and the fee paid
    assert _pnl_agrees(client, auth_headers, user, Decimal(100)) == 5 - Decimal("5.10") - fee
    [position] = _json(client.get("/api/positions", headers=auth_headers))
    assert (position["token_id"], Decimal(position["size"])) == (token, 10)
    [listed] = cv.control.get("/data/positions", user=wallet)
    assert listed["size"] == Decimal(10)

    deposits.sweep()  # the deposit watcher's look: what the wallet holds after the buy

    # selling them back at the best bid 0.49 pays 4.90 less the same fee
    assert _market_order(user, token, "sell").status == "matched"
    after_sell = 100 - Decimal("5.10") - fee + Decimal("4.90") - fee
    _agree(cv, client, auth_headers, user, wallet, after_sell)
    # The watcher sees the pUSD rise; it is the sale's, not a deposit (nor is the funding
    # it saw before): nobody is told of one.
    assert [s["refreshed"] for s in deposits.sweep()] == [True]
    assert not Notification.select().where(Notification.type == "deposit.received").exists()
    assert _shares_on_chain(cv, wallet, token) == 0
    assert _json(client.get("/api/positions", headers=auth_headers)) == []
    [closed] = _json(client.get("/api/positions?active_only=false", headers=auth_headers))
    assert Decimal(closed["size"]) == 0
    round_trip = _pnl_agrees(client, auth_headers, user, Decimal(100))
    assert round_trip == Decimal("4.90") - Decimal("5.10") - 2 * fee == after_sell - 100

    # a trade whose settlement fails moves nothing on chain; the venue undoes it at FAILED
    cv.control.call("POST", "/lifecycle", {"fail_next": 1, "mined_after": "0",
                                           "confirmed_after": "0.2"}, expect=200)
    failed = _market_order(user, token)
    assert failed.status == "matched"  # the venue answers before it settles
    assert _shares_on_chain(cv, wallet, token) == 0
    time.sleep(0.3)
    order_reconcile.reconcile_pending(older_than=timedelta(0))  # the app follows it to FAILED
    trade = Trade.get_by_id(failed.trade_id)
    assert (trade.settlement, trade.failed_size) == ("failed", Decimal(10))
    _agree(cv, client, auth_headers, user, wallet, after_sell)
    assert _shares_on_chain(cv, wallet, token) == 0
    assert _json(client.get("/api/positions", headers=auth_headers)) == []
    assert _pnl_agrees(client, auth_headers, user, Decimal(100)) == round_trip

    # the scripted whales trade on the same chain: what the app shows a whale holding (its
    # trader profile, from the venue) is what the chain holds
    fills = cv.control.call("POST", "/whales/tick", expect=201)["fills"]
    whale = fills[0]["proxyWallet"]
    profile = _json(client.get(f"/api/traders/{whale}", headers=auth_headers))
    assert profile["positions"] and profile["recent_trades"]
    for held in profile["positions"]:
        assert _shares_on_chain(cv, whale, held["token_id"]) == Decimal(held["size"]), held
