"""The order desk: takes signed orders, matches them on the books, settles and cancels.

Every rule of order entry lives here (payload, signer, tick, size, balance, FOK/FAK,
post-only, expiry). Book and trade events go out to registered ``BookListener``s (the
market channel) right after each change. Not locked here: the sandbox state's lock
guards every call.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from decimal import Decimal
from random import Random
from typing import Protocol

from eth_utils import to_checksum_address

from devstack.venue.accounts import COLLATERAL_ASSET, AccountRegistry
from devstack.venue.amounts import amount_text, plain, to_base, units
from devstack.venue.api_keys import ApiKeyRecord
from devstack.venue.catalog import Catalog, Market
from devstack.venue.config import SandboxConfig
from devstack.venue.ledger import Ledger
from devstack.venue.matching import BookOrder, MarketBook, PlannedFill, cost_of
from devstack.venue.order_signing import (
    SIG_POLY_1271,
    checksum,
    order_digest,
    parse_order,
    recover_deposit_wallet_signer,
    recover_order_signer,
)
from devstack.venue.rejections import (
    ERR_BALANCE,
    ERR_EOA_REFUSED,
    ERR_FAK,
    ERR_FOK,
    ERR_INVALID_SIGNATURE,
    ERR_OWNER_NOT_API_KEY,
    ERR_PAYLOAD,
    ERR_POST_ONLY_CROSSES,
    ERR_SIGNER_NOT_API_KEY,
    VenueRejection,
)
from devstack.venue.tape import ClobTrade, Fill, Tape
from devstack.venue.versions import signature_matches, stale_version_text

ORDER_TYPES = ("GTC", "GTD", "FOK", "FAK")


class BookListener(Protocol):
    """Told of every book change and match, under the state's lock, right after it."""

    def on_book_changed(self, market: Market) -> None:
        """A market's book (or its last trade price) changed."""

    def on_trade(
        self, market: Market, taker_index: int, side: str, size: int, fee_rate_bps: int,
        transaction_hash: str, now: float,
    ) -> None:
        """A taker matched ``size`` shares; reported after the book change it caused."""


def random_hash() -> str:
    """A fresh 32-byte hex id (orders, transactions)."""
    # Not from the seeded rng: hashes must differ between runs, or a consumer that
    # persisted fills of an earlier run would take new fills for already-seen ones.
    return "0x" + secrets.token_bytes(32).hex()


ERR_DELAYED_CANCEL = "order is delayed (taker delay) and can't be canceled until it is matched"


