"""Order signing and auth headers: recovered signers, struct fields, amounts, test vectors."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from decimal import Decimal
from typing import Any

import pytest
from eth_abi import encode as abi_encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak

from tests.venue.conftest import sample_text
from venue.models import ApiCreds
from venue.signing import (
    build_signed_market_order,
    build_signed_order,
    check_price,
    exchange_address_for,
    l1_headers,
    l2_headers,
    limit_order_amounts,
    market_order_amounts,
    round_price_to_tick,
)

# Public Hardhat/Anvil account #0: a well-known test key, never funded on a real chain.
KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
DEPOSIT_WALLET = "0x43bc9b674bA052f815CbE2113cDe784cF9475B35"
EXCHANGE_V2 = "0xE111180000d2663C0091e4f400237545B87B996B"
NEG_RISK_EXCHANGE_V2 = "0xe2222d279d744050d28e00520010520000310F59"
TOKEN = "25968266233034896887180396827466900198780859103374793634057155743131125594489"

ORDER_FIELDS = [
    {"name": "salt", "type": "uint256"},
    {"name": "maker", "type": "address"},
    {"name": "signer", "type": "address"},
    {"name": "tokenId", "type": "uint256"},
    {"name": "makerAmount", "type": "uint256"},
    {"name": "takerAmount", "type": "uint256"},
    {"name": "side", "type": "uint8"},
    {"name": "signatureType", "type": "uint8"},
    {"name": "timestamp", "type": "uint256"},
    {"name": "metadata", "type": "bytes32"},
    {"name": "builder", "type": "bytes32"},
]
ORDER_TYPE = (
    "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,"
    "uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,"
    "bytes32 builder)"
)


def typed_order(wire: dict[str, Any], exchange: str, chain_id: int = 137) -> dict[str, Any]:
    """EIP-712 typed data of a wire-format order, rebuilt independently of the library."""
    return {
        "primaryType": "Order",
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "Order": ORDER_FIELDS,
        },
        "domain": {"name": "Polymarket CTF Exchange", "version": "2", "chainId": chain_id,
                   "verifyingContract": exchange},
        "message": {
            "salt": int(wire["salt"]),
            "maker": wire["maker"],
            "signer": wire["signer"],
            "tokenId": int(wire["tokenId"]),
            "makerAmount": int(wire["makerAmount"]),
            "takerAmount": int(wire["takerAmount"]),
            "side": 0 if wire["side"] == "BUY" else 1,
            "signatureType": int(wire["signatureType"]),
            "timestamp": int(wire["timestamp"]),
            "metadata": bytes.fromhex(wire["metadata"][2:]),
            "builder": bytes.fromhex(wire["builder"][2:]),
        },
    }


def recover(wire: dict[str, Any], exchange: str, chain_id: int = 137) -> str:
    """Address that signed a type-0 order."""
    encoded = encode_typed_data(full_message=typed_order(wire, exchange, chain_id))
    return Account.recover_message(encoded, signature=wire["signature"])


def test_our_typed_data_recovers_the_real_venue_order_sample() -> None:
    wire = json.loads(sample_text("clob-post-order-request.json"))["order"]
    assert recover(wire, EXCHANGE_V2) == wire["signer"] == DEPOSIT_WALLET


def test_eoa_buy_order_fields_and_signature() -> None:
    order = build_signed_order(KEY, 137, TOKEN, "buy", Decimal("0.01"), Decimal("5"),
                               "GTC", Decimal("0.01"), False, salt=1018789015136,
                               timestamp_ms=1784486089486)
    body = json.loads(order.body("owner-key"))
    wire = body["order"]
    assert list(body) == ["order", "owner", "orderType", "deferExec", "postOnly"]
    assert body["owner"] == "owner-key" and body["orderType"] == "GTC"
    assert body["deferExec"] is False and body["postOnly"] is False
    assert wire["maker"] == wire["signer"] == ADDRESS
    assert wire["tokenId"] == TOKEN
    # Same amounts as the real sample: 0.05 pUSD for 5 shares at 0.01.
    assert (wire["makerAmount"], wire["takerAmount"]) == ("50000", "5000000")
    assert wire["side"] == "BUY" and wire["signatureType"] == 0
    assert wire["salt"] == 1018789015136 and wire["timestamp"] == "1784486089486"
    assert wire["expiration"] == "0"
    assert wire["metadata"] == wire["builder"] == "0x" + "00" * 32
    assert len(wire["signature"]) == 132
    assert recover(wire, EXCHANGE_V2) == ADDRESS
    assert order.exchange_address == EXCHANGE_V2
    digest = encode_typed_data(full_message=typed_order(wire, EXCHANGE_V2))
    expected_hash = keccak(b"\x19" + digest.version + digest.header + digest.body)
    assert order.order_hash == "0x" + expected_hash.hex()


def test_neg_risk_sell_uses_neg_risk_exchange() -> None:
    order = build_signed_order(KEY, 137, TOKEN, "SELL", Decimal("0.455"), Decimal("10.129"),
                               "GTC", Decimal("0.001"), True)
    wire = order.payload("k")["order"]
    assert order.exchange_address == NEG_RISK_EXCHANGE_V2
    assert recover(wire, NEG_RISK_EXCHANGE_V2) == ADDRESS
    assert recover(wire, EXCHANGE_V2) != ADDRESS
    assert wire["side"] == "SELL"
    # Size floors to 10.12 shares; SELL makes shares and takes 10.12 x 0.455 = 4.6046 pUSD.
    assert (wire["makerAmount"], wire["takerAmount"]) == ("10120000", "4604600")
    assert order.size == Decimal("10.12")


def test_exchange_override_and_other_chain() -> None:
    sandbox_exchange = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    order = build_signed_order(KEY, 31337, TOKEN, "BUY", Decimal("0.5"), Decimal("2"),
                               exchange_address=sandbox_exchange)
    assert recover(order.payload("k")["order"], sandbox_exchange, 31337) == ADDRESS
    assert exchange_address_for(137, False) == EXCHANGE_V2


def test_deposit_wallet_type_3_signature() -> None:
    order = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.25"), Decimal("8"),
                               signature_type=3, funder=DEPOSIT_WALLET)
    wire = order.payload("k")["order"]
    assert wire["maker"] == wire["signer"] == DEPOSIT_WALLET
    assert wire["signatureType"] == 3
    sig = bytes.fromhex(wire["signature"][2:])
    assert len(wire["signature"]) == 636
    inner, domain_sep, contents_hash = sig[:65], sig[65:97], sig[97:129]
    type_string, length = sig[129:-2], sig[-2:]
    assert type_string.decode() == ORDER_TYPE and length == b"\x00\xba"
    typed = typed_order(wire, EXCHANGE_V2)
    encoded = encode_typed_data(full_message=typed)
    assert domain_sep == encoded.header and contents_hash == encoded.body
    sign_type = (
        "TypedDataSign(Order contents,string name,string version,uint256 chainId,"
        "address verifyingContract,bytes32 salt)" + ORDER_TYPE
    )
    struct = keccak(abi_encode(
        ["bytes32", "bytes32", "bytes32", "bytes32", "uint256", "address", "bytes32"],
        [keccak(text=sign_type), contents_hash, keccak(text="DepositWallet"), keccak(text="1"),
         137, DEPOSIT_WALLET, bytes(32)],
    ))
    digest = keccak(b"\x19\x01" + domain_sep + struct)
    assert Account._recover_hash(digest, signature=inner) == ADDRESS


def test_type_3_needs_funder() -> None:
    with pytest.raises(ValueError, match="funder"):
        build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"),
                           signature_type=3)


def test_order_type_rules() -> None:
    future = int(time.time()) + 3600
    gtd = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "GTD",
                             expiration=future)
    assert gtd.payload("k")["order"]["expiration"] == str(future)
    assert gtd.payload("k")["orderType"] == "GTD"
    with pytest.raises(ValueError, match="GTD"):
        build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "GTD")
    with pytest.raises(ValueError, match="only meaningful"):
        build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "GTC",
                           expiration=future)
    fok = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "FOK")
    with pytest.raises(ValueError, match="post_only"):
        fok.payload("k", post_only=True)
    fak = build_signed_order(KEY, 137, TOKEN, "SELL", Decimal("0.5"), Decimal("5"), "fak")
    assert fak.order_type == "FAK"
    with pytest.raises(ValueError, match="order type"):
        build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "IOC")


def test_limit_amounts_are_exact() -> None:
    assert limit_order_amounts("BUY", Decimal("0.57"), Decimal("100"), Decimal("0.01")) == (
        57000000, 100000000, Decimal("100")
    )
    assert limit_order_amounts("BUY", Decimal("0.0001"), Decimal("7.777"),
                               Decimal("0.0001")) == (777, 7770000, Decimal("7.77"))
    with pytest.raises(ValueError, match="multiple"):
        limit_order_amounts("BUY", Decimal("0.555"), Decimal("1"), Decimal("0.01"))
    with pytest.raises(ValueError, match="outside"):
        check_price(Decimal("1"), Decimal("0.01"))
    with pytest.raises(ValueError, match="zero"):
        limit_order_amounts("SELL", Decimal("0.5"), Decimal("0.004"), Decimal("0.01"))
    with pytest.raises(ValueError, match="tick size"):
        check_price(Decimal("0.5"), Decimal("0.05"))


def test_round_price_to_tick_is_conservative() -> None:
    # Data API prices arrive as floats like 0.709999959.
    assert round_price_to_tick(Decimal("0.709999959"), Decimal("0.01"), "BUY") == Decimal("0.70")
    assert round_price_to_tick(Decimal("0.709999959"), Decimal("0.01"), "SELL") == Decimal("0.71")
    assert round_price_to_tick(Decimal("0.999"), Decimal("0.01"), "SELL") == Decimal("0.99")
    assert round_price_to_tick(Decimal("0.0001"), Decimal("0.01"), "BUY") == Decimal("0.01")


def test_market_order_amounts() -> None:
    # BUY 10 pUSD at worst 0.33: 10 / 0.33 = 30.303030... shares, floored to 4 decimals.
    assert market_order_amounts("BUY", Decimal("10"), Decimal("0.33"), Decimal("0.01")) == (
        10000000, 30303000, Decimal("0.33")
    )
    assert market_order_amounts("SELL", Decimal("12.345"), Decimal("0.337"),
                                Decimal("0.01")) == (12340000, 4072200, Decimal("0.33"))
    order = build_signed_market_order(KEY, 137, TOKEN, "BUY", Decimal("10"), Decimal("0.33"))
    assert order.order_type == "FOK" and order.size == Decimal("30.303")
    assert recover(order.payload("k")["order"], EXCHANGE_V2) == ADDRESS
    with pytest.raises(ValueError, match="FOK or FAK"):
        build_signed_market_order(KEY, 137, TOKEN, "BUY", Decimal("1"), Decimal("0.5"), "GTC")


def test_l1_header_vectors() -> None:
    a = l1_headers(KEY, 80002, timestamp=10000000, nonce=23)
    assert a == {
        "POLY_ADDRESS": ADDRESS,
        "POLY_SIGNATURE": "0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c1"
                          "682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b",
        "POLY_TIMESTAMP": "10000000",
        "POLY_NONCE": "23",
    }
    b = l1_headers(KEY, 137, timestamp=1700000000, nonce=42)
    assert b["POLY_SIGNATURE"] == (
        "0x8e61f918d542a48ff9433fb6cc4c172a2763ad53dda8afa07f77321e2e0a1e30"
        "55f29fac1408e0020dca977190fd4f01b1c73b5e2078be29c88a32887945fe2a1b"
    )


def test_l2_header_vector_and_body_binding() -> None:
    creds = ApiCreds("key-1", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "pass", ADDRESS)
    headers = l2_headers(creds, "test-sign", "/orders", '{"hash": "0x123"}', timestamp=1000000)
    assert headers["POLY_SIGNATURE"] == "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc="
    assert headers["POLY_API_KEY"] == "key-1" and headers["POLY_PASSPHRASE"] == "pass"
    assert headers["POLY_ADDRESS"] == ADDRESS and headers["POLY_TIMESTAMP"] == "1000000"
    body = '{"orderID":"0xabc"}'
    signed = l2_headers(creds, "DELETE", "/order", body, timestamp=1700000000)
    message = f"1700000000DELETE/order{body}".encode()
    key = base64.urlsafe_b64decode(creds.secret)
    expected = base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest())
    assert signed["POLY_SIGNATURE"] == expected.decode()


@pytest.mark.parametrize("signature_type,funder", [(0, None), (3, DEPOSIT_WALLET)])
def test_fast_signer_matches_the_librarys_builder_byte_for_byte(signature_type: int,
                                                               funder: str | None) -> None:
    """Our direct EIP-712 digest and libsecp256k1 signature equal py-clob-client-v2's."""
    import dataclasses

    from py_clob_client_v2.order_utils import ExchangeOrderBuilderV2, Side, SignatureTypeV2
    from py_clob_client_v2.order_utils.model.order_data_v2 import OrderDataV2
    from py_clob_client_v2.signer import Signer

    from venue.signing import OrderKey

    key = OrderKey(KEY)
    assert key.address == ADDRESS and KEY not in repr(key)
    ours = build_signed_order(key, 137, TOKEN, "SELL", Decimal("0.455"), Decimal("10.12"),
                              "GTC", Decimal("0.001"), True, signature_type, funder,
                              salt=987654321, timestamp_ms=1784486089486)
    signer = Signer(KEY, 137)
    builder = ExchangeOrderBuilderV2(NEG_RISK_EXCHANGE_V2, 137, signer,
                                     generate_salt=lambda: "987654321")
    theirs = builder.build_order(OrderDataV2(
        maker=funder or ADDRESS, tokenId=TOKEN, makerAmount=str(ours.maker_amount),
        takerAmount=str(ours.taker_amount), side=Side.SELL,
        signer=funder or ADDRESS, signatureType=SignatureTypeV2(signature_type),
        timestamp="1784486089486", expiration="0"))
    typed = builder.build_order_typed_data(theirs)
    assert ours.exchange_address == NEG_RISK_EXCHANGE_V2
    assert ours.order.signature == builder.build_order_signature(typed)
    assert ours.order_hash == builder.build_order_hash(typed)
    fields = dataclasses.asdict(ours.order)
    fields.pop("signature")
    assert fields == dataclasses.asdict(theirs)


