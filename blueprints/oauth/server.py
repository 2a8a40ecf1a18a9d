"""The app's authlib AuthorizationServer, built once per app from services/oauth/server.py."""

from __future__ import annotations

from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from flask import Flask, current_app, request

from schemas.vocabulary import SCOPES
from services.oauth import clients as oauth_clients
from services.oauth import server as oauth_server

EXTENSION = "oauth_server"


class CopytradeAuthorizationServer(AuthorizationServer):
    """authlib's Flask server; our grants store what they issue themselves."""

    def save_token(self, token: Any, request: Any) -> None:
        """Unused: our grants store what they issue themselves (services/oauth/server.py)."""
        raise NotImplementedError


def query_client(client_id: str) -> oauth_clients.Client | None:
    """The client authlib asks for. Only the consent page may fetch a metadata document (it
    serves a signed-in user only); the token and revocation endpoints are anonymous, and
    rotating client_id URLs there would keep the fetch cap full for real clients."""
    return oauth_clients.find(client_id, fetch=request.endpoint == "oauth.authorize")


def init_app(app: Flask) -> CopytradeAuthorizationServer:
    """Build the server for ``app``: grants, PKCE (S256), revocation, registration, RFC 9207."""
    server = CopytradeAuthorizationServer()
    server.init_app(app, query_client=query_client)
    server.scopes_supported = list(SCOPES)
    server.register_grant(oauth_server.AuthorizationCodeGrant,
                          [oauth_server.S256CodeChallenge(required=True)])
    server.register_grant(oauth_server.RefreshTokenGrant)
    server.register_endpoint(oauth_server.RevocationEndpoint)
    server.register_endpoint(oauth_server.ClientRegistrationEndpoint)
    server.register_extension(oauth_server.Issuer())
    app.extensions[EXTENSION] = server
    return server


def current_server() -> CopytradeAuthorizationServer:
    """The server of the current app."""
    return current_app.extensions[EXTENSION]
