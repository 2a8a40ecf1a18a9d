"""Custodial trading wallets and what leaves them: signed transactions, withdrawals, claims.

Private keys and venue credentials are stored sealed (AES-GCM, see services/wallets/wallets.py);
``key_id`` names the encryption key so secrets can be re-sealed when the key rotates.
Every transaction a wallet sends is first written to ``wallet_transactions`` (raw bytes and
hash) and only then broadcast, so a crash never leads to signing the same transfer twice.
"""

from __future__ import annotations

import json
from decimal import Decimal

import peewee

from models.base import BaseModel, DecimalTextField, UTCDateTimeField, utcnow
from models.user import User

SIGNATURE_TYPE_EOA = 0
SIGNATURE_TYPE_POLY_PROXY = 1
SIGNATURE_TYPE_GNOSIS_SAFE = 2
SIGNATURE_TYPE_DEPOSIT_WALLET = 3

# How the account came to be (issue 16): a deposit wallet of a server-generated owner key
# (the default), an existing polymarket.com account the user connected, or a plain EOA
# (type 0), which trades live only when the operator allowlists it.
KIND_DEPOSIT_WALLET, KIND_CONNECTED, KIND_EOA = "deposit_wallet", "connected", "eoa"

# Onboarding (services/wallets/onboarding.py): its status, and its steps in order.
ONBOARDING_PENDING, ONBOARDING_RUNNING, ONBOARDING_FAILED, ONBOARDING_READY = (
    "pending", "running", "failed", "ready")
STEP_DEPLOY, STEP_APPROVALS, STEP_CREDENTIALS, STEP_BALANCE_UPDATE, STEP_DONE = (
    "deploy", "approvals", "credentials", "balance_update", "done")
ONBOARDING_STEPS = (STEP_DEPLOY, STEP_APPROVALS, STEP_CREDENTIALS, STEP_BALANCE_UPDATE)

# A transaction's life: signed (persisted, maybe sent) -> broadcast -> confirmed | failed;
# dropped means the node refused it, so it can never be mined and its nonce was released;
# replaced means another transaction was mined with its nonce, so it never can be either.
TX_SIGNED, TX_BROADCAST, TX_CONFIRMED, TX_FAILED, TX_DROPPED, TX_REPLACED = (
    "signed", "broadcast", "confirmed", "failed", "dropped", "replaced")
TX_IN_FLIGHT = (TX_SIGNED, TX_BROADCAST)
# At most one in-flight transaction per (wallet, nonce): the database refuses a twin
# (migration m0060; a partial unique index, which peewee's Meta cannot express).
IN_FLIGHT_NONCE_INDEX = "wallet_transactions_in_flight_nonce"

# Withdrawals, claims and wraps: queued (nothing signed yet), then the states of their
# transaction; ambiguous: a relayer batch that may have run or may still run (its answer
# was lost), never signed afresh until that is known (services/wallets/wallet_batches.py).
QUEUED, SIGNED, BROADCAST, CONFIRMED, FAILED, AMBIGUOUS = (
    "queued", "signed", "broadcast", "confirmed", "failed", "ambiguous")
OPEN_STATES = (QUEUED, SIGNED, BROADCAST, AMBIGUOUS)


class TradingWallet(BaseModel):
    """A user's trading account: ``address`` is the signing key's (generated here, or the
    connected account's signer or session key), never leaving sealed storage;
    ``funder_address`` the maker wallet when it is not the key's own address."""

    user = peewee.ForeignKeyField(User, backref="trading_wallets", unique=True,
                                  on_delete="CASCADE")
    address = peewee.CharField(max_length=42, unique=True)
    private_key_sealed = peewee.TextField()
    key_id = peewee.CharField(max_length=64, index=True)
    signature_type = peewee.IntegerField(default=SIGNATURE_TYPE_EOA)
    funder_address = peewee.CharField(max_length=42, null=True)
    venue_api_key_sealed = peewee.TextField(null=True)
    venue_api_secret_sealed = peewee.TextField(null=True)
    venue_api_passphrase_sealed = peewee.TextField(null=True)
    account_kind = peewee.CharField(max_length=16, default=KIND_EOA)
    # The key is a session key the deposit wallet's owner authorized (not the owner).
    session_signer = peewee.BooleanField(default=False)
    # A connected account's own Relayer API key (sealed) and the address it belongs to.
    relayer_api_key_sealed = peewee.TextField(null=True)
    relayer_api_key_address = peewee.CharField(max_length=42, null=True)
    # The next nonce this service will use (kept in step with the chain's pending nonce).
    next_nonce = peewee.BigIntegerField(default=0)
    # A lease on nonce allocation: one signer per wallet at a time, across processes.
    nonce_lease_owner = peewee.CharField(max_length=64, null=True)
    nonce_lease_until = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "trading_wallets"

    def __repr__(self) -> str:
        # the sealed fields are harmless without the key, but keep them out of logs anyway
        return f"TradingWallet(address={self.address!r})"


