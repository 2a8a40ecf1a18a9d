"""The sandbox's Data API indexes on-chain holdings, as the real one indexes Polygon."""

from __future__ import annotations

from decimal import Decimal

USDC = 10**6


def test_positions_list_tokens_transferred_on_chain(sandbox_venue, control, chain) -> None:
    dev = chain.contracts
    condition = dev.prepare_condition()
    market = control.add_market("onchain-listed", question_id=condition.question_id,
                                condition_id=condition.condition_id,
                                collateral=condition.collateral)
    assert market["condition_id"] == condition.condition_id
    assert market["token_ids"] == [str(t) for t in condition.token_ids]
    wallet = chain.new_wallet(native_wei=0)
    dev.split_position(wallet.address, condition, 2 * USDC, outcomes=[0])
    user = wallet.address
    assert control.get("/data/positions", user=user) == []  # not attached: the ledger only

    attached = control.call("POST", "/chain", {"rpc_url": chain.rpc_url, "ctf": dev.ctf},
                            expect=200)
    assert attached["chain"]["ctf"] == dev.ctf
    [row] = control.get("/data/positions", user=user)
    assert (row["asset"], row["conditionId"]) == (str(condition.token_ids[0]),
                                                 condition.condition_id)
    assert row["size"] == Decimal(2) and row["redeemable"] is False
    assert row["proxyWallet"] == user.lower() and row["slug"] == "onchain-listed"
    assert control.get("/data/positions", user=user, redeemable="true") == []
    assert control.get("/data/positions", user=user, sizeThreshold="3") == []

    # payouts reported on chain: redeemable, before the venue closes its market
    dev.resolve_condition(condition.question_id, [1, 0])
    [row] = control.get("/data/positions", user=user, redeemable="true", sizeThreshold="0",
                        limit="500", offset="0")
    assert row["redeemable"] is True and row["negativeRisk"] is False
    assert control.get("/data/positions", user=user, redeemable="true", offset="1") == []
    [listed] = control.get("/gamma/markets", condition_ids=condition.condition_id)
    assert listed["slug"] == "onchain-listed"

    # a reset keeps the chain (the catalog is seeded again, without this market)
    control.call("POST", "/reset", expect=200)
    assert control.state()["chain"]["rpc_url"] == chain.rpc_url
    control.call("POST", "/chain", {"rpc_url": ""}, expect=200)
    assert control.state()["chain"] is None


def test_neg_risk_condition_is_listed_with_its_wrapped_collateral(sandbox_venue, control,
                                                                  chain) -> None:
    dev = chain.contracts
    question = dev.prepare_neg_risk_question()
    control.call("POST", "/chain", {"rpc_url": chain.rpc_url, "ctf": dev.ctf}, expect=200)
    market = control.add_market("onchain-neg-risk", neg_risk=True,
                                question_id=question.question_id,
                                condition_id=question.condition_id,
                                collateral=question.collateral)
    assert market["token_ids"] == [str(t) for t in question.token_ids] and market["neg_risk"]
    wallet = chain.new_wallet(native_wei=0)
    dev.split_position(wallet.address, question, 1 * USDC, outcomes=[1])
    dev.resolve_neg_risk_question(question.question_id, False)
    [row] = control.get("/data/positions", user=wallet.address, redeemable="true")
    assert row["asset"] == str(question.token_ids[1]) and row["negativeRisk"] is True