@pytest.mark.parametrize("signature_type,funder", [(0, None), (3, DEPOSIT_WALLET)])
@pytest.mark.parametrize("kind", ["market BUY", "market SELL", "limit BUY with metadata"])
def test_fast_signer_matches_the_library_for_market_orders_and_metadata(
        signature_type: int, funder: str | None, kind: str) -> None:
    """The per-thread Keccak, the cached words and the integer encoding sign what the
    library signs, for market orders and for non-zero metadata and builder fields too."""
    import dataclasses

    from py_clob_client_v2.order_utils import ExchangeOrderBuilderV2, Side, SignatureTypeV2
    from py_clob_client_v2.order_utils.model.order_data_v2 import OrderDataV2
    from py_clob_client_v2.signer import Signer

    from venue.signing import OrderKey, order_struct_hash

    metadata = builder_code = None
    if kind == "market BUY":
        ours = build_signed_market_order(
            OrderKey(KEY), 137, TOKEN, "BUY", Decimal("7.77"), Decimal("0.53"), "FAK",
            signature_type=signature_type, funder=funder, salt=1, timestamp_ms=1784486089486)
    elif kind == "market SELL":
        ours = build_signed_market_order(
            OrderKey(KEY), 137, TOKEN, "SELL", Decimal("12.345"), Decimal("0.337"),
            signature_type=signature_type, funder=funder, salt=2**255 + 12345,
            timestamp_ms=1784486089486)
    else:
        metadata, builder_code = "0x" + "5a" * 32, "0x" + "00" * 12 + "ab" * 20
        ours = build_signed_order(
            KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("3"), signature_type=signature_type,
            funder=funder, metadata=metadata, builder=builder_code, salt=42,
            timestamp_ms=1784486089486)
    builder = ExchangeOrderBuilderV2(EXCHANGE_V2, 137, Signer(KEY, 137),
                                     generate_salt=lambda: ours.order.salt)
    theirs = builder.build_order(OrderDataV2(
        maker=funder or ADDRESS, tokenId=TOKEN, makerAmount=str(ours.maker_amount),
        takerAmount=str(ours.taker_amount), side=Side.BUY if "BUY" in kind else Side.SELL,
        signer=funder or ADDRESS, signatureType=SignatureTypeV2(signature_type),
        timestamp="1784486089486", metadata=metadata, builder=builder_code, expiration="0"))
    typed = builder.build_order_typed_data(theirs)
    assert ours.order.signature == builder.build_order_signature(typed)
    assert ours.order_hash == builder.build_order_hash(typed)
    fields = dataclasses.asdict(ours.order)
    fields.pop("signature")
    assert fields == dataclasses.asdict(theirs)
    # The public struct hash (from the order's strings) equals the one signing used.
    contents = encode_typed_data(full_message=typed).body
    assert order_struct_hash(ours.order) == contents


