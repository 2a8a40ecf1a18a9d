"""``OrderSigner``: one wallet's key and the venue's exchange settings, signing orders.

Pure: no HTTP client, no database. The market's tick size and neg-risk flag come from the
caller (who read the book and the market), so signing never asks the venue anything; the
same signer serves the copy engine (opened once per copier) and the order service.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from venue.config import VenueConfig
from venue.models import Side
from venue.order_versions import OrderVersion, exchange_version_for
from venue.signing import (
    SIGNATURE_TYPE_EOA,
    OrderKey,
    SignedOrder,
    build_signed_market_order,
    build_signed_order,
)


@dataclass(frozen=True, slots=True, repr=False)
class OrderSigner:
    """Signs orders for one wallet (maker/signer per its signature type) on one venue.

    The exchange version comes from the token (position ids: Exchange V3) and ``versions``,
    the venue's announced order version shared by its signers (None: version 2).
    """

    key: OrderKey
    chain_id: int
    signature_type: int = SIGNATURE_TYPE_EOA
    funder: str | None = None  # the maker when not the key's own address (deposit wallet)
    exchange_address: str | None = None  # None: the exchange table of ``chain_id``
    neg_risk_exchange_address: str | None = None
    session_key: bool = False  # ``key`` is a session key the deposit wallet's owner authorized
    exchange_v3_address: str | None = None
    versions: OrderVersion | None = None

    @classmethod
    def for_venue(cls, config: VenueConfig, key: OrderKey, *,
                  signature_type: int = SIGNATURE_TYPE_EOA,
                  funder: str | None = None, session_key: bool = False,
                  versions: OrderVersion | None = None) -> OrderSigner:
        """A signer for ``key`` on the venue ``config`` describes (its chain and exchanges)."""
        return cls(key=key, chain_id=config.chain_id, signature_type=signature_type,
                   funder=funder, exchange_address=config.exchange_address,
                   neg_risk_exchange_address=config.neg_risk_exchange_address,
                   session_key=session_key, exchange_v3_address=config.exchange_v3_address,
                   versions=versions)

    def exchange_version(self, token_id: str) -> str:
        """The domain version ("2" or "3") an order for ``token_id`` is signed with now."""
        versions = self.versions
        return exchange_version_for(token_id, versions.value if versions is not None else 2)

    def limit(self, token_id: str, side: Side, price: Decimal, size: Decimal, *,
              tick_size: Decimal, neg_risk: bool, order_type: str = "GTC",
              expiration: int = 0) -> SignedOrder:
        """Sign a limit order for ``size`` shares at ``price``; ValueError if it cannot be."""
        return build_signed_order(
            self.key, self.chain_id, token_id, side, price, size, order_type, tick_size,
            neg_risk, self.signature_type, self.funder, expiration,
            exchange_address=self.exchange_address,
            neg_risk_exchange_address=self.neg_risk_exchange_address,
            session_key=self.session_key, exchange_version=self.exchange_version(token_id),
            exchange_v3_address=self.exchange_v3_address)

    def market(self, token_id: str, side: Side, amount: Decimal, worst_price: Decimal, *,
               tick_size: Decimal, neg_risk: bool, order_type: str = "FOK") -> SignedOrder:
        """Sign a FOK/FAK order (BUY: pUSD to spend; SELL: shares); ValueError if it cannot be."""
        return build_signed_market_order(
            self.key, self.chain_id, token_id, side, amount, worst_price, order_type,
            tick_size, neg_risk, self.signature_type, self.funder,
            exchange_address=self.exchange_address,
            neg_risk_exchange_address=self.neg_risk_exchange_address,
            session_key=self.session_key, exchange_version=self.exchange_version(token_id),
            exchange_v3_address=self.exchange_v3_address)

    def __repr__(self) -> str:
        return (f"OrderSigner(chain_id={self.chain_id}, "
                f"signature_type={self.signature_type}, key=<hidden>)")


__all__ = ["OrderSigner"]
