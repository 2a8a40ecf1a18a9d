"""Conditional Tokens ids, computed off-chain exactly as Gnosis ConditionalTokens does.

conditionId = keccak256(oracle ‖ questionId ‖ outcomeSlotCount); a collection id is a
compressed alt_bn128 curve point (nested collections add as points); positionId =
keccak256(collateral ‖ collectionId). Polymarket's token ids are these position ids.
"""

from __future__ import annotations

from eth_utils import keccak, to_bytes, to_canonical_address

# alt_bn128: y^2 = x^3 + 3 over the prime field of P (P = 3 mod 4, so sqrt(a) = a^((P+1)/4))
P = 21888242871839275222246405745257275088696311157297823662689037894645226208583
_B = 3
_ODD_FLAG = 1 << 254
ZERO_COLLECTION = b"\x00" * 32


def _b32(value: bytes | str) -> bytes:
    raw = to_bytes(hexstr=value) if isinstance(value, str) else value
    if len(raw) != 32:
        raise ValueError(f"expected 32 bytes, got {len(raw)}")
    return raw


def _sqrt(a: int) -> int:
    return pow(a, (P + 1) // 4, P)


def _ec_add(p1: tuple[int, int], p2: tuple[int, int]) -> tuple[int, int]:
    """Affine point addition as the ecAdd precompile does ((0, 0) is the point at infinity)."""
    (x1, y1), (x2, y2) = p1, p2
    if (x1, y1) == (0, 0):
        return p2
    if (x2, y2) == (0, 0):
        return p1
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return (0, 0)
        slope = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (slope * slope - x1 - x2) % P
    return x3, (slope * (x1 - x3) - y1) % P


def condition_id(oracle: str, question_id: bytes | str, outcome_slot_count: int) -> str:
    """Return the condition id (0x hex) of a question prepared by an oracle."""
    slots = outcome_slot_count.to_bytes(32, "big")
    packed = to_canonical_address(oracle) + _b32(question_id) + slots
    return "0x" + keccak(packed).hex()


def collection_id(
    parent_collection_id: bytes | str, condition_id_: bytes | str, index_set: int
) -> str:
    """Return the collection id (0x hex) of an index set under a parent collection."""
    x1 = int.from_bytes(keccak(_b32(condition_id_) + index_set.to_bytes(32, "big")), "big")
    odd = x1 >> 255 != 0
    while True:
        x1 = (x1 + 1) % P
        yy = (x1 * x1 * x1 + _B) % P
        y1 = _sqrt(yy)
        if y1 * y1 % P == yy:
            break
    if odd == (y1 % 2 == 0):
        y1 = P - y1
    x2 = int.from_bytes(_b32(parent_collection_id), "big")
    if x2:
        odd = x2 >> 254 != 0
        x2 &= _ODD_FLAG - 1
        yy = (x2 * x2 * x2 + _B) % P
        y2 = _sqrt(yy)
        if odd == (y2 % 2 == 0):
            y2 = P - y2
        if y2 * y2 % P != yy:
            raise ValueError("invalid parent collection id")
        x1, y1 = _ec_add((x1, y1), (x2, y2))
    if y1 % 2 == 1:
        x1 ^= _ODD_FLAG
    return "0x" + x1.to_bytes(32, "big").hex()


def position_id(collateral: str, collection_id_: bytes | str) -> int:
    """Return the ERC-1155 token id of a collection backed by a collateral token."""
    return int.from_bytes(keccak(to_canonical_address(collateral) + _b32(collection_id_)), "big")


def outcome_position_ids(
    collateral: str, condition_id_: bytes | str, outcome_slot_count: int = 2
) -> list[int]:
    """Return the token id of each single outcome (index set 1 << i), in outcome order."""
    return [
        position_id(collateral, collection_id(ZERO_COLLECTION, condition_id_, 1 << i))
        for i in range(outcome_slot_count)
    ]
