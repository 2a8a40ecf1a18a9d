"""Trading-wallet custody: sealed keys, rotation, crypto failures, balances read on chain."""

from __future__ import annotations

import hashlib
import secrets
import threading
from decimal import Decimal

import pytest

from chain.keys import address_for_key, key_id_of, passphrase_key
from models.wallet import AccountOnboarding, TradingWallet
from services.platform import chain_access, errors, jobs
from services.platform.chain_settings import key_id_for
from services.wallets import onboarding_queue, trading_accounts, wallets
from tests.chain.test_keys import legacy_token
from tests.conftest import ONE_MATIC, app_settings
from tests.wallet_fixtures import USDC, chain_settings, legacy_eoa_wallet, use_chain


def test_one_wallet_per_user_with_key_sealed(wallet_chain, user) -> None:
    wallet = wallets.get_or_create(user)
    assert wallets.get_or_create(user.id).id == wallet.id
    assert TradingWallet.select().where(TradingWallet.user == user.id).count() == 1
    key = wallets.signer(wallet)
    assert address_for_key(key) == wallet.address
    stored = TradingWallet.get_by_id(wallet.id)
    # at rest: a sealed token naming its key, never the key itself
    assert key.hex() not in stored.private_key_sealed
    assert key_id_of(stored.private_key_sealed) == stored.key_id
    assert stored.key_id == chain_access.current().sealing.current_id
    # a deposit wallet: the key owns it, the deposit wallet (the maker) holds the funds
    assert stored.signature_type == 3 and stored.account_kind == "deposit_wallet"
    assert stored.funder_address == trading_accounts.deposit_wallet_of(wallet.address)
    assert wallets.maker(stored) == stored.funder_address
    assert key.hex() not in repr(stored)


