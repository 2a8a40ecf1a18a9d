"""JSON-RPC connections: a sync Web3 whose transport failures raise ChainUnavailable.

Sync on purpose: AsyncWeb3 does not run under Trio, so callers use trio.to_thread.run_sync.
"""

from __future__ import annotations

from typing import Any

import requests
from web3 import HTTPProvider, Web3
from web3.types import RPCEndpoint, RPCResponse

from chain.errors import ChainUnavailable

DEFAULT_TIMEOUT = 10.0


class _Provider(HTTPProvider):
    """An HTTP provider that reports transport failures as ChainUnavailable."""

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """Send one JSON-RPC request; unreachable, timed out or 5xx: ChainUnavailable."""
        try:
            return super().make_request(method, params)
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status == 429 or status >= 500:
                raise ChainUnavailable(f"chain RPC answered HTTP {status} to {method}") from exc
            raise
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise ChainUnavailable(f"chain RPC unreachable ({method}): {exc}") from exc


def connect(rpc_url: str, *, timeout: float = DEFAULT_TIMEOUT, check: bool = False) -> Web3:
    """Return a Web3 for rpc_url; with check=True, also prove the endpoint answers."""
    provider = _Provider(
        rpc_url,
        request_kwargs={"timeout": timeout},
        # no silent retries: callers (jobs) own retry policy and idempotency
        exception_retry_configuration=None,
    )
    w3 = Web3(provider)
    if check:
        w3.eth.chain_id  # noqa: B018 - the call is the probe
    return w3


def chain_id(w3: Web3) -> int:
    """Return the chain id the endpoint reports."""
    return int(w3.eth.chain_id)
