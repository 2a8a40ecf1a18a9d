"""Sandbox venue: a local server speaking Polymarket's Gamma, CLOB, Data API and RTDS.

    from venue.sandbox import SandboxServer
    with SandboxServer() as venue:
        ClobClient(venue.clob_url, chain_id=137, key=...)

Base URLs: Gamma `<url>/gamma`, CLOB `<url>/clob`, Data API `<url>/data`,
RTDS `ws://host:port/rtds`, CLOB market channel `ws://host:port/ws/market`,
control API `<url>/_sandbox` (see venue.sandbox.control).
"""

from venue.sandbox.app import create_sandbox_app
from venue.sandbox.config import SandboxConfig
from venue.sandbox.ctf import binary_token_ids, condition_id, position_id
from venue.sandbox.server import SandboxServer, free_port, serve
from venue.sandbox.state import SandboxState

__all__ = [
    "SandboxConfig",
    "SandboxServer",
    "SandboxState",
    "binary_token_ids",
    "condition_id",
    "create_sandbox_app",
    "free_port",
    "position_id",
    "serve",
]
