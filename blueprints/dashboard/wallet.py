"""The trading wallet: deposit address with a QR code, balances, withdrawals and claims
(services/wallets/wallets.py, withdrawals.py, claims.py), with their progress until the hash
shows."""

from __future__ import annotations

import io
import uuid
from typing import Any
from uuid import UUID

import segno
from flask import Response, render_template, request
from markupsafe import Markup

from blueprints.dashboard import refresh
from blueprints.dashboard import session as browser
from blueprints.dashboard.base import (
    bp,
    current_principal,
    form_text,
    go,
    is_htmx,
    parse,
    present,
)
from schemas.wallets import (
    BalanceSchema,
    ClaimResponseSchema,
    ClaimSchema,
    DepositAddressSchema,
    WithdrawalSchema,
    WithdrawRequestSchema,
    WithdrawResponseSchema,
)
from services.identity import auth
from services.platform import errors, idempotency
from services.wallets import claims, trading_accounts, wallets, withdrawals

TOKEN_LABELS = {"usdc": "pUSD", "usdc_e": "USDC.e", "matic": "MATIC"}


def qr_svg(text: str) -> Markup:
    """``text`` as an inline SVG QR code (rendered here: no image service, no script)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=4, border=2, xmldecl=False,
                                    svgns=True, omitsize=True, title="Deposit address QR code",
                                    svgclass="qr", lineclass=None)
    return Markup(out.getvalue().decode())


@bp.get("/wallet")
def wallet_page() -> str:
    """Deposit address and QR code; balances, withdraw and claims load as fragments (and
    the withdrawal ``?withdrawal=`` or the claims ``?claims=`` name, where a form posted
    without JavaScript was sent)."""
    user = current_principal().user
    step = None
    if request.args.get("withdrawal"):
        record = withdrawals.get(user, request.args["withdrawal"])
        step = _withdrawal_fragment(record).get_data(as_text=True)
    progress = "".join(
        render_template("dashboard/_claim.html",
                        claim=present(ClaimSchema(), claims.describe(claims.get(user, ident))))
        for ident in (request.args.get("claims") or "").split(",") if ident.strip())
    return _wallet_page(step, claim_progress=progress)


def _wallet_page(withdraw_step: str | None = None, *, claimable: str = "",
                 claim_progress: str = "") -> str:
    """The wallet's page, with what a form posted without JavaScript answered in place."""
    deposit = present(DepositAddressSchema(), wallets.deposit_address(current_principal().user))
    return render_template("dashboard/wallet.html", deposit=deposit,
                           qr=qr_svg(deposit["address"]), tokens=TOKEN_LABELS,
                           withdraw_step=Markup(withdraw_step) if withdraw_step else None,
                           claimable=Markup(claimable), claim_progress=Markup(claim_progress))


@bp.get("/wallet/balances")
def wallet_balances() -> str:
    """Balances read from the chain now (GET /api/wallets/balance)."""
    balance = present(BalanceSchema(), wallets.balances(current_principal().user))
    return render_template("dashboard/_balances.html", balance=balance)


@bp.get("/wallet/cash")
def wallet_cash() -> str:
    """The pUSD an order can spend, read from the chain now (the order ticket's line); a
    dash when there is no wallet yet or the chain cannot be read (the ticket still works)."""
    user = current_principal().user
    balance = None
    if wallets.for_user(user) is not None:  # reading it never creates the wallet
        try:
            balance = present(BalanceSchema(), wallets.balances(user))
        except (errors.CopytradeError, OSError):
            balance = None
    return render_template("dashboard/_cash.html", balance=balance)


def _withdraw_form() -> dict:
    return {"to_address": form_text("to_address") or "", "amount": form_text("amount") or "",
            "token": form_text("token") or ""}


@bp.post("/wallet/withdraw/confirm")
def confirm_withdrawal() -> str:
    """Check the withdrawal's fields and ask to confirm it; nothing is sent yet."""
    body = parse(WithdrawRequestSchema(), _withdraw_form())
    caller = current_principal()
    # Moving money needs a fresh code: email one unless this session proved one lately.
    code_sent = browser.step_up_token(caller, None) is None
    if code_sent:
        auth.request_step_up(caller.user.email, client_ip=request.remote_addr)
    # One key per confirmation shown: submitting it twice sends one withdrawal.
    html = render_template("dashboard/_withdraw_confirm.html", body=present(
        WithdrawRequestSchema(), body), label=TOKEN_LABELS[body["token"]],
        code_sent=code_sent, idempotency_key=uuid.uuid4(), mail=auth.codes_by_mail(),
        email=caller.user.email)
    # A form posted without JavaScript gets the wallet's page with the confirmation in place.
    return html if is_htmx() else _wallet_page(html)


