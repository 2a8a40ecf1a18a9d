"""FOK, bps and signature types are explained where the dashboard shows them: each goes
through the one `term` macro (templates/dashboard/_terms.html), which gives it a hover
explanation."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "dashboard"


def _term(_session_app, word: str) -> str:
    template = _session_app.jinja_env.from_string(
        '{% from "dashboard/_terms.html" import term %}{{ term(word) }}')
    return template.render(word=word)


def test_each_venue_word_the_pages_show_is_explained(_session_app) -> None:
    for word in ("FOK", "FAK", "GTC", "bps", *(f"signature type {n}" for n in range(4))):
        shown = _term(_session_app, word)
        assert re.fullmatch(rf'<abbr class="term" title="[^"]{{20,}}">{word}</abbr>', shown)
    assert "100 bps = 1%" in _term(_session_app, "bps")
    assert "deposit wallet" in _term(_session_app, "signature type 3")
    assert _term(_session_app, "limit") == "limit"  # a plain word stays plain


def test_no_page_shows_bps_or_a_signature_type_without_its_explanation() -> None:
    bare = []
    for page in TEMPLATES.glob("*.html"):
        if page.name == "_terms.html":
            continue
        # text a person reads (not names of fields or data attributes)
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|<[^>]+>", " ", page.read_text())
        if re.search(r"\bbps\b|signature type \d|\bFOK\b", text):
            bare.append(page.name)
    assert bare == []


def test_a_threshold_not_set_reads_off_without_its_unit(_session_app) -> None:
    template = _session_app.jinja_env.from_string(
        '{% from "dashboard/_terms.html" import bps_or_off %}'
        "{{ bps_or_off(none) }} / {{ bps_or_off(0) }} / {{ bps_or_off(150) }}")
    text = template.render()
    assert text.startswith("off / off / 150 <abbr"), text  # not "off / off bps"
    assert text.endswith(">bps</abbr>")