class AccountOnboarding(BaseModel):
    """Where a wallet's onboarding stands (services/wallets/onboarding.py)."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="onboarding", unique=True,
                                    on_delete="CASCADE")
    status = peewee.CharField(max_length=16, default=ONBOARDING_PENDING)
    step = peewee.CharField(max_length=24, default=STEP_DEPLOY)
    # The relayer transaction that granted the approvals (shown by the status); what is
    # sent is in ``wallet_deployments`` and ``wallet_approvals``, the lifecycle's rows.
    approvals_transaction_id = peewee.CharField(max_length=128, null=True)
    error = peewee.TextField(null=True)
    # One runner at a time, across processes.
    lease_owner = peewee.CharField(max_length=64, null=True)
    lease_until = UTCDateTimeField(null=True)
    attempts = peewee.IntegerField(default=0)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "account_onboarding"


class WalletOperation(BaseModel):
    """A row of the one wallet lifecycle (services/wallets/wallet_lifecycle.py): its state
    and why it is there. No table of its own: the rows' models inherit these columns."""

    status = peewee.CharField(max_length=16, default=QUEUED, index=True)
    error = peewee.TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)


class CollateralWrap(WalletOperation):
    """USDC.e wrapped into pUSD from a deposit wallet, one relayer batch through the wallet
    lifecycle (services/wallets/wallet_batches.py): its batch columns (unprefixed)."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="wraps", on_delete="CASCADE")
    amount = DecimalTextField()
    submitted_at = UTCDateTimeField(null=True)
    nonce = peewee.BigIntegerField(null=True)
    deadline = peewee.BigIntegerField(null=True)
    payload = peewee.TextField(null=True)
    transaction_id = peewee.CharField(max_length=128, null=True)
    transaction_hash = peewee.CharField(max_length=66, null=True)

    class Meta:
        table_name = "collateral_wraps"


class WalletTransaction(BaseModel):
    """One signed transaction from a trading wallet, persisted before it is broadcast."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="transactions", on_delete="CASCADE")
    kind = peewee.CharField(max_length=16)  # withdrawal, claim, approval
    chain_id = peewee.IntegerField()
    nonce = peewee.BigIntegerField(null=True)  # None once dropped: the nonce is free again
    tx_hash = peewee.CharField(max_length=66, unique=True)
    raw_tx = peewee.TextField()
    to_address = peewee.CharField(max_length=42)
    max_cost_wei = peewee.TextField(default="0")  # gas at the fee cap plus value, as text
    status = peewee.CharField(max_length=16, default=TX_SIGNED, index=True)
    block_number = peewee.BigIntegerField(null=True)
    gas_used = peewee.BigIntegerField(null=True)
    gas_fee = DecimalTextField(null=True)  # MATIC actually paid
    error = peewee.TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    broadcast_at = UTCDateTimeField(null=True)
    settled_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "wallet_transactions"
        indexes = ((("wallet", "status"), False),)


class RelayerRecord(WalletOperation):
    """A row of the one wallet lifecycle sent as one relayer transaction
    (services/wallets/wallet_batches.py): its body stored before it leaves (a signed batch's
    nonce and deadline too), the relayer's id as soon as it answers, the chain hash once it
    ran. No table of its own: the rows' models inherit these columns."""

    relayer_nonce = peewee.BigIntegerField(null=True)
    relayer_deadline = peewee.BigIntegerField(null=True)
    relayer_payload = peewee.TextField(null=True)
    relayer_transaction_id = peewee.CharField(max_length=128, null=True)
    relayer_transaction_hash = peewee.CharField(max_length=66, null=True)


