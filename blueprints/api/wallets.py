"""Trading wallet: deposit address, balances, withdrawals and claims (on-chain writes are jobs)."""

from __future__ import annotations

from uuid import UUID

from flask import request
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from schemas import request_examples
from schemas.wallets import (
    BalanceSchema,
    ClaimRequestSchema,
    ClaimResponseSchema,
    ClaimSchema,
    DepositAddressSchema,
    WithdrawalSchema,
    WithdrawRequestSchema,
    WithdrawResponseSchema,
)
from services.identity import auth
from services.wallets import claims, wallets, withdrawals

blp = Blueprint("wallets", __name__, url_prefix="/api", description="Trading wallet")


@blp.route("/wallets/deposit-address")
class DepositAddress(MethodView):
    @access.requires("read:account")
    @blp.response(200, DepositAddressSchema)
    @blp.errors(401, 403, 429, 500, 501, 503)
    def get(self):
        """The trading wallet's address, the chain id and the accepted tokens' contracts.

        The wallet (an EOA whose key is generated and kept encrypted by the server) is
        created on first use. Deposit pUSD or USDC.e to trade; MATIC only for a plain EOA,
        which pays its own gas (the `note` says which).
        """
        return wallets.deposit_address(access.current_principal().user)


@blp.route("/wallets/balance")
class Balance(MethodView):
    @access.requires("read:account")
    @blp.response(200, BalanceSchema)
    @blp.errors(401, 403, 429, 500, 501, 503)
    def get(self):
        """pUSD, USDC.e and MATIC at the deposit address, read from the chain now.

        Every balance is the deposit address's (`address`, the maker). `gas_matic` is the
        MATIC that pays the account's own gas where it pays any (a plain EOA; null when the
        relayer pays). Token decimals are read from the token contracts. 503 (Retry-After)
        when the chain RPC is unreachable.
        """
        return wallets.balances(access.current_principal().user)


@blp.route("/trading-wallet/withdraw")
class Withdraw(MethodView):
    @access.requires("wallet:write")
    @idempotent
    @blp.arguments(WithdrawRequestSchema, example=request_examples.WITHDRAW)
    @blp.response(200, WithdrawResponseSchema)
    @blp.errors(400, 401, 402, 403, 409, 429, 500, 501, 503)
    def post(self, body):
        """Send pUSD (`usdc`), USDC.e (`usdc_e`) or MATIC (`matic`) from the trading wallet.

        A deposit wallet (or proxy, Safe) sends through the relayer, which pays the gas:
        MATIC at its address goes out as a wallet call carrying the value.

        Checked against the chain first: 400 `validation_failed` for a malformed address,
        an amount that is not positive or has more decimals than the token, or an unknown
        token; 402 `insufficient_balance` for more than the balance (less what pending
        withdrawals hold) or too little MATIC for gas. Then the withdrawal is recorded and
        a job signs and broadcasts it (once, whatever happens). The answer waits a few
        seconds (`WITHDRAW_WAIT_SECONDS`, default 5): `tx_hash` is set when broadcast in
        time, else null with `status: queued`; follow it at `status_url`
        (`GET /api/trading-wallet/withdrawals/{id}`). 503 with Retry-After when the chain
        RPC is unreachable; nothing is recorded then.

        With a session JWT, send a step-up token (`POST /api/auth/step-up`, 5 minutes) as
        the `X-Step-Up-Token` header: without a live one the answer is 403
        `scope_required` and nothing is recorded. API keys and OAuth tokens holding
        `wallet:write` need none (a key with it is minted only after a step-up).
        """
        principal = access.current_principal()
        auth.require_step_up(principal, request.headers.get(auth.STEP_UP_HEADER))
        return withdrawals.withdraw(principal.user, **body).to_dict()


@blp.route("/trading-wallet/withdrawals/<uuid:withdrawal_id>")
class WithdrawalStatus(MethodView):
    @access.requires("read:account")
    @blp.response(200, WithdrawalSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, withdrawal_id: UUID):
        """Follow a withdrawal: its status, transaction hash, block and gas fee; 404 if not
        yours."""
        return withdrawals.describe(withdrawals.get(access.current_principal().user, withdrawal_id))


@blp.route("/positions/claim")
class ClaimPositions(MethodView):
    @access.requires("wallet:write")
    @idempotent
    @blp.arguments(ClaimRequestSchema, required=False, example=request_examples.CLAIM)
    @blp.response(200, ClaimResponseSchema)
    @blp.errors(400, 401, 402, 403, 409, 429, 500, 501, 503)
    def post(self, body):
        """Redeem resolved positions into collateral on chain (all claimable by default).

        Claimable: outcome tokens the trading wallet holds (read on chain) of markets whose
        condition has resolved, with a payout. One claim per market: ConditionalTokens
        `redeemPositions`, or the NegRiskAdapter for neg-risk markets (after a one-time
        approval). 402 `insufficient_balance` when the wallet lacks MATIC for gas. Each
        claim is a job; the answer waits a few seconds and lists each claim with its
        `tx_hash`, or `status: queued` (follow it at `GET /api/positions/claims/{id}`). A
        market already being claimed answers its open claim, not a second one.

        A deposit wallet (signature type 3), proxy or Safe claims what it holds (the maker,
        not its owner key) through the relayer: one transaction per market redeeming on the
        CtfCollateralAdapter or NegRiskCtfCollateralAdapter, paid in pUSD, no gas and no
        402; the claim shows `relayer_transaction_id`.
        """
        token_ids = (body or {}).get("token_ids")
        return claims.claim(access.current_principal().user, token_ids)


@blp.route("/positions/claims/<uuid:claim_id>")
class ClaimStatus(MethodView):
    @access.requires("read:account")
    @blp.response(200, ClaimSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, claim_id: UUID):
        """Follow a claim: status, transaction hashes, block and gas fee; 404 if not yours."""
        return claims.describe(claims.get(access.current_principal().user, claim_id))
