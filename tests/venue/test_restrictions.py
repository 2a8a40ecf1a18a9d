"""venue.restrictions and the transport's mapping of 425 and the restricted modes' 503."""

from __future__ import annotations

import httpx
import pytest

from devstack.venue.modes import ERR_CANCEL_ONLY, ERR_DISABLED, post_only_body
from venue.errors import VenueRestricted, VenueTimeout, VenueUnavailable
from venue.http import VenueRequest, error_for_response
from venue.restrictions import restart_backoff

POST = VenueRequest("clob", "POST", "/order", retryable=False)


@pytest.mark.parametrize(("status", "body", "headers", "mode", "retry"), [
    (425, {"error": "Too Early"}, {"Retry-After": "1"}, "restarting", 1),
    (503, post_only_body(120), {}, "post_only", 120),
    (503, {"error": ERR_CANCEL_ONLY, "retry_after_seconds": 9}, {"Retry-After": "8"},
     "cancel_only", 8),
    (503, {"error": ERR_DISABLED}, {}, "disabled", 5),
])
def test_restricted_answers_become_venue_restricted(status, body, headers, mode, retry):
    error = error_for_response(httpx.Response(status, json=body, headers=headers), POST)
    assert isinstance(error, VenueRestricted) and isinstance(error, VenueUnavailable)
    assert (error.mode, error.retry_after) == (mode, retry)


def test_other_outages_stay_plain_unavailable():
    plain = error_for_response(httpx.Response(503, json={"error": "upstream"}), POST)
    assert type(plain) is VenueUnavailable
    assert type(error_for_response(httpx.Response(504), POST)) is VenueTimeout
    assert type(error_for_response(httpx.Response(502, text="<html>"), POST)) \
        is VenueUnavailable


def test_restart_backoff_honours_retry_after_else_doubles_from_one_to_two_capped():
    assert restart_backoff(5, retry_after=3) == 3.0
    assert restart_backoff(1, retry_after=90) == 30.0
    for attempt in range(1, 9):
        delay = restart_backoff(attempt)
        low = min(30.0, 2 ** (attempt - 1))
        assert low <= delay <= min(30.0, 2 ** attempt)
