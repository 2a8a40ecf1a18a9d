"""Withdrawals from the trading wallet: validate, record durably, send once by a job.

``withdraw`` is the one action behind REST and MCP: it checks the request against the
chain (balance, decimals, gas), writes a Withdrawal, enqueues job ``withdrawals.send`` and
waits a bounded time for the broadcast. ``send`` is the job: the one wallet lifecycle
(services/wallets/wallet_lifecycle.py) over the wallet's transport, on chain or through the
relayer. Running it again resends the stored bytes; it never signs twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from web3 import Web3

from chain.abi import ERC20, load_abi
from chain.tokens import (
    NATIVE_DECIMALS,
    from_base_units,
    native_balance_wei,
    to_base_units,
    token_balance_base,
    token_decimals,
)
from chain.transactions import (
    NATIVE_TRANSFER_GAS,
    Fees,
    SignedTx,
    build_erc20_transfer,
    build_transaction,
    estimate_gas,
    suggest_fees,
)
from models.user import User
from models.wallet import (
    AMBIGUOUS,
    BROADCAST,
    CONFIRMED,
    FAILED,
    OPEN_STATES,
    QUEUED,
    TX_IN_FLIGHT,
    TradingWallet,
    WalletTransaction,
    Withdrawal,
)
from schemas.fields import format_decimal
from services.platform import chain_access, errors, numbers
from services.platform.addresses import checked_address
from services.platform.principal import user_id_of
from services.wallets import (
    broadcast_wait,
    chain_transport,
    money_requests,
    trading_accounts,
    venue_accounts,
    wallet_batches,
    wallet_lifecycle,
    wallet_transactions,
    wallets,
)
from venue.accounts.batch import Call
from venue.accounts.wallet_calls import native_transfer_call, transfer_call
from venue.errors import VenueError

log = logging.getLogger(__name__)

JOB_NAME = "withdrawals.send"
TOKENS: tuple[str, ...] = ("usdc", "usdc_e", "matic")
TOKEN_SYMBOLS = {"usdc": "pUSD", "usdc_e": "USDC.e", "matic": "MATIC"}
ZERO_ADDRESS = "0x" + "0" * 40
RELAYER_TOKEN_DECIMALS = 6  # pUSD and USDC.e


@dataclass(frozen=True)
class WithdrawResult:
    """What the caller learns: sent (with hash) or queued (follow it at status_url)."""

    success: bool
    tx_hash: str | None
    message: str
    withdrawal_id: UUID
    status: str
    status_url: str

    def to_dict(self) -> dict[str, Any]:
        """The response body."""
        return {"success": self.success, "tx_hash": self.tx_hash, "message": self.message,
                "withdrawal_id": self.withdrawal_id, "status": self.status,
                "status_url": self.status_url}


# Where a user finds the deposit address, on either surface (errors reach both).
DEPOSIT_ADDRESS_WHERE = "on the dashboard's Wallet page, or GET /api/wallets/deposit-address"


def status_url(withdrawal_id: UUID | str) -> str:
    """Where to follow a withdrawal over REST."""
    return f"/api/trading-wallet/withdrawals/{withdrawal_id}"


def validate_address(to_address: Any) -> str:
    """The checksummed destination; ValidationFailed for anything else."""
    address = checked_address(to_address, "to_address")
    if address.lower() == ZERO_ADDRESS:
        raise errors.ValidationFailed(fields={"to_address": [
            "Refusing to send to the zero address."]})
    return address


def validate_token(token: Any) -> str:
    """The token's API name; ValidationFailed if unknown."""
    if token not in TOKENS:
        raise errors.ValidationFailed(fields={"token": [f"Must be one of: {', '.join(TOKENS)}."]})
    return str(token)


def _fmt(base: int, decimals: int) -> str:
    """Base units as a plain decimal string for messages."""
    return format_decimal(from_base_units(base, decimals))


def _decimals(w3: Web3, token: str) -> int:
    if token == "matic":
        return NATIVE_DECIMALS
    return token_decimals(w3, wallets.token_addresses()[token])


