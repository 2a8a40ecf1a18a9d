"""Text folding for search: case- and accent-insensitive on any database."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Lower-case ``text`` and strip accents, so "Élection" and "election" match."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(stripped.casefold().split())
