"""Market translations and their search, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from services.markets import catalogue, translations
from services.platform.errors import ValidationFailed
from tests.test_cli_users import operator  # noqa: F401 - the fixture


def venue_market(venue_id: str, slug: str, question: str, description: str = "",
                 tag: str = "Politics") -> SimpleNamespace:
    """A stand-in for venue.models.Market with the fields the catalogue reads."""
    return SimpleNamespace(
        id=venue_id, slug=slug, condition_id="0x" + venue_id.rjust(64, "0"), question=question,
        description=description, tags=(SimpleNamespace(label=tag),), outcomes=("Yes", "No"),
        token_ids=(f"{venue_id}1", f"{venue_id}2"), active=True, closed=False,
        neg_risk=False)


@pytest.fixture
def catalogue_rows(bound_db):
    catalogue.upsert_markets([
        venue_market("1", "election-winner", "Who will win the élection?",
                     "Resolves to the winner of the presidential election."),
        venue_market("2", "btc-100k", "Will Bitcoin reach 100k?", "Crypto market about the "
                     "election of a new Fed chair.", tag="Crypto"),
        venue_market("3", "champions", "Champions League winner", "Football.", tag="Sports"),
    ])


def write_json(tmp_path, rows):
    path = tmp_path / "tr.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_english_from_catalogue(client, catalogue_rows):
    body = client.get("/api/markets/translations?slugs=btc-100k,unknown,election-winner"
                      ).get_json()
    assert [t["slug"] for t in body["translations"]] == ["btc-100k", "election-winner"]
    assert body["translations"][0]["title"] == "Will Bitcoin reach 100k?"
    assert body["locale"] == "en" and body["fallback"] is False


def test_import_then_lookup_in_locale(client, catalogue_rows, tmp_path):
    path = write_json(tmp_path, [
        {"slug": "election-winner", "locale": "es", "title": "¿Quién ganará la elección?",
         "description": "Se resuelve con el ganador."},
    ])
    assert translations.import_file(path) == {"created": 1, "updated": 0, "unknown_slugs": 0}
    body = client.get("/api/markets/translations?slugs=election-winner,btc-100k&locale=ES"
                      ).get_json()
    assert body["locale"] == "es" and body["fallback"] is False
    by_slug = {t["slug"]: t for t in body["translations"]}
    assert by_slug["election-winner"]["title"] == "¿Quién ganará la elección?"
    assert by_slug["btc-100k"]["locale"] == "en"  # untranslated market stays English


def test_unknown_locale_falls_back_and_says_so(client, catalogue_rows):
    body = client.get("/api/markets/translations?slugs=champions&locale=de").get_json()
    assert body == {"translations": [{"slug": "champions", "locale": "en",
                                      "title": "Champions League winner",
                                      "description": "Football."}],
                    "locale": "en", "requested_locale": "de", "fallback": True}


def test_search_is_accent_and_case_insensitive_titles_first(client, catalogue_rows):
    body = client.get("/api/markets/translations/search?q=ELECTION").get_json()
    slugs = [r["slug"] for r in body["results"]]
    # "élection" in a title ranks above "election" in a description.
    assert slugs == ["election-winner", "btc-100k"]
    prefix = client.get("/api/markets/translations/search?q=champ").get_json()
    assert [r["slug"] for r in prefix["results"]] == ["champions"]


def test_search_in_locale(client, catalogue_rows, tmp_path):
    translations.import_file(write_json(tmp_path, [
        {"slug": "champions", "locale": "fr", "title": "Vainqueur de la Ligue des champions",
         "description": "Football européen."},
    ]))
    body = client.get("/api/markets/translations/search?q=europeen&locale=fr").get_json()
    assert [r["slug"] for r in body["results"]] == ["champions"]
    assert body["results"][0]["locale"] == "fr"
    # Untranslated markets are still found in English within the French search.
    english = client.get("/api/markets/translations/search?q=bitcoin&locale=fr").get_json()
    assert [r["slug"] for r in english["results"]] == ["btc-100k"]


def test_search_limit_and_validation(client, catalogue_rows):
    assert len(client.get("/api/markets/translations/search?q=e&limit=1"
                          ).get_json()["results"]) == 1
    for query in ("", "?q=", "?q=%20%20", "?q=x&limit=0", "?q=x&limit=101", "?q=x&locale=!!",
                  "?q=" + "a" * 101):
        response = client.get("/api/markets/translations/search" + query)
        assert response.status_code == 400, query
        assert response.get_json()["code"] == "validation_failed"


def test_search_is_bounded_for_anonymous_callers(client, catalogue_rows, tmp_path):
    # LIKE wildcards are plain text: "%" and "_" match only themselves, not every market
    for wildcard in ("%", "_", "%25", "e%e", "\\"):
        body = client.get("/api/markets/translations/search", query_string={"q": wildcard})
        assert body.status_code == 200 and body.get_json()["results"] == [], wildcard
    # at most 100 characters of text and 100 results; the service holds the same bounds
    assert client.get("/api/markets/translations/search?q=" + "a" * 100).status_code == 200
    assert len(translations.search("e", None, limit=10_000)["results"]) <= (
        translations.MAX_RESULTS)
    with pytest.raises(ValidationFailed):
        translations.search("a" * 101, None)
    # a locale with translations still answers each market once, translated first
    translations.import_file(write_json(tmp_path, [
        {"slug": "btc-100k", "locale": "fr", "title": "Le Bitcoin à 100k ?",
         "description": "Marché crypto."}]))
    body = client.get("/api/markets/translations/search?q=bitcoin&locale=fr").get_json()
    assert [(r["slug"], r["locale"]) for r in body["results"]] == [("btc-100k", "fr")]


def test_import_csv_updates_and_rejects_bad_files(bound_db, catalogue_rows, tmp_path):
    path = tmp_path / "tr.csv"
    path.write_text("slug,locale,title,description\n"
                    "btc-100k,pt_BR,Bitcoin chega a 100 mil?,Mercado cripto\n"
                    "not-synced,pt-BR,Outro,\n", encoding="utf-8")
    assert translations.import_file(path) == {"created": 2, "updated": 0, "unknown_slugs": 1}
    path.write_text("slug,locale,title,description\nbtc-100k,pt-br,Novo título,\n",
                    encoding="utf-8")
    assert translations.import_file(path)["updated"] == 1
    bad = write_json(tmp_path, [{"slug": "a", "locale": "es", "title": "ok"},
                                {"slug": "", "locale": "es", "title": "x"}])
    with pytest.raises(translations.ValidationFailed) as caught:
        translations.import_file(bad)
    assert "row 2" in caught.value.fields
    # All or nothing: the valid first row was not imported either.
    assert translations.translations(["a"], "es")["translations"] == []


def test_cli_import(operator, tmp_path):  # noqa: F811 - the fixture
    # In-process (click's runner, the deployment's environment): what this tests is the
    # command, not the start of a process, which tests/test_cli.py covers.
    path = write_json(tmp_path, [{"slug": "x", "locale": "it", "title": "Titolo"}])
    done = operator("translations", "import", str(path))
    assert done.exit_code == 0, done.output
    assert "1 new" in done.stdout
    bad = write_json(tmp_path, [{"slug": "x"}])
    failed = operator("translations", "import", str(bad))
    assert failed.exit_code != 0 and "row 1" in failed.stderr