def validate_amount(amount: Any, decimals: int) -> int:
    """The amount in base units; ValidationFailed unless positive and within ``decimals``."""
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise errors.ValidationFailed(fields={"amount": ["Must be a decimal string."]})
    if amount <= 0:
        raise errors.ValidationFailed(fields={"amount": ["Must be greater than 0."]})
    try:
        return to_base_units(amount, decimals)
    except ValueError:
        raise errors.ValidationFailed(fields={"amount": [
            f"At most {decimals} decimal places for this token."]}) from None


def _reserved_token_base(wallet: TradingWallet, token: str, decimals: int,
                         exclude: UUID | None) -> int:
    """Amounts of this wallet's other open withdrawals of ``token``, not yet mined."""
    w3 = chain_access.web3()
    total = 0
    query = Withdrawal.select().where((Withdrawal.wallet == wallet.id)
                                      & (Withdrawal.token == token)
                                      & Withdrawal.status.in_(OPEN_STATES))
    for other in query:
        if exclude is not None and other.id == exclude:
            continue
        if other.transaction_id is not None:
            if token == "matic":
                continue  # signed: its value is in wallet_transactions.reserved_wei already
            # mined meanwhile (the chain balance already shows it: not counted twice), or
            # it can never be mined: it reserves nothing
            tx = wallet_transactions.refresh(other.transaction, w3)
            if tx.status not in TX_IN_FLIGHT:
                chain_transport.sync(Withdrawal, other.id, tx, "withdrawal")
                continue
        total += to_base_units(other.amount, decimals)
    return total


@dataclass(frozen=True)
class _Plan:
    """A checked transfer: what to sign, with which gas and fees."""

    token: str
    to: str
    amount_base: int
    gas: int
    fees: Fees


def _plan(w3: Web3, wallet: TradingWallet, token: str, to: str, amount_base: int,
          exclude: UUID | None) -> _Plan:
    """Check balance and gas for a transfer (InsufficientBalance, 402) and fix its gas."""
    decimals = _decimals(w3, token)
    fees = suggest_fees(w3)
    reserved_wei = wallet_transactions.reserved_wei(wallet, w3)  # first: see its docstring
    native_free = native_balance_wei(w3, wallet.address) - reserved_wei
    if token == "matic":
        has_code = bool(w3.eth.get_code(Web3.to_checksum_address(to)))
        gas = (estimate_gas(w3, sender=wallet.address, to=to, value=amount_base)
               if has_code else NATIVE_TRANSFER_GAS)
        gas_cost = gas * fees.max_fee_per_gas
        available = native_free - _reserved_token_base(wallet, token, decimals, exclude)
        if available < amount_base:
            raise errors.InsufficientBalance(
                f"Insufficient MATIC balance: {_fmt(max(available, 0), decimals)} "
                f"available, {_fmt(amount_base, decimals)} requested.")
        if available < amount_base + gas_cost:
            raise errors.InsufficientBalance(
                "Not enough MATIC left to pay gas for this transfer: sending "
                f"{_fmt(amount_base, decimals)} MATIC needs about "
                f"{_fmt(gas_cost, decimals)} MATIC more for gas. Withdraw less.")
        return _Plan(token, to, amount_base, gas, fees)
    token_address = wallets.token_addresses()[token]
    reserved = _reserved_token_base(wallet, token, decimals, exclude)  # before the balance
    available = token_balance_base(w3, token_address, wallet.address) - reserved
    if available < amount_base:
        raise errors.InsufficientBalance(
            f"Insufficient {TOKEN_SYMBOLS[token]} balance: "
            f"{_fmt(max(available, 0), decimals)} available, "
            f"{_fmt(amount_base, decimals)} requested.")
    gas = estimate_gas(w3, sender=wallet.address, to=token_address,
                       data=_transfer_data(w3, to, amount_base))
    gas_cost = gas * fees.max_fee_per_gas
    if native_free < gas_cost:
        raise errors.InsufficientBalance(
            "The trading wallet needs MATIC to pay gas for this withdrawal: about "
            f"{_fmt(gas_cost, NATIVE_DECIMALS)} MATIC, it has "
            f"{_fmt(max(native_free, 0), NATIVE_DECIMALS)}. Deposit MATIC to the "
            f"deposit address ({DEPOSIT_ADDRESS_WHERE}).")
    return _Plan(token, to, amount_base, gas, fees)


