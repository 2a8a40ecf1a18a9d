"""Order signing and CLOB auth headers.

We compute order amounts here in Decimal (the library rounds with floats) and sign the V2
order ourselves: the EIP-712 digest is built from the fixed Order struct with the domain
separator computed once per exchange, and signed with libsecp256k1 (coincurve), producing
byte for byte what py-clob-client-v2's ``ExchangeOrderBuilderV2`` produces (tests compare
the two) in a tenth of the time, because the library re-encodes the typed data twice per
order. Type 3 (deposit wallet) gets the ERC-7739-wrapped signature. ``OrderKey`` holds an
opened key with its address derived once, so a copy burst does not re-derive it per order.
The per-order Keccak runs on one pycryptodome state per thread (reset, not re-created) and
the struct is encoded from the integers at hand, not parsed back from the order's strings;
the ``POST /order`` body is written directly in the library's key order (tests compare it
with ``json.dumps`` of the library's dict). L1 headers use the library's ClobAuth signer,
L2 headers its HMAC.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from coincurve import PrivateKey
from Crypto.Hash.keccak import _raw_keccak_lib
from Crypto.Util._raw_api import (
    SmartPointer,
    VoidPointer,
    c_size_t,
    c_ubyte,
    c_uint8_ptr,
    create_string_buffer,
    get_raw_buffer,
)
from eth_account import Account
from eth_hash.auto import keccak
from eth_utils import to_checksum_address
from py_clob_client_v2.config import get_contract_config
from py_clob_client_v2.headers.headers import (
    POLY_ADDRESS,
    POLY_API_KEY,
    POLY_PASSPHRASE,
    POLY_SIGNATURE,
    POLY_TIMESTAMP,
    create_level_1_headers,
)
from py_clob_client_v2.order_utils import Side, SignatureTypeV2
from py_clob_client_v2.order_utils.model.order_data_v2 import SignedOrderV2, order_to_json_v2
from py_clob_client_v2.order_utils.utils import generate_order_salt
from py_clob_client_v2.signer import Signer
from py_clob_client_v2.signing.hmac import build_hmac_signature

from venue.models import ALLOWED_TICK_SIZES, BUY, ORDER_TYPES, SELL, ApiCreds

BYTES32_ZERO = "0x" + "00" * 32
BASE_UNITS = Decimal(10) ** 6  # pUSD and outcome shares both have 6 decimals on chain
SIZE_DECIMALS = 2

SIGNATURE_TYPE_EOA = 0
SIGNATURE_TYPE_POLY_PROXY = 1
SIGNATURE_TYPE_POLY_GNOSIS_SAFE = 2
SIGNATURE_TYPE_POLY_1271 = 3  # deposit wallet / smart-contract wallet maker

ORDER_TYPE_STRING = (
    "Order(uint256 salt,address maker,address signer,uint256 tokenId,"
    "uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,"
    "uint256 timestamp,bytes32 metadata,bytes32 builder)"
)
_ORDER_TYPE_HASH = keccak(ORDER_TYPE_STRING.encode())
_DOMAIN_TYPE_HASH = keccak(
    b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
_EXCHANGE_NAME_HASH = keccak(b"Polymarket CTF Exchange")
_EXCHANGE_VERSION_HASH = keccak(b"2")
# ERC-7739 (Solady) nested typed-data signature of a deposit wallet (type 3).
_TYPED_DATA_SIGN_TYPE_HASH = keccak(
    b"TypedDataSign(Order contents,string name,string version,uint256 chainId,"
    b"address verifyingContract,bytes32 salt)" + ORDER_TYPE_STRING.encode())
_DEPOSIT_WALLET_NAME_HASH = keccak(b"DepositWallet")
_DEPOSIT_WALLET_VERSION_HASH = keccak(b"1")
_TYPE_STRING_SUFFIX = (ORDER_TYPE_STRING.encode().hex()
                       + len(ORDER_TYPE_STRING).to_bytes(2, "big").hex())
_ZERO_WORD = bytes(32)
_SIDE_WORDS = {side: int(side).to_bytes(32, "big") for side in Side}
# Calling an Enum class to look a member up costs more than the dict it ends up reading.
_SIGNATURE_TYPES = {int(kind): kind for kind in SignatureTypeV2}

# Keccak-256 (the original padding 0x01, not SHA3's 0x06): capacity 64 bytes, 24 rounds.
_KECCAK_CAPACITY = c_size_t(64)
_KECCAK_ROUNDS = c_ubyte(24)
_KECCAK_PADDING = c_ubyte(0x01)
_DIGEST_SIZE = c_size_t(32)


class _KeccakState(threading.local):
    """One pycryptodome Keccak state and output buffer per thread, reset for each digest.

    ``keccak.new`` allocates a state, a smart pointer and a buffer per call, which costs
    more than hashing the few hundred bytes of an order; the C state is freed with the
    thread's copy of this object.
    """

    def __init__(self) -> None:
        pointer = VoidPointer()
        if _raw_keccak_lib.keccak_init(pointer.address_of(), _KECCAK_CAPACITY, _KECCAK_ROUNDS):
            raise ValueError("could not initialise a keccak state")
        self.owner = SmartPointer(pointer.get(), _raw_keccak_lib.keccak_destroy)
        self.state = pointer.get()
        self.out = create_string_buffer(32)


_keccak_state = _KeccakState()


def keccak256(data: bytes | bytearray | memoryview) -> bytes:
    """Keccak-256 of ``data`` (what eth_hash's ``keccak`` returns), without per-call objects."""
    local = _keccak_state
    state, out = local.state, local.out
    # bytes reach C as they are (both pycryptodome backends); other buffers need a pointer.
    pointer = data if type(data) is bytes else c_uint8_ptr(data)
    # Reset first: a digest interrupted between absorb and squeeze leaves nothing behind.
    if (_raw_keccak_lib.keccak_reset(state)
            or _raw_keccak_lib.keccak_absorb(state, pointer, c_size_t(len(data)))
            or _raw_keccak_lib.keccak_digest(state, out, _DIGEST_SIZE, _KECCAK_PADDING)):
        raise ValueError("keccak failed")
    return get_raw_buffer(out)


class OrderKey:
    """An opened signing key with its address derived once (never log or repr the key)."""

    __slots__ = ("_key", "_private_key", "address")

    def __init__(self, private_key: str | bytes) -> None:
        raw = (bytes.fromhex(private_key.removeprefix("0x")) if isinstance(private_key, str)
               else bytes(private_key))
        self._key = PrivateKey(raw)
        self._private_key = "0x" + raw.hex()
        public = self._key.public_key.format(compressed=False)[1:]
        self.address: str = to_checksum_address(keccak(public)[-20:])

    @property
    def private_key(self) -> str:
        """The hex key, for the library's L1 signer (API-key derivation only)."""
        return self._private_key

    def sign_digest(self, digest: bytes) -> bytes:
        """65-byte Ethereum signature (r, s, v = 27/28) of a 32-byte digest."""
        raw = self._key.sign_recoverable(digest, hasher=None)
        return raw[:64] + bytes([raw[64] + 27])

    def __repr__(self) -> str:
        return f"OrderKey(address={self.address!r}, key=<hidden>)"


def order_key(private_key: str | OrderKey) -> OrderKey:
    """``private_key`` as an OrderKey (opened now when given as hex)."""
    return private_key if isinstance(private_key, OrderKey) else OrderKey(private_key)


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


@lru_cache(maxsize=4096)
def _address_word(address: str) -> bytes:
    # Cached: a copier's maker and signer addresses come back on every order they place.
    return bytes.fromhex(address.removeprefix("0x")).rjust(32, b"\x00")


@lru_cache(maxsize=4096)
def _token_word(token_id: str) -> bytes:
    # Cached: one target fill signs the same 77-digit token id for every follower.
    return int(token_id).to_bytes(32, "big")


def _bytes32_of(value: str) -> bytes:
    if value == BYTES32_ZERO:  # metadata and builder, on every order we sign
        return _ZERO_WORD
    return bytes.fromhex(value.removeprefix("0x").zfill(64))


@lru_cache(maxsize=64)
def domain_separator(chain_id: int, exchange: str) -> bytes:
    """EIP-712 domain separator of the V2 exchange at ``exchange`` (computed once each)."""
    return keccak(_DOMAIN_TYPE_HASH + _EXCHANGE_NAME_HASH + _EXCHANGE_VERSION_HASH
                  + _word(chain_id) + _address_word(exchange))


def order_struct_hash(order: SignedOrderV2) -> bytes:
    """hashStruct(Order) of a V2 order."""
    return _struct_hash(int(order.salt), _address_word(order.maker),
                        _address_word(order.signer), _word(int(order.tokenId)),
                        int(order.makerAmount), int(order.takerAmount), _word(int(order.side)),
                        int(order.signatureType), int(order.timestamp), order.metadata,
                        order.builder)


def _struct_hash(salt: int, maker_word: bytes, signer_word: bytes, token_word: bytes,
                 maker_amount: int, taker_amount: int, side_word: bytes, signature_type: int,
                 timestamp: int, metadata: str, builder: str) -> bytes:
    # The integers the order was built from, so signing does not parse its strings back.
    return keccak256(b"".join((
        _ORDER_TYPE_HASH, salt.to_bytes(32, "big"), maker_word, signer_word, token_word,
        maker_amount.to_bytes(32, "big"), taker_amount.to_bytes(32, "big"), side_word,
        signature_type.to_bytes(32, "big"), timestamp.to_bytes(32, "big"),
        _bytes32_of(metadata), _bytes32_of(builder))))


@dataclass(frozen=True, slots=True)
class SignedOrder:
    """A signed V2 order ready for ``POST /order``, with what it was built from."""

    order: SignedOrderV2
    order_type: str
    order_hash: str
    exchange_address: str
    chain_id: int
    side: str
    price: Decimal
    size: Decimal
    maker_amount: int
    taker_amount: int

    @property
    def maker(self) -> str:
        """The funding address (EOA, proxy, Safe or deposit wallet)."""
        return self.order.maker

    @property
    def signer(self) -> str:
        """The order's ``signer`` field (the EOA, or the deposit wallet for type 3)."""
        return self.order.signer

    @property
    def signature(self) -> str:
        """Hex signature as sent."""
        return self.order.signature

    def payload(
        self,
        owner: str,
        order_type: str | None = None,
        post_only: bool = False,
        defer_exec: bool = False,
    ) -> dict[str, Any]:
        """The ``POST /order`` JSON object, in py-clob-client-v2's key order."""
        kind = order_type or self.order_type
        if post_only and kind in ("FOK", "FAK"):
            raise ValueError("post_only is not allowed with FOK/FAK orders")
        return order_to_json_v2(self.order, owner, kind, post_only, defer_exec)

    def body(self, owner: str, order_type: str | None = None, post_only: bool = False,
             defer_exec: bool = False) -> str:
        """The exact compact JSON text to send and to HMAC-sign."""
        kind = order_type or self.order_type
        if post_only and kind in ("FOK", "FAK"):
            raise ValueError("post_only is not allowed with FOK/FAK orders")
        order = self.order
        texts = (order.maker, order.signer, order.tokenId, order.makerAmount, order.takerAmount,
                 order.expiration, order.timestamp, order.metadata, order.builder,
                 order.signature, owner, kind)
        if (type(post_only) is not bool or type(defer_exec) is not bool
                or set(map(type, texts)) != _STR_ONLY):
            # Whatever json.dumps makes of other types (None, ints...), through the dict.
            return compact_json(self.payload(owner, order_type, post_only, defer_exec))
        # What compact_json(self.payload(...)) writes, without building the dicts first.
        (maker, signer, token_id, maker_amount, taker_amount, expiration, timestamp, metadata,
         builder, signature, owner_text, kind_text) = map(_json_string, texts)
        side = '"BUY"' if order.side == Side.BUY else '"SELL"'
        return (f'{{"order":{{"salt":{int(order.salt)!r},"maker":{maker},"signer":{signer},'
                f'"tokenId":{token_id},"makerAmount":{maker_amount},'
                f'"takerAmount":{taker_amount},"side":{side},"expiration":{expiration},'
                f'"signatureType":{int(order.signatureType)!r},"timestamp":{timestamp},'
                f'"metadata":{metadata},"builder":{builder},"signature":{signature}}},'
                f'"owner":{owner_text},"orderType":{kind_text},'
                f'"deferExec":{"true" if defer_exec else "false"},'
                f'"postOnly":{"true" if post_only else "false"}}}')


# The string encoder json.dumps uses with ensure_ascii=False.
_json_string = json.encoder.encode_basestring  # type: ignore[attr-defined]
_STR_ONLY = {str}


def compact_json(value: Any) -> str:
    """JSON as the CLOB clients serialise it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def address_of(private_key: str) -> str:
    """Checksummed address of a private key."""
    return Account.from_key(private_key).address


def exchange_address_for(
    chain_id: int,
    neg_risk: bool,
    exchange_address: str | None = None,
    neg_risk_exchange_address: str | None = None,
) -> str:
    """V2 exchange contract that orders are signed for (overrides win, else the lib's table)."""
    override = neg_risk_exchange_address if neg_risk else exchange_address
    if override:
        return override
    exchange, neg_risk_exchange = _exchanges(chain_id)
    return neg_risk_exchange if neg_risk else exchange


@lru_cache(maxsize=16)
def _exchanges(chain_id: int) -> tuple[str, str]:
    # The library rebuilds its whole contract table on every lookup.
    contracts = get_contract_config(chain_id)
    return contracts.exchange_v2, contracts.neg_risk_exchange_v2


@lru_cache(maxsize=64, typed=True)
def _decimals(tick_size: Decimal) -> tuple[int, int]:
    """(price decimals, amount decimals) for a tick: 0.01 -> (2, 4), 0.001 -> (3, 5)..."""
    tick = Decimal(tick_size)
    if tick not in ALLOWED_TICK_SIZES:
        raise ValueError(f"tick size {tick_size} not in {sorted(ALLOWED_TICK_SIZES)}")
    price_decimals = -tick.normalize().as_tuple().exponent  # type: ignore[operator]
    return price_decimals, price_decimals + SIZE_DECIMALS


def _quantize(value: Decimal, decimals: int, rounding: str) -> Decimal:
    return value.quantize(_unit(decimals), rounding)


@lru_cache(maxsize=32)
def _unit(decimals: int) -> Decimal:
    return Decimal(1).scaleb(-decimals)


_SIZE_UNIT = _unit(SIZE_DECIMALS)


class _TickGrid(NamedTuple):
    tick: Decimal
    top: Decimal  # 1 - tick, the highest price
    price_unit: Decimal
    amount_decimals: int
    amount_unit: Decimal
    fine_unit: Decimal  # four more decimals, where a market BUY's taker amount rounds up first


@lru_cache(maxsize=16)
def _tick_grid(tick: Decimal) -> _TickGrid:
    # Once per tick size, not per order; equal ticks (0.01, 0.010) share a grid, so the
    # grid is only compared against, never shown (check_price words the errors).
    price_decimals, amount_decimals = _decimals(tick)
    return _TickGrid(tick, Decimal(1) - tick, _unit(price_decimals), amount_decimals,
                     _unit(amount_decimals), _unit(amount_decimals + 4))


def _base_units(value: Decimal) -> int:
    scaled = value * BASE_UNITS
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{value} has more than 6 decimals")
    return int(scaled)


def _side(side: str) -> str:
    upper = side.upper()
    if upper not in (BUY, SELL):
        raise ValueError(f"side must be BUY or SELL, not {side!r}")
    return upper


def check_price(price: Decimal, tick_size: Decimal) -> None:
    """Raise ValueError unless ``price`` is on the tick grid within [tick, 1 - tick]."""
    tick = Decimal(tick_size)
    _decimals(tick)
    if price % tick != 0:
        raise ValueError(f"price {price} is not a multiple of tick size {tick}")
    if not tick <= price <= Decimal(1) - tick:
        raise ValueError(f"price {price} outside [{tick}, {Decimal(1) - tick}]")


def round_price_to_tick(price: Decimal, tick_size: Decimal, side: str) -> Decimal:
    """Price on the tick grid, rounded against the trader: BUY down, SELL up, then clamped."""
    tick = Decimal(tick_size)
    price_decimals, _ = _decimals(tick)
    rounding = ROUND_FLOOR if _side(side) == BUY else ROUND_CEILING
    rounded = _quantize(Decimal(price), price_decimals, rounding)
    return min(max(rounded, tick), Decimal(1) - tick)


def limit_order_amounts(
    side: str, price: Decimal, size: Decimal, tick_size: Decimal
) -> tuple[int, int, Decimal]:
    """(maker base units, taker base units, size used) for ``size`` shares at ``price``.

    BUY pays price x size pUSD for size shares; SELL gives size shares for that pUSD. Size is
    floored to 2 decimals, so the product has at most the tick's amount decimals and is exact.
    """
    check_price(price, tick_size)
    shares = _quantize(Decimal(size), SIZE_DECIMALS, ROUND_FLOOR)
    if shares <= 0:
        raise ValueError(f"size {size} rounds to zero shares")
    collateral = shares * price
    if _side(side) == BUY:
        return _base_units(collateral), _base_units(shares), shares
    return _base_units(shares), _base_units(collateral), shares


def market_order_amounts(
    side: str, amount: Decimal, price: Decimal, tick_size: Decimal
) -> tuple[int, int, Decimal]:
    """(maker, taker, price used) for a FOK/FAK market order, as py-clob-client-v2 rounds.

    BUY ``amount`` is pUSD to spend, SELL ``amount`` is shares to sell; ``price`` is the worst
    acceptable price (floored to the tick).
    """
    grid = _tick_grid(Decimal(tick_size))
    worst = Decimal(price).quantize(grid.price_unit, ROUND_FLOOR)
    if worst % grid.tick != 0 or not grid.tick <= worst <= grid.top:
        check_price(worst, tick_size)  # raises, with the message of the tick as given
    maker = Decimal(amount).quantize(_SIZE_UNIT, ROUND_FLOOR)
    if maker <= 0:
        raise ValueError(f"amount {amount} rounds to zero")
    if _side(side) == BUY:
        taker = maker / worst
        if -taker.as_tuple().exponent > grid.amount_decimals:  # type: ignore[operator]
            taker = taker.quantize(grid.fine_unit, ROUND_CEILING).quantize(
                grid.amount_unit, ROUND_FLOOR)
    else:
        taker = maker * worst
    return _base_units(maker), _base_units(taker), worst


def _sign(
    *,
    private_key: str | OrderKey,
    chain_id: int,
    token_id: str,
    side: str,
    maker_amount: int,
    taker_amount: int,
    neg_risk: bool,
    signature_type: int,
    funder: str | None,
    expiration: int,
    exchange_address: str | None,
    neg_risk_exchange_address: str | None,
    metadata: str | None,
    builder: str | None,
    salt: int | None,
    timestamp_ms: int | None,
) -> tuple[SignedOrderV2, str, str]:
    """Build and sign a V2 order; returns (order, EIP-712 order hash, exchange)."""
    try:
        sig_type = _SIGNATURE_TYPES[signature_type]
    except (KeyError, TypeError):  # not a known type: the Enum's own error
        sig_type = SignatureTypeV2(signature_type)
    key = order_key(private_key)
    if sig_type != SignatureTypeV2.EOA and not funder:
        raise ValueError(f"signature type {signature_type} needs a funder address")
    maker = funder or key.address
    # Type 3: the deposit wallet is both maker and signer; otherwise the EOA signs.
    signer = maker if sig_type == SignatureTypeV2.POLY_1271 else key.address
    exchange = exchange_address_for(
        chain_id, neg_risk, exchange_address, neg_risk_exchange_address
    )
    salt_text = str(salt) if salt is not None else generate_order_salt()
    token_text = str(token_id)
    timestamp = timestamp_ms if timestamp_ms is not None else time.time_ns() // 10**6
    side_enum = Side.BUY if side == BUY else Side.SELL
    metadata = metadata or BYTES32_ZERO
    builder = builder or BYTES32_ZERO
    order = SignedOrderV2(
        salt=salt_text,
        maker=maker,
        signer=signer,
        tokenId=token_text,
        makerAmount=str(maker_amount),
        takerAmount=str(taker_amount),
        side=side_enum,
        signatureType=sig_type,
        timestamp=str(timestamp),
        metadata=metadata,
        builder=builder,
        expiration=str(expiration),
    )
    app_domain = domain_separator(chain_id, exchange)
    # order_struct_hash(order), from the values before they became the order's strings.
    contents = _struct_hash(int(salt_text), _address_word(maker), _address_word(signer),
                            _token_word(token_text), int(maker_amount),
                            int(taker_amount), _SIDE_WORDS[side_enum], int(sig_type),
                            int(timestamp), metadata, builder)
    order_hash = keccak256(b"\x19\x01" + app_domain + contents)
    if sig_type == SignatureTypeV2.POLY_1271:
        # ERC-7739: the owner signs TypedDataSign(contents, the wallet's domain) under the
        # exchange's domain; the envelope carries that domain, the contents and the type.
        wrapped = keccak256(b"".join((
            _TYPED_DATA_SIGN_TYPE_HASH, contents, _DEPOSIT_WALLET_NAME_HASH,
            _DEPOSIT_WALLET_VERSION_HASH, _word(chain_id), _address_word(signer),
            _ZERO_WORD)))
        inner = key.sign_digest(keccak256(b"\x19\x01" + app_domain + wrapped))
        order.signature = ("0x" + inner.hex() + app_domain.hex() + contents.hex()
                           + _TYPE_STRING_SUFFIX)
    else:
        order.signature = "0x" + key.sign_digest(order_hash).hex()
    return order, "0x" + order_hash.hex(), exchange


def _check_order_type(order_type: str, expiration: int) -> str:
    kind = order_type.upper()
    if kind not in ORDER_TYPES:
        raise ValueError(f"order type must be one of {sorted(ORDER_TYPES)}, not {order_type!r}")
    if kind == "GTD":
        if expiration <= int(time.time()):
            raise ValueError("GTD orders need an expiration (unix seconds) in the future")
    elif expiration:
        raise ValueError(f"expiration is only meaningful for GTD orders, not {kind}")
    return kind


def build_signed_order(
    private_key: str | OrderKey,
    chain_id: int,
    token_id: str,
    side: str,
    price: Decimal,
    size: Decimal,
    order_type: str = "GTC",
    tick_size: Decimal = Decimal("0.01"),
    neg_risk: bool = False,
    signature_type: int = SIGNATURE_TYPE_EOA,
    funder: str | None = None,
    expiration: int = 0,
    *,
    exchange_address: str | None = None,
    neg_risk_exchange_address: str | None = None,
    metadata: str | None = None,
    builder: str | None = None,
    salt: int | None = None,
    timestamp_ms: int | None = None,
) -> SignedOrder:
    """Sign a V2 order for ``size`` shares at limit ``price`` (any of GTC/GTD/FOK/FAK)."""
    kind = _check_order_type(order_type, expiration)
    upper = _side(side)
    price = Decimal(price)
    maker_amount, taker_amount, shares = limit_order_amounts(upper, price, size, tick_size)
    order, order_hash, exchange = _sign(
        private_key=private_key, chain_id=chain_id, token_id=token_id, side=upper,
        maker_amount=maker_amount, taker_amount=taker_amount, neg_risk=neg_risk,
        signature_type=signature_type, funder=funder, expiration=expiration,
        exchange_address=exchange_address, neg_risk_exchange_address=neg_risk_exchange_address,
        metadata=metadata, builder=builder, salt=salt, timestamp_ms=timestamp_ms,
    )
    return SignedOrder(
        order=order, order_type=kind, order_hash=order_hash, exchange_address=exchange,
        chain_id=chain_id, side=upper, price=price, size=shares,
        maker_amount=maker_amount, taker_amount=taker_amount,
    )


def build_signed_market_order(
    private_key: str | OrderKey,
    chain_id: int,
    token_id: str,
    side: str,
    amount: Decimal,
    worst_price: Decimal,
    order_type: str = "FOK",
    tick_size: Decimal = Decimal("0.01"),
    neg_risk: bool = False,
    signature_type: int = SIGNATURE_TYPE_EOA,
    funder: str | None = None,
    *,
    exchange_address: str | None = None,
    neg_risk_exchange_address: str | None = None,
    metadata: str | None = None,
    builder: str | None = None,
    salt: int | None = None,
    timestamp_ms: int | None = None,
) -> SignedOrder:
    """Sign a FOK/FAK market order: BUY spends ``amount`` pUSD, SELL sells ``amount`` shares."""
    kind = _check_order_type(order_type, 0)
    if kind not in ("FOK", "FAK"):
        raise ValueError("market orders are FOK or FAK")
    upper = _side(side)
    maker_amount, taker_amount, price = market_order_amounts(
        upper, Decimal(amount), Decimal(worst_price), tick_size
    )
    order, order_hash, exchange = _sign(
        private_key=private_key, chain_id=chain_id, token_id=token_id, side=upper,
        maker_amount=maker_amount, taker_amount=taker_amount, neg_risk=neg_risk,
        signature_type=signature_type, funder=funder, expiration=0,
        exchange_address=exchange_address, neg_risk_exchange_address=neg_risk_exchange_address,
        metadata=metadata, builder=builder, salt=salt, timestamp_ms=timestamp_ms,
    )
    shares = Decimal(taker_amount if upper == BUY else maker_amount) / BASE_UNITS
    return SignedOrder(
        order=order, order_type=kind, order_hash=order_hash, exchange_address=exchange,
        chain_id=chain_id, side=upper, price=price, size=shares,
        maker_amount=maker_amount, taker_amount=taker_amount,
    )


def l1_headers(
    private_key: str, chain_id: int, timestamp: int | None = None, nonce: int = 0
) -> dict[str, str]:
    """POLY_* headers proving control of the key (for creating/deriving API keys)."""
    ts = int(time.time()) if timestamp is None else timestamp
    return create_level_1_headers(Signer(private_key, chain_id), nonce=nonce, timestamp=ts)


def l2_headers(
    creds: ApiCreds,
    method: str,
    request_path: str,
    body: str | None = None,
    timestamp: int | None = None,
) -> dict[str, str]:
    """POLY_* API-key headers; ``method`` uppercase, ``body`` the exact text sent, path
    without the query string (and without any base-URL prefix such as the sandbox's /clob)."""
    ts = int(time.time()) if timestamp is None else timestamp
    signature = build_hmac_signature(creds.secret, str(ts), method, request_path, body)
    return {
        POLY_ADDRESS: creds.address,
        POLY_SIGNATURE: signature,
        POLY_TIMESTAMP: str(ts),
        POLY_API_KEY: creds.api_key,
        POLY_PASSPHRASE: creds.passphrase,
    }


__all__ = [
    "SIGNATURE_TYPE_EOA",
    "SIGNATURE_TYPE_POLY_1271",
    "OrderKey",
    "SignedOrder",
    "address_of",
    "build_signed_market_order",
    "build_signed_order",
    "check_price",
    "compact_json",
    "domain_separator",
    "exchange_address_for",
    "l1_headers",
    "l2_headers",
    "limit_order_amounts",
    "market_order_amounts",
    "order_key",
    "order_struct_hash",
    "round_price_to_tick",
]