def _withdrawal_fragment(record: Any) -> Response:
    """A withdrawal's progress (its amount, address and state: the API's message would say
    them a second time); once confirmed, the balance cards re-read."""
    shown = present(WithdrawalSchema(), withdrawals.describe(record))
    body = render_template("dashboard/_withdrawal.html", withdrawal=shown, label=TOKEN_LABELS)
    return refresh.announce(body, refresh.BALANCE if shown["status"] == "confirmed" else "")


@bp.post("/wallet/withdraw")
def withdraw() -> Response:
    """Send it (POST /api/trading-wallet/withdraw, keyed); then follow its progress."""
    body = parse(WithdrawRequestSchema(), _withdraw_form())
    key = idempotency.parse_key(form_text("idempotency_key"), field="idempotency_key")
    caller = current_principal()
    browser.require_step_up(caller, form_text("step_up_code"))
    user = caller.user

    def send() -> tuple[int, dict]:
        return 200, present(WithdrawResponseSchema(), withdrawals.withdraw(user, **body).to_dict())

    # the same key and body again (a double click, a resubmitted form) replays the answer
    answer = idempotency.run_once(caller.user_id, key, idempotency.fingerprint(
        "dashboard-withdraw", present(WithdrawRequestSchema(), body)), send).body
    if not is_htmx():  # posted without JavaScript: the wallet's page follows it
        return go(f"/dashboard/wallet?withdrawal={answer['withdrawal_id']}")
    return _withdrawal_fragment(withdrawals.get(user, answer["withdrawal_id"]))


@bp.get("/wallet/withdrawals/<uuid:withdrawal_id>")
def withdrawal_status(withdrawal_id: UUID) -> Response:
    """One withdrawal's progress (polled until confirmed or failed)."""
    return _withdrawal_fragment(withdrawals.get(current_principal().user, withdrawal_id))


@bp.get("/wallet/claimable")
def claimable() -> str:
    """Positions of resolved markets the wallet holds, and what claiming each pays."""
    wallet = wallets.get_or_create(current_principal().user)
    positions = claims.wallet_claimable(wallet)
    html = render_template("dashboard/_claimable.html", positions=positions,
                           units={p.collateral: claims.payout_symbol(p.collateral)
                                  for p in positions},
                           gasless=trading_accounts.uses_relayer(wallet))
    # Asked without JavaScript (its link): the wallet's page with the list in place.
    return html if is_htmx() else _wallet_page(claimable=html)


@bp.post("/wallet/claim")
def claim() -> Response:
    """Claim resolved positions (POST /api/positions/claim); then follow each claim."""
    token_ids = request.form.getlist("token_ids") or None
    sent = claims.claim(current_principal().user, token_ids)
    answer = {**present(ClaimResponseSchema(), sent), "message": sent["summary"]}
    if not is_htmx():  # posted without JavaScript: the wallet's page follows the claims
        return go("/dashboard/wallet?claims=" + ",".join(c["id"] for c in answer["claims"]))
    # A claim already confirmed polls no more: announce it here (the others, when they end).
    confirmed = any(c["status"] == "confirmed" for c in answer["claims"])
    return refresh.announce(render_template("dashboard/_claims.html", answer=answer),
                            *((refresh.BALANCE, refresh.POSITIONS) if confirmed else ()))


@bp.get("/wallet/claims/<uuid:claim_id>")
def claim_status(claim_id: UUID) -> Response:
    """One claim's progress (polled until confirmed or failed); once confirmed, the balance
    and positions cards re-read."""
    item = present(ClaimSchema(), claims.describe(claims.get(current_principal().user, claim_id)))
    confirmed = item["status"] == "confirmed"
    return refresh.announce(render_template("dashboard/_claim.html", claim=item),
                            *((refresh.BALANCE, refresh.POSITIONS) if confirmed else ()))
