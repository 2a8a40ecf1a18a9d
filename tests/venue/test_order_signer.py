"""``OrderSigner``: the venue's exchange settings and one key, signing with no client."""

from __future__ import annotations

from decimal import Decimal

from tests.venue.test_signing import ADDRESS, DEPOSIT_WALLET, KEY, TOKEN, recover
from venue.config import VenueConfig
from venue.models import Side
from venue.order_signer import OrderSigner
from venue.signing import OrderKey


def test_a_signer_signs_for_its_venues_exchange_and_hides_its_key() -> None:
    exchange = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    config = VenueConfig.for_sandbox("http://127.0.0.1:1", chain_id=31337,
                                     exchange_address=exchange)
    signer = OrderSigner.for_venue(config, OrderKey(KEY))
    order = signer.limit(TOKEN, Side.BUY, Decimal("0.5"), Decimal("2"),
                         tick_size=Decimal("0.01"), neg_risk=False)
    assert (order.side, order.exchange_address, order.chain_id) == ("BUY", exchange, 31337)
    assert recover(order.payload("k")["order"], exchange, 31337) == ADDRESS
    assert KEY.removeprefix("0x") not in repr(signer)


def test_a_deposit_wallet_signer_makes_its_funder_the_maker_of_market_orders() -> None:
    signer = OrderSigner(key=OrderKey(KEY), chain_id=137, signature_type=3,
                         funder=DEPOSIT_WALLET)
    order = signer.market(TOKEN, Side.SELL, Decimal("8"), Decimal("0.25"),
                          tick_size=Decimal("0.01"), neg_risk=True, order_type="FAK")
    wire = order.payload("k")["order"]
    assert wire["maker"] == wire["signer"] == DEPOSIT_WALLET
    assert (order.side, order.order_type, order.size) == ("SELL", "FAK", Decimal(8))
