"""CTF Exchange V2/V3 order hashing and signature checks (EIP-712, types 0-3).

Mirrors what the exchange contract verifies: the Order struct of
py-clob-client-v2 (domain "Polymarket CTF Exchange" version "2"), a plain
65-byte ECDSA signature for EOA/proxy/Safe orders (types 0-2), and for type 3
(deposit wallet, ERC-1271) the ERC-7739 wrapped signature whose inner ECDSA
signature must come from an owner of the wallet, or from an authorized session signer
when the whole is wrapped again in the session-signer envelope (ACCOUNTS.md §2.5, §2.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from eth_abi import encode as abi_encode
from eth_utils import keccak, to_checksum_address

from devstack.venue.auth import recover_digest_signer
from devstack.venue.batch import open_session_envelope

ORDER_TYPE_STRING = (
    "Order(uint256 salt,address maker,address signer,uint256 tokenId,"
    "uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,"
    "uint256 timestamp,bytes32 metadata,bytes32 builder)"
)
_ORDER_TYPE_HASH = keccak(text=ORDER_TYPE_STRING)
_DOMAIN_TYPE_HASH = keccak(
    text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
)
_TYPED_DATA_SIGN_TYPE_HASH = keccak(
    text="TypedDataSign(Order contents,string name,string version,uint256 chainId,"
    "address verifyingContract,bytes32 salt)" + ORDER_TYPE_STRING
)
_EXCHANGE_NAME = "Polymarket CTF Exchange"
EXCHANGE_VERSIONS = ("2", "3")  # the domain versions of Exchange V2 and Exchange V3

SIG_EOA = 0
SIG_POLY_PROXY = 1
SIG_POLY_GNOSIS_SAFE = 2
SIG_POLY_1271 = 3


@dataclass(frozen=True)
class SignedOrder:
    """The signed part of a V2 order as sent in POST /order (plus its signature)."""

    salt: int
    maker: str
    signer: str
    token_id: int
    maker_amount: int
    taker_amount: int
    side: int  # 0 BUY, 1 SELL
    signature_type: int
    timestamp: int
    metadata: bytes
    builder: bytes
    expiration: int
    signature: str


def _bytes32(value: str) -> bytes:
    raw = bytes.fromhex((value or "0x").removeprefix("0x") or "")
    if len(raw) > 32:
        raise ValueError("bytes32 too long")
    return raw.rjust(32, b"\x00")


@lru_cache(maxsize=8192)
def checksum(address: str) -> str:
    """The EIP-55 form of an address (cached: the same few wallets trade all day)."""
    return to_checksum_address(address)


def parse_order(payload: dict) -> SignedOrder:
    """Parse the JSON `order` object; raises ValueError/KeyError/TypeError on bad input."""
    side_text = payload["side"]
    if side_text not in ("BUY", "SELL"):
        raise ValueError("side")
    order = SignedOrder(
        salt=int(payload["salt"]),
        maker=checksum(payload["maker"]),
        signer=checksum(payload["signer"]),
        token_id=int(str(payload["tokenId"])),
        maker_amount=int(str(payload["makerAmount"])),
        taker_amount=int(str(payload["takerAmount"])),
        side=0 if side_text == "BUY" else 1,
        signature_type=int(payload["signatureType"]),
        timestamp=int(str(payload["timestamp"])),
        metadata=_bytes32(payload.get("metadata") or "0x"),
        builder=_bytes32(payload.get("builder") or "0x"),
        expiration=int(str(payload.get("expiration") or "0")),
        signature=str(payload["signature"]),
    )
    for value in (order.salt, order.token_id, order.maker_amount, order.taker_amount,
                  order.timestamp):
        if value < 0 or value >= 2**256:
            raise ValueError("uint256 out of range")
    if not 0 <= order.signature_type < 256:
        raise ValueError("uint8 out of range")
    if order.maker_amount == 0 or order.taker_amount == 0:
        raise ValueError("zero amount")
    return order


@lru_cache(maxsize=64)
def exchange_domain_separator(chain_id: int, exchange: str, version: str = "2") -> bytes:
    """Domain separator of the exchange at `exchange` on `chain_id` (domain `version`)."""
    return keccak(
        abi_encode(
            ["bytes32", "bytes32", "bytes32", "uint256", "address"],
            [
                _DOMAIN_TYPE_HASH,
                keccak(text=_EXCHANGE_NAME),
                keccak(text=version),
                chain_id,
                to_checksum_address(exchange),
            ],
        )
    )


def _uint(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _address(value: str) -> bytes:
    return bytes.fromhex(value[2:]).rjust(32, b"\x00")


def order_struct_hash(order: SignedOrder) -> bytes:
    """hashStruct(Order) for a V2 order (ABI-encoded by hand: every field is one word)."""
    return keccak(
        _ORDER_TYPE_HASH + _uint(order.salt) + _address(order.maker)
        + _address(order.signer) + _uint(order.token_id) + _uint(order.maker_amount)
        + _uint(order.taker_amount) + _uint(order.side) + _uint(order.signature_type)
        + _uint(order.timestamp) + order.metadata + order.builder
    )


def order_digest(order: SignedOrder, chain_id: int, exchange: str,
                 version: str = "2") -> bytes:
    """The EIP-712 digest of an order; its hex is also the venue's order id."""
    return keccak(
        b"\x19\x01" + exchange_domain_separator(chain_id, exchange, version)
        + order_struct_hash(order)
    )


