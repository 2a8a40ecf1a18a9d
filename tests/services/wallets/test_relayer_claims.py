"""Claims from a deposit wallet (issue 16): what the wallet (the maker, not its owner EOA)
holds in resolved markets, redeemed through the collateral adapters as one relayer WALLET
batch per condition, so the payout arrives as pUSD with no POL; exactly once (a second run
sends nothing); FAILED/INVALID shows the relayer's reason."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from models.wallet import Claim
from services.platform import errors, jobs
from services.wallets import claims, venue_accounts, wallet_batches


def _redeem(claim: Claim) -> str:
    return claims.redeem_by_relayer(claim.id, max_polls=3)


def _holding(make_trader, venue_control, make_sandbox_market, *, shares: str, winner: int,
             funds: str = "10", **market_fields):
    """A deposit-wallet trader holding ``shares`` Yes tokens of a market resolved to
    ``winner``; answers (trader, its maker, the market)."""
    trader = make_trader(funds, deposit_wallet=True)
    maker = trader.wallet.funder_address
    market = make_sandbox_market(**market_fields)
    venue_control.grant(maker, market.yes, shares)
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": winner},
                       expect=200)
    return trader, maker, market


def test_winnings_are_claimed_once_through_the_collateral_adapter_as_pusd(
        make_trader, venue_control, make_sandbox_market) -> None:
    trader, maker, market = _holding(make_trader, venue_control, make_sandbox_market,
                                     shares="25", winner=0)
    listed = claims.maker_claimable(trader.wallet)
    assert [(p.token_id, p.size, p.claimable_value) for p in listed] == [
        (market.yes, Decimal("25"), Decimal("25"))]
    [row] = claims.request(trader.user)
    assert (row.condition_id, row.payout, row.neg_risk) == (market.condition_id,
                                                            Decimal("25"), False)
    assert claims.request(trader.user)[0].id == row.id  # one open claim per condition
    assert claims.redeem(row.id) == "confirmed"
    assert _redeem(row) == "confirmed"  # again: nothing is sent twice
    done = Claim.get_by_id(row.id)
    payload = json.loads(done.relayer_payload)
    assert payload["type"] == "WALLET" and done.relayer_transaction_id
    assert claims.describe(done)["relayer_transaction_id"] == done.relayer_transaction_id
    assert venue_control.balances(maker)["pusd"] == "35"
    # the CLOB re-read the wallet after the claim: its cached balance has the winnings
    assert venue_accounts.collateral_balance(venue_accounts.account(trader.user)) == 35
    assert market.yes not in venue_control.balances(maker)["positions"]
    assert claims.request(trader.user) == []  # nothing left to claim
    assert venue_control.balances(maker)["pusd"] == "35"


def test_a_neg_risk_market_redeems_through_the_neg_risk_collateral_adapter(
        make_trader, venue_control, make_sandbox_market) -> None:
    trader, maker, _market = _holding(make_trader, venue_control, make_sandbox_market,
                                      shares="8", winner=0, neg_risk=True)
    [row] = claims.request(trader.user)
    assert row.neg_risk
    assert _redeem(row) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "18"


def test_only_losing_tokens_make_no_claim(make_trader, venue_control,
                                          make_sandbox_market) -> None:
    trader, maker, _market = _holding(make_trader, venue_control, make_sandbox_market,
                                      shares="5", winner=1)
    assert claims.request(trader.user) == []
    assert venue_control.balances(maker)["pusd"] == "10"


def test_a_failed_batch_shows_the_relayers_reason_and_a_new_claim_goes_through(
        make_trader, venue_control, make_sandbox_market) -> None:
    trader, maker, _market = _holding(make_trader, venue_control, make_sandbox_market,
                                      shares="12", winner=0)
    venue_control.call("POST", "/relayer", {"fail_next": {"state": "FAILED",
                                                          "message": "execution reverted"}},
                       expect=200)
    [row] = claims.request(trader.user)
    assert _redeem(row) == "failed"
    failed = Claim.get_by_id(row.id)
    assert "STATE_FAILED" in failed.error and "execution reverted" in failed.error
    assert claims.describe(failed)["error"] == failed.error
    assert venue_control.balances(maker)["pusd"] == "10"
    [retry] = claims.request(trader.user)
    assert retry.id != row.id
    assert _redeem(retry) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "22"


def test_a_crash_between_submit_and_record_never_redeems_twice(
        make_trader, venue_control, make_sandbox_market, monkeypatch) -> None:
    trader, maker, _market = _holding(make_trader, venue_control, make_sandbox_market,
                                      shares="6", winner=0)
    [row] = claims.request(trader.user)

    def crash(self, transaction_id: str) -> None:
        raise SystemExit("killed after the relayer answered")

    monkeypatch.setattr(wallet_batches.BatchRow, "store_id", crash)
    with pytest.raises(SystemExit):
        _redeem(row)
    monkeypatch.undo()
    # the relayer's list of our transactions names the stored batch: it is followed, so the
    # claim knows its relayer id and chain hash
    assert _redeem(row) == "confirmed"
    done = Claim.get_by_id(row.id)
    assert done.error is None and done.relayer_transaction_id
    assert done.relayer_transaction_hash and len(done.relayer_transaction_hash) == 66
    assert _redeem(row) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "16"


def test_a_claim_the_queue_could_not_take_is_failed_unsent(
        make_trader, venue_control, make_sandbox_market, monkeypatch) -> None:
    trader, _maker, _market = _holding(make_trader, venue_control, make_sandbox_market,
                                       shares="3", winner=0)

    def unreachable(*args, **kwargs) -> None:
        raise errors.Unavailable("queue down")

    monkeypatch.setattr(jobs, "enqueue", unreachable)
    with pytest.raises(errors.Unavailable):
        claims.claim(trader.user, wait_seconds=0)
    [row] = Claim.select().where(Claim.wallet == trader.wallet.id)
    assert row.status == "failed" and "could not be queued" in row.error
    assert row.relayer_payload is None

