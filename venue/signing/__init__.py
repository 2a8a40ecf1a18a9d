"""Order signing and CLOB auth headers; the public names of the modules below, in one place.

- ``amounts``: order amounts in base units, rounded in Decimal on the tick grid;
- ``eip712``: the hand-rolled EIP-712 struct hash and domains, ERC-7739 wrapping, Keccak,
  the session-signer envelope;
- ``keys``: ``OrderKey``, an opened secp256k1 key with its address derived once;
- ``orders``: orders built and signed for signature types 0 and 3 (owner or session key),
  their ``POST /order`` body;
- ``auth``: L1 (ClobAuth) and L2 (HMAC) headers; the relayer's builder (HMAC) headers.
"""

from venue.signing.amounts import (
    BASE_UNITS,
    SIZE_DECIMALS,
    check_price,
    limit_order_amounts,
    market_order_amounts,
    round_price_to_tick,
    snap_to_tick,
)
from venue.signing.auth import builder_headers, l1_headers, l2_headers
from venue.signing.eip712 import (
    BYTES32_ZERO,
    ORDER_TYPE_STRING,
    domain_separator,
    keccak256,
    order_struct_hash,
    session_signer_envelope,
)
from venue.signing.keys import OrderKey, address_of, is_private_key, order_key
from venue.signing.orders import (
    SIGNATURE_TYPE_EOA,
    SIGNATURE_TYPE_POLY_1271,
    SIGNATURE_TYPE_POLY_GNOSIS_SAFE,
    SIGNATURE_TYPE_POLY_PROXY,
    SignedOrder,
    build_signed_market_order,
    build_signed_order,
    compact_json,
    exchange_address_for,
)

__all__ = [
    "BASE_UNITS",
    "BYTES32_ZERO",
    "ORDER_TYPE_STRING",
    "SIGNATURE_TYPE_EOA",
    "SIGNATURE_TYPE_POLY_1271",
    "SIGNATURE_TYPE_POLY_GNOSIS_SAFE",
    "SIGNATURE_TYPE_POLY_PROXY",
    "SIZE_DECIMALS",
    "OrderKey",
    "SignedOrder",
    "address_of",
    "build_signed_market_order",
    "build_signed_order",
    "builder_headers",
    "check_price",
    "compact_json",
    "domain_separator",
    "exchange_address_for",
    "is_private_key",
    "keccak256",
    "l1_headers",
    "l2_headers",
    "limit_order_amounts",
    "market_order_amounts",
    "order_key",
    "order_struct_hash",
    "round_price_to_tick",
    "session_signer_envelope",
    "snap_to_tick",
]
