"""After placement: delayed orders, trade settlement statuses, failed trades (ACCOUNTS.md §7.3).

* A marketable order on a market with ``secondsDelay`` is queued by the desk (status
  ``DELAYED``); once its delay is over it is matched against the book as it is then, or
  ends ``CANCELED`` unfilled (a FOK that cannot fill whole, a FAK with nothing to take).
* A trade reports ``MATCHED``, then ``MINED`` after ``mined_after`` s, then ``CONFIRMED``
  after ``confirmed_after`` s. A trade picked by ``fail_next`` (at its match), or whose
  on-chain settlement reverted (chain_settlement.py), reports ``RETRYING`` once mined would
  be due and ``FAILED`` when it would have been confirmed: its fills are then undone in the
  ledger (pUSD, fee and tokens back where they were; nothing moved on chain).
* ``empty_finished_orders``: ``GET /data/order/<id>`` answers 200 with an empty body for
  an order that is no longer open (the venue's way, py-clob-client #217).
* ``associate_trades`` off: an order's ``associate_trades`` is always empty, as the venue may
  leave it from 2026-12-14 ("an empty associate_trades tuple does not mean an order has no
  fills", ACCOUNTS.md §12); its fills are only found in ``/data/trades``.
* ``split_parts`` / ``split_every``: a match of an API-key order is shown as that many
  trades, ``split_every`` s apart (ClobTrade.split): the order's ``size_matched`` counts the
  whole match at once while ``/data/trades`` shows its parts one by one.

Time moves lazily: ``advance`` runs before every request (and after each order entry), so
no thread is needed. Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from devstack.venue.catalog import Catalog, Market
from devstack.venue.desk import OrderDesk
from devstack.venue.ledger import Ledger
from devstack.venue.matching import BookOrder
from devstack.venue.tape import ClobTrade, Tape, TradePart

OPEN_STATUSES = ("LIVE", "DELAYED")


@dataclass
class LifecycleSwitches:
    """The control API's switches (defaults: what the venue does)."""

    empty_finished_orders: bool = True
    mined_after: float = 2.0
    confirmed_after: float = 6.0
    fail_next: int = 0  # how many of the next trades (of API-key orders) end FAILED
    associate_trades: bool = True  # off: orders list no trades (ACCOUNTS.md §12)
    split_parts: int = 1           # trades a match of an API-key order is shown as
    split_every: float = 0.0       # seconds between those trades

    def describe(self) -> dict:
        """The switches as the control API shows them."""
        return {"empty_finished_orders": self.empty_finished_orders,
                "mined_after": str(self.mined_after),
                "confirmed_after": str(self.confirmed_after), "fail_next": self.fail_next,
                "associate_trades": self.associate_trades, "split_parts": self.split_parts,
                "split_every": str(self.split_every)}