def _sign(w3: Web3, plan: _Plan, key: bytes, nonce: int) -> SignedTx:
    """Sign a planned transfer with the given nonce (no network calls)."""
    chain_id = chain_access.chain_id()
    if plan.token == "matic":
        return build_transaction(w3, private_key=key, to=plan.to, value=plan.amount_base,
                                 nonce=nonce, gas=plan.gas, fees=plan.fees, chain_id=chain_id)
    return build_erc20_transfer(w3, private_key=key, token=wallets.token_addresses()[plan.token],
                                to=plan.to, amount_base=plan.amount_base, nonce=nonce,
                                fees=plan.fees, gas=plan.gas, chain_id=chain_id)


def _transfer_data(w3: Web3, to: str, amount_base: int) -> bytes:
    contract = w3.eth.contract(abi=load_abi(ERC20))
    return Web3.to_bytes(hexstr=contract.encode_abi("transfer", args=[to, amount_base]))


def _relayer_token(token: str) -> str | None:
    """The token's address as the relayer transaction names it (None for MATIC, which is
    the chain's own)."""
    if token == "matic":
        return None
    contracts = trading_accounts.contracts()
    return contracts.collateral_token if token == "usdc" else contracts.usdc_e


def _relayer_decimals(token: str) -> int:
    """The token's decimals: 6 for pUSD and USDC.e, 18 for MATIC."""
    return NATIVE_DECIMALS if token == "matic" else RELAYER_TOKEN_DECIMALS


def _held_at(w3: Web3, token_address: str | None, holder: str) -> int:
    """``holder``'s balance in base units: the native balance for ``token_address`` None."""
    if token_address is None:
        return native_balance_wei(w3, holder)
    return token_balance_base(w3, token_address, holder)


def open_amount(wallet: TradingWallet, token: str) -> Decimal:
    """What the wallet's open withdrawals of ``token`` may still send (reserved: neither a
    second withdrawal nor an auto-wrap may spend it)."""
    rows = Withdrawal.select(Withdrawal.amount).where(
        (Withdrawal.wallet == wallet.id) & (Withdrawal.token == token)
        & Withdrawal.status.in_(OPEN_STATES))
    return sum((Decimal(row.amount) for row in rows), Decimal(0))


def _request_by_relayer(user: User | UUID | str, wallet: TradingWallet, to: str, token: str,
                        amount: Any) -> Withdrawal:
    """Check and record a relayer-operated wallet's withdrawal: no gas to check, the
    relayer pays it. MATIC goes out as a call carrying value, like a token's ``transfer``.

    The balance is read on chain when the wallet is there; otherwise (the sandbox's
    simulated wallets) the batch itself fails with the token's reason if it is short.
    """
    maker = wallets.maker(wallet)
    if to == maker:
        raise errors.ValidationFailed(fields={"to_address": [
            "That is the trading wallet itself."]})
    if to.lower() == wallet.address.lower():
        # The owner key signs for the wallet but nothing here moves money out of its own
        # address (no gas, no transfer from it): funds sent there would be stranded.
        raise errors.ValidationFailed(fields={"to_address": [
            "That is the account's signer (owner) address, not a wallet you can spend "
            "from here: nothing in this product can move funds out of it again. Send to "
            "a wallet of your own."]})
    token_address = _relayer_token(token)
    if to in chain_access.contracts().addresses() or to == token_address:
        raise errors.ValidationFailed(fields={"to_address": [
            "That is one of Polymarket's contracts (a token, the CTF, an exchange or an "
            "adapter); funds sent there are lost. Send to your own wallet."]})
    decimals = _relayer_decimals(token)
    amount_base = validate_amount(amount, decimals)
    if chain_access.current().rpc_url:
        w3 = chain_access.web3()
        if w3.eth.get_code(maker):
            reserved = to_base_units(open_amount(wallet, token), decimals)
            available = _held_at(w3, token_address, maker) - reserved
            if available < amount_base:
                raise errors.InsufficientBalance(
                    f"Insufficient {TOKEN_SYMBOLS[token]} balance: "
                    f"{_fmt(max(available, 0), decimals)} available, "
                    f"{_fmt(amount_base, decimals)} requested.")
    return Withdrawal.create(user=user_id_of(user), wallet=wallet.id, token=token,
                             token_address=token_address, to_address=to,
                             amount=from_base_units(amount_base, decimals), status=QUEUED)


