"""services.platform.logs.redact: every secret shape is masked, even past the quick check."""

from __future__ import annotations

import pytest

from services.platform import logs

# One sample per pattern of logs._PATTERNS (same order), each inside ordinary text.
SAMPLES = [
    "fetching redis://user:hunter2@cache.internal:6379/0 failed",
    "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl seen",
    "key svck_live_AbCdEf123456789 used",
    "header Bearer abc.def-ghi sent",
    "GET /callback?state=1&access_token=abcdef123 answered",
    "client_secret=shh-very-secret passed",
    "hex 0x" + "ab" * 32 + " leaked",
    "blob " + "Aa1" * 15 + " leaked",
    "rpc https://polygon.example/v2/AbCdEfGhIjKlMnOpQr answered",
    "your sign-in code is 123456",
]


def test_there_is_a_sample_for_every_pattern():
    assert len(SAMPLES) == len(logs._PATTERNS)


@pytest.mark.parametrize("pattern,sample", list(zip(logs._PATTERNS, SAMPLES, strict=True)))
def test_each_pattern_still_masks_its_sample(pattern, sample):
    regex, _ = pattern
    assert regex.search(sample), "the sample no longer exercises its pattern"
    assert logs._MAYBE_SECRET.search(sample), "the pre-check would let this secret through"
    assert logs.redact(sample) != sample


def test_a_plain_request_line_is_left_alone(monkeypatch):
    # URLs other tests protected (a userinfo "user", say) are masked process-wide; not here.
    monkeypatch.setattr(logs, "_protected_urls", set())
    line = "GET /api/users/me 200 1.2ms"
    assert not logs._MAYBE_SECRET.search(line)
    assert logs.redact(line) == line


def test_protected_urls_are_scrubbed_even_when_nothing_else_matches():
    logs.protect_urls("https://rpc.example/secretpath")
    try:
        assert "secretpath" not in logs.redact("called /secretpath ok")
    finally:
        logs._protected_urls.discard("https://rpc.example/secretpath")


def test_text_lines_name_the_ids_only_when_one_is_set():
    import io
    import logging

    stream = io.StringIO()
    handler = logs.build_handler(stream, fmt="text")
    logger = logging.getLogger("copytrade.text-format-test")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("no ids here")
        with logs.bound(request="req-7", job="job-9"):
            logger.warning("inside a job")
    finally:
        logger.removeHandler(handler)
    plain, bound = stream.getvalue().splitlines()
    assert plain.endswith("WARNING copytrade.text-format-test: no ids here")
    assert bound.endswith("inside a job [request req-7, job job-9]")
