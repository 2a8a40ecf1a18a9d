"""Connecting an existing account after the first sign-in made a wallet (issue 44): the
generated wallet gives way while it never moved anything (kept whole, its key still
opening, for funds that arrive late), never once it holds funds or placed an order; a setup
already queued for it stops quietly."""

from __future__ import annotations

import secrets
from decimal import Decimal

import pytest

from models.trading import Order
from models.wallet import AccountOnboarding, ReplacedWallet, TradingWallet
from services.platform import chain_access, errors
from services.wallets import account_setup, onboarding, trading_accounts, wallets
from tests.conftest import app_settings
from tests.services.wallets.test_trading_accounts import accounts  # noqa: F401 (fixture)
from tests.wallet_fixtures import USDC, chain_settings, use_chain
from venue.accounts import beacon_deposit_wallet_address
from venue.signing import OrderKey


def _existing_account() -> tuple[str, str]:
    """A polymarket.com account to connect: (its deposit wallet, its signer key)."""
    key = OrderKey("0x" + secrets.token_hex(32))
    return beacon_deposit_wallet_address(key.address, trading_accounts.contracts()), key.private_key


def test_connect_replaces_the_unused_wallet_of_a_first_sign_in(accounts, user) -> None:  # noqa: F811
    generated = account_setup.start(user)
    assert generated is not None and generated.account_kind == "deposit_wallet"
    [setup] = AccountOnboarding.select().where(AccountOnboarding.wallet == generated.id)
    address, key = _existing_account()
    connected = trading_accounts.connect(user, wallet_address=address, private_key=key)
    assert (connected.account_kind, wallets.maker(connected)) == ("connected", address)
    assert wallets.for_user(user).id == connected.id
    # Kept whole: its key still opens where it was sealed, and signs for its address.
    kept = ReplacedWallet.get_by_id(generated.id)
    assert (kept.user_id, kept.address, kept.funder_address) == (
        user.id,
        generated.address,
        generated.funder_address,
    )
    opened = wallets.unseal(kept.private_key_sealed, wallets.place(kept.id, "private_key_sealed"))
    assert OrderKey("0x" + opened.hex()).address == generated.address
    # Its setup is gone with it; the job already queued for it stops without a trace.
    assert not AccountOnboarding.select().where(AccountOnboarding.id == setup.id).exists()
    assert onboarding.run(setup.id) == onboarding.REPLACED
    # The connected account is no generated wallet: it is never replaced in turn.
    other, other_key = _existing_account()
    with pytest.raises(errors.Conflict, match="is a connected account"):
        trading_accounts.connect(user, wallet_address=other, private_key=other_key)


def test_a_generated_wallet_holding_pusd_is_never_replaced(accounts, user) -> None:  # noqa: F811
    generated = account_setup.start(user)
    accounts.contracts.mint(accounts.contracts.pusd, wallets.maker(generated), USDC // 100)
    address, key = _existing_account()
    with pytest.raises(
        errors.Conflict, match="holds pUSD; connecting another one would strand its funds"
    ):
        trading_accounts.connect(user, wallet_address=address, private_key=key)
    assert wallets.for_user(user).id == generated.id
    assert not ReplacedWallet.select().exists()


def test_a_generated_wallet_with_matic_at_its_owner_key_is_never_replaced(accounts, user) -> None:  # noqa: F811
    generated = account_setup.start(user)
    accounts.contracts.fund_native(generated.address, 1)  # one wei, sent there by mistake
    address, key = _existing_account()
    with pytest.raises(errors.Conflict, match="holds MATIC at its owner key"):
        trading_accounts.connect(user, wallet_address=address, private_key=key)
    assert wallets.for_user(user).id == generated.id


def test_a_generated_wallet_that_placed_an_order_is_never_replaced(accounts, user) -> None:  # noqa: F811
    generated = account_setup.start(user)
    Order.create(
        user=user.id,
        maker_address=wallets.maker(generated),
        token_id="1",
        side="buy",
        order_type="market",
        time_in_force="FOK",
        size=Decimal(1),
        price=Decimal("0.5"),
        order_hash="0x" + secrets.token_hex(32),
        signed_body="{}",
        status="failed",
    )
    address, key = _existing_account()
    with pytest.raises(errors.Conflict, match="has placed orders"):
        trading_accounts.connect(user, wallet_address=address, private_key=key)
    assert TradingWallet.get_by_id(generated.id).user_id == user.id


def test_a_replaced_wallets_key_is_resealed_at_rotation(app, accounts, user) -> None:  # noqa: F811
    generated = account_setup.start(user)
    address, key = _existing_account()
    trading_accounts.connect(user, wallet_address=address, private_key=key)
    old_key, new_key = app_settings(app).wallet_encryption_key, secrets.token_hex(32)
    use_chain(
        chain_settings(
            app, accounts, WALLET_ENCRYPTION_KEY=new_key, WALLET_ENCRYPTION_KEY_PREVIOUS=old_key
        )
    )
    assert wallets.reseal_all() == 2  # the connected account's secrets and the kept key
    kept = ReplacedWallet.get_by_id(generated.id)
    assert kept.key_id == chain_access.current().sealing.current_id
    # Sealed under the new key alone, it still opens where it was sealed.
    use_chain(chain_settings(app, accounts, WALLET_ENCRYPTION_KEY=new_key))
    opened = wallets.unseal(kept.private_key_sealed, wallets.place(kept.id, "private_key_sealed"))
    assert OrderKey("0x" + opened.hex()).address == generated.address
    assert wallets.reseal_all() == 0
