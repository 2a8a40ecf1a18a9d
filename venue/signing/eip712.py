"""EIP-712 hashing of V2 orders, by hand: the fixed Order struct, domains, ERC-7739 wrapping.

py-clob-client-v2 re-encodes the typed data twice per order; we hash the fixed struct from
the integers at hand (not parsed back from the order's strings) with the domain separator
computed once per exchange, which is what lets an order sign in a tenth of the library's
time, byte for byte the same (tests compare the two).

The per-order Keccak runs on one pycryptodome state per thread (reset, not re-created),
through pycryptodome's private C binding. Where that binding is missing or changed, the
module falls back to pycryptodome's public ``keccak.new`` (same digests, slower); tests
check that both give the same bytes. ``KECCAK_BACKEND`` says which one is in use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from Crypto.Hash import keccak as _public_keccak
from eth_hash.auto import keccak

if TYPE_CHECKING:
    from py_clob_client_v2.order_utils.model.order_data_v2 import SignedOrderV2

try:  # pycryptodome's private binding: a Keccak state we can reset (see _KeccakState)
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
except ImportError:  # a pycryptodome without these names: the public API below serves
    _raw_keccak_lib = None

Buffer = bytes | bytearray | memoryview

BYTES32_ZERO = "0x" + "00" * 32
ORDER_TYPE_STRING = (
    "Order(uint256 salt,address maker,address signer,uint256 tokenId,"
    "uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,"
    "uint256 timestamp,bytes32 metadata,bytes32 builder)"
)
_ORDER_TYPE_HASH = keccak(ORDER_TYPE_STRING.encode())
_DOMAIN_TYPE_HASH = keccak(
    b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
_EXCHANGE_NAME_HASH = keccak(b"Polymarket CTF Exchange")
# The exchange's EIP-712 domain version per protocol: "2" (V2 exchanges), "3" (Exchange V3).
EXCHANGE_VERSIONS = ("2", "3")
_EXCHANGE_VERSION_HASHES = {version: keccak(version.encode()) for version in EXCHANGE_VERSIONS}
# ERC-7739 (Solady) nested typed-data signature of a deposit wallet (type 3).
_TYPED_DATA_SIGN_TYPE_HASH = keccak(
    b"TypedDataSign(Order contents,string name,string version,uint256 chainId,"
    b"address verifyingContract,bytes32 salt)" + ORDER_TYPE_STRING.encode())
_DEPOSIT_WALLET_NAME_HASH = keccak(b"DepositWallet")
_DEPOSIT_WALLET_VERSION_HASH = keccak(b"1")
_TYPE_STRING_SUFFIX = (ORDER_TYPE_STRING.encode().hex()
                       + len(ORDER_TYPE_STRING).to_bytes(2, "big").hex())
ZERO_WORD = bytes(32)


# --- Keccak-256 ----------------------------------------------------------------------------


def public_keccak256(data: Buffer) -> bytes:
    """Keccak-256 of ``data`` through pycryptodome's public API (a new hash object per call)."""
    return _public_keccak.new(data=data, digest_bits=256).digest()


class _KeccakState(threading.local):
    """One pycryptodome Keccak state and output buffer per thread, reset for each digest.

    ``keccak.new`` allocates a state, a smart pointer and a buffer per call, which costs
    more than hashing the few hundred bytes of an order; the C state is freed with the
    thread's copy of this object.
    """

    def __init__(self) -> None:
        # Keccak-256 (the original padding 0x01, not SHA3's 0x06): capacity 64 bytes, 24 rounds.
        pointer = VoidPointer()
        if _raw_keccak_lib.keccak_init(pointer.address_of(), c_size_t(64), c_ubyte(24)):
            raise ValueError("could not initialise a keccak state")
        self.owner = SmartPointer(pointer.get(), _raw_keccak_lib.keccak_destroy)
        self.state = pointer.get()
        self.out = create_string_buffer(32)


def _reused_state_keccak256() -> Callable[[Buffer], bytes]:
    """Keccak-256 on the thread's reused state (raises where the private binding differs)."""
    local = _KeccakState()
    lib = _raw_keccak_lib
    reset, absorb, digest = lib.keccak_reset, lib.keccak_absorb, lib.keccak_digest
    padding, digest_size = c_ubyte(0x01), c_size_t(32)

    def keccak256(data: Buffer) -> bytes:
        """Keccak-256 of ``data`` (what eth_hash's ``keccak`` returns), without per-call objects."""
        state, out = local.state, local.out
        # bytes reach C as they are (both pycryptodome backends); other buffers need a pointer.
        pointer = data if type(data) is bytes else c_uint8_ptr(data)
        # Reset first: a digest interrupted between absorb and squeeze leaves nothing behind.
        if (reset(state) or absorb(state, pointer, c_size_t(len(data)))
                or digest(state, out, digest_size, padding)):
            raise ValueError("keccak failed")
        return get_raw_buffer(out)

    return keccak256