class TradeLifecycle:
    """Moves delayed orders and trades along as time passes."""

    def __init__(self, now: Callable[[], float], catalog: Catalog, desk: OrderDesk,
                 ledger: Ledger, tape: Tape, after_match: Callable[[Market], None]) -> None:
        self.now = now
        self.catalog = catalog
        self.desk = desk
        self.ledger = ledger
        self.tape = tape
        self.after_match = after_match  # replenish the house and publish the book
        self.switches = LifecycleSwitches()
        self._failing: list[ClobTrade] = []  # picked to fail, not yet undone

    def busy(self) -> bool:
        """True when time may change something (checked without the lock, per request)."""
        return bool(self.desk.delayed or self._failing)

    def fail_next(self, count: int) -> None:
        """The next ``count`` trades of API-key orders end FAILED."""
        self.switches.fail_next = count

    def picks_to_fail(self, trade: ClobTrade) -> bool:
        """At its match: whether ``fail_next`` picks this trade to end FAILED (then it is
        never settled, on chain or anywhere, and its fills are undone when it fails)."""
        if self.switches.fail_next <= 0 or not _placed_by_a_key(trade):
            return False
        self.switches.fail_next -= 1
        self.fail(trade)
        return True

    def split(self, trade: ClobTrade) -> None:
        """At its match: show an API-key order's match as ``split_parts`` trades."""
        if self.switches.split_parts > 1 and _placed_by_a_key(trade):
            trade.parts, trade.part_every = self.switches.split_parts, self.switches.split_every

    def visible_parts(self, trade: ClobTrade, now: float) -> list[TradePart]:
        """The trade entities of a match that have appeared by ``now``."""
        return [part for part in trade.split() if part.matched_at <= now]

    def associate_trades(self, order: BookOrder, now: float) -> list[str]:
        """An order's ``associate_trades``: its trades' visible parts (none when switched off)."""
        if not self.switches.associate_trades:
            return []
        ids: list[str] = []
        for trade_id in order.associate_trades:
            trade = self.tape.clob_trades.get(trade_id)
            ids.extend([trade_id] if trade is None
                       else [p.id for p in self.visible_parts(trade, now)])
        return ids

    def fail(self, trade: ClobTrade) -> None:
        """This trade's settlement failed: RETRYING, then FAILED with its fills undone."""
        trade.fails = True
        self._failing.append(trade)

    def advance(self) -> None:
        """Match due delayed orders, undo the fills of trades that have now failed."""
        now = self.now()
        if self.desk.delayed:
            self._match_due(now)
        for trade in list(self._failing):
            if self.status(trade, now) == "FAILED":
                self._failing.remove(trade)
                self._reverse(trade)

    def status(self, trade: ClobTrade, now: float, matched_at: float | None = None) -> str:
        """The trade's settlement status at ``now`` (one part's: from its ``matched_at``)."""
        age = now - (trade.matched_at if matched_at is None else matched_at)
        if age < self.switches.mined_after:
            return "MATCHED"
        if trade.fails:
            return "RETRYING" if age < self.switches.confirmed_after else "FAILED"
        return "MINED" if age < self.switches.confirmed_after else "CONFIRMED"

    def finished_order_hidden(self, order: BookOrder) -> bool:
        """True when ``GET /data/order/<id>`` answers an empty body for this order."""
        return self.switches.empty_finished_orders and order.status not in OPEN_STATUSES

    def _match_due(self, now: float) -> None:
        due = [item for item in self.desk.delayed if item[0] <= now]
        if not due:
            return
        self.desk.delayed = [item for item in self.desk.delayed if item[0] > now]
        for _, order in due:
            self.ledger.release(order)
            if order.status != "DELAYED":
                continue  # cancelled while queued
            market = self.catalog.markets[order.condition_id]
            book = self.desk.books[market.condition_id]
            for gone in book.drop_expired(now):
                self.desk.close(gone, "EXPIRED", remove=False)
            plan = book.plan(order, now)
            killed = (order.order_type == "FOK" and not plan.complete) or (
                order.order_type == "FAK" and not plan.fills) or market.closed
            if killed:
                order.status = "CANCELED"
                continue
            self.desk.match(market, order, plan.fills, now)
            self.after_match(market)

    def _reverse(self, trade: ClobTrade) -> None:
        """Undo a failed trade's fills: the transfers never happened on chain."""
        collateral, positions = self.ledger.collateral, self.ledger.positions
        for fill in self.tape.fills:
            if fill.trade_id != trade.id:
                continue
            key = fill.proxy_wallet.lower()
            held = positions.setdefault(key, {})
            if fill.side == "BUY":
                collateral[key] = collateral.get(key, 0) + fill.usdc + fill.fee
                held[fill.asset] = held.get(fill.asset, 0) - fill.size
            else:
                collateral[key] = collateral.get(key, 0) - fill.usdc + fill.fee
                held[fill.asset] = held.get(fill.asset, 0) + fill.size


def _placed_by_a_key(trade: ClobTrade) -> bool:
    """A trade one of the API's users is part of (not a whale's or the house's alone)."""
    return bool(trade.taker_order.owner) or any(o.owner for o, _, _ in trade.maker_fills)
