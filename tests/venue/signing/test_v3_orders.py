"""Exchange V3 orders (EIP-712 domain version "3", verifyingContract Exchange V3) from our
fast signer equal the official SDK's byte for byte, for EOA (type 0) and deposit-wallet
(type 3) makers; the token id alone (a position id) or the venue's version picks V3."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.sdk_env import sdk_result
from tests.venue.accounts.conftest import KEYS
from venue.accounts import POLYGON, beacon_deposit_wallet_address
from venue.config import VenueConfig
from venue.models import Side
from venue.order_signer import OrderSigner
from venue.order_versions import OrderVersion, exchange_version_for, is_position_id
from venue.signing import build_signed_order

EXCHANGE_V3 = "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa"  # the SDK's production Exchange V3
CTF_TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563"
# A protocol-v2 position id: module 1 in the top byte, bits 40..103 zero, outcome 1.
POSITION = str((1 << 248) | (0xC0FFEE << 104) | 1)

SDK_V3 = """
from eth_account import Account
from polymarket._internal.actions.orders.typed_data import (
    build_order_signature, build_order_typed_data)
from polymarket._internal.actions.orders.types import UnsignedOrder
from polymarket._internal.protocol import is_v2_position_id
from polymarket._internal.environment import PRODUCTION_CONFIG
result = []
for case in payload:
    signer = Account.from_key(case["key"])
    order = UnsignedOrder(
        chain_id=137, builder="0x" + "00" * 32, exchange_address=PRODUCTION_CONFIG.exchange_v3,
        expiration=0, maker=case["maker"], maker_amount=case["maker_amount"],
        metadata="0x" + "00" * 32, order_type="GTC", salt=case["salt"], side=case["side"],
        signature_type=case["type"], signer=case["signer"], taker_amount=case["taker_amount"],
        timestamp=case["timestamp"], token_id=case["token_id"], protocol_version="3")
    signed = signer.sign_typed_data(full_message=build_order_typed_data(order))
    raw = signed.signature.hex()
    signature = build_order_signature(order, raw if raw.startswith("0x") else "0x" + raw)
    result.append({"signature": signature, "exchange": PRODUCTION_CONFIG.exchange_v3,
                   "position": is_v2_position_id(case["token_id"])})
"""


def _cases() -> list[tuple[dict, object]]:
    cases = []
    variants = [(0, "BUY", "0.45", "10", "0.01", POSITION),
                (0, "SELL", "0.535", "12.5", "0.005", POSITION),
                (3, "BUY", "0.4975", "8", "0.0025", POSITION),
                (3, "SELL", "0.61", "5", "0.01", CTF_TOKEN)]  # V3 by the venue's version
    for i, (kind, side, price, size, tick, token) in enumerate(variants):
        key = KEYS[i]
        wallet = beacon_deposit_wallet_address(key.address, POLYGON) if kind == 3 else None
        ours = build_signed_order(key, 137, token, side, Decimal(price), Decimal(size), "GTC",
                                  Decimal(tick), i % 2 == 1, kind, wallet, salt=4242 + i,
                                  timestamp_ms=1_795_000_000_000 + i, exchange_version="3")
        cases.append(({"key": key.private_key, "maker": ours.maker, "signer": ours.signer,
                       "type": kind, "side": side, "maker_amount": ours.maker_amount,
                       "taker_amount": ours.taker_amount, "salt": 4242 + i,
                       "timestamp": 1_795_000_000_000 + i, "token_id": token}, ours))
    return cases


def test_v3_signatures_match_the_sdk_for_eoa_and_deposit_wallet() -> None:
    cases = _cases()
    theirs = sdk_result(SDK_V3, [case for case, _ in cases])
    assert [ours.order.signature for _, ours in cases] == [t["signature"] for t in theirs]
    for (case, ours), sdk in zip(cases, theirs, strict=True):
        assert ours.exchange_address == sdk["exchange"] == EXCHANGE_V3
        assert ours.exchange_version == "3"
        assert is_position_id(case["token_id"]) == sdk["position"]
    # The same order signed for V2 is another signature (another domain, another exchange).
    _, first = cases[0]
    v2 = build_signed_order(KEYS[0], 137, POSITION, "BUY", Decimal("0.45"), Decimal("10"),
                            salt=4242, timestamp_ms=1_795_000_000_000)
    assert v2.exchange_address != EXCHANGE_V3 and v2.signature != first.signature


def test_the_signer_picks_v3_from_the_token_or_the_venues_version() -> None:
    versions = OrderVersion()
    signer = OrderSigner.for_venue(VenueConfig("g", "c", "d"), KEYS[0], versions=versions)
    by_token = signer.limit(POSITION, Side.BUY, Decimal("0.5"), Decimal("5"),
                            tick_size=Decimal("0.01"), neg_risk=False)
    plain = signer.limit(CTF_TOKEN, Side.BUY, Decimal("0.5"), Decimal("5"),
                         tick_size=Decimal("0.01"), neg_risk=True)
    assert (by_token.exchange_version, by_token.exchange_address) == ("3", EXCHANGE_V3)
    assert plain.exchange_version == "2" and plain.exchange_address != EXCHANGE_V3
    assert versions.update(3) is True and versions.update(3) is False
    bumped = signer.market(CTF_TOKEN, Side.BUY, Decimal("5"), Decimal("0.5"),
                           tick_size=Decimal("0.01"), neg_risk=True)
    assert (bumped.exchange_version, bumped.exchange_address) == ("3", EXCHANGE_V3)
    custom = OrderSigner.for_venue(VenueConfig("g", "c", "d", exchange_v3_address=KEYS[1].address),
                                   KEYS[0])
    assert custom.limit(POSITION, Side.SELL, Decimal("0.5"), Decimal("5"),
                        tick_size=Decimal("0.01"), neg_risk=False
                        ).exchange_address == KEYS[1].address


def test_an_unknown_venue_version_is_refused_clearly() -> None:
    assert exchange_version_for(CTF_TOKEN, 2) == "2"
    with pytest.raises(ValueError, match="order version 4"):
        exchange_version_for(CTF_TOKEN, 4)
    assert not is_position_id("not a number") and is_position_id(hex(int(POSITION)))