def request(user: User | UUID | str, to_address: Any, amount: Any, token: Any) -> Withdrawal:
    """Validate against the chain and record a queued withdrawal (nothing signed yet)."""
    to = validate_address(to_address)
    token = validate_token(token)
    wallet = wallets.get_or_create(user)
    trading_accounts.refuse_session_key(wallet)  # a session key cannot withdraw
    if trading_accounts.uses_relayer(wallet):
        return _request_by_relayer(user, wallet, to, token, amount)
    if to == wallet.address:
        raise errors.ValidationFailed(fields={"to_address": [
            "That is the trading wallet itself."]})
    if to in chain_access.contracts().addresses():
        # a token sent to a token (or exchange) contract is lost for good
        raise errors.ValidationFailed(fields={"to_address": [
            "That is one of Polymarket's contracts (a token, the CTF, an exchange or an "
            "adapter); funds sent there are lost. Send to your own wallet."]})
    w3 = chain_access.web3()
    decimals = _decimals(w3, token)
    amount_base = validate_amount(amount, decimals)
    _plan(w3, wallet, token, to, amount_base, exclude=None)  # the job checks again
    token_address = None if token == "matic" else wallets.token_addresses()[token]
    return Withdrawal.create(user=user_id_of(user), wallet=wallet.id, token=token,
                             token_address=token_address, to_address=to,
                             amount=from_base_units(amount_base, decimals), status=QUEUED)


def enqueue(withdrawal: Withdrawal) -> None:
    """Queue the send job for a withdrawal (queued once per withdrawal)."""
    from services.platform import jobs

    jobs.enqueue(JOB_NAME, withdrawal.id, job_id=jobs.logical_job_id(JOB_NAME, withdrawal.id),
                 queue="high", timeout=wallet_lifecycle.job_timeout())


def wait_for_broadcast(withdrawal_id: UUID, timeout: float) -> Withdrawal:
    """The record once its transaction's hash is known or it ended, or as it is after
    ``timeout`` seconds (money_requests.await_hashes)."""
    return money_requests.await_hashes(Withdrawal, [withdrawal_id], timeout)[0]


def result(withdrawal: Withdrawal) -> WithdrawResult:
    """The caller's view of a withdrawal's state."""
    tx_hash = broadcast_wait.tx_hash(withdrawal)
    url = status_url(withdrawal.id)
    # the amount as it was asked for, to the cent at least (not the column's "12.500000")
    amount = numbers.exact_money(withdrawal.amount, TOKEN_SYMBOLS[withdrawal.token])
    if withdrawal.status == FAILED:
        error = withdrawal.error or "The withdrawal failed."
        return WithdrawResult(False, tx_hash, error, withdrawal.id, withdrawal.status, url)
    if withdrawal.status == AMBIGUOUS:
        message = (f"Withdrawal of {amount} was sent but its outcome is not known yet: "
                   f"{withdrawal.error} Follow it at {url}.")
    elif withdrawal.status in (BROADCAST, CONFIRMED):
        done = "confirmed" if withdrawal.status == CONFIRMED else "broadcast"
        message = (f"Withdrawal of {amount} to {withdrawal.to_address} {done}; follow it "
                   f"at {url}.")
    else:
        message = f"Withdrawal of {amount} is queued; follow it at {url}."
        tx_hash = None  # not sent yet
    return WithdrawResult(True, tx_hash, message, withdrawal.id, withdrawal.status, url)


def withdraw(user: User | UUID | str, to_address: Any, amount: Any, token: Any,
             wait_seconds: float | None = None) -> WithdrawResult:
    """Record, enqueue and briefly await a withdrawal; the hash is in the answer if sent in time."""
    withdrawal = request(user, to_address, amount, token)
    money_requests.queue_or_fail([withdrawal], enqueue, "withdrawal")
    return result(money_requests.await_hashes(Withdrawal, [withdrawal.id], wait_seconds)[0])


def get(user: User | UUID | str, withdrawal_id: UUID | str) -> Withdrawal:
    """One of the user's withdrawals; NotFound otherwise."""
    try:
        wid = UUID(str(withdrawal_id))
    except ValueError:
        raise errors.NotFound("No such withdrawal.") from None
    withdrawal = Withdrawal.get_or_none((Withdrawal.id == wid)
                                        & (Withdrawal.user == user_id_of(user)))
    if withdrawal is None:
        raise errors.NotFound("No such withdrawal.")
    return withdrawal


