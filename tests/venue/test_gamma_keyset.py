"""Gamma keyset paging (ACCOUNTS.md §12): our client walks ``/markets/keyset`` and
``/events/keyset`` (at most 100 markets and 500 events a page, a cursor and no offset) over
real HTTP against the sandbox, which enforces those caps and can retire the offset lists or
refuse the keyset ones; the offset list is a fallback only while keyset is refused, and
that refusal is remembered so a walk does not ask twice. More than 100 ``condition_ids``
are asked in parts."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import trio

from devstack.venue import SandboxServer
from venue.client import KEYSET_REFUSED_KEY, AsyncVenueClient, VenueClient
from venue.config import VenueConfig
from venue.errors import VenueNotFound, VenueRejected
from venue.parse.values import loads

EXTRA_MARKETS = 95  # with the 10 seeded ones: more than one page of 100


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    venue = SandboxServer(seed=23).start()
    try:
        for index in range(EXTRA_MARKETS):
            control(venue, "POST", "/markets", {
                "slug": f"keyset-market-{index}", "question": f"Keyset market {index}?"})
        yield venue
    finally:
        venue.stop()


@pytest.fixture
def config(sandbox: SandboxServer) -> Iterator[VenueConfig]:
    yield VenueConfig.for_sandbox(sandbox.url, backoff_base=0.01, backoff_cap=0.02)
    control(sandbox, "POST", "/list-rules", {"keyset_refused": None, "offset_retired": None})


def control(sandbox: SandboxServer, method: str, path: str, body: Any = None) -> Any:
    """Call the sandbox-only control API."""
    response = httpx.request(method, f"{sandbox.control_url}{path}", json=body, timeout=10)
    assert response.status_code < 300, response.text
    return loads(response.content)


def requests_to(sandbox: SandboxServer, endpoint: str) -> int:
    """How many requests ``GET <endpoint>`` has had since the tally was last emptied."""
    tally = control(sandbox, "GET", "/requests")
    return sum(sum(per_second.values()) for name, per_second in tally.items()
               if name == f"GET {endpoint}")


def every_market(sandbox: SandboxServer) -> set[str]:
    return {m["slug"] for m in control(sandbox, "GET", "/state")["markets"]}


def test_markets_walk_keyset_pages_with_the_offset_lists_retired(
        sandbox: SandboxServer, config: VenueConfig) -> None:
    control(sandbox, "POST", "/list-rules", {"offset_retired": 410})
    control(sandbox, "DELETE", "/requests")
    with VenueClient(config) as client:
        markets = client.list_markets()
        assert {m.slug for m in markets} == every_market(sandbox)
        assert len(markets) == len({m.id for m in markets}) > 100
        assert requests_to(sandbox, "/gamma/markets/keyset") == 2  # 100, then the rest
        assert requests_to(sandbox, "/gamma/markets") == 0
        # the first rows only: one page, no more asked than wanted
        assert [m.slug for m in client.list_markets(max_rows=3)] == [
            m.slug for m in markets[:3]]
        with pytest.raises(VenueRejected):  # the offset list is gone indeed
            client.gamma.markets(limit=5)
        # a token's market is looked up on the keyset list too, one row asked
        token = markets[-1].token_ids[1]
        assert client.gamma.market_by_token(token).id == markets[-1].id
        with pytest.raises(VenueNotFound):
            client.gamma.market_by_token("12345")


def test_events_walk_keyset_pages_with_the_offset_lists_retired(
        sandbox: SandboxServer, config: VenueConfig) -> None:
    control(sandbox, "POST", "/list-rules", {"offset_retired": 404})
    with VenueClient(config) as client:
        events = client.list_events()
        assert len(events) > 100  # one keyset page: events come 500 a page
        assert {m.slug for e in events for m in e.markets} == every_market(sandbox)
        assert [e.id for e in client.list_events(max_rows=2)] == [e.id for e in events[:2]]


def test_a_refused_keyset_list_falls_back_to_offset_pages_and_is_remembered(
        sandbox: SandboxServer, config: VenueConfig) -> None:
    control(sandbox, "POST", "/list-rules", {"keyset_refused": 404})
    control(sandbox, "DELETE", "/requests")
    with VenueClient(config) as client:
        first = client.list_markets()
        assert {m.slug for m in first} == every_market(sandbox)
        second = client.list_markets(active=True)
        assert {m.id for m in second} <= {m.id for m in first}
        assert requests_to(sandbox, "/gamma/markets/keyset") == 1  # asked once, remembered
        assert requests_to(sandbox, "/gamma/markets") == 4  # 100 + rest, twice
        token = first[0].token_ids[0]
        assert client.gamma.market_by_token(token).id == first[0].id  # the offset list too
        assert requests_to(sandbox, "/gamma/markets/keyset") == 1
        # a 410 refuses the events' keyset list just as well
        control(sandbox, "POST", "/list-rules", {"keyset_refused": 410})
        assert len(client.list_events()) > 100
        assert client.cache.contains(KEYSET_REFUSED_KEY + "events")
        # once the refusal is forgotten (its time is up), keyset is asked again
        control(sandbox, "POST", "/list-rules", {"keyset_refused": None,
                                                 "offset_retired": 410})
        client.cache.invalidate(KEYSET_REFUSED_KEY)
        assert {m.slug for m in client.list_markets()} == every_market(sandbox)


def test_a_keyset_query_the_venue_rejects_is_not_a_refusal(
        sandbox: SandboxServer, config: VenueConfig) -> None:
    control(sandbox, "POST", "/faults", {"path": "/gamma/markets/keyset", "status": 400})
    with VenueClient(config) as client:
        with pytest.raises(VenueRejected):  # a bad query: not the route missing
            client.list_markets()
        assert not client.cache.contains(KEYSET_REFUSED_KEY + "markets")
        with pytest.raises(VenueRejected):  # nor is a cursor the venue does not know
            client.gamma.markets_keyset((), cursor="not-a-cursor")
        assert {m.slug for m in client.list_markets()} == every_market(sandbox)


def test_more_than_100_condition_ids_are_asked_in_parts(
        sandbox: SandboxServer, config: VenueConfig) -> None:
    real = [m["condition_id"] for m in control(sandbox, "GET", "/state")["markets"]]
    unknown = ["0x" + secrets.token_hex(32) for _ in range(150)]
    wanted = sorted(real[:40] + unknown)
    with httpx.Client() as raw:  # the venue takes at most 100 a request
        response = raw.get(f"{config.gamma_url}/markets/keyset",
                           params=[("condition_ids", c) for c in wanted])
        assert response.status_code == 400 and "condition_ids" in response.text
    with VenueClient(config) as client:
        found = client.list_markets(condition_ids=wanted)
        assert sorted(m.condition_id for m in found) == sorted(real[:40])
        control(sandbox, "POST", "/list-rules", {"keyset_refused": 404})
        fallback = client.list_markets(condition_ids=wanted)  # the offset list, in parts too
        assert sorted(m.condition_id for m in fallback) == sorted(real[:40])


def test_page_caps_hold_on_the_venue(sandbox: SandboxServer, config: VenueConfig) -> None:
    with httpx.Client() as raw:
        for path, cap in (("/markets/keyset", 100), ("/events/keyset", 500)):
            too_many = raw.get(f"{config.gamma_url}{path}", params={"limit": cap + 1})
            assert too_many.status_code == 400, path
            page = loads(raw.get(f"{config.gamma_url}{path}", params={"limit": 2}).content)
            assert len(page[path.split("/")[1]]) == 2 and page["next_cursor"]
    with VenueClient(config) as client:
        last = client.gamma.markets_keyset((), limit=500)  # asked for more: sent as 100
        assert len(last.items) == 100 and last.next_cursor


def test_the_async_client_walks_the_same_way(sandbox: SandboxServer,
                                             config: VenueConfig) -> None:
    control(sandbox, "POST", "/list-rules", {"offset_retired": 410})

    async def walk() -> list[Any]:
        async with AsyncVenueClient(config) as client:
            return await client.list_markets()

    assert {m.slug for m in trio.run(walk)} == every_market(sandbox)
