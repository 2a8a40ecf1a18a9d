"""Sandbox venue: a local server speaking Polymarket's Gamma, CLOB, Data API and RTDS.

    from devstack.venue import SandboxServer
    with SandboxServer() as venue:
        ClobClient(venue.clob_url, chain_id=137, key=...)

Base URLs: Gamma `<url>/gamma`, CLOB `<url>/clob`, Data API `<url>/data`, relayer
`<url>/relayer`, RTDS `ws://host:port/rtds`, CLOB market channel `ws://host:port/ws/market`,
control API `<url>/_sandbox` (see devstack.venue.control).
"""

from devstack.ctf import binary_token_ids, condition_id, position_id
from devstack.venue.app import create_sandbox_app
from devstack.venue.config import SandboxConfig
from devstack.venue.server import SandboxServer, free_port, serve
from devstack.venue.state import SandboxState

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
