"""CLOB market channel websocket (/ws/market): live order books of the tokens a client names.

Protocol as the venue's: the client sends ``{"assets_ids": [...], "type": "market"}`` and
later ``{"assets_ids": [...], "operation": "subscribe" | "unsubscribe"}``; the server
answers each subscription with a JSON array of ``book`` messages, then pushes
``price_change`` and ``last_trade_price`` (see devstack.venue.market_channel). The text
``PING`` is answered ``PONG``.
"""

from __future__ import annotations

from flask_sock import Sock

from devstack.venue.market_channel import MarketChannel, MarketSubscriber
from devstack.venue.rtds import client_message, serve_connection
from devstack.venue.state import SandboxState

MARKET_WS_PATH = "/ws/market"


def install_market_ws(sock: Sock, state: SandboxState) -> None:
    """Mount the market channel route on the app behind `sock`."""

    @sock.route(MARKET_WS_PATH)
    def market_ws(ws) -> None:
        """One market-channel connection: a reader (subscriptions, pings) and a sender."""
        channel = state.market_channel
        sub = channel.connect()
        try:
            serve_connection(ws, sub.outbox, lambda text: _handle(channel, sub, text))
        finally:
            channel.disconnect(sub)
            sub.outbox.put(None)


def _handle(channel: MarketChannel, sub: MarketSubscriber, text: str) -> None:
    message = client_message(sub.outbox, text) or {}
    assets = message.get("assets_ids")
    if not isinstance(assets, list):
        return
    token_ids = [str(a) for a in assets if isinstance(a, str | int)]
    operation = str(message.get("operation") or "").lower()
    if operation == "unsubscribe":
        channel.unsubscribe(sub, token_ids)
    elif operation == "subscribe" or str(message.get("type") or "").lower() == "market":
        dump = message.get("initial_dump", True) is not False
        channel.subscribe(sub, token_ids, initial_dump=dump)
