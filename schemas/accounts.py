"""Trading accounts (issue 16): the account, its onboarding steps, connecting an existing
polymarket.com account."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import DecimalString


class TradingAccountSchema(Schema):
    """The trading account: how it trades at the venue (no secret is ever shown)."""

    kind = fields.String(required=True, validate=validate.OneOf(
        ("deposit_wallet", "connected", "eoa")))
    signature_type = fields.Integer(required=True, metadata={
        "description": "0 EOA, 1 proxy, 2 Safe, 3 deposit wallet."})
    wallet_address = fields.String(required=True, metadata={
        "description": "The maker: where funds and positions are (deposit here)."})
    signer_address = fields.String(required=True)
    relayer = fields.String(required=True, validate=validate.OneOf(
        ("builder", "own_key", "none")))
    deposit_wallet = fields.Boolean(required=True)
    session_key = fields.Boolean(required=True, metadata={
        "description": "Connected with a session key the owner authorized: it trades, it "
                       "cannot withdraw."})


class OnboardingStepSchema(Schema):
    name = fields.String(required=True, validate=validate.OneOf(
        ("deploy", "approvals", "credentials", "balance_update")))
    title = fields.String(required=True)
    state = fields.String(required=True, validate=validate.OneOf(
        ("pending", "running", "done", "failed")))


class ProgressSchema(Schema):
    done = fields.Integer(required=True)
    total = fields.Integer(required=True)


class OnboardingSchema(Schema):
    """Where setting the account up for the venue stands, step by step."""

    status = fields.String(required=True, validate=validate.OneOf(
        ("pending", "running", "failed", "ready")))
    ready = fields.Boolean(required=True)
    error = fields.String(allow_none=True, metadata={
        "description": "Why the failed step failed (the relayer's reason when it gave one)."})
    progress = fields.Nested(ProgressSchema)
    steps = fields.List(fields.Nested(OnboardingStepSchema), required=True)
    account = fields.Nested(TradingAccountSchema, allow_none=True)
    deploy_transaction_id = fields.String(allow_none=True)
    approvals_transaction_id = fields.String(allow_none=True)


class ConnectAccountSchema(Schema):
    """An existing polymarket.com account: its wallet and the key that controls it."""

    wallet_address = fields.String(required=True, metadata={
        "description": "The account's wallet (profile menu on polymarket.com)."})
    private_key = fields.String(required=True, load_only=True, metadata={
        "description": "The signer's private key; sealed at rest, never shown again."})
    relayer_api_key = fields.String(load_default=None, load_only=True, metadata={
        "description": "Optional: the account's Relayer API key (a UUID), for gasless "
                       "approvals."})
    relayer_api_key_address = fields.String(load_default=None)


class WrapRequestSchema(Schema):
    amount = DecimalString(required=True, metadata={"description": "USDC.e to wrap."})


class WrapSchema(Schema):
    """A wrap of USDC.e into pUSD: queued → signed → broadcast → confirmed | failed, or
    ambiguous (its answer was lost)."""

    id = fields.UUID(required=True)
    amount = DecimalString(required=True)
    status = fields.String(required=True)
    transaction_id = fields.String(allow_none=True)
    tx_hash = fields.String(allow_none=True, metadata={
        "description": "The chain hash of the relayer transaction, once it ran."})
    error = fields.String(allow_none=True)
    created_at = fields.DateTime(required=True)