def test_concurrent_first_requests_make_one_wallet_and_queue_one_onboarding(app,
                                                                            user) -> None:
    database = app.extensions["database"]
    made: list[TradingWallet] = []
    start = threading.Barrier(4)

    def first_request() -> None:
        with database.connection_context():
            start.wait()
            made.append(wallets.get_or_create(user.id))

    threads = [threading.Thread(target=first_request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({w.id for w in made}) == 1
    assert TradingWallet.select().where(TradingWallet.user == user.id).count() == 1
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == made[0].id)
    queue = jobs.queue("default")
    queued = [job for job in (queue.fetch_job(i) for i in queue.get_job_ids())
              if job is not None and job.func_name == onboarding_queue.JOB_NAME
              and list(job.args) == [str(row.id)]]
    assert len(queued) == 1 and row.status == "pending"
    assert queued[0].id == jobs.qualified_job_id(
        jobs.logical_job_id(onboarding_queue.JOB_NAME, row.id))


def test_wrong_key_or_tampering_is_a_crypto_error(app, wallet_chain, user) -> None:
    wallet = wallets.get_or_create(user)
    use_chain(chain_settings(app, wallet_chain,
                                          WALLET_ENCRYPTION_KEY=secrets.token_hex(32)))
    with pytest.raises(errors.CryptoError) as caught:
        wallets.signer(wallet)
    assert caught.value.status == 500 and caught.value.code == "crypto_error"
    use_chain(chain_settings(app, wallet_chain))
    token = wallet.private_key_sealed
    wallet.private_key_sealed = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(errors.CryptoError):
        wallets.signer(wallet)


def test_key_swapped_between_wallets_is_refused(wallet_chain, user) -> None:
    from models.user import User

    other = wallets.get_or_create(User.create(email=f"{secrets.token_hex(4)}@example.com"))
    wallet = wallets.get_or_create(user)
    wallet.private_key_sealed = other.private_key_sealed
    # bound to its row: the seal itself refuses to open elsewhere
    with pytest.raises(errors.CryptoError):
        wallets.signer(wallet)
    # an old-format seal binds no row; the address check still refuses to sign with it
    sealing = chain_access.current().sealing
    wallet.private_key_sealed = legacy_token(wallets.signer(other), sealing.current,
                                             sealing.current_id)
    with pytest.raises(errors.CryptoError, match="does not match"):
        wallets.signer(wallet)


def test_rotation_keeps_old_secrets_open_and_reseals(app, wallet_chain, user) -> None:
    wallet = wallets.get_or_create(user)
    wallets.store_venue_credentials(wallet, "api-key", "api-secret", "pass-phrase")
    key_before = wallets.signer(wallet)
    old_key = app_settings(app).wallet_encryption_key
    new_key = secrets.token_hex(32)
    use_chain(chain_settings(app, wallet_chain, WALLET_ENCRYPTION_KEY=new_key,
                                          WALLET_ENCRYPTION_KEY_PREVIOUS=old_key))
    # the retired key still opens what it sealed
    assert wallets.signer(TradingWallet.get_by_id(wallet.id)) == key_before
    assert wallets.reseal_all() == 1
    resealed = TradingWallet.get_by_id(wallet.id)
    assert resealed.key_id == chain_access.current().sealing.current_id != wallet.key_id
    # and after re-sealing, the new key alone is enough
    use_chain(chain_settings(app, wallet_chain, WALLET_ENCRYPTION_KEY=new_key))
    assert wallets.signer(resealed) == key_before
    creds = wallets.venue_credentials(resealed)
    assert (creds.api_key, creds.secret, creds.passphrase) == (
        "api-key", "api-secret", "pass-phrase")
    assert "api-secret" not in repr(creds)


def test_passphrase_encryption_key_is_stretched(app, wallet_chain, user) -> None:
    use_chain(chain_settings(app, wallet_chain,
                                          WALLET_ENCRYPTION_KEY="correct horse battery staple"))
    wallet = wallets.get_or_create(user)
    assert address_for_key(wallets.signer(wallet)) == wallet.address
    assert len(chain_access.current().sealing.current) == 32
    # scrypt, not one SHA-256: the key is the KDF's output for the passphrase
    assert chain_access.current().sealing.current == passphrase_key(
        "correct horse battery staple")
    use_chain(chain_settings(app, wallet_chain, WALLET_ENCRYPTION_KEY="correct horse battery "
                             "staple", WALLET_ENCRYPTION_SALT="deployment-7"))
    assert chain_access.current().sealing.current == passphrase_key(
        "correct horse battery staple", "deployment-7")


def test_secret_moved_to_another_row_does_not_open(wallet_chain, user) -> None:
    from models.user import User

    other = wallets.get_or_create(User.create(email=f"{secrets.token_hex(4)}@example.com"))
    wallets.store_venue_credentials(other, "their-key", "their-secret", "their-pass")
    wallet = wallets.get_or_create(user)
    wallets.store_venue_credentials(wallet, "my-key", "my-secret", "my-pass")
    # someone with write access to the table copies another user's sealed credentials over
    for name in wallets.SECRET_FIELDS[1:]:
        setattr(wallet, name, getattr(other, name))
    with pytest.raises(errors.CryptoError):
        wallets.venue_credentials(wallet)
    # and a column's token moved to another column of the same row does not open either
    mine = wallets.get_or_create(user)
    mine.venue_api_secret_sealed = mine.venue_api_key_sealed
    with pytest.raises(errors.CryptoError):
        wallets.venue_credentials(mine)


def test_passphrase_secrets_of_the_old_format_open_and_reseal(app, wallet_chain, user) -> None:
    passphrase = "correct horse battery staple"
    use_chain(chain_settings(app, wallet_chain, WALLET_ENCRYPTION_KEY=passphrase))
    wallet = wallets.get_or_create(user)
    key = wallets.signer(wallet)
    # as the previous release stored it: v1, under the SHA-256-stretched passphrase
    old_key = hashlib.sha256(b"copytrade/wallet-encryption-key/" + passphrase.encode()).digest()
    old_id = key_id_for(old_key)
    TradingWallet.update(private_key_sealed=legacy_token(key, old_key, old_id),
                         key_id=old_id).where(TradingWallet.id == wallet.id).execute()
    stored = TradingWallet.get_by_id(wallet.id)
    assert stored.private_key_sealed.startswith(f"v1:{old_id}:")
    assert wallets.signer(stored) == key
    assert wallets.reseal_all() == 1
    resealed = TradingWallet.get_by_id(wallet.id)
    assert resealed.private_key_sealed.startswith("v2:")
    assert resealed.key_id == chain_access.current().sealing.current_id != old_id
    assert wallets.signer(resealed) == key
    assert wallets.reseal_all() == 0


def test_reseal_upgrades_old_format_under_the_current_key(wallet_chain, user) -> None:
    wallet = wallets.get_or_create(user)
    key = wallets.signer(wallet)
    sealing = chain_access.current().sealing
    TradingWallet.update(private_key_sealed=legacy_token(key, sealing.current,
                                                         sealing.current_id)).where(
        TradingWallet.id == wallet.id).execute()
    assert wallets.signer(TradingWallet.get_by_id(wallet.id)) == key
    assert wallets.reseal_all() == 1
    resealed = TradingWallet.get_by_id(wallet.id)
    assert resealed.private_key_sealed.startswith(f"v2:{sealing.current_id}:")
    assert wallets.signer(resealed) == key


def test_signature_type_and_funder(wallet_chain, user) -> None:
    wallet = wallets.get_or_create(user)
    funder = "0x" + "ab" * 20
    wallets.set_signature_type(wallet, 3, funder)
    stored = TradingWallet.get_by_id(wallet.id)
    assert (stored.signature_type, stored.funder_address) == (3, funder)
    with pytest.raises(errors.ValidationFailed):
        wallets.set_signature_type(wallet, 2)


def test_only_a_plain_eoa_is_asked_for_matic(wallet_chain, fund, user) -> None:
    """MATIC pays a plain EOA's own gas; at a relayer account it would be stranded."""
    wallet = legacy_eoa_wallet(user)
    deposit = wallets.deposit_address(user)
    assert deposit["address"] == wallet.address
    tokens = {t["token"]: t for t in deposit["tokens"]}
    assert set(tokens) == {"usdc", "usdc_e", "matic"} and tokens["matic"]["decimals"] == 18
    assert "MATIC pays the gas" in deposit["note"]
    fund(wallet.address, matic_wei=ONE_MATIC // 2)
    shown = wallets.balances(user)
    assert shown["matic"] == shown["gas_matic"] == Decimal("0.5")  # one address, its own gas


def test_balances_after_funding_the_deposit_address(wallet_chain, fund, user) -> None:
    deposit = wallets.deposit_address(user)
    assert deposit["chain_id"] == wallet_chain.chain_id
    tokens = {t["token"]: t for t in deposit["tokens"]}
    assert tokens["usdc"]["contract_address"] == wallet_chain.contracts.pusd
    assert tokens["usdc_e"]["contract_address"] == wallet_chain.contracts.usdce
    assert tokens["usdc"]["decimals"] == 6 and set(tokens) == {"usdc", "usdc_e"}
    empty = wallets.balances(user)
    assert (empty["usdc"], empty["usdc_e"], empty["matic"]) == (0, 0, 0)

    wallet = wallets.for_user(user)
    assert deposit["address"] == wallets.maker(wallet) != wallet.address
    fund(deposit["address"], pusd=12_500_000, usdce=3 * USDC + 1, matic_wei=5 * ONE_MATIC)
    fund(wallet.address, matic_wei=ONE_MATIC // 4)  # the owner key's: not what it holds
    balances = wallets.balances(user)
    assert balances["usdc"] == Decimal("12.5")
    assert balances["usdc_e"] == Decimal("3.000001")
    assert balances["matic"] == Decimal(5)  # what sits at the deposit address
    assert balances["gas_matic"] is None  # the relayer pays its gas: the key's MATIC is moot
    assert balances["total_usdc"] == Decimal("15.500001")
    assert all(isinstance(balances[k], Decimal) for k in ("usdc", "usdc_e", "matic"))


def test_no_chain_configured_is_feature_not_enabled(app, wallet_chain, user) -> None:
    use_chain(chain_settings(app, wallet_chain, POLYGON_RPC_URL=None))
    with pytest.raises(errors.FeatureNotEnabled):
        wallets.balances(user)


def test_crypto_failures_map_to_crypto_error_and_fail_the_job(app, wallet_chain, fund,
                                                              user) -> None:
    from chain.errors import CryptoFailure
    from services.wallets import withdrawals

    mapped = errors.from_external(CryptoFailure("tampered"))
    assert (mapped.status, mapped.code) == (500, "crypto_error")
    assert "tampered" not in mapped.message  # no internals in the answer

    wallet = legacy_eoa_wallet(user)  # signs on chain itself
    fund(wallet.address, pusd=2 * USDC)
    withdrawal = withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    # the worker runs with a different key: it refuses to sign, and says so on the record
    use_chain(chain_settings(app, wallet_chain,
                                          WALLET_ENCRYPTION_KEY=secrets.token_hex(32)))
    assert withdrawals.send(withdrawal.id) == "failed"
    assert "decrypted" in withdrawals.get(user, withdrawal.id).error
