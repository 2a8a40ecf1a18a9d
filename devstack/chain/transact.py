"""Plain web3 plumbing for the dev chain: connect, sign, send and wait, from one dev key.

The app's `chain/` package does this with exactly-once bookkeeping for users' wallets;
the dev chain only needs the deployer's transactions to land, and must not import the app.
"""

from __future__ import annotations

from typing import Any

from eth_account import Account
from web3 import HTTPProvider, Web3

from devstack.chain.errors import DevChainError

DEFAULT_TIMEOUT = 10.0
RECEIPT_TIMEOUT = 60.0
NATIVE_TRANSFER_GAS = 21_000
# Polygon PoS rejects tips below its floor; a dev chain may run with Polygon's chain id.
POLYGON_CHAIN_IDS = frozenset({137, 80002})
POLYGON_MIN_PRIORITY_WEI = 30 * 10**9
# headroom over eth_estimateGas: state can move between estimate and inclusion
GAS_MARGIN_NUM, GAS_MARGIN_DEN = 6, 5


def connect(rpc_url: str, *, timeout: float = DEFAULT_TIMEOUT) -> Web3:
    """Return a Web3 for rpc_url that fails fast instead of retrying."""
    provider = HTTPProvider(rpc_url, request_kwargs={"timeout": timeout},
                            exception_retry_configuration=None)
    return Web3(provider)


def checksum(address: str) -> str:
    """Return the EIP-55 form of an address; ValueError if it is not one."""
    if not Web3.is_address(address):
        raise ValueError(f"not an address: {address!r}")
    return Web3.to_checksum_address(address)


def address_of(private_key: str) -> str:
    """Return the checksummed address of a private key."""
    return Account.from_key(private_key).address


def fee_caps(w3: Web3) -> dict[str, int]:
    """EIP-1559 fee fields that survive a doubling of the base fee."""
    base_fee = int(w3.eth.get_block("latest").get("baseFeePerGas") or 0)
    tip = int(w3.eth.max_priority_fee)
    if int(w3.eth.chain_id) in POLYGON_CHAIN_IDS:
        tip = max(tip, POLYGON_MIN_PRIORITY_WEI)
    return {"maxFeePerGas": 2 * base_fee + tip, "maxPriorityFeePerGas": tip}


def _estimate_gas(w3: Web3, params: dict[str, Any]) -> int:
    estimate = int(w3.eth.estimate_gas(params))  # type: ignore[arg-type]
    if estimate <= NATIVE_TRANSFER_GAS:
        return estimate
    return estimate * GAS_MARGIN_NUM // GAS_MARGIN_DEN


def send_and_wait(w3: Web3, private_key: str, tx: dict[str, Any]) -> dict[str, Any]:
    """Fill nonce, fees and gas, sign, send, and return the receipt of a successful tx."""
    sender = address_of(private_key)
    tx = {"from": sender, "value": 0, "chainId": int(w3.eth.chain_id), **tx}
    tx.setdefault("nonce", int(w3.eth.get_transaction_count(sender, "pending")))
    for name, value in fee_caps(w3).items():
        tx.setdefault(name, value)
    if "gas" not in tx:
        tx["gas"] = _estimate_gas(w3, {k: tx[k] for k in ("from", "to", "value", "data")
                                       if k in tx})
    signed = Account.sign_transaction({k: v for k, v in tx.items() if k != "from"}, private_key)
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=RECEIPT_TIMEOUT,
                                                  poll_latency=0.25)
    if int(receipt["status"]) != 1:
        raise DevChainError(f"dev transaction 0x{bytes(tx_hash).hex()} reverted")
    return dict(receipt)
