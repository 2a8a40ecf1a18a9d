"""Type-3 (deposit wallet) orders from our fast signer equal the official SDK's, signed by
the owner and by a session key (the ERC-7739 signature inside the session-signer envelope)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.sdk_env import sdk_result
from tests.venue.accounts.conftest import DEV, KEYS, OWNERS
from venue.accounts import POLYGON, beacon_deposit_wallet_address, uups_deposit_wallet_address
from venue.config import VenueConfig
from venue.models import Side
from venue.order_signer import OrderSigner
from venue.signing import OrderKey, build_signed_order

SDK_ORDERS = """
from eth_account import Account
from polymarket._internal.actions.orders.typed_data import (
    build_order_signature, build_order_typed_data)
from polymarket._internal.actions.orders.types import UnsignedOrder
from polymarket._internal.wallet import wrap_deposit_wallet_signature
result = []
for case in payload["cases"]:
    signer = Account.from_key(case["key"])
    order = UnsignedOrder(
        chain_id=case["chain_id"], builder=case["builder"], exchange_address=case["exchange"],
        expiration=0, maker=case["wallet"], maker_amount=case["maker_amount"],
        metadata="0x" + "00" * 32, order_type="GTC", salt=case["salt"], side=case["side"],
        signature_type=3, signer=case["wallet"], taker_amount=case["taker_amount"],
        timestamp=case["timestamp"], token_id=case["token_id"])
    signed = signer.sign_typed_data(full_message=build_order_typed_data(order))
    raw = signed.signature.hex()
    signature = build_order_signature(order, raw if raw.startswith("0x") else "0x" + raw)
    result.append(wrap_deposit_wallet_signature(
        signer=signer.address, signer_type="SESSION_KEY" if case["session"] else "OWNER",
        signature=signature))
"""

TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563"
BUILDER = "0x" + "ab" * 32


def order_cases() -> list[tuple[dict, object]]:
    """(the SDK's inputs, our signed order) for owners and session keys over varied orders."""
    cases = []
    variants = [
        (137, "BUY", Decimal("0.45"), Decimal("10"), Decimal("0.01"), False, TOKEN, None),
        (137, "SELL", Decimal("0.455"), Decimal("10.12"), Decimal("0.001"), True, "1", BUILDER),
        (DEV.chain_id, "BUY", Decimal("0.9999"), Decimal("5"), Decimal("0.0001"), False,
         str(2**255 + 3), None),
    ]
    for i, (chain_id, side, price, size, tick, neg_risk, token, builder) in enumerate(variants):
        for session in (False, True):
            key = KEYS[i]
            owner = OWNERS[(i + 1) % len(OWNERS)] if session else key.address
            wallet = (beacon_deposit_wallet_address if i % 2 == 0
                      else uups_deposit_wallet_address)(owner, POLYGON)
            overrides = ({} if chain_id == 137 else
                         {"exchange_address": DEV.standard_exchange,
                          "neg_risk_exchange_address": DEV.neg_risk_exchange})
            ours = build_signed_order(key, chain_id, token, side, price, size, "GTC", tick,
                                      neg_risk, 3, wallet, salt=1000 + i * 7919,
                                      timestamp_ms=1_790_000_000_000 + i, builder=builder,
                                      session_key=session, **overrides)
            cases.append(({
                "key": key.private_key, "session": session, "wallet": wallet,
                "chain_id": chain_id, "exchange": ours.exchange_address,
                "builder": builder or "0x" + "00" * 32, "maker_amount": ours.maker_amount,
                "taker_amount": ours.taker_amount, "salt": 1000 + i * 7919, "side": side,
                "timestamp": 1_790_000_000_000 + i, "token_id": token,
            }, ours))
    return cases


def test_type_3_signatures_match_the_sdk_for_owner_and_session_key() -> None:
    cases = order_cases()
    theirs = sdk_result(SDK_ORDERS, {"cases": [case for case, _ in cases]})
    assert [ours.order.signature for _, ours in cases] == theirs
    for (case, ours), signature in zip(cases, theirs, strict=True):
        assert ours.maker == ours.signer == case["wallet"]
        assert signature.endswith("6492" * 16) == case["session"]


def test_the_order_signer_carries_the_session_flag() -> None:
    key = KEYS[4]
    wallet = beacon_deposit_wallet_address(OWNERS[0])
    config = VenueConfig("http://gamma", "http://clob", "http://data")
    signer = OrderSigner.for_venue(config, key, signature_type=3, funder=wallet,
                                   session_key=True)
    order = signer.market(TOKEN, Side.BUY, Decimal("5"), Decimal("0.5"),
                          tick_size=Decimal("0.01"), neg_risk=False, order_type="FAK")
    owner_order = OrderSigner.for_venue(config, key, signature_type=3, funder=wallet).market(
        TOKEN, Side.BUY, Decimal("5"), Decimal("0.5"), tick_size=Decimal("0.01"),
        neg_risk=False, order_type="FAK")
    assert order.signature.endswith("6492" * 16)
    assert not owner_order.signature.endswith("6492" * 16)
    assert key.private_key[2:] not in repr(signer)


def test_market_orders_signed_by_a_session_key_match_the_sdk() -> None:
    """The FAK/FOK path (market orders, copies), through ``OrderSigner`` as the product
    signs: random salt and timestamp, given to the SDK as our order carries them."""
    config = VenueConfig("http://gamma", "http://clob", "http://data")
    cases, ours = [], []
    for i, (side, amount, worst, neg_risk) in enumerate([
            (Side.BUY, Decimal("7.5"), Decimal("0.63"), False),
            (Side.SELL, Decimal("12.34"), Decimal("0.41"), True)]):
        key, owner = KEYS[i + 2], OWNERS[i]
        wallet = beacon_deposit_wallet_address(owner, POLYGON)
        signed = OrderSigner.for_venue(config, key, signature_type=3, funder=wallet,
                                       session_key=True).market(
            TOKEN, side, amount, worst, tick_size=Decimal("0.01"), neg_risk=neg_risk,
            order_type="FAK")
        order = signed.order
        cases.append({"key": key.private_key, "session": True, "wallet": wallet,
                      "chain_id": 137, "exchange": signed.exchange_address,
                      "builder": order.builder, "maker_amount": signed.maker_amount,
                      "taker_amount": signed.taker_amount, "salt": int(order.salt),
                      "side": side.value, "timestamp": int(order.timestamp),
                      "token_id": TOKEN})
        ours.append(signed.signature)
    assert sdk_result(SDK_ORDERS, {"cases": cases}) == ours


@pytest.mark.parametrize("signature_type", [0, 1, 2])
def test_a_session_key_signs_only_deposit_wallet_orders(signature_type: int) -> None:
    key = OrderKey(KEYS[0].private_key)
    with pytest.raises(ValueError, match="session key"):
        build_signed_order(key, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"),
                           signature_type=signature_type, funder=OWNERS[1], session_key=True)
