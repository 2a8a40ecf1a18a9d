"""Proving that a session key controls a deposit wallet (ACCOUNTS.md §2.6), for connecting
an account with a session key instead of the owner's key.

A session key does not derive the wallet (only the owner does), and the venue lists a
wallet's session signers only to its owner (CLOB ``GET /v1/user/session-signers`` with the
owner's L2 credentials), which a session-key user cannot give. What the venue itself relies
on is the wallet's ERC-1271 ``isValidSignature``: the exchange accepts a type-3 order signed
by a session key exactly when the wallet accepts its enveloped signature. So the proof is a
challenge order, signed as orders are (ERC-7739 wrapped, in the session-signer envelope),
that the wallet is asked to validate on chain: the wallet says yes only for a session key
in force. It needs a chain RPC (``POLYGON_RPC_URL``) and a deployed wallet.
"""

from __future__ import annotations

from decimal import Decimal

from eth_abi import encode
from web3.exceptions import ContractLogicError

from chain.tokens import read
from models.wallet import TradingWallet
from services.platform import chain_access, venue_access
from services.platform.runtime import runtime
from services.wallets import wallets
from venue.accounts.contracts import AccountContracts
from venue.signing import OrderKey, build_signed_order

_IS_VALID_SIGNATURE = bytes.fromhex("1626ba7e")  # isValidSignature(bytes32,bytes) and its magic


def challenge(key: OrderKey, wallet: str, contracts: AccountContracts) -> tuple[bytes, bytes]:
    """A never-posted order (maker = signer = ``wallet``) signed by session key ``key`` with
    the live orders' signer: (the digest the exchange asks the wallet about, the signature)."""
    signed = build_signed_order(
        key, contracts.chain_id, "1", "BUY", Decimal("0.5"), Decimal(5),
        signature_type=3, funder=wallet, session_key=True,
        exchange_address=contracts.standard_exchange,
        neg_risk_exchange_address=contracts.neg_risk_exchange)
    return bytes.fromhex(signed.order_hash[2:]), bytes.fromhex(signed.signature[2:])


def unprovable_reason() -> str | None:
    """Why a session key cannot be checked here (no chain to ask), or None."""
    if not chain_access.current().rpc_url:
        return ("connecting with a session key needs the server to ask the wallet on chain, "
                "and no chain RPC is configured (POLYGON_RPC_URL)")
    return None


def accepts(wallet: str, key: OrderKey, contracts: AccountContracts) -> bool:
    """Whether deposit wallet ``wallet`` accepts ``key`` as a session signer in force now
    (False when it does not, is not deployed, or no chain is configured)."""
    if unprovable_reason() is not None:
        return False
    w3 = chain_access.web3()
    if not read(lambda: w3.eth.get_code(wallet), "get_code"):
        return False
    digest, signature = challenge(key, wallet, contracts)
    data = _IS_VALID_SIGNATURE + encode(["bytes32", "bytes"], [digest, signature])

    def ask() -> bytes:
        try:
            return bytes(w3.eth.call({"to": wallet, "data": "0x" + data.hex()}))
        except ContractLogicError:
            return b""  # the wallet refuses the signature by reverting

    return read(ask, "isValidSignature")[:4] == _IS_VALID_SIGNATURE


def lapsed(wallet: TradingWallet) -> str | None:
    """Why an account connected with a session key can no longer trade (the wallet no longer
    accepts the key: revoked or expired), or None (in force, not a session key, or no chain
    to ask). One on-chain call: for readiness and for explaining a refusal, not per order."""
    if not wallet.session_signer or unprovable_reason() is not None:
        return None
    maker = wallets.maker(wallet)
    key = OrderKey("0x" + wallets.signer(wallet).hex())
    if accepts(maker, key, venue_access.account_contracts(runtime().settings)):
        return None
    return (f"The session key {wallet.address} is no longer authorized by wallet {maker} "
            "(revoked or expired), so the venue refuses its orders: have the owner authorize "
            "a session key on polymarket.com, then connect the account with it.")


__all__ = ["accepts", "challenge", "lapsed", "unprovable_reason"]
