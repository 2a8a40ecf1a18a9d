"""The venue's list rules (ACCOUNTS.md §12) and the switches tests turn them with.

Gamma serves its market and event lists as keyset pages (``/markets/keyset`` at most 100
a page, ``/events/keyset`` at most 500, a cursor and no offset) and refuses more than 100
``condition_ids`` a request; the offset lists ``/markets`` and ``/events`` are to be
retired. The Data API v2 reports each position's status, and may send one a client does
not know yet. Switches (``POST /_sandbox/list-rules``): ``keyset_refused`` (a status the
keyset lists answer, as a venue or proxy without them), ``offset_retired`` (a status the
offset lists answer, as after the sunset) and ``position_status`` (a status every
``/v2/positions`` row reports).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

MARKETS_PAGE = 100
EVENTS_PAGE = 500
IDS_PER_REQUEST = 100


@dataclass
class ListRules:
    """The switches; all off after a reset."""

    keyset_refused: int | None = None
    offset_retired: int | None = None
    position_status: str | None = None

    def reset(self) -> None:
        """Every switch off."""
        self.keyset_refused = self.offset_retired = None
        self.position_status = None

    def describe(self) -> dict:
        """The switches as the control API answers them."""
        return {"keyset_refused": self.keyset_refused, "offset_retired": self.offset_retired,
                "position_status": self.position_status}


def encode_cursor(offset: int) -> str:
    """An opaque keyset cursor for the row at ``offset``."""
    raw = json.dumps({"o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The offset a cursor stands for; ValueError when it is not one of ours."""
    try:
        state = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return int(state["o"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError("invalid cursor") from exc
