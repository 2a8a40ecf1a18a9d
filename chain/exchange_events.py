"""Polymarket's exchange fills as the chain shows them: ``OrderFilled`` logs and, before their
block, the match calls that will emit them (pure decoding, no RPC).

The CTF Exchange V2 and its neg-risk twin (ctf-exchange-v2 ``ITrading``) emit, per order a
match fills, ``OrderFilled(bytes32 indexed orderHash, address indexed maker, address indexed
taker, uint8 side, uint256 tokenId, uint256 makerAmountFilled, uint256 takerAmountFilled,
uint256 fee, bytes32 builder, bytes32 metadata)``: ``maker`` is the order's maker (the
wallet that traded), ``side`` its side, the amounts what it gave and got (pUSD or shares,
6 decimals) before its fee. A wallet's own fill is always the event whose maker it is: a
taker order's event has the exchange as ``taker``, and the makers' events name the taker
order's maker as ``taker`` (the counterparty's view of the same trade).

Before their block, the operator's ``matchOrders(conditionId, takerOrder, makerOrders,
takerFillAmount, makerFillAmounts, takerFeeAmount, makerFeeAmounts)`` says the same:
each order's maker, side and token, what it gives, and (at its limit price) what it gets.
The dev chain's stand-in exchange (devstack/chain/contracts/CTFExchange.sol) is settled by
``settleMatch``, whose arguments carry the events' fields as they will be emitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from eth_abi import decode
from eth_utils import keccak, to_checksum_address

BASE_UNITS = Decimal(10) ** 6  # pUSD and outcome shares both have 6 decimals
PRICE_QUANTUM = Decimal("0.000001")
BUY, SELL = "BUY", "SELL"

ORDER_FILLED_SIGNATURE = ("OrderFilled(bytes32,address,address,uint8,uint256,uint256,uint256,"
                          "uint256,bytes32,bytes32)")
ORDER_FILLED_TOPIC = "0x" + keccak(text=ORDER_FILLED_SIGNATURE).hex()
_FILLED_DATA = ["uint8", "uint256", "uint256", "uint256", "uint256", "bytes32", "bytes32"]

# The V2 order as matchOrders takes it (ctf-exchange-v2 Structs.sol ``Order``).
_ORDER = ("(uint256,address,address,uint256,uint256,uint256,uint8,uint8,uint256,bytes32,"
          "bytes32,bytes)")
MATCH_ORDERS_SIGNATURE = (f"matchOrders(bytes32,{_ORDER},{_ORDER}[],uint256,uint256[],uint256,"
                          "uint256[])")
# The dev chain's stand-in: settleMatch(Match, Leg[] pulls, Leg[] pushes, Filled[] makerFills,
# Filled takerFill), each Filled an OrderFilled event's fields.
_FILLED = "(bytes32,address,address,uint8,uint256,uint256,uint256,uint256,bytes32,bytes32)"
_LEG = "(address,uint256,uint256)"
SETTLE_MATCH_SIGNATURE = (f"settleMatch((bytes32,address,uint256,uint256),{_LEG}[],{_LEG}[],"
                          f"{_FILLED}[],{_FILLED})")


def _selector(signature: str) -> str:
    return "0x" + keccak(text=signature)[:4].hex()


MATCH_ORDERS_SELECTOR = _selector(MATCH_ORDERS_SIGNATURE)
SETTLE_MATCH_SELECTOR = _selector(SETTLE_MATCH_SIGNATURE)


def _types(signature: str) -> list[str]:
    """The argument types of a canonical signature ``name(a,(b,c)[],d)``, split at depth 0."""
    inner = signature[signature.index("(") + 1:-1]
    parts, depth, start = [], 0, 0
    for index, char in enumerate(inner):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(inner[start:index])
            start = index + 1
    parts.append(inner[start:])
    return parts


@dataclass(frozen=True)
class ExchangeFill:
    """One order's part of one match: what its maker gave and got, in base units."""

    tx_hash: str  # 0x-prefixed, lowercase
    exchange: str  # checksummed
    maker: str  # checksummed: the wallet that traded
    side: str  # BUY or SELL
    token_id: str
    shares: int
    usdc: int  # pUSD paid (BUY) or received (SELL), the fee excluded
    fee: int
    block_number: int | None = None  # None: still pending
    log_index: int | None = None
    role: str = ""  # "taker" when the exchange was the counterparty, else "maker"

    @property
    def price(self) -> Decimal:
        """pUSD per share (the average over the order's part of the match)."""
        if not self.shares:
            return Decimal(0)
        return (Decimal(self.usdc) / Decimal(self.shares)).quantize(PRICE_QUANTUM,
                                                                    ROUND_HALF_EVEN)

    @property
    def size(self) -> Decimal:
        """Shares, as a decimal."""
        return Decimal(self.shares) / BASE_UNITS

    @property
    def usdc_size(self) -> Decimal:
        """pUSD, as a decimal."""
        return Decimal(self.usdc) / BASE_UNITS

    @property
    def fee_size(self) -> Decimal:
        """The fee in pUSD, as a decimal."""
        return Decimal(self.fee) / BASE_UNITS


