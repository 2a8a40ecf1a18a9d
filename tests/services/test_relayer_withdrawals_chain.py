"""Withdrawals from a deposit wallet on the dev chain (issue 16: money out needs no POL): the
sandbox relayer runs the wallet on anvil, so the product's withdrawal job sends its WALLET
batch and the wallet contract itself transfers pUSD or USDC.e to the destination."""

from __future__ import annotations

import secrets
from decimal import Decimal

from web3 import Web3

from models.wallet import Withdrawal
from services.wallets import withdrawals
from tests.chain_venue import ChainVenue
from tests.services.test_relayer_claims_chain import _BALANCE_OF, _no_pol, _onboarded
from tests.wallet_fixtures import USDC


def _held(cv: ChainVenue, token: str, address: str) -> int:
    contract = cv.chain.contracts.web3().eth.contract(address=token, abi=_BALANCE_OF)
    return int(contract.functions.balanceOf(address).call())


def test_a_deposit_wallet_withdraws_pusd_and_usdce_on_chain_without_pol(accounts_venue,
                                                                        user) -> None:
    cv, dev = accounts_venue, accounts_venue.chain.contracts
    wallet = _onboarded(user)
    maker = wallet.funder_address
    dev.mint(dev.pusd, maker, 50 * USDC)
    dev.mint(dev.usdce, maker, 5 * USDC)
    dest = Web3.to_checksum_address("0x" + secrets.token_hex(20))

    pusd = withdrawals.request(user, dest, Decimal("30"), "usdc")
    assert withdrawals.send(pusd.id) == "confirmed"
    assert withdrawals.send(pusd.id) == "confirmed"  # again: nothing leaves twice
    assert (_held(cv, dev.pusd, dest), _held(cv, dev.pusd, maker)) == (30 * USDC, 20 * USDC)
    assert Withdrawal.get_by_id(pusd.id).relayer_transaction_id

    usdce = withdrawals.request(user, dest, Decimal("5"), "usdc_e")
    assert withdrawals.send(usdce.id) == "confirmed"
    assert (_held(cv, dev.usdce, dest), _held(cv, dev.usdce, maker)) == (5 * USDC, 0)
    _no_pol(cv, wallet)  # neither the wallet nor its owner ever held POL
