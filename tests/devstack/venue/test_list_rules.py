"""The sandbox's list rules (ACCOUNTS.md §12): Gamma keyset pages shaped as the venue's
(``{"markets"|"events": [...], "next_cursor"}``, no cursor on the last page, no offset, at
most 100 / 500 a page and 100 ``condition_ids`` a request), the offset lists retired or the
keyset ones refused by switch; Data API v2 position statuses, and one no client knows."""

from __future__ import annotations

import secrets

from tests.devstack.venue.conftest import Control


def test_keyset_pages_follow_the_cursor_to_the_last_page(control: Control) -> None:
    slugs = {m["slug"] for m in control.state()["markets"]}
    first = control.get("/gamma/markets/keyset", limit=4)
    assert len(first["markets"]) == 4 and first["next_cursor"]
    seen = [m["slug"] for m in first["markets"]]
    page = first
    while "next_cursor" in page:
        page = control.get("/gamma/markets/keyset", limit=4, cursor=page["next_cursor"])
        seen += [m["slug"] for m in page["markets"]]
    assert sorted(seen) == sorted(slugs)  # each once; the last page names no cursor
    events = control.get("/gamma/events/keyset")  # 500 a page: one page holds them all
    assert "next_cursor" not in events
    assert {m["slug"] for e in events["events"] for m in e["markets"]} == slugs


def test_keyset_lists_refuse_an_offset_a_big_page_and_a_foreign_cursor(
        control: Control) -> None:
    for path, cap in (("/gamma/markets/keyset", 100), ("/gamma/events/keyset", 500)):
        assert control.http.get(path, params={"offset": 2}).status_code == 400
        assert control.http.get(path, params={"limit": cap + 1}).status_code == 400
        assert control.http.get(path, params={"limit": cap}).status_code == 200
        assert control.http.get(path, params={"cursor": "bogus"}).status_code == 400


def test_at_most_100_condition_ids_a_request(control: Control) -> None:
    ids = [m["condition_id"] for m in control.state()["markets"]]
    padded = ids + ["0x" + secrets.token_hex(32) for _ in range(100 - len(ids))]
    for path in ("/gamma/markets/keyset", "/gamma/markets"):
        ok = control.http.get(path, params=[("condition_ids", c) for c in padded])
        assert ok.status_code == 200, path
        over = control.http.get(path, params=[("condition_ids", c)
                                              for c in [*padded, "0x" + "1" * 64]])
        assert over.status_code == 400 and "condition_ids" in over.text, path


def test_switches_retire_the_offset_lists_or_refuse_the_keyset_ones(control: Control) -> None:
    assert control.call("POST", "/list-rules", {"offset_retired": 410}, expect=200) == {
        "keyset_refused": None, "offset_retired": 410, "position_status": None}
    for path in ("/gamma/markets", "/gamma/events"):
        assert control.http.get(path).status_code == 410
    assert control.http.get("/gamma/markets/keyset").status_code == 200
    control.call("POST", "/list-rules", {"offset_retired": None, "keyset_refused": 404},
                 expect=200)
    for path in ("/gamma/markets/keyset", "/gamma/events/keyset"):
        assert control.http.get(path).status_code == 404
    assert control.http.get("/gamma/markets").status_code == 200
    assert control.state()["list_rules"]["keyset_refused"] == 404
    control.call("POST", "/list-rules", {"keyset_refused": 200}, expect=400)
    control.call("POST", "/list-rules", {"position_status": ""}, expect=400)
    control.call("POST", "/reset", expect=200)
    assert control.http.get("/gamma/markets/keyset").status_code == 200


def _statuses(control: Control, address: str, **params: str) -> dict[str, str]:
    body = control.get("/data/v2/positions", user=address, size_threshold="0", **params)
    return {row["token_id"]: row["status"] for row in body["data"]}


def test_v2_positions_report_the_venue_statuses(control: Control) -> None:
    market = control.market(index=0)
    other = control.market(index=1)
    yes, no = market["token_ids"]
    holder = "0x" + secrets.token_hex(20)
    control.grant(holder, other["token_ids"][0], "3")
    control.grant(holder, yes, "10")
    control.grant(holder, no, "4")
    assert _statuses(control, holder) == {
        other["token_ids"][0]: "OPEN", yes: "MERGEABLE", no: "MERGEABLE"}
    assert _statuses(control, holder, status="MERGEABLE") == {
        yes: "MERGEABLE", no: "MERGEABLE"}
    control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": 0},
                 expect=200)
    assert _statuses(control, holder) == {
        other["token_ids"][0]: "OPEN", yes: "REDEEMABLE", no: "REDEEMABLE_LOST"}
    # a status no client knows yet, on every row; v1 rows carry none
    control.call("POST", "/list-rules", {"position_status": "FROZEN_FOR_REVIEW"}, expect=200)
    assert set(_statuses(control, holder).values()) == {"FROZEN_FOR_REVIEW"}
    assert all("status" not in row for row in control.get("/data/positions", user=holder))
