"""The paper book: simulated fills priced against the live order book, kept apart from live.

``fill`` walks the current book level by level (never a made-up price), applies the
market's taker fee per level, and records a PaperTrade and the PaperPosition it moves.
Buys take ``size`` shares or spend ``amount`` pUSD; sells are capped at the paper
holding. Like a FAK order, a fill takes what the book offers up to ``limit_price`` and
is ``failed`` (with a reason) when nothing can fill. Nothing reaches the venue.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import db, utcnow
from models.trading import PaperPosition, PaperTrade
from models.user import User
from services.markets import order_book
from services.platform import errors, venues
from services.platform.pagination import Page, paginate
from services.platform.principal import user_id_of
from services.trading import order_plan
from services.trading.execution_quality import copies_of, execution_view
from venue.errors import VenueNotFound
from venue.models import Side, position_status

ZERO = Decimal(0)
SIX = order_book.BASE_UNIT


def fill(user: User | UUID | str, token_id: str, side: Side | str,
         size: Decimal | str | None = None, *, amount: Decimal | str | None = None,
         limit_price: Decimal | str | None = None, config_id: UUID | str | None = None,
         detected_at: datetime | None = None) -> PaperTrade:
    """Simulate a taker order against the live book and book it in the paper ledger.

    Give ``size`` (shares) or, for buys, ``amount`` (pUSD to spend). ``detected_at`` (copy
    trades) sets ``latency_ms`` to the time from detection to the simulated fill.
    """
    user_id = user_id_of(user)
    try:
        side = Side.parse(side)
    except ValueError:
        raise errors.ValidationFailed(fields={"side": ["Must be 'buy' or 'sell'."]}) from None
    if (size is None) == (amount is None) or (amount is not None and side is not Side.BUY):
        raise errors.ValidationFailed(
            fields={"size": ["Give size (shares), or amount (pUSD) for a buy."]})
    shares = Decimal(str(size)) if size is not None else None
    budget = Decimal(str(amount)) if amount is not None else None
    limit = Decimal(str(limit_price)) if limit_price is not None else None
    if (shares is not None and shares <= 0) or (budget is not None and budget <= 0):
        raise errors.ValidationFailed(fields={"size": ["Must be greater than 0."]})
    try:
        book = venues.client().clob.book(token_id)
    except VenueNotFound:
        raise errors.NotFound(f"Unknown token {token_id}.") from None
    market = order_plan.market_info(token_id, book)
    reason = None
    with db.atomic():
        position = _position(user_id, token_id, market.market_slug)
        if side is Side.SELL:
            assert shares is not None
            shares = min(shares, position.size)
            if shares <= 0:
                reason = "No paper position to sell."
        if market.closed or not market.accepting_orders:
            reason = "The market is not accepting orders."
        walk = None
        if reason is None:
            walk = order_book.walk(book, side, shares=shares, budget=budget, limit=limit)
            if not walk.fills:
                reason = "Nothing on the book to fill against" + (
                    f" within {order_plan._plain(limit)}." if limit is not None else ".")
        now = utcnow()
        latency = (max(0, int((now - detected_at).total_seconds() * 1000))
                   if detected_at is not None else None)
        requested = shares if shares is not None else (budget or ZERO)
        best = book.best_ask if side is Side.BUY else book.best_bid
        common = {"user": user_id, "token_id": token_id, "market_slug": market.market_slug,
                  "side": side.lower(), "requested_size": requested,
                  "price": limit if limit is not None else (best or ZERO),
                  "latency_ms": latency,
                  "config_id": UUID(str(config_id)) if config_id else None, "created_at": now}
        if walk is None or not walk.fills:
            return PaperTrade.create(status="failed", reason=reason, **common)
        fee = walk.fee(market.fee_schedule)
        filled, value = walk.shares, walk.value
        _book_fill(position, side, filled, value, fee)
        return PaperTrade.create(status="filled", filled_size=filled, filled_value=value,
                                 fee=fee, filled_at=now, **common)


def _position(user_id: UUID, token_id: str, slug: str) -> PaperPosition:
    position = PaperPosition.get_or_none(PaperPosition.user == user_id,
                                         PaperPosition.token_id == token_id)
    if position is None:
        position = PaperPosition.create(user=user_id, token_id=token_id, market_slug=slug)
    return position


def _book_fill(position: PaperPosition, side: Side, shares: Decimal, value: Decimal,
               fee: Decimal) -> None:
    """Average-cost accounting, as the live ledger does it."""
    position.fees_paid += fee
    if side is Side.BUY:
        position.size += shares
        position.cost_basis += value + fee
    else:
        basis = position.cost_basis * shares / position.size if position.size else ZERO
        basis = basis.quantize(SIX)
        position.cost_basis -= basis
        position.size -= shares
        position.realized_pnl += value - fee - basis
    position.updated_at = utcnow()
    position.save()


def trade_view(trade: PaperTrade, intent: Any = None) -> dict[str, Any]:
    """A paper trade in the SPEC Trade shape (plus config_id, reason and, for a copy, its
    ``intent``'s execution quality)."""
    filled = trade.filled_size
    return {
        "id": trade.id, "token_id": trade.token_id, "market_slug": trade.market_slug,
        "side": trade.side, "size": filled if filled > 0 else trade.requested_size,
        "price": trade.price,
        "filled_price": (trade.filled_value / filled).quantize(SIX) if filled > 0 else ZERO,
        "usdc_value": trade.filled_value, "fee": trade.fee, "latency_ms": trade.latency_ms,
        "status": trade.status, "created_at": trade.created_at, "filled_at": trade.filled_at,
        "config_id": trade.config_id, "reason": trade.reason,
        "execution": execution_view(intent) if intent is not None else None,
    }


def list_trades(user: User | UUID | str, *, limit: int = 50, offset: int = 0,
                config_id: UUID | str | None = None) -> Page[dict[str, Any]]:
    """The user's paper trades, newest first."""
    query = PaperTrade.select().where(PaperTrade.user == user_id_of(user))
    if config_id is not None:
        query = query.where(PaperTrade.config_id == UUID(str(config_id)))
    query = query.order_by(PaperTrade.created_at.desc(), PaperTrade.id.desc())
    page = paginate(query, limit, offset)
    copies = copies_of(page.items)
    return page.map(lambda trade: trade_view(trade, copies.get(trade.id)))


def _valuation(token_id: str) -> tuple[Decimal | None, bool, str, str]:
    """(price, resolved, market title, outcome) of a token from the venue."""
    client = venues.client()
    try:
        market = client.gamma.market_by_token(token_id)
    except VenueNotFound:
        return None, False, "", ""
    index = list(market.token_ids).index(token_id) \
        if token_id in market.token_ids else None
    outcome = market.outcomes[index] if index is not None else ""
    prices = market.outcome_prices
    resolved = bool(market.closed and index is not None and index < len(prices)
                    and prices[index] in (Decimal(0), Decimal(1)))
    if resolved:
        return prices[index], True, market.question, outcome
    try:
        price = order_book.mark_price(client.clob.book(token_id))
    except VenueNotFound:
        price = None
    return price, False, market.question, outcome


def list_positions(user: User | UUID | str, active_only: bool = True) -> list[dict[str, Any]]:
    """The paper book's positions with every Position field, valued from the live book."""
    query = (PaperPosition.select().where(PaperPosition.user == user_id_of(user))
             .order_by(PaperPosition.token_id))
    result = []
    for position in query:
        if active_only and position.size <= 0:
            continue
        price, resolved, title, outcome = _valuation(position.token_id)
        price = price if price is not None else ZERO
        value = position.size * price
        result.append({
            "token_id": position.token_id, "market_slug": position.market_slug,
            "market_title": title, "outcome": outcome, "size": position.size,
            "cost_basis": position.cost_basis, "current_price": price,
            "current_value": value.quantize(SIX),
            "unrealized_pnl": (value - position.cost_basis).quantize(SIX),
            "realized_pnl": position.realized_pnl, "resolved": resolved,
            "status": position_status(redeemable=resolved, mergeable=False,
                                      size=position.size, price=price),
            "claimable_value": value.quantize(SIX) if resolved else None,
            "merge_value": None,  # a paper book holds nothing on chain to merge
        })
    return result