def test_keccak256_matches_eth_hash_across_block_boundaries_and_threads() -> None:
    """Keccak on a reused per-thread state equals a fresh hash at every length near the
    136-byte rate, for bytes and other buffers, and threads do not share a state."""
    import threading

    from venue.signing import keccak256

    data = bytes(range(256)) * 2
    for length in [*range(0, 140), *range(268, 276), 384, 410, 512]:
        assert keccak256(data[:length]) == keccak(data[:length]), length
    assert keccak256(bytearray(b"abc")) == keccak256(memoryview(b"abc")) == keccak(b"abc")
    results: dict[int, list[bool]] = {}

    def hash_many(seed: int) -> None:
        results[seed] = [keccak256(bytes([seed]) * n) == keccak(bytes([seed]) * n)
                         for n in range(0, 600, 7)]

    threads = [threading.Thread(target=hash_many, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(all(ok) for ok in results.values()) and len(results) == 4


@pytest.mark.parametrize("owner", ["owner-key", "clé \"quoted\" \\ \n\u2028 ✓"])
def test_body_is_the_librarys_json_byte_for_byte(owner: str) -> None:
    """The directly written body equals json.dumps of the library's order dict, whatever
    the owner text, order type and flags (non-bool flags go through the dict)."""
    from py_clob_client_v2.order_utils.model.order_data_v2 import order_to_json_v2

    from venue.signing import compact_json

    orders = [
        build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), salt=7,
                           timestamp_ms=1784486089486),
        build_signed_market_order(KEY, 137, TOKEN, "SELL", Decimal("3"), Decimal("0.41"),
                                  "FAK", signature_type=3, funder=DEPOSIT_WALLET),
    ]
    for order in orders:
        for order_type in (None, "GTC", "GTD", "FOK"):
            kind = order_type or order.order_type
            for post_only, defer_exec in ((False, False), (True, False), (False, True), (1, 0)):
                if post_only and kind in ("FOK", "FAK"):
                    with pytest.raises(ValueError, match="post_only"):
                        order.body(owner, order_type, post_only, defer_exec)  # type: ignore[arg-type]
                    continue
                expected = json.dumps(
                    order_to_json_v2(order.order, owner, kind, post_only, defer_exec),  # type: ignore[arg-type]
                    separators=(",", ":"), ensure_ascii=False)
                body = order.body(owner, order_type, post_only, defer_exec)  # type: ignore[arg-type]
                assert body == expected
                assert body == compact_json(order.payload(owner, order_type, post_only,
                                                          defer_exec))  # type: ignore[arg-type]


def test_market_amounts_grid_is_shared_by_equal_ticks_but_errors_name_the_tick_given() -> None:
    """0.01 and 0.010 price alike; an off-grid or out-of-range price names the tick as given."""
    for tick in ("0.01", Decimal("0.010"), Decimal("1E-2")):
        assert market_order_amounts("BUY", Decimal("10"), Decimal("0.33"), tick) == (
            10000000, 30303000, Decimal("0.33"))
    with pytest.raises(ValueError, match=r"outside \[0\.010, 0\.990\]"):
        market_order_amounts("BUY", Decimal("10"), Decimal("0.005"), Decimal("0.010"))
    with pytest.raises(ValueError, match=r"outside \[0\.01, 0\.99\]"):
        market_order_amounts("SELL", Decimal("10"), Decimal("0.0001"), "0.01")
    with pytest.raises(ValueError, match=r"tick size 0\.05 not in"):
        market_order_amounts("BUY", Decimal("10"), Decimal("0.5"), Decimal("0.05"))
