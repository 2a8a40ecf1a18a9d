"""Money that came in from outside: ERC-20 transfers to an address in transactions where it
gave nothing.

A balance going up does not say why: a sale settling on the exchange, a claim's payout, a
wrap of USDC.e into pUSD raise it as a deposit does. What tells them apart is the rest of the
transaction: in each of those the address also gave something (outcome shares to the
exchange or to be redeemed, USDC.e to the onramp: an ERC-20 ``Transfer`` or an ERC-1155
``TransferSingle``/``TransferBatch`` from it); a deposit is someone else's transaction in
which it only receives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_utils import keccak
from web3 import Web3

from chain.tokens import checksum, read

TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
TRANSFER_SINGLE_TOPIC = "0x" + keccak(
    text="TransferSingle(address,address,address,uint256,uint256)").hex()
TRANSFER_BATCH_TOPIC = "0x" + keccak(
    text="TransferBatch(address,address,address,uint256[],uint256[])").hex()


@dataclass(frozen=True)
class Incoming:
    """One ERC-20 transfer to the address."""

    token: str  # the token contract (checksummed)
    sender: str
    amount_base: int
    tx_hash: str  # 0x-prefixed
    log_index: int
    block: int

    @property
    def key(self) -> str:
        """Unique per transfer on the chain."""
        return f"{self.tx_hash}:{self.log_index}"


def _topic(address: str) -> str:
    return "0x" + checksum(address)[2:].lower().rjust(64, "0")


def _hex(value: Any) -> str:
    text = value.hex() if isinstance(value, bytes | bytearray) else str(value)
    return text if text.startswith("0x") else "0x" + text


def incoming(w3: Web3, tokens: list[str], owner: str, blocks: int) -> list[Incoming]:
    """Transfers of ``tokens`` to ``owner`` in the last ``blocks`` blocks, oldest first."""
    latest = read(lambda: w3.eth.block_number, "the latest block")
    logs = read(lambda: w3.eth.get_logs({
        "address": [checksum(t) for t in tokens],
        "topics": [TRANSFER_TOPIC, None, _topic(owner)],
        "fromBlock": max(0, latest - blocks), "toBlock": latest}), "token transfers")
    return [Incoming(token=checksum(entry["address"]),
                     sender=checksum("0x" + _hex(entry["topics"][1])[-40:]),
                     amount_base=int(_hex(entry["data"]), 16),
                     tx_hash=_hex(entry["transactionHash"]),
                     log_index=int(entry["logIndex"]), block=int(entry["blockNumber"]))
            for entry in logs if len(entry["topics"]) == 3]



def gave_in(w3: Web3, tx_hash: str, owner: str) -> bool:
    """Whether ``owner`` sent any ERC-20 or ERC-1155 token in transaction ``tx_hash``."""
    receipt = read(lambda: w3.eth.get_transaction_receipt(tx_hash), "a transaction receipt")
    sender = _topic(owner)
    for entry in receipt["logs"]:
        topics = [_hex(t) for t in entry["topics"]]
        if topics and topics[0] == TRANSFER_TOPIC and len(topics) == 3 and topics[1] == sender:
            return True
        if (topics and topics[0] in (TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC)
                and len(topics) == 4 and topics[2] == sender):
            return True
    return False


def received_in(w3: Web3, tx_hash: str, token: str, owner: str) -> int:
    """The base units of ERC-20 ``token`` that transaction ``tx_hash`` moved to ``owner``
    (its receipt's Transfer events, mints included)."""
    receipt = read(lambda: w3.eth.get_transaction_receipt(tx_hash), "a transaction receipt")
    to, address = _topic(owner), checksum(token)
    total = 0
    for entry in receipt["logs"]:
        topics = [_hex(t) for t in entry["topics"]]
        if (checksum(entry["address"]) == address and len(topics) == 3
                and topics[0] == TRANSFER_TOPIC and topics[2] == to):
            total += int(_hex(entry["data"]), 16)
    return total
