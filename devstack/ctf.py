"""ConditionalTokens ids (condition, collection, position), shared by the sandbox and dev chain.

Same arithmetic as Gnosis ConditionalTokens (CTHelpers), so a local chain that
prepares the same condition with the same collateral agrees with the sandbox:

* conditionId  = keccak256(abi.encodePacked(oracle, questionId, uint256 outcomeSlotCount))
* collectionId = a point on alt_bn128 derived from keccak256(conditionId, indexSet),
  compressed to 32 bytes (no parent collection here)
* positionId   = uint256(keccak256(abi.encodePacked(collateralToken, collectionId)))

Verified against a live Polymarket market (Xi Jinping, USDC.e collateral) in the tests.
"""

from __future__ import annotations

from eth_utils import keccak, to_canonical_address

# alt_bn128 field modulus and curve constant b (y^2 = x^3 + 3)
_FIELD_P = 21888242871839275222246405745257275088696311157297823662689037894645226208583
_CURVE_B = 3


def _bytes32(hex_value: str) -> bytes:
    raw = bytes.fromhex(hex_value.removeprefix("0x"))
    if len(raw) != 32:
        raise ValueError("expected 32 bytes")
    return raw


def condition_id(oracle: str, question_id: str, outcome_slot_count: int = 2) -> str:
    """Return the CTF condition id (0x + 64 hex) for an oracle, question id and slot count."""
    packed = (
        to_canonical_address(oracle)
        + _bytes32(question_id)
        + outcome_slot_count.to_bytes(32, "big")
    )
    return "0x" + keccak(packed).hex()


def collection_id(condition: str, index_set: int) -> bytes:
    """Return the 32-byte CTF collection id of one outcome set (root parent collection)."""
    x = int.from_bytes(keccak(_bytes32(condition) + index_set.to_bytes(32, "big")), "big")
    odd = x >> 255 != 0
    while True:
        x = (x + 1) % _FIELD_P
        yy = (x * x * x + _CURVE_B) % _FIELD_P
        # p = 3 mod 4, so a square root is yy^((p+1)/4) when one exists
        y = pow(yy, (_FIELD_P + 1) // 4, _FIELD_P)
        if y * y % _FIELD_P == yy:
            break
    if (odd and y % 2 == 0) or (not odd and y % 2 == 1):
        y = _FIELD_P - y
    if y % 2 == 1:
        x ^= 1 << 254
    return x.to_bytes(32, "big")


def position_id(collateral: str, condition: str, index_set: int) -> int:
    """Return the ERC-1155 position (token) id for a collateral, condition and index set."""
    packed = to_canonical_address(collateral) + collection_id(condition, index_set)
    return int.from_bytes(keccak(packed), "big")


def binary_token_ids(collateral: str, condition: str) -> tuple[str, str]:
    """Return the (outcome 0, outcome 1) token ids of a two-outcome condition as strings."""
    return (
        str(position_id(collateral, condition, 1)),
        str(position_id(collateral, condition, 2)),
    )


def protocol_position_ids(condition: str, module: int = 1) -> tuple[str, str]:
    """The (outcome 0, outcome 1) position ids of a protocol-v2 market (traded on Exchange V3).

    The layout the official SDK decodes: the module in the top byte, the condition's
    leading bytes below it, bits 40..103 zero, the outcome index in the low byte.
    """
    body = int(condition.removeprefix("0x"), 16) >> 112 << 104  # keep 144 bits of the id
    base = (module << 248) | (body & ((1 << 248) - 1))
    return str(base), str(base | 1)


# A protocol-v2 position id leaves bits 40..103 zero; a CTF position id (a keccak) never does.
_POSITION_ID_RESERVED_BITS = ((1 << 64) - 1) << 40


def is_protocol_position_id(token_id: str) -> bool:
    """True when ``token_id`` is a protocol-v2 position id (its balance asset type is
    ``CONDITIONAL-V2``), False for a CTF token id or anything that is no uint256."""
    try:
        value = int(str(token_id).strip(), 0) if str(token_id).strip().lower().startswith(
            "0x") else int(str(token_id).strip())
    except ValueError:
        return False
    return 0 <= value < 2**256 and value & _POSITION_ID_RESERVED_BITS == 0
