"""Trading wallet: deposit address, balances, withdrawals and claims (requests and answers)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import DecimalString

ADDRESS_PATTERN = r"^0x[0-9a-fA-F]{40}$"
TX_HASH_PATTERN = r"^0x[0-9a-fA-F]{64}$"
TOKEN_ID_PATTERN = r"^[0-9]{1,78}$"
WITHDRAW_TOKENS = ("usdc", "usdc_e", "matic")
RECORD_STATES = ("queued", "signed", "broadcast", "confirmed", "failed", "ambiguous")

_STATUS_DOC = (
    "`queued` (recorded, nothing signed yet), `signed` (signed and stored, being "
    "broadcast), `broadcast` (sent to the network), `confirmed` (mined and succeeded) or "
    "`failed` (refused before sending, or mined and reverted; `error` says which), or "
    "`ambiguous` (sent through the relayer but its answer was lost: it may have gone "
    "through; never sent twice, looked at again until known; `error` says why).")


def _address(*, metadata: dict[str, object] | None = None, **kwargs: object) -> fields.String:
    return fields.String(validate=validate.Regexp(ADDRESS_PATTERN, error=(
        "Must be an address: 0x followed by 40 hex digits.")),
        metadata={"pattern": ADDRESS_PATTERN, "example": "0x" + "ab" * 20, **(metadata or {})},
        **kwargs)


def _tx_hash(*, metadata: dict[str, object] | None = None, **kwargs: object) -> fields.String:
    return fields.String(allow_none=True, metadata={"pattern": TX_HASH_PATTERN,
                                                    **(metadata or {})}, **kwargs)


class AcceptedTokenSchema(Schema):
    """A token the deposit address accepts."""

    class Meta:
        ordered = True

    token = fields.String(required=True, metadata={
        "enum": list(WITHDRAW_TOKENS),
        "description": "The name used by withdrawals: `usdc` is pUSD."})
    symbol = fields.String(required=True, metadata={"example": "pUSD"})
    contract_address = fields.String(required=True, allow_none=True, metadata={
        "pattern": ADDRESS_PATTERN,
        "description": "The ERC-20 contract; null for MATIC, the chain's native currency."})
    decimals = fields.Integer(required=True, metadata={
        "description": "Read from the token contract."})


class DepositAddressSchema(Schema):
    """Where to fund the trading wallet."""

    class Meta:
        ordered = True

    address = _address(required=True, metadata={
        "pattern": ADDRESS_PATTERN, "description": "Where the account's funds go: its deposit "
        "wallet (the maker; every new account's), or an operator-allowlisted plain EOA."})
    chain_id = fields.Integer(required=True, metadata={"example": 137})
    tokens = fields.List(fields.Nested(AcceptedTokenSchema), required=True, metadata={
        "description": "What to send here: pUSD and USDC.e (wrapped to pUSD automatically at a "
        "deposit wallet); MATIC only to a plain EOA, which pays its own gas (at a deposit "
        "wallet nothing would spend it)."})
    note = fields.String(required=True)


class BalanceSchema(Schema):
    """What sits at the deposit address, read from the chain at request time."""

    class Meta:
        ordered = True

    address = _address(required=True, metadata={
        "description": "The deposit address (the maker), where every balance here is read: "
                       "the deposit wallet, or a plain EOA itself."})
    chain_id = fields.Integer(required=True)
    usdc = DecimalString(required=True, metadata={"description": "pUSD (Polymarket USD)."})
    pusd = DecimalString(required=True, metadata={"description": "pUSD; the same as `usdc`."})
    usdc_e = DecimalString(required=True, metadata={"description": "Bridged USDC.e."})
    matic = DecimalString(required=True, metadata={
        "description": "MATIC (POL) at the deposit address. A deposit wallet needs none (the "
                       "relayer pays its gas); any sent there can be withdrawn (token "
                       "`matic`)."})
    gas_matic = DecimalString(required=True, allow_none=True, metadata={
        "description": "MATIC held by the key that pays the account's own gas (claims and "
                       "withdrawals): a plain EOA's, the same address as `address`. null for "
                       "an account whose on-chain work the relayer pays."})
    total_usdc = DecimalString(required=True, metadata={"description": "pUSD plus USDC.e."})


class WithdrawRequestSchema(Schema):
    """POST /api/trading-wallet/withdraw."""

    to_address = _address(required=True)
    amount = DecimalString(required=True, positive=True, places=18, metadata={
        "description": "Greater than 0, with at most the token's decimals (6 for pUSD and "
                       "USDC.e, 18 for MATIC)."})
    token = fields.String(required=True, validate=validate.OneOf(WITHDRAW_TOKENS), metadata={
        "description": "`usdc` (pUSD), `usdc_e` or `matic`."})


class WithdrawResponseSchema(Schema):
    """The answer: sent (with its hash) within the wait, or queued (follow `status_url`)."""

    class Meta:
        ordered = True

    success = fields.Boolean(required=True, metadata={
        "description": "False when the withdrawal failed before anything was sent."})
    tx_hash = _tx_hash(required=True, metadata={
        "description": "The transaction hash once broadcast (through the relayer: once it "
                       "ran); null while still queued."})
    message = fields.String(required=True)
    withdrawal_id = fields.UUID(required=True)
    status = fields.String(required=True, metadata={"enum": list(RECORD_STATES),
                                                    "description": _STATUS_DOC})
    status_url = fields.String(required=True, metadata={
        "description": "GET it to follow the withdrawal."})


class WithdrawalSchema(Schema):
    """A withdrawal and its transaction."""

    class Meta:
        ordered = True

    id = fields.UUID(required=True)
    status = fields.String(required=True, metadata={"enum": list(RECORD_STATES),
                                                    "description": _STATUS_DOC})
    token = fields.String(required=True, metadata={"enum": list(WITHDRAW_TOKENS)})
    amount = DecimalString(required=True)
    to_address = _address(required=True)
    from_address = _address(required=True)
    tx_hash = _tx_hash(required=True)
    relayer_transaction_id = fields.String(required=True, allow_none=True, metadata={
        "description": "A deposit wallet's withdrawal: the relayer's id of its WALLET batch "
                       "(tx_hash stays null)."})
    nonce = fields.Integer(required=True, allow_none=True)
    block_number = fields.Integer(required=True, allow_none=True)
    gas_fee = DecimalString(required=True, allow_none=True, metadata={
        "description": "MATIC paid for gas, once mined."})
    error = fields.String(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class ClaimRequestSchema(Schema):
    """POST /api/positions/claim: which positions; omitted means all claimable."""

    token_ids = fields.List(
        fields.String(validate=validate.Regexp(TOKEN_ID_PATTERN, error=(
            "Must be an outcome token id (decimal digits).")),
            metadata={"pattern": TOKEN_ID_PATTERN}),
        allow_none=True,
        validate=validate.Length(min=1, max=500),
        metadata={"description": "Outcome token ids to claim; omitted or null: every "
                                 "claimable position."})


class ClaimSchema(Schema):
    """One claim: redeeming one resolved condition's tokens."""

    class Meta:
        ordered = True

    id = fields.UUID(required=True)
    status = fields.String(required=True, metadata={"enum": list(RECORD_STATES),
                                                    "description": _STATUS_DOC})
    condition_id = fields.String(required=True)
    market_slug = fields.String(required=True)
    neg_risk = fields.Boolean(required=True)
    token_ids = fields.List(fields.String(), required=True)
    expected_payout = DecimalString(required=True, metadata={
        "description": "Collateral (USDC.e or pUSD) the redemption pays."})
    tx_hash = _tx_hash(required=True, metadata={
        "description": "The redeem transaction; null while queued."})
    approval_tx_hash = _tx_hash(required=True, metadata={
        "description": "Neg-risk only: the one-time approval of the NegRiskAdapter."})
    relayer_transaction_id = fields.String(required=True, allow_none=True, metadata={
        "description": "A deposit wallet's claim: the relayer's id of its WALLET batch "
                       "(tx_hash stays null)."})
    block_number = fields.Integer(required=True, allow_none=True)
    gas_fee = DecimalString(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class ClaimResponseSchema(Schema):
    """The claims submitted (one per resolved condition), with hashes or queued state."""

    class Meta:
        ordered = True

    claims = fields.List(fields.Nested(ClaimSchema), required=True)
    message = fields.String(required=True)
    expected_payout = DecimalString(required=True)
