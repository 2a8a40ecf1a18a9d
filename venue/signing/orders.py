"""V2 orders built and signed for signature types 0 (EOA) and 3 (deposit wallet), and their
``POST /order`` body.

Amounts come from ``amounts`` (Decimal), the digest from ``eip712``, the signature from
libsecp256k1 (``keys.OrderKey``): byte for byte what py-clob-client-v2's
``ExchangeOrderBuilderV2`` produces (tests compare the two). Type 3 gets the ERC-7739-wrapped
signature; signed by a session key the owner authorized, that signature is wrapped again in
the session-signer envelope (the official SDK's form; tests compare the two). The body is
written directly in the library's key order (tests compare it with
``json.dumps`` of the library's dict).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from py_clob_client_v2.config import get_contract_config
from py_clob_client_v2.order_utils import Side, SignatureTypeV2
from py_clob_client_v2.order_utils.model.order_data_v2 import SignedOrderV2, order_to_json_v2
from py_clob_client_v2.order_utils.utils import generate_order_salt

from venue.models import BUY, ORDER_TYPES
from venue.signing.amounts import (
    BASE_UNITS,
    checked_side,
    limit_order_amounts,
    market_order_amounts,
)
from venue.signing.eip712 import (
    BYTES32_ZERO,
    address_word,
    deposit_wallet_digest,
    deposit_wallet_signature,
    domain_separator,
    session_signer_envelope,
    struct_hash,
    token_word,
    typed_data_digest,
)
from venue.signing.keys import OrderKey, order_key

SIGNATURE_TYPE_EOA = 0
SIGNATURE_TYPE_POLY_PROXY = 1
SIGNATURE_TYPE_POLY_GNOSIS_SAFE = 2
SIGNATURE_TYPE_POLY_1271 = 3  # deposit wallet / smart-contract wallet maker

_SIDE_WORDS = {side: int(side).to_bytes(32, "big") for side in Side}
# Calling an Enum class to look a member up costs more than the dict it ends up reading.
_SIGNATURE_TYPES = {int(kind): kind for kind in SignatureTypeV2}


def public_json_string(text: str) -> str:
    """``text`` as a JSON string literal, non-ASCII kept (what json.dumps writes for it)."""
    return json.dumps(text, ensure_ascii=False)


# The string encoder json.dumps itself uses with ensure_ascii=False (skips dumps' dispatch);
# not in json's documented API, so the public equivalent stands in where it is missing.
_json_string = getattr(json.encoder, "encode_basestring", None) or public_json_string
_STR_ONLY = {str}


def compact_json(value: Any) -> str:
    """JSON as the CLOB clients serialise it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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
    exchange_version: str = "2"  # the EIP-712 domain version: "2", or "3" (Exchange V3)

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


def exchange_address_for(
    chain_id: int,
    neg_risk: bool,
    exchange_address: str | None = None,
    neg_risk_exchange_address: str | None = None,
    *,
    version: str = "2",
    exchange_v3_address: str | None = None,
) -> str:
    """Exchange contract that orders are signed for (overrides win, else the lib's table).

    Version "3" orders go to Exchange V3, neg-risk or not; "2" to the V2 pair.
    """
    if version == "3":
        return exchange_v3_address or _exchanges(chain_id)[2]
    override = neg_risk_exchange_address if neg_risk else exchange_address
    if override:
        return override
    exchange, neg_risk_exchange, _ = _exchanges(chain_id)
    return neg_risk_exchange if neg_risk else exchange


