"""The market catalogue: Gamma's markets and outcome tokens, mirrored in our database."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import peewee

from models import Market, MarketToken
from models.base import db, utcnow
from services.markets.text import fold


def _category(market: Any) -> str:
    tags = getattr(market, "tags", ()) or ()
    return tags[0].label if tags else ""


def upsert_markets(markets: Iterable[Any]) -> int:
    """Insert or refresh catalogue rows from venue ``Market``s; return how many were written."""
    count = 0
    now = utcnow()
    with db.atomic():
        for market in markets:
            values = {
                Market.venue_id: str(market.id),
                Market.slug: market.slug,
                Market.condition_id: market.condition_id,
                Market.title: market.question,
                Market.description: market.description or "",
                Market.category: _category(market),
                Market.outcomes: json.dumps(list(market.outcomes)),
                Market.active: bool(market.active),
                Market.closed: bool(market.closed),
                Market.neg_risk: bool(market.neg_risk),
                Market.search_title: fold(market.question),
                Market.search_body: fold(market.description or ""),
                Market.synced_at: now,
            }
            update = {field: values[field] for field in values if field is not Market.venue_id}
            _upsert_market(values, update)
            row = Market.get(Market.venue_id == str(market.id))
            for index, (outcome, token_id) in enumerate(
                    zip(market.outcomes, market.token_ids, strict=False)):
                (MarketToken.insert(token_id=token_id, market=row.id, outcome=outcome,
                                    outcome_index=index)
                 .on_conflict(conflict_target=[MarketToken.token_id],
                              update={MarketToken.market: row.id, MarketToken.outcome: outcome,
                                      MarketToken.outcome_index: index})
                 .execute())
            count += 1
    return count


def _upsert_market(values: dict[Any, Any], update: dict[Any, Any]) -> None:
    """Insert or refresh one market row. PostgreSQL's ON CONFLICT guards only the venue id:
    another transaction inserting the same new market at once makes this insert fail on the
    slug's unique index instead, after which the row exists and a second try updates it."""
    for attempt in range(2):
        try:
            with db.atomic():  # a savepoint: the failed try leaves the outer transaction usable
                (Market.insert(values)
                 .on_conflict(conflict_target=[Market.venue_id], update=update)
                 .execute())
            return
        except peewee.IntegrityError:
            if attempt:
                raise


def market_by_slug(slug: str) -> Market | None:
    """The catalogue row for ``slug``, if synced."""
    return Market.get_or_none(Market.slug == slug)


def token(token_id: str) -> MarketToken | None:
    """The catalogue row of an outcome token, with its market, if synced."""
    return (MarketToken.select(MarketToken, Market).join(Market)
            .where(MarketToken.token_id == token_id).first())


def named(slug: str | None = None, token_id: str | None = None) -> dict[str, str]:
    """How a message names a market: ``market_title`` (its question) and, from the token,
    ``outcome``; only what the catalogue knows (empty when the market is not synced)."""
    row = token(token_id) if token_id else None
    market = row.market if row is not None else (market_by_slug(slug) if slug else None)
    names: dict[str, str] = {}
    if market is not None and market.title:
        names["market_title"] = market.title
    if row is not None and row.outcome:
        names["outcome"] = row.outcome
    return names