class WalletDeployment(RelayerRecord):
    """A deposit wallet's deployment (``WALLET-CREATE``, an unsigned relayer body) through
    the one wallet lifecycle (services/wallets/wallet_lifecycle.py), one row per attempt."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="deployments", on_delete="CASCADE")

    class Meta:
        table_name = "wallet_deployments"


class WalletApproval(RelayerRecord):
    """Approvals the venue needs, granted through the one wallet lifecycle
    (services/wallets/wallet_lifecycle.py): a relayer wallet's missing approvals as one
    batch (the relayer columns), or one of a plain EOA's as its own on-chain transaction."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="approvals", on_delete="CASCADE")
    calls = peewee.TextField()  # JSON [{target, data}]: what a fresh signature runs
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL",
                                         backref="approvals")

    class Meta:
        table_name = "wallet_approvals"


class Withdrawal(RelayerRecord):
    """A user's request to send pUSD, USDC.e or MATIC out of the trading wallet (a deposit
    wallet's, proxy's or Safe's as one relayer transaction: the relayer columns)."""

    user = peewee.ForeignKeyField(User, backref="withdrawals", on_delete="CASCADE")
    wallet = peewee.ForeignKeyField(TradingWallet, backref="withdrawals", on_delete="CASCADE")
    token = peewee.CharField(max_length=8)  # usdc (pUSD), usdc_e, matic
    token_address = peewee.CharField(max_length=42, null=True)  # None for MATIC
    to_address = peewee.CharField(max_length=42)
    amount = DecimalTextField()
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL",
                                         backref="withdrawals")

    class Meta:
        table_name = "withdrawals"


class Claim(RelayerRecord):
    """Redeeming one resolved condition's outcome tokens into collateral (through the
    relayer from a deposit wallet, proxy or Safe: the relayer columns)."""

    user = peewee.ForeignKeyField(User, backref="claims", on_delete="CASCADE")
    wallet = peewee.ForeignKeyField(TradingWallet, backref="claims", on_delete="CASCADE")
    condition_id = peewee.CharField(max_length=66, index=True)
    neg_risk = peewee.BooleanField(default=False)
    market_slug = peewee.CharField(max_length=255, default="")
    token_ids = peewee.TextField()  # JSON list of token id strings, by outcome index
    amounts = peewee.TextField()  # JSON list of base-unit balances (strings), by outcome index
    collateral = peewee.CharField(max_length=42)  # the token the payout arrives in
    expected_payout = DecimalTextField()
    paid = DecimalTextField(null=True)  # what the redemption paid, from its receipt
    approval_transaction = peewee.ForeignKeyField(
        WalletTransaction, null=True, on_delete="SET NULL", backref="approved_claims")
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL",
                                         backref="claims")

    class Meta:
        table_name = "claims"

    @property
    def token_id_list(self) -> list[str]:
        """The condition's outcome token ids, by outcome index."""
        return [str(t) for t in json.loads(self.token_ids)]

    @property
    def amount_list(self) -> list[int]:
        """The wallet's balance of each outcome token when the claim was made (base units)."""
        return [int(a) for a in json.loads(self.amounts)]

    @property
    def payout(self) -> Decimal:
        """The collateral the claim paid once its receipt was read, else what it should
        pay."""
        return Decimal(self.paid if self.paid is not None else self.expected_payout)


class DepositWatch(BaseModel):
    """What the deposit watcher last saw at a wallet's maker on chain
    (services/wallets/deposits.py):
    a pUSD balance that differs at the next look is a deposit the CLOB must re-read."""

    wallet = peewee.ForeignKeyField(TradingWallet, backref="deposit_watch", unique=True,
                                    on_delete="CASCADE")
    pusd_seen = DecimalTextField(null=True)
    usdce_seen = DecimalTextField(null=True)
    changed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "deposit_watches"


class ReplacedWallet(BaseModel):
    """A generated wallet a connected account replaced while it was unused
    (services/wallets/generated_wallets.py), kept whole: should funds reach its address
    afterwards, its sealed key (still bound to its place in ``trading_wallets``) recovers
    them."""

    user = peewee.ForeignKeyField(User, backref="replaced_wallets", on_delete="CASCADE")
    address = peewee.CharField(max_length=42, unique=True)
    funder_address = peewee.CharField(max_length=42, null=True)
    private_key_sealed = peewee.TextField()
    key_id = peewee.CharField(max_length=64, index=True)
    created_at = UTCDateTimeField()
    replaced_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "replaced_wallets"
