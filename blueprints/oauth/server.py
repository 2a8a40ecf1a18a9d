"""The app's authlib AuthorizationServer, built once per app from services/oauth/server.py."""

from __future__ import annotations

from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from flask import Flask, current_app

from schemas.vocabulary import SCOPES
from services.oauth import clients as oauth_clients
from services.oauth import server as oauth_server

EXTENSION = "oauth_server"


class CopytradeAuthorizationServer(AuthorizationServer):
    """authlib's Flask server with our settings at hand for the grants (``.settings``)."""

    settings: Any

    def save_token(self, token: Any, request: Any) -> None:
        """Unused: our grants store what they issue themselves (services/oauth/server.py)."""
        raise NotImplementedError


def init_app(app: Flask) -> CopytradeAuthorizationServer:
    """Build the server for ``app``: grants, PKCE (S256), revocation, registration, RFC 9207."""
    server = CopytradeAuthorizationServer()
    server.init_app(app, query_client=lambda client_id: oauth_clients.find(client_id,
                                                                           app.config))
    server.settings = app.config
    server.scopes_supported = list(SCOPES)
    server.register_grant(oauth_server.AuthorizationCodeGrant,
                          [oauth_server.S256CodeChallenge(required=True)])
    server.register_grant(oauth_server.RefreshTokenGrant)
    server.register_endpoint(oauth_server.RevocationEndpoint)
    server.register_endpoint(oauth_server.ClientRegistrationEndpoint)
    server.register_extension(oauth_server.Issuer(app.config))
    app.extensions[EXTENSION] = server
    return server


def current_server() -> CopytradeAuthorizationServer:
    """The server of the current app."""
    return current_app.extensions[EXTENSION]