def describe(withdrawal: Withdrawal) -> dict[str, Any]:
    """A withdrawal as the API shows it."""
    tx: WalletTransaction | None = withdrawal.transaction if withdrawal.transaction_id else None
    return {
        "id": withdrawal.id, "status": withdrawal.status, "token": withdrawal.token,
        "amount": withdrawal.amount, "to_address": withdrawal.to_address,
        "from_address": wallets.maker(withdrawal.wallet),  # where funds left
        "tx_hash": broadcast_wait.tx_hash(withdrawal), "nonce": tx.nonce if tx else None,
        "block_number": tx.block_number if tx else None,
        "gas_fee": tx.gas_fee if tx else None, "error": withdrawal.error,
        "created_at": withdrawal.created_at, "updated_at": withdrawal.updated_at,
        "relayer_transaction_id": withdrawal.relayer_transaction_id,
    }


def _chain_transport(withdrawal: Withdrawal, wallet: TradingWallet
                     ) -> chain_transport.ChainTransport:
    """The withdrawal's on-chain transfer, planned again under the wallet's lease (other
    withdrawals may have gone meanwhile) when it is signed."""

    def build(w3: Web3, key: bytes, nonce: int) -> SignedTx:
        amount_base = to_base_units(withdrawal.amount, _decimals(w3, withdrawal.token))
        plan = _plan(w3, wallet, withdrawal.token, withdrawal.to_address, amount_base,
                     exclude=withdrawal.id)
        return _sign(w3, plan, key, nonce)

    return chain_transport.ChainTransport(Withdrawal, withdrawal.id, wallet, "withdrawal",
                                          build)


def send_by_relayer(withdrawal_id: UUID | str, max_polls: int | None = None) -> str:
    """The job for a relayer-operated wallet (deposit, proxy, Safe): one relayer
    transaction (``transfer`` from the wallet, or a call carrying its MATIC),
    submitted once and followed to a final state (services/wallets/wallet_batches.py), then the
    CLOB re-reads the balance. An open status returned means: run again later."""
    withdrawal = Withdrawal.get_by_id(UUID(str(withdrawal_id)))
    wallet = TradingWallet.get_by_id(withdrawal.wallet_id)

    def calls(row: Withdrawal) -> list[Call]:
        amount = to_base_units(row.amount, _relayer_decimals(row.token))
        if row.token == "matic":
            return [native_transfer_call(row.to_address, amount)]
        return [transfer_call(row.token_address, row.to_address, amount)]

    status = wallet_batches.run(wallet_batches.BatchRow(Withdrawal, withdrawal.id), wallet,
                                calls, "copytrade withdrawal", "withdrawal", max_polls)
    if status == CONFIRMED:
        refresh_venue_balance(wallet)
    return status


def refresh_venue_balance(wallet: TradingWallet) -> None:
    """Have the CLOB re-read the wallet's balance after money left (best effort: the next
    order refreshes it too)."""
    try:
        venue_accounts.refresh_balance(venue_accounts.account(wallet.user_id))
    except (VenueError, errors.CopytradeError) as exc:
        log.warning("balance refresh after money out of %s failed: %s", wallet.id, exc)


def send(withdrawal_id: UUID | str) -> str:
    """The job: the withdrawal through the one wallet lifecycle (services/wallets/
    wallet_lifecycle.py: signed once, stored before it leaves, followed to a final state),
    on chain or through the relayer; then the CLOB re-reads the balance. An open status
    returned means: run again later."""
    withdrawal = Withdrawal.get_by_id(UUID(str(withdrawal_id)))
    if trading_accounts.uses_relayer(withdrawal.wallet):
        return send_by_relayer(withdrawal.id)
    wallet = TradingWallet.get_by_id(withdrawal.wallet_id)
    status = wallet_lifecycle.run(Withdrawal, withdrawal.id, wallet,
                                  _chain_transport(withdrawal, wallet))
    if status == CONFIRMED:
        refresh_venue_balance(wallet)
    log.info("withdrawal %s: %s", withdrawal.id, status)
    return status