def _hex(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    text = str(value)
    return text if text.startswith("0x") else "0x" + text


def _int(value: Any) -> int:
    if isinstance(value, int):
        return value
    return int(str(value), 16) if str(value).startswith("0x") else int(str(value))


def topic_address(address: str) -> str:
    """An address as an indexed topic (32 bytes, left-padded, lowercase)."""
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _fill(tx_hash: str, exchange: str, maker: str, taker: str, side: int, token_id: int,
          made: int, taken: int, fee: int, **where: Any) -> ExchangeFill:
    """An OrderFilled's fields as a fill: a BUY gave pUSD and got shares, a SELL the reverse."""
    shares, usdc = (taken, made) if side == 0 else (made, taken)
    role = "taker" if taker.lower() == exchange.lower() else "maker"
    return ExchangeFill(tx_hash=tx_hash.lower(), exchange=to_checksum_address(exchange),
                        maker=to_checksum_address(maker), side=BUY if side == 0 else SELL,
                        token_id=str(token_id), shares=shares, usdc=usdc, fee=fee,
                        role=role, **where)


def decode_order_filled(log: Mapping[str, Any]) -> ExchangeFill | None:
    """The fill of one ``OrderFilled`` log (a JSON-RPC log object); None for another event."""
    topics = [_hex(t).lower() for t in log.get("topics") or ()]
    if len(topics) != 4 or topics[0] != ORDER_FILLED_TOPIC:
        return None
    data = bytes.fromhex(_hex(log["data"])[2:])
    side, token_id, made, taken, fee, _, _ = decode(_FILLED_DATA, data)
    block = log.get("blockNumber")
    index = log.get("logIndex")
    return _fill(_hex(log["transactionHash"]), _hex(log["address"]),
                 "0x" + topics[2][-40:], "0x" + topics[3][-40:], side, token_id, made, taken,
                 fee, block_number=None if block is None else _int(block),
                 log_index=None if index is None else _int(index))


def _at_limit(order: tuple, making: int) -> int:
    """What an order gets for giving ``making``, at its limit price (round down)."""
    maker_amount, taker_amount = order[4], order[5]
    return making * taker_amount // maker_amount if maker_amount else 0


def decode_match_call(tx: Mapping[str, Any], exchanges: Iterable[str]) -> list[ExchangeFill]:
    """The fills a pending transaction will make if mined: a ``matchOrders`` (or the dev
    chain's ``settleMatch``) sent to one of ``exchanges``; [] for anything else."""
    to = tx.get("to")
    if not to or to.lower() not in {e.lower() for e in exchanges}:
        return []
    data = _hex(tx.get("input") or tx.get("data") or "0x")
    selector, body = data[:10].lower(), bytes.fromhex(data[10:])
    tx_hash = _hex(tx["hash"])
    try:
        if selector == MATCH_ORDERS_SELECTOR:
            return _matched(tx_hash, to, body)
        if selector == SETTLE_MATCH_SELECTOR:
            _, _, _, makers, taker = decode(_types(SETTLE_MATCH_SIGNATURE), body)
            return [_fill(tx_hash, to, f[1], f[2], f[3], f[4], f[5], f[6], f[7])
                    for f in (*makers, taker)]
    except Exception:  # malformed calldata is not a fill (the call would revert)
        return []
    return []


def _matched(tx_hash: str, exchange: str, body: bytes) -> list[ExchangeFill]:
    (_, taker, makers, taker_fill, maker_fills, taker_fee,
     maker_fees) = decode(_types(MATCH_ORDERS_SIGNATURE), body)
    fills = [_fill(tx_hash, exchange, order[1], taker[1], order[6], order[3], making,
                   _at_limit(order, making), fee)
             for order, making, fee in zip(makers, maker_fills, maker_fees, strict=False)]
    fills.append(_fill(tx_hash, exchange, taker[1], exchange, taker[6], taker[3], taker_fill,
                       _at_limit(taker, taker_fill), taker_fee))
    return fills


__all__ = ["BUY", "MATCH_ORDERS_SELECTOR", "ORDER_FILLED_TOPIC", "SELL", "SETTLE_MATCH_SELECTOR",
           "ExchangeFill", "decode_match_call", "decode_order_filled", "topic_address"]