class OrderDesk:
    """The books and every order the venue took, and the rules that move them."""

    def __init__(
        self,
        config: SandboxConfig,
        now: Callable[[], float],
        catalog: Catalog,
        ledger: Ledger,
        accounts: AccountRegistry,
        tape: Tape,
        house: str,
        publish_fills: Callable[[list[Fill], float], None],
    ) -> None:
        self.config = config
        self.now = now
        self.catalog = catalog
        self.ledger = ledger
        self.accounts = accounts
        self.tape = tape
        self.house = house
        self.publish_fills = publish_fills
        self.books: dict[str, MarketBook] = {}  # by condition id
        self.orders: dict[str, BookOrder] = {}
        self.received_orders: list[dict] = []
        self.listeners: list[BookListener] = []
        self.delayed: list[tuple[float, BookOrder]] = []  # (due, order), oldest first
        # told of each match before anyone else, with its fills: the state settles it (on
        # chain when attached) and may give it its transaction hash
        self.settle: Callable[[ClobTrade, list[Fill]], None] = lambda trade, fills: None

    def listen(self, listener: BookListener) -> None:
        """Register a listener for book changes and trades."""
        self.listeners.append(listener)

    def publish(self, market: Market) -> None:
        """Tell the listeners that a market's book changed."""
        for listener in self.listeners:
            listener.on_book_changed(market)

    def open_book(self, market: Market) -> None:
        """Give a newly listed market its empty book."""
        self.books[market.condition_id] = MarketBook(market.condition_id)

    # -- resting and closing --

    def rest(
        self, market: Market, maker: str, index: int, side: str, price: Decimal, shares: int,
        *, is_house: bool,
    ) -> BookOrder:
        """Rest an unsigned GTC order of the venue's own (house quotes)."""
        order = BookOrder(
            order_id=random_hash(),
            condition_id=market.condition_id,
            token_id=market.token_ids[index],
            token_index=index,
            side=side,
            price=price,
            original_size=shares,
            maker=maker,
            signer=maker,
            order_type="GTC",
            created_at=int(self.now()),
            seq=self.tape.next_seq(),
            outcome=market.outcomes[index],
            is_house=is_house,
        )
        self.orders[order.order_id] = order
        self.ledger.hold(order)
        self.books[market.condition_id].add(order)
        return order

    def close(self, order: BookOrder, status: str, *, remove: bool = True) -> None:
        """Take an order off its book (unless already gone) with a final status."""
        order.status = status
        if remove:
            self.books[order.condition_id].remove(order)
        self.ledger.release(order)

    def close_market(self, market: Market) -> None:
        """Cancel every order resting in a market (it resolved)."""
        for order in self.books[market.condition_id].orders():
            self.close(order, "CANCELED")

    # -- order entry --

    def submit(
        self, record: ApiKeyRecord, envelope: object, entry: dict
    ) -> tuple[Market, BookOrder, ClobTrade | None]:
        """Validate, match and settle one POST /order envelope (publishing is the caller's).

        Raises VenueRejection with the venue's message when the order is refused.
        """
        if not isinstance(envelope, dict) or not isinstance(envelope.get("order"), dict):
            raise VenueRejection(ERR_PAYLOAD)
        order_type = envelope.get("orderType", "GTC")
        if order_type not in ORDER_TYPES:
            raise VenueRejection(ERR_PAYLOAD)
        post_only = bool(envelope.get("postOnly", False))
        if post_only and order_type in ("FOK", "FAK"):
            raise VenueRejection("invalid post-only order: FOK and FAK orders cannot be post-only")
        try:
            signed = parse_order(envelope["order"])
        except (KeyError, ValueError, TypeError) as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        if envelope.get("owner") != record.api_key:
            raise VenueRejection(ERR_OWNER_NOT_API_KEY)
        market, index = self.catalog.tradable_market(str(signed.token_id))
        exchange, version = self.config.signing_domain(market.neg_risk, market.position_ids)
        digest = order_digest(signed, self.config.chain_id, exchange, version)
        order_id = "0x" + digest.hex()
        entry["order_id"] = order_id
        enveloped = False
        if signed.signature_type == SIG_POLY_1271:
            authoriser, enveloped = recover_deposit_wallet_signer(
                signed, self.config.chain_id, exchange, version)
        else:
            authoriser = recover_order_signer(signed, self.config.chain_id, exchange, digest,
                                              version)
        if not signature_matches(signed, authoriser):
            raise VenueRejection(stale_version_text(self.config, signed, market.neg_risk)
                                 or ERR_INVALID_SIGNATURE)
        self._check_signer(record, signed, authoriser, enveloped)
        now = self.now()
        if signed.expiration and order_type == "GTD" and signed.expiration <= now:
            raise VenueRejection(f"order {order_id} is invalid. Expired.")
        if order_type == "GTD" and not signed.expiration:
            raise VenueRejection(f"order {order_id} is invalid. GTD orders need an expiration.")
        if order_id in self.orders:
            raise VenueRejection(
                f"order {order_id} is invalid. Duplicated. Same order has already been placed, "
                "can't be placed again"
            )
        side = "BUY" if signed.side == 0 else "SELL"
        is_market_buy = side == "BUY" and order_type in ("FOK", "FAK")
        if side == "BUY":
            price = Decimal(signed.maker_amount) / Decimal(signed.taker_amount)
            shares = signed.taker_amount
        else:
            price = Decimal(signed.taker_amount) / Decimal(signed.maker_amount)
            shares = signed.maker_amount
        tick = market.tick_size
        if price < tick or price > 1 - tick:
            raise VenueRejection(
                f"order {order_id} is invalid. Price ({plain(price)}) breaks minimum tick size "
                f"rule: {tick}"
            )
        if order_type in ("GTC", "GTD"):
            if price % tick != 0:
                raise VenueRejection(
                    f"order {order_id} is invalid. Price ({plain(price)}) breaks minimum tick "
                    f"size rule: {tick}"
                )
            if units(shares) < market.min_order_size:
                raise VenueRejection(
                    f"order {order_id} is invalid. Size ({amount_text(shares)}) lower than the "
                    f"minimum: {market.min_order_size}"
                )
        maker = signed.maker
        self._check_balance(market, maker, side, signed.maker_amount, shares, price, str(
            signed.token_id))
        order = BookOrder(
            order_id=order_id,
            condition_id=market.condition_id,
            token_id=str(signed.token_id),
            token_index=index,
            side=side,
            price=price,
            original_size=0 if is_market_buy else shares,
            maker=maker,
            signer=signed.signer,
            owner=record.api_key,
            order_type=order_type,
            expiration=signed.expiration,
            created_at=int(now),
            seq=self.tape.next_seq(),
            budget=signed.maker_amount if is_market_buy else None,
            outcome=market.outcomes[index],
            metadata=signed.metadata.hex(),
            builder=signed.builder.hex(),
        )
        book = self.books[market.condition_id]
        for gone in book.drop_expired(now):
            self.close(gone, "EXPIRED", remove=False)
        plan = book.plan(order, now)
        if post_only and plan.fills:
            raise VenueRejection(ERR_POST_ONLY_CROSSES)
        delay = market.taker_delay()
        if delay and plan.fills:
            # Marketable on a delayed market: queued, matched once the delay is over
            # (devstack/venue/lifecycle.py), answered "delayed" now.
            self.orders[order_id] = order
            order.status = "DELAYED"
            self.ledger.hold(order)
            self.delayed.append((now + delay, order))
            return market, order, None
        if order_type == "FOK" and not plan.complete:
            raise VenueRejection(ERR_FOK)
        if order_type == "FAK" and not plan.fills:
            raise VenueRejection(ERR_FAK)
        self.orders[order_id] = order
        return market, order, self.match(market, order, plan.fills, now)

    def match(self, market: Market, order: BookOrder, fills: list[PlannedFill],
              now: float) -> ClobTrade | None:
        """Execute an accepted order's fills, then rest what is left (GTC/GTD) or finish it."""
        trade = self.execute(market, order, fills, now)
        if order.order_type in ("GTC", "GTD") and order.remaining > 0:
            self.books[market.condition_id].add(order)
            self.ledger.hold(order)
            order.status = "LIVE"
        else:
            if order.budget is not None:
                order.original_size = order.size_matched
            order.status = "MATCHED" if order.size_matched else "CANCELED"
        return trade

    def _check_signer(self, record: ApiKeyRecord, signed, authoriser: str,
                      enveloped: bool = False) -> None:
        """Tie the order to the API key's address, as the venue does per signature type."""
        key_address = record.address.lower()
        if signed.signature_type == SIG_POLY_1271:
            wallet = signed.signer.lower()
            if signed.maker.lower() != wallet:
                raise VenueRejection(ERR_INVALID_SIGNATURE)
            deposit_wallet = self.accounts.wallet(wallet)
            owners = deposit_wallet.owners if deposit_wallet else set()
            # as the wallet's isValidSignature: plain ERC-7739 from an owner, the envelope
            # from a session signer still in force (not expired, not revoked) for the CLOB
            sessions = deposit_wallet.clob_signers(self.now()) if deposit_wallet else set()
            if authoriser.lower() not in (sessions if enveloped else owners):
                raise VenueRejection(ERR_INVALID_SIGNATURE)
            if key_address != wallet and key_address not in owners | sessions:
                raise VenueRejection(ERR_SIGNER_NOT_API_KEY)
            if self.config.strict_accounts and (
                    deposit_wallet is None or not deposit_wallet.registered):
                # a wallet the relayer has not finished registering (ACCOUNTS.md §4)
                raise VenueRejection(ERR_SIGNER_NOT_API_KEY)
            return
        if authoriser.lower() != signed.signer.lower():
            raise VenueRejection(ERR_INVALID_SIGNATURE)
        if signed.signer.lower() != key_address:
            raise VenueRejection(ERR_SIGNER_NOT_API_KEY)
        if signed.signature_type == 0 and signed.maker.lower() != signed.signer.lower():
            raise VenueRejection(ERR_INVALID_SIGNATURE)
        if signed.signature_type in (1, 2):
            owners = self.accounts.owners_of(signed.maker)
            if key_address not in owners:
                raise VenueRejection(ERR_INVALID_SIGNATURE)
        if self.config.strict_accounts:
            allowed = (self.accounts.allowlisted if signed.signature_type == 0
                       else self.accounts.grandfathered)
            if signed.maker.lower() not in allowed:
                raise VenueRejection(ERR_EOA_REFUSED)

    def _check_balance(
        self, market: Market, maker: str, side: str, maker_amount: int, shares: int,
        price: Decimal, token_id: str,
    ) -> None:
        reserved_collateral, reserved_tokens = self.ledger.reserved(maker)
        if side == "BUY":
            need = maker_amount
            if market.fees is not None:
                need += to_base(market.fees.taker_fee(units(shares), price))
            available = self.ledger.balance(maker) - reserved_collateral
        else:
            need = maker_amount
            available = (self.ledger.token_balance(maker, token_id)
                         - reserved_tokens.get(token_id, 0))
        if need > available:
            raise VenueRejection(ERR_BALANCE)
        if self.config.strict_accounts:
            self._check_cached(market, maker, side, need, available, token_id)

    def _check_cached(self, market: Market, maker: str, side: str, need: int,
                      available: int, token_id: str) -> None:
        """Strict mode: what the CLOB's cache says, balance and the exchange's allowance."""
        asset = COLLATERAL_ASSET if side == "BUY" else token_id
        live = self.ledger.balance(maker) if side == "BUY" else \
            self.ledger.token_balance(maker, token_id)
        unseen = live - self.accounts.cached_balance(maker, live, asset)
        # a protocol-v2 market settles on Exchange V3 (its positions on the PositionManager)
        spender = (self.config.exchange_v3 if market.position_ids
                   else self.config.exchange_for(market.neg_risk))
        allowance = self.accounts.cached_allowance_map(maker, asset).get(spender, 0)
        if need > available - unseen or need > allowance:
            raise VenueRejection(ERR_BALANCE)

    # -- matching --

    def execute(
        self, market: Market, taker: BookOrder, fills: list[PlannedFill], now: float
    ) -> ClobTrade | None:
        """Settle planned fills: move pUSD and tokens, record fills, broadcast them."""
        if not fills:
            return None
        tx_hash = random_hash()
        trade = ClobTrade(
            id=str(uuid.uuid4()),
            taker_order=taker,
            market=market,
            size=0,
            price=taker.own_price(fills[0].book_price),
            taker_usdc=0,
            fee_rate_bps=int(market.fees.rate * 10000) if market.fees else 0,
            match_time=int(now),
            transaction_hash=tx_hash,
            matched_at=now,
        )
        new_fills: list[Fill] = []
        for planned in fills:
            resting = planned.resting
            shares = planned.shares
            taker_price = taker.own_price(planned.book_price)
            maker_price = resting.own_price(planned.book_price)
            taker_usdc, taker_fee = self.ledger.settle(market, taker, shares, taker_price, True)
            maker_usdc, _ = self.ledger.settle(market, resting, shares, maker_price, False)
            taker.size_matched += shares
            if taker.budget is not None:
                taker.spent += taker_usdc
            resting.size_matched += shares
            resting.associate_trades.append(trade.id)
            if resting.remaining <= 0:
                self.close(resting, "MATCHED")
            trade.size += shares
            trade.taker_usdc += taker_usdc
            trade.maker_fills.append((resting, shares, maker_price))
            seq = self.tape.next_seq()
            new_fills.append(_fill(market, taker, shares, taker_price, taker_usdc,
                                   taker_fee, "TAKER", trade, seq, now))
            new_fills.append(_fill(market, resting, shares, maker_price, maker_usdc,
                                   0, "MAKER", trade, seq, now))
            market.volume += units(taker_usdc)
        taker.associate_trades.append(trade.id)
        self.settle(trade, new_fills)
        last_book_price = fills[-1].book_price
        market.last_trade_price = last_book_price
        for listener in self.listeners:
            listener.on_trade(market, taker.token_index, taker.side, trade.size,
                              trade.fee_rate_bps, trade.transaction_hash, now)
        self.tape.record_trade(trade, new_fills, last_book_price, int(now))
        self.publish_fills(new_fills, now)
        return trade

    def inject(
        self,
        wallet: str,
        token_id: str,
        side: str,
        *,
        price: Decimal | None,
        size: Decimal | None,
        counterparty: str | None,
        rng: Random,
    ) -> list[Fill]:
        """A fill for `wallet` as taker against a counterparty (the house by default).

        The book is left alone; balances, positions, Data API, prices and RTDS all see it.
        """
        market, index = self.catalog.market_for_token(token_id)
        if market.closed:
            raise VenueRejection("market is closed, orders are not accepted")
        if side not in ("BUY", "SELL"):
            raise VenueRejection("side must be BUY or SELL")
        if price is None:
            fair = market.fair_price if index == 0 else 1 - market.fair_price
            price = fair
        price = Decimal(price)
        if not (0 < price < 1):
            raise VenueRejection("price must be between 0 and 1")
        shares = to_base(size if size is not None else Decimal(rng.randint(10, 400)))
        now = self.now()
        wallet_cs = to_checksum_address(wallet)
        ledger = self.ledger
        # Injected wallets are funded on the fly: the point is the fill, not the money
        # (exactly what it takes, so a chain that settles it holds the same afterwards).
        if side == "BUY":
            need = cost_of(shares, price)
            if market.fees is not None:
                need += to_base(market.fees.taker_fee(units(shares), price))
            if ledger.balance(wallet_cs) < need:
                ledger.set_balance(wallet_cs, need)
        elif ledger.token_balance(wallet_cs, token_id) < shares:
            ledger.set_position(wallet_cs, token_id, shares)
        other = to_checksum_address(counterparty) if counterparty else self.house
        taker = BookOrder(
            order_id=random_hash(), condition_id=market.condition_id,
            token_id=token_id, token_index=index, side=side, price=price,
            original_size=shares, maker=wallet_cs, signer=wallet_cs, order_type="FAK",
            created_at=int(now), seq=self.tape.next_seq(), outcome=market.outcomes[index],
        )
        # The counterparty buys the complement (mint) or the same token (normal trade).
        maker = BookOrder(
            order_id=random_hash(), condition_id=market.condition_id,
            token_id=market.token_ids[1 - index] if side == "BUY" else token_id,
            token_index=1 - index if side == "BUY" else index, side="BUY",
            price=1 - price if side == "BUY" else price, original_size=shares,
            maker=other, signer=other, order_type="GTC", created_at=int(now),
            seq=self.tape.next_seq(), is_house=other == self.house,
        )
        maker.outcome = market.outcomes[maker.token_index]
        if maker.maker.lower() != self.house.lower():
            need = cost_of(shares, maker.price)
            if ledger.balance(other) < need:
                ledger.set_balance(other, need)
        self.orders[taker.order_id] = taker
        self.orders[maker.order_id] = maker
        book_price = price if index == 0 else 1 - price
        before = len(self.tape.fills)
        self.execute(market, taker, [PlannedFill(maker, shares, book_price)], now)
        taker.status = "MATCHED"
        self.publish(market)  # the trade price (the book is untouched)
        return self.tape.fills[before:]

    # -- cancelling and reading orders --

    def cancel(self, record: ApiKeyRecord, order_ids: list[str]) -> dict:
        """Cancel the key's orders by id; answers {canceled, not_canceled}."""
        canceled: list[str] = []
        not_canceled: dict[str, str] = {}
        touched: dict[str, Market] = {}
        for order_id in order_ids:
            order = self.orders.get(order_id)
            if order is None or order.owner != record.api_key:
                not_canceled[order_id] = "order not found"
            elif order.status == "DELAYED":
                # While in its market's taker delay an order cannot be cancelled
                # (ACCOUNTS.md §11); once matched, its unfilled rest is a live order.
                not_canceled[order_id] = ERR_DELAYED_CANCEL
            elif order.status != "LIVE":
                not_canceled[order_id] = "order can't be canceled, already " + (
                    "matched" if order.status == "MATCHED" else "canceled"
                )
            else:
                self.close(order, "CANCELED", remove=True)
                canceled.append(order_id)
                touched[order.condition_id] = self.catalog.markets[order.condition_id]
        for market in touched.values():
            self.publish(market)
        return {"canceled": canceled, "not_canceled": not_canceled}

    def cancel_where(self, record: ApiKeyRecord, market: str | None = None,
                     asset_id: str | None = None) -> dict:
        """Cancel all the key's live orders, optionally in one market or token."""
        mine = self.open_orders_of(record, market=market, asset_id=asset_id)
        return self.cancel(record, [o.order_id for o in mine])

    def open_orders_of(self, record: ApiKeyRecord, *, market: str | None = None,
                       asset_id: str | None = None) -> list[BookOrder]:
        """The key's live, unexpired resting orders (optionally in one market or token),
        oldest first."""
        now = self.now()
        result = []
        for book in self.books.values():
            for order in book.orders():
                if order.owner != record.api_key or order.expired(now):
                    continue
                if (market and order.condition_id != market) or \
                        (asset_id and order.token_id != asset_id):
                    continue
                result.append(order)
        result.sort(key=lambda o: o.seq)
        return result

    def listed_orders(self, record: ApiKeyRecord, *, market: str = "", asset_id: str = "",
                      order_id: str = "") -> list[BookOrder]:
        """The key's live orders, filtered like GET /data/orders.

        Asked for one ``order_id``, any status of the key's order answers (delayed, matched,
        cancelled: how the SDK follows a delayed order's ``associate_trades``).
        """
        if order_id:
            found = self.orders.get(order_id)
            return [found] if found is not None and found.owner == record.api_key else []
        return self.open_orders_of(record, market=market, asset_id=asset_id)

    def order_for(self, record: ApiKeyRecord, order_id: str) -> BookOrder:
        """One of the key's orders (any status), or 404."""
        order = self.orders.get(order_id)
        if order is None or order.owner != record.api_key:
            raise VenueRejection("order not found", 404)
        return order

    # -- market data --

    def levels(self, market: Market) -> tuple[list, list]:
        """(bids, asks) of a market in outcome-0 terms: (price, shares) levels, best first."""
        book = self.books[market.condition_id]
        now = self.now()
        return _levels(book.bids, now), _levels(book.asks, now)