@lru_cache(maxsize=16)
def _exchanges(chain_id: int) -> tuple[str, str, str]:
    # The library rebuilds its whole contract table on every lookup.
    contracts = get_contract_config(chain_id)
    return contracts.exchange_v2, contracts.neg_risk_exchange_v2, contracts.exchange_v3


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
    session_key: bool = False,
    exchange_version: str = "2",
    exchange_v3_address: str | None = None,
) -> tuple[SignedOrderV2, str, str]:
    """Build and sign a V2/V3 order; returns (order, EIP-712 order hash, exchange)."""
    try:
        sig_type = _SIGNATURE_TYPES[signature_type]
    except (KeyError, TypeError):  # not a known type: the Enum's own error
        sig_type = SignatureTypeV2(signature_type)
    key = order_key(private_key)
    if sig_type != SignatureTypeV2.EOA and not funder:
        raise ValueError(f"signature type {signature_type} needs a funder address")
    if session_key and sig_type != SignatureTypeV2.POLY_1271:
        raise ValueError("only deposit-wallet (type 3) orders can be signed by a session key")
    maker = funder or key.address
    # Type 3: the deposit wallet is both maker and signer; otherwise the EOA signs.
    signer = maker if sig_type == SignatureTypeV2.POLY_1271 else key.address
    exchange = exchange_address_for(
        chain_id, neg_risk, exchange_address, neg_risk_exchange_address,
        version=exchange_version, exchange_v3_address=exchange_v3_address,
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
    app_domain = domain_separator(chain_id, exchange, exchange_version)
    # order_struct_hash(order), from the values before they became the order's strings.
    contents = struct_hash(int(salt_text), address_word(maker), address_word(signer),
                           token_word(token_text), int(maker_amount),
                           int(taker_amount), _SIDE_WORDS[side_enum], int(sig_type),
                           int(timestamp), metadata, builder)
    order_hash = typed_data_digest(app_domain, contents)
    if sig_type == SignatureTypeV2.POLY_1271:
        # ERC-7739: the owner signs the order nested in the wallet's domain; the envelope
        # carries the exchange's domain, the contents and the type for the wallet to check.
        inner = key.sign_digest(deposit_wallet_digest(app_domain, contents, chain_id, signer))
        order.signature = deposit_wallet_signature(inner, app_domain, contents)
        if session_key:
            # The wallet learns which of its authorized keys signed from the envelope.
            wrapped = session_signer_envelope(key.address, bytes.fromhex(order.signature[2:]))
            order.signature = "0x" + wrapped.hex()
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
    session_key: bool = False,
    exchange_version: str = "2",
    exchange_v3_address: str | None = None,
) -> SignedOrder:
    """Sign a V2 order for ``size`` shares at limit ``price`` (any of GTC/GTD/FOK/FAK)."""
    kind = _check_order_type(order_type, expiration)
    upper = checked_side(side)
    price = Decimal(price)
    maker_amount, taker_amount, shares = limit_order_amounts(upper, price, size, tick_size)
    order, order_hash, exchange = _sign(
        private_key=private_key, chain_id=chain_id, token_id=token_id, side=upper,
        maker_amount=maker_amount, taker_amount=taker_amount, neg_risk=neg_risk,
        signature_type=signature_type, funder=funder, expiration=expiration,
        exchange_address=exchange_address, neg_risk_exchange_address=neg_risk_exchange_address,
        metadata=metadata, builder=builder, salt=salt, timestamp_ms=timestamp_ms,
        session_key=session_key, exchange_version=exchange_version,
        exchange_v3_address=exchange_v3_address,
    )
    return SignedOrder(
        order=order, order_type=kind, order_hash=order_hash, exchange_address=exchange,
        chain_id=chain_id, side=upper, price=price, size=shares,
        maker_amount=maker_amount, taker_amount=taker_amount,
        exchange_version=exchange_version,
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
    session_key: bool = False,
    exchange_version: str = "2",
    exchange_v3_address: str | None = None,
) -> SignedOrder:
    """Sign a FOK/FAK market order: BUY spends ``amount`` pUSD, SELL sells ``amount`` shares."""
    kind = _check_order_type(order_type, 0)
    if kind not in ("FOK", "FAK"):
        raise ValueError("market orders are FOK or FAK")
    upper = checked_side(side)
    maker_amount, taker_amount, price = market_order_amounts(
        upper, Decimal(amount), Decimal(worst_price), tick_size
    )
    order, order_hash, exchange = _sign(
        private_key=private_key, chain_id=chain_id, token_id=token_id, side=upper,
        maker_amount=maker_amount, taker_amount=taker_amount, neg_risk=neg_risk,
        signature_type=signature_type, funder=funder, expiration=0,
        exchange_address=exchange_address, neg_risk_exchange_address=neg_risk_exchange_address,
        metadata=metadata, builder=builder, salt=salt, timestamp_ms=timestamp_ms,
        session_key=session_key, exchange_version=exchange_version,
        exchange_v3_address=exchange_v3_address,
    )
    shares = Decimal(taker_amount if upper == BUY else maker_amount) / BASE_UNITS
    return SignedOrder(
        order=order, order_type=kind, order_hash=order_hash, exchange_address=exchange,
        chain_id=chain_id, side=upper, price=price, size=shares,
        maker_amount=maker_amount, taker_amount=taker_amount,
        exchange_version=exchange_version,
    )