def _choose_keccak256() -> tuple[Callable[[Buffer], bytes], str]:
    """The reused-state Keccak when the private binding works and agrees, else the public one."""
    if _raw_keccak_lib is not None:
        try:
            fast = _reused_state_keccak256()
            probe = bytes(range(200))  # longer than one 136-byte block
            if fast(probe) == public_keccak256(probe) and fast(b"") == public_keccak256(b""):
                return fast, "pycryptodome-state"
        except (AttributeError, OSError, TypeError, ValueError):
            pass  # a changed binding: fall through to the public API
    return public_keccak256, "pycryptodome-public"


keccak256, KECCAK_BACKEND = _choose_keccak256()


# --- struct encoding -----------------------------------------------------------------------


def word(value: int) -> bytes:
    """A uint256 as its 32-byte ABI word."""
    return value.to_bytes(32, "big")


@lru_cache(maxsize=4096)
def address_word(address: str) -> bytes:
    """An address as its 32-byte ABI word (cached: a copier's addresses recur on every order)."""
    return bytes.fromhex(address.removeprefix("0x")).rjust(32, b"\x00")


@lru_cache(maxsize=4096)
def token_word(token_id: str) -> bytes:
    """A decimal token id as its 32-byte word (cached: one fill signs it for every follower)."""
    return int(token_id).to_bytes(32, "big")


def _bytes32_of(value: str) -> bytes:
    if value == BYTES32_ZERO:  # metadata and builder, on every order we sign
        return ZERO_WORD
    return bytes.fromhex(value.removeprefix("0x").zfill(64))


@lru_cache(maxsize=64)
def domain_separator(chain_id: int, exchange: str, version: str = "2") -> bytes:
    """EIP-712 domain separator of the exchange at ``exchange`` (domain ``version``; cached)."""
    try:
        version_hash = _EXCHANGE_VERSION_HASHES[version]
    except KeyError:
        raise ValueError(f"exchange version must be one of {EXCHANGE_VERSIONS}, "
                         f"not {version!r}") from None
    return keccak(_DOMAIN_TYPE_HASH + _EXCHANGE_NAME_HASH + version_hash
                  + word(chain_id) + address_word(exchange))


def order_struct_hash(order: SignedOrderV2) -> bytes:
    """hashStruct(Order) of a V2 order."""
    return struct_hash(int(order.salt), address_word(order.maker),
                       address_word(order.signer), word(int(order.tokenId)),
                       int(order.makerAmount), int(order.takerAmount), word(int(order.side)),
                       int(order.signatureType), int(order.timestamp), order.metadata,
                       order.builder)


def struct_hash(salt: int, maker_word: bytes, signer_word: bytes, token_word: bytes,
                maker_amount: int, taker_amount: int, side_word: bytes, signature_type: int,
                timestamp: int, metadata: str, builder: str) -> bytes:
    """hashStruct(Order) from the integers and words the order is built from."""
    # The integers the order was built from, so signing does not parse its strings back.
    return keccak256(b"".join((
        _ORDER_TYPE_HASH, salt.to_bytes(32, "big"), maker_word, signer_word, token_word,
        maker_amount.to_bytes(32, "big"), taker_amount.to_bytes(32, "big"), side_word,
        signature_type.to_bytes(32, "big"), timestamp.to_bytes(32, "big"),
        _bytes32_of(metadata), _bytes32_of(builder))))


def typed_data_digest(domain: bytes, struct: bytes) -> bytes:
    """keccak256(0x1901 || domain separator || hashStruct): what an EIP-712 signature signs."""
    return keccak256(b"\x19\x01" + domain + struct)


# --- ERC-7739 (deposit wallets, signature type 3) ------------------------------------------


def deposit_wallet_digest(app_domain: bytes, contents: bytes, chain_id: int,
                          wallet: str) -> bytes:
    """What the wallet's owner signs: TypedDataSign(contents, the wallet's domain) under the
    exchange's domain ``app_domain``."""
    wrapped = keccak256(b"".join((
        _TYPED_DATA_SIGN_TYPE_HASH, contents, _DEPOSIT_WALLET_NAME_HASH,
        _DEPOSIT_WALLET_VERSION_HASH, word(chain_id), address_word(wallet), ZERO_WORD)))
    return typed_data_digest(app_domain, wrapped)


def deposit_wallet_signature(inner: bytes, app_domain: bytes, contents: bytes) -> str:
    """The ERC-7739 envelope: the owner's signature, then the domain, contents and type."""
    return "0x" + inner.hex() + app_domain.hex() + contents.hex() + _TYPE_STRING_SUFFIX


# --- session signers (a key the wallet's owner authorized) ---------------------------------

# ERC-6492-style magic suffix the deposit wallet recognises as a session-signer envelope.
SESSION_SIGNER_MAGIC = bytes.fromhex("6492" * 16)


def session_signer_envelope(session_signer: str, signature: bytes) -> bytes:
    """``abi.encode(bytes32(signer), bytes32(0), bytes signature) ‖ magic``: a signature made
    by a session key rather than the wallet's owner, as the wallet expects it (§2.5 item 5)."""
    # abi.encode's head: two static words, then the offset (0x60) of the dynamic bytes.
    return b"".join((address_word(session_signer), ZERO_WORD, (96).to_bytes(32, "big"),
                     len(signature).to_bytes(32, "big"),
                     signature, b"\x00" * (-len(signature) % 32), SESSION_SIGNER_MAGIC))
