"""``Side``: one type for a side, parsed once from any case, the venue's text on the wire."""

from __future__ import annotations

import pytest

from venue.models import BUY, SELL, Side


def test_a_side_is_parsed_from_any_case_and_is_the_venues_text() -> None:
    assert Side.parse("buy") is Side.BUY and Side.parse(" SELL ") is Side.SELL
    assert Side.parse(Side.SELL) is Side.SELL
    assert (BUY, SELL) == (Side.BUY, Side.SELL) == ("BUY", "SELL")
    assert Side.BUY.lower() == "buy"  # the API's word, where records keep it


@pytest.mark.parametrize("text", ["", "hold", None, "b"])
def test_anything_else_is_refused(text: object) -> None:
    with pytest.raises(ValueError, match="side must be BUY or SELL"):
        Side.parse(text)
