"""Words for pages, as template globals and filters: markets by their question, rules and
reasons by their labels, the sizing mode in force. The API keeps slugs, codes and fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from flask import g
from werkzeug.datastructures import MultiDict

from blueprints.dashboard.base import bp
from services.copying import copy_notices, rule_labels
from services.markets import catalogue


def _named(slug: str | None, token_id: str | None) -> dict[str, str]:
    """The catalogue's names for a market and outcome (asked once per page and pair)."""
    key = (slug or "", token_id or "")
    known = g.setdefault("dashboard_market_names", {})
    if key not in known:
        known[key] = catalogue.named(slug or None, token_id or None)
    return known[key]


@bp.app_template_global("market_name")
def market_name(slug: str | None, token_id: str | None = None) -> str:
    """A market's question from the catalogue, else its slug."""
    title = _named(slug, token_id).get("market_title")
    return title or slug or (f"token {token_id[:10]}…" if token_id else "—")


@bp.app_template_global("outcome_name")
def outcome_name(token_id: str | None) -> str:
    """The outcome a token is (``Yes``, ``Riverside``), or "" when the catalogue lacks it."""
    return _named(None, token_id).get("outcome", "") if token_id else ""


@bp.app_template_global("sizing")
def sizing(config: Mapping[str, Any]) -> str:
    """A config's sizing mode in force, in words: "fixed 5.00 pUSD per copy"."""
    return rule_labels.sizing(config.get("sizing_mode"), config.get("size_multiplier"),
                              config.get("fixed_usdc"))


@bp.app_template_filter("reason_words")
def reason_words(code: str | None) -> str:
    """A skip, failure or stop reason code in words, as a sentence starts it."""
    text = copy_notices.readable(code) if code else ""
    return text[:1].upper() + text[1:]


@bp.app_template_filter("flag_words")
def flag_words(numbers: Mapping[str, Any] | None) -> str:
    """A flag's numbers in words, for its badge's title: "lost share 0.2, threshold 0.15"."""
    return ", ".join(f"{name.replace('_', ' ')} {value if value is not None else '—'}"
                     for name, value in (numbers or {}).items())


@bp.app_template_global("sorted_by")
def sorted_by(args: MultiDict[str, str], name: str) -> str:
    """The query string of the traders page sorted by ``name`` (the other way when it
    already is), its other choices kept."""
    kept = [(key, value) for key, values in args.lists() for value in values
            if key not in ("sort", "direction")]
    flip = args.get("sort") == name and args.get("direction") != "asc"
    return urlencode([*kept, ("sort", name), *([("direction", "asc")] if flip else [])])
