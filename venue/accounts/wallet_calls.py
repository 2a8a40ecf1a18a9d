"""Calls a maker wallet makes beyond approvals: send pUSD (or MATIC) out, redeem through the
collateral adapters (winnings arrive as pUSD) or, for a protocol-v2 position, through the
Router (ACCOUNTS.md §6, §11), wrap USDC.e into pUSD, unwrap, and authorize
or revoke a session key. Each is a ``Call`` for a deposit wallet's ``Batch`` (or an EOA's
own transaction); those the official SDK also builds are compared with it byte for byte.
"""

from __future__ import annotations

from venue.accounts.approvals import selector
from venue.accounts.batch import Call
from venue.accounts.contracts import POLYGON, AccountContracts
from venue.accounts.words import address_word, hex_bytes, uint_word

_TRANSFER = selector("transfer(address,uint256)")
_REDEEM_POSITIONS = selector("redeemPositions(address,bytes32,bytes32,uint256[])")
_ROUTER_REDEEM = selector("redeem(bytes31,uint256,uint256)")
_WRAP = selector("wrap(address,address,uint256)")
_UNWRAP = selector("unwrap(address,address,uint256)")
_AUTHORIZE_SESSION_SIGNER = selector("authorizeSessionSigner(address,uint256)")
_REVOKE_SESSION_SIGNER = selector("revokeSessionSigner(address)")
# A binary market's two outcomes, as index sets.
_BINARY_INDEX_SETS = (1, 2)


def _call(target: str, data: bytes) -> Call:
    return Call(target=target, data="0x" + data.hex())


def condition_word(condition_id: str) -> bytes:
    """A condition id as its 32 bytes; ValueError unless it is 32 bytes of hex."""
    try:
        raw = hex_bytes(condition_id)
    except ValueError:
        raise ValueError("condition_id is not hex") from None
    if len(raw) != 32:
        raise ValueError(f"condition_id must be 32 bytes, not {len(raw)}")
    return raw


def transfer_call(token: str, recipient: str, amount: int) -> Call:
    """ERC-20 ``transfer(recipient, amount)`` (base units) from the wallet."""
    return _call(token, _TRANSFER + address_word(recipient) + uint_word(amount))


def native_transfer_call(recipient: str, amount_wei: int) -> Call:
    """Send ``amount_wei`` of the chain's native token (MATIC) to ``recipient``: a call that
    carries value and no calldata (the wallet's own MATIC; the relayer still pays gas)."""
    return Call(target=recipient, data="0x", value=amount_wei)


def redeem_call(condition_id: str, *, neg_risk: bool,
                contracts: AccountContracts = POLYGON) -> Call:
    """Redeem both outcomes of a resolved binary market through the collateral adapter (the
    neg-risk one for neg-risk markets), so the payout arrives as pUSD, not USDC.e."""
    adapter = contracts.neg_risk_collateral_adapter if neg_risk else contracts.collateral_adapter
    # abi.encode(address, bytes32, bytes32, uint256[]): the array's offset, then the array.
    data = (_REDEEM_POSITIONS + address_word(contracts.collateral_token) + bytes(32)
            + condition_word(condition_id) + uint_word(4 * 32)
            + uint_word(len(_BINARY_INDEX_SETS))
            + b"".join(uint_word(index) for index in _BINARY_INDEX_SETS))
    return _call(adapter, data)


def position_condition(position_id: str | int) -> tuple[bytes, int]:
    """(bytes31 condition, outcome index) of a protocol-v2 YES/NO position id: the id's
    leading 31 bytes name the condition, its low byte the outcome (as the SDK decodes it)."""
    value = int(str(position_id), 0) if str(position_id).lower().startswith("0x") \
        else int(str(position_id))
    if not 0 <= value < 2**256:
        raise ValueError("a position id is a uint256")
    outcome = value & 0xFF
    if outcome not in (0, 1):
        raise ValueError("a protocol-v2 position id's outcome byte must be 0 or 1")
    return (value >> 8).to_bytes(31, "big"), outcome


def router_redeem_call(position_id: str | int, amount: int,
                       contracts: AccountContracts = POLYGON) -> Call:
    """The Router's ``redeem(bytes31 conditionId, uint256 outcomeIndex, uint256 amount)``
    for ``amount`` (base units) of a resolved protocol-v2 position: the position is burnt
    on the PositionManager and its payout arrives as pUSD."""
    if not 0 <= amount < 2**256:
        raise ValueError("a redeem amount is a uint256")
    condition, outcome = position_condition(position_id)
    # bytes31 is left-aligned in its word, padded with one zero byte
    data = _ROUTER_REDEEM + condition + b"\x00" + uint_word(outcome) + uint_word(amount)
    return _call(contracts.protocol_v2_router, data)


def wrap_call(recipient: str, amount: int, contracts: AccountContracts = POLYGON) -> Call:
    """Onramp ``wrap(USDC.e, recipient, amount)``: USDC.e in, pUSD to ``recipient``
    (the wallet must have approved the onramp for its USDC.e first)."""
    return _call(contracts.collateral_onramp, _WRAP + address_word(contracts.usdc_e)
                 + address_word(recipient) + uint_word(amount))


def unwrap_call(recipient: str, amount: int, contracts: AccountContracts = POLYGON) -> Call:
    """Offramp ``unwrap(USDC.e, recipient, amount)``: pUSD in, USDC.e to ``recipient``
    (the wallet must have approved the offramp for its pUSD first)."""
    return _call(contracts.collateral_offramp, _UNWRAP + address_word(contracts.usdc_e)
                 + address_word(recipient) + uint_word(amount))


def authorize_session_signer_call(wallet: str, session_signer: str, valid_until: int) -> Call:
    """The wallet's ``authorizeSessionSigner(session_signer, valid_until)`` (unix seconds)."""
    return _call(wallet, _AUTHORIZE_SESSION_SIGNER + address_word(session_signer)
                 + uint_word(valid_until))


def revoke_session_signer_call(wallet: str, session_signer: str) -> Call:
    """The wallet's ``revokeSessionSigner(session_signer)``."""
    return _call(wallet, _REVOKE_SESSION_SIGNER + address_word(session_signer))


__all__ = [
    "authorize_session_signer_call",
    "condition_word",
    "native_transfer_call",
    "position_condition",
    "redeem_call",
    "revoke_session_signer_call",
    "router_redeem_call",
    "transfer_call",
    "unwrap_call",
    "wrap_call",
]