def recover_order_signer(order: SignedOrder, chain_id: int, exchange: str,
                         digest: bytes | None = None, version: str = "2") -> str | None:
    """Return the EOA whose signature authorises the order, or None when it does not verify.

    Types 0-2: the plain ECDSA signer of the order digest (pass ``digest`` when already
    computed). Type 3: the signer of the inner signature of the ERC-7739 envelope, after
    checking that the envelope carries this exchange's domain, this order's
    struct hash and the Order type string.
    """
    if order.signature_type in (SIG_EOA, SIG_POLY_PROXY, SIG_POLY_GNOSIS_SAFE):
        if digest is None:
            digest = order_digest(order, chain_id, exchange, version)
        return recover_digest_signer(digest, order.signature)
    if order.signature_type == SIG_POLY_1271:
        return recover_deposit_wallet_signer(order, chain_id, exchange, version)[0]
    return None


def recover_deposit_wallet_signer(order: SignedOrder, chain_id: int, exchange: str,
                                  version: str = "2") -> tuple[str | None, bool]:
    """(who signed a type-3 order, whether through the session-signer envelope); the
    signer is None when the signature does not verify. An envelope names its signer, and
    the ERC-7739 signature inside must recover to that same address."""
    try:
        raw = bytes.fromhex(order.signature.removeprefix("0x"))
    except ValueError:
        return None, False
    opened = open_session_envelope(raw)
    if opened is None:
        return _recover_erc7739(raw, order, chain_id, exchange, version), False
    named, inner = opened
    signer = _recover_erc7739(inner, order, chain_id, exchange, version)
    return (named if signer == named else None), True


def _recover_erc7739(raw: bytes, order: SignedOrder, chain_id: int, exchange: str,
                     version: str) -> str | None:
    type_bytes = ORDER_TYPE_STRING.encode()
    expected_len = 65 + 32 + 32 + len(type_bytes) + 2
    if len(raw) != expected_len:
        return None
    inner, domain, contents = raw[:65], raw[65:97], raw[97:129]
    type_string, length = raw[129:-2], int.from_bytes(raw[-2:], "big")
    app_domain = exchange_domain_separator(chain_id, exchange, version)
    contents_hash = order_struct_hash(order)
    if domain != app_domain or contents != contents_hash:
        return None
    if type_string != type_bytes or length != len(type_bytes):
        return None
    sign_struct = keccak(
        abi_encode(
            ["bytes32", "bytes32", "bytes32", "bytes32", "uint256", "address", "bytes32"],
            [
                _TYPED_DATA_SIGN_TYPE_HASH,
                contents_hash,
                keccak(text="DepositWallet"),
                keccak(text="1"),
                chain_id,
                order.signer,
                b"\x00" * 32,
            ],
        )
    )
    digest = keccak(b"\x19\x01" + app_domain + sign_struct)
    return recover_digest_signer(digest, "0x" + inner.hex())