def order_response(order: BookOrder, trade: ClobTrade | None) -> dict:
    """POST /order's answer for an accepted order."""
    if trade is None:
        making = taking = ""
    elif order.side == "BUY":
        making, taking = amount_text(trade.taker_usdc), amount_text(trade.size)
    else:
        making, taking = amount_text(trade.size), amount_text(trade.taker_usdc)
    fully = order.remaining <= 0 or order.order_type in ("FOK", "FAK")
    status = "matched" if trade is not None and fully else "live"
    response = {
        "errorMsg": "",
        "orderID": order.order_id,
        "takingAmount": taking,
        "makingAmount": making,
        "status": "delayed" if order.status == "DELAYED" else status,
        "transactionsHashes": [trade.transaction_hash] if trade else [],
        "success": True,
    }
    if trade is not None:
        response["tradeIDs"] = [trade.id]
    return response


def _fill(
    market: Market, order: BookOrder, shares: int, price: Decimal, usdc: int, fee: int,
    role: str, trade: ClobTrade, seq: int, now: float,
) -> Fill:
    return Fill(
        proxy_wallet=checksum(order.maker),
        side=order.side,
        asset=order.token_id,
        condition_id=market.condition_id,
        size=shares,
        price=price,
        usdc=usdc,
        fee=fee,
        timestamp=int(now),
        transaction_hash=trade.transaction_hash,
        role=role,
        outcome=market.outcomes[order.token_index],
        outcome_index=order.token_index,
        order_id=order.order_id,
        trade_id=trade.id,
        seq=seq,
    )


def _levels(orders: list[BookOrder], now: float) -> list[tuple[Decimal, Decimal]]:
    """Aggregate resting orders into (book price, shares) levels, best first."""
    levels: list[tuple[Decimal, int]] = []
    for order in orders:
        if order.expired(now) or order.remaining <= 0:
            continue
        price = order.book_price
        if levels and levels[-1][0] == price:
            levels[-1] = (price, levels[-1][1] + order.remaining)
        else:
            levels.append((price, order.remaining))
    return [(price, units(size)) for price, size in levels]
