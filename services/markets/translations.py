"""Market translations: lookup by slug, search, and import from JSON or CSV.

English comes from the catalogue (the venue's own text); other locales come
from operator imports. A locale with no translations falls back to English
and the answer says so.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import peewee

from models import Market, MarketTranslation
from models.base import db, utcnow
from services.markets.text import fold
from services.platform.errors import ValidationFailed

DEFAULT_LOCALE = "en"
_LOCALE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")


def normalize_locale(locale: str | None) -> str:
    """``pt_BR`` -> ``pt-br``; None -> ``en``; anything malformed -> ValidationFailed."""
    if locale is None or not locale.strip():
        return DEFAULT_LOCALE
    value = locale.strip().replace("_", "-").lower()
    if not _LOCALE_RE.match(value):
        raise ValidationFailed(fields={"locale": ["Not a locale tag such as 'es' or 'pt-BR'."]})
    return value


def effective_locale(locale: str | None) -> tuple[str, str, bool]:
    """(requested, served, fell_back): the locale served is English unless it has rows."""
    requested = normalize_locale(locale)
    if requested == DEFAULT_LOCALE:
        return requested, requested, False
    if MarketTranslation.select().where(MarketTranslation.locale == requested).exists():
        return requested, requested, False
    return requested, DEFAULT_LOCALE, True


def _english(market: Market) -> dict[str, str]:
    return {"slug": market.slug, "locale": DEFAULT_LOCALE, "title": market.title,
            "description": market.description}


def _translated(row: MarketTranslation) -> dict[str, str]:
    return {"slug": row.slug, "locale": row.locale, "title": row.title,
            "description": row.description}


def translations(slugs: list[str], locale: str | None) -> dict[str, Any]:
    """Titles and descriptions of ``slugs`` in ``locale`` (English where untranslated)."""
    requested, served, fell_back = effective_locale(locale)
    wanted = [s for s in dict.fromkeys(s.strip() for s in slugs) if s]
    found: dict[str, dict[str, str]] = {}
    if wanted and served != DEFAULT_LOCALE:
        query = MarketTranslation.select().where(
            MarketTranslation.slug.in_(wanted), MarketTranslation.locale == served)
        found = {row.slug: _translated(row) for row in query}
    missing = [s for s in wanted if s not in found]
    if missing:
        for market in Market.select().where(Market.slug.in_(missing)):
            found[market.slug] = _english(market)
    return {"translations": [found[s] for s in wanted if s in found],
            "locale": served, "requested_locale": requested, "fallback": fell_back}


def _rank(title: peewee.Field, query: str) -> peewee.Node:
    return peewee.Case(None, [(title.startswith(query), 0), (title.contains(query), 1)], 2)


# Search is public: each call scans titles with LIKE, so the text and the answer are bounded
# (the schema says the same to callers; these hold for any caller of the service).
MAX_QUERY_CHARS = 100
MAX_RESULTS = 100


def search(q: str | None, locale: str | None, limit: int = 50) -> dict[str, Any]:
    """Markets whose title or description holds ``q``, title matches first."""
    if len(q or "") > MAX_QUERY_CHARS:
        raise ValidationFailed(fields={"q": [f"At most {MAX_QUERY_CHARS} characters."]})
    folded = fold(q or "")
    if not folded:
        raise ValidationFailed(fields={"q": ["A non-empty search text is required."]})
    limit = max(1, min(limit, MAX_RESULTS))
    requested, served, fell_back = effective_locale(locale)
    results: list[tuple[int, str, dict[str, str]]] = []
    english_rank = _rank(Market.search_title, folded).alias("rank")
    english = Market.select(Market, english_rank)
    if served != DEFAULT_LOCALE:
        T = MarketTranslation
        rank = _rank(T.search_title, folded).alias("rank")
        # LIKE patterns: peewee's contains() escapes % and _ in the text
        rows = (T.select(T, rank)
                .where(T.locale == served,
                       T.search_title.contains(folded) | T.search_body.contains(folded))
                .order_by(rank, T.title).limit(limit))
        results += [(row.rank, row.title, _translated(row)) for row in rows]
        # translated markets are answered in the locale: not again in English (in SQL, so no
        # query loads every translated slug)
        english = english.where(Market.slug.not_in(T.select(T.slug).where(T.locale == served)))
    query = (english
             .where(Market.search_title.contains(folded) | Market.search_body.contains(folded))
             .order_by(english_rank, Market.title).limit(limit))
    results += [(m.rank, m.title, _english(m)) for m in query]
    results.sort(key=lambda item: (item[0], item[1]))
    return {"results": [item for _, _, item in results[:limit]], "locale": served,
            "requested_locale": requested, "fallback": fell_back}


def _rows_from_file(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    data = json.loads(text)
    if isinstance(data, dict):
        data = data.get("translations", [])
    if not isinstance(data, list):
        raise ValidationFailed("A JSON file must hold a list of translations.")
    return data


def import_file(path: str | Path) -> dict[str, int]:
    """Import translations from JSON or CSV (slug, locale, title, description); all or none."""
    rows = _rows_from_file(Path(path))
    problems: dict[str, list[str]] = {}
    clean: list[dict[str, str]] = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            problems[f"row {number}"] = ["not an object"]
            continue
        slug = str(row.get("slug") or "").strip()
        title = str(row.get("title") or "").strip()
        try:
            locale = normalize_locale(str(row.get("locale") or ""))
        except ValidationFailed:
            locale = ""
        missing = [name for name, value in (("slug", slug), ("title", title),
                                            ("locale", locale)) if not value]
        if missing:
            problems[f"row {number}"] = [f"missing or invalid: {', '.join(missing)}"]
            continue
        clean.append({"slug": slug, "locale": locale, "title": title,
                      "description": str(row.get("description") or "").strip()})
    if problems:
        raise ValidationFailed("The file has invalid rows; nothing was imported.", fields=problems)
    created = updated = 0
    now = utcnow()
    with db.atomic():
        for row in clean:
            values = dict(row, search_title=fold(row["title"]),
                          search_body=fold(row["description"]), imported_at=now)
            existing = MarketTranslation.get_or_none(slug=row["slug"], locale=row["locale"])
            if existing is None:
                MarketTranslation.create(**values)
                created += 1
            else:
                MarketTranslation.update(values).where(
                    MarketTranslation.id == existing.id).execute()
                updated += 1
    known = {s for (s,) in Market.select(Market.slug)
             .where(Market.slug.in_([r["slug"] for r in clean])).tuples()} if clean else set()
    return {"created": created, "updated": updated,
            "unknown_slugs": len({r["slug"] for r in clean} - known)}
