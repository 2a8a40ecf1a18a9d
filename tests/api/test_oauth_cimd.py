"""Client ID Metadata Documents: an unregistered client whose client_id is its document's URL,
served by a real local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import pytest

from models.oauth import OAuthClient
from tests.api.oauth_flow import (
    REDIRECT_URI,
    authorize_params,
    bearer,
    consent,
    exchange,
    pkce,
    redirect_params,
    refresh,
    sign_in,
)
from tests.conftest import app_settings


class DocumentServer:
    """Serves whatever ``documents[path]`` holds, and counts requests."""

    def __init__(self) -> None:
        self.documents: dict[str, tuple[int, bytes]] = {}
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits += 1
                status, body = outer.documents.get(self.path, (404, b"{}"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status in (301, 302):
                    self.send_header("Location", "https://elsewhere.example/doc.json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def serve(self, path: str, document: dict | None = None, status: int = 200) -> str:
        url = self.base + path
        body = {"client_id": url, "client_name": "Metadata Agent",
                "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "client_uri": "https://agent.example"} if document is None else document
        self.documents[path] = (status, json.dumps(body).encode())
        return url


@pytest.fixture
def documents(app, set_settings) -> Iterator[DocumentServer]:
    """A document server on a free port; the app accepts http://127.0.0.1 client ids."""
    set_settings(oauth_allow_http_client_id_urls=True)
    server = DocumentServer()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_unregistered_client_with_a_metadata_document(client, user, documents, app):
    client_id = documents.serve("/agent/client.json")
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(client_id, challenge, resource=app_settings(app).base_url + "/api")
    page = client.get("/oauth/authorize?" + urlencode(params))
    assert page.status_code == 200, page.data
    assert "Metadata Agent" in page.get_data(as_text=True)
    back = redirect_params(consent(client, params, ["read:account"]))
    response = exchange(client, client_id, back["code"], verifier)
    assert response.status_code == 200, response.data
    tokens = response.get_json()
    assert client.get("/api/users/me", headers=bearer(tokens["access_token"])).status_code == 200
    assert refresh(client, client_id, tokens["refresh_token"]).status_code == 200
    stored = OAuthClient.get(OAuthClient.client_id == client_id)
    assert stored.kind == "metadata_doc"
    assert documents.hits == 1  # fetched once, then served from the cache


@pytest.mark.parametrize("document", [
    "wrong_client_id", "secret", "bad_redirect", "not_json", "redirected", "missing"])
def test_unusable_metadata_documents_are_invalid_client(client, user, documents, document):
    path = f"/{document}.json"
    url = documents.base + path
    good = {"client_id": url, "redirect_uris": [REDIRECT_URI]}
    if document == "wrong_client_id":
        documents.serve(path, {**good, "client_id": documents.base + "/other.json"})
    elif document == "secret":
        documents.serve(path, {**good, "client_secret": "s3cret"})
    elif document == "bad_redirect":
        documents.serve(path, {**good, "redirect_uris": ["http://evil.example/cb"]})
    elif document == "not_json":
        documents.documents[path] = (200, b"<html>")
    elif document == "redirected":
        documents.serve(path, good, status=302)
    sign_in(client, user)
    _, challenge = pkce()
    response = client.get("/oauth/authorize?" + urlencode(authorize_params(url, challenge)))
    assert response.status_code == 400
    assert "Location" not in response.headers
    assert "invalid_client" in response.get_data(as_text=True)


def test_http_client_id_urls_need_the_development_flag(client, user, documents, set_settings):
    client_id = documents.serve("/agent/client.json")
    set_settings(oauth_allow_http_client_id_urls=False)
    sign_in(client, user)
    _, challenge = pkce()
    response = client.get("/oauth/authorize?" + urlencode(authorize_params(client_id,
                                                                           challenge)))
    assert response.status_code == 400 and documents.hits == 0


def test_a_signed_out_browser_is_sent_to_sign_in_without_a_fetch(client, documents):
    """Issue 18 finding 3: an anonymous request must not make this server fetch anything."""
    client_id = documents.serve("/agent/client.json")
    _, challenge = pkce()
    response = client.get("/oauth/authorize?" + urlencode(authorize_params(client_id,
                                                                           challenge)))
    assert response.status_code == 302
    assert "/dashboard/login" in response.headers["Location"]
    assert documents.hits == 0
    assert OAuthClient.select().where(OAuthClient.client_id == client_id).count() == 0


def test_anonymous_token_and_revoke_never_fetch_a_metadata_document(client, documents):
    """Issue 26: /oauth/token and /oauth/revoke are anonymous; a client_id URL there must not
    make this server fetch (rotating URLs would keep the fetch cap full for real clients).
    A client never seen is invalid_client (RFC 6749 5.2, RFC 7009 2.2.1)."""
    client_id = documents.serve("/fresh/client.json")
    verifier, _ = pkce()
    token = exchange(client, client_id, "no-such-code", verifier)
    assert token.status_code in (400, 401) and token.get_json()["error"] == "invalid_client"
    refreshed = refresh(client, client_id, "svcr_unknown")
    assert refreshed.get_json()["error"] == "invalid_client"
    revoked = client.post("/oauth/revoke", data={"token": "svco_unknown",
                                                 "client_id": client_id})
    assert revoked.status_code in (400, 401) and revoked.get_json()["error"] == "invalid_client"
    assert documents.hits == 0
    assert OAuthClient.select().where(OAuthClient.client_id == client_id).count() == 0


def test_token_and_revoke_use_the_stored_client_however_old(client, user, documents, app):
    """What the consent page fetched serves the token endpoint later, stale or not: only
    authorize (a signed-in user's consent) fetches again."""
    client_id = documents.serve("/agent/client.json")
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(client_id, challenge, resource=app_settings(app).base_url + "/api")
    back = redirect_params(consent(client, params, ["read:account"]))
    tokens = exchange(client, client_id, back["code"], verifier).get_json()
    assert documents.hits == 1
    long_ago = OAuthClient.get(OAuthClient.client_id == client_id).metadata_fetched_at - \
        timedelta(days=40)
    OAuthClient.update(metadata_fetched_at=long_ago).where(
        OAuthClient.client_id == client_id).execute()
    renewed = refresh(client, client_id, tokens["refresh_token"])
    assert renewed.status_code == 200, renewed.data
    revoked = client.post("/oauth/revoke", data={"token": renewed.get_json()["access_token"],
                                                 "client_id": client_id})
    assert revoked.status_code == 200, revoked.data
    assert documents.hits == 1  # nothing fetched after the consent
