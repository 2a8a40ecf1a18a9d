"""JSON-RPC connections: a sync Web3 whose transport failures raise ChainUnavailable.

Sync on purpose: AsyncWeb3 does not run under Trio, so callers use trio.to_thread.run_sync.
Provider URLs often carry an API key in the path, query or userinfo
(``https://polygon-mainnet.g.alchemy.com/v2/<key>``): errors name the endpoint only by
``chain.urls.redact_url`` and never chain the transport exception, whose text quotes the URL.
"""

from __future__ import annotations

from typing import Any

import requests
from web3 import HTTPProvider, Web3
from web3.types import RPCEndpoint, RPCResponse

from chain.errors import ChainUnavailable
from chain.urls import redact_url, scrub

DEFAULT_TIMEOUT = 10.0


class _Provider(HTTPProvider):
    """An HTTP provider that reports transport failures as ChainUnavailable."""

    def __str__(self) -> str:
        return f"RPC connection {redact_url(str(self.endpoint_uri))}"

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """Send one JSON-RPC request; unreachable, timed out or HTTP error: ChainUnavailable."""
        return self._translated(str(method), lambda: super(_Provider, self).make_request(
            method, params))

    def make_batch_request(self, requests_info: Any) -> Any:
        """Send a JSON-RPC batch; transport failures as for ``make_request``."""
        return self._translated("batch", lambda: super(_Provider, self).make_batch_request(
            requests_info))

    def _translated(self, method: str, send: Any) -> Any:
        endpoint = redact_url(str(self.endpoint_uri))
        try:
            return send()
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            retry = 5 if status == 429 or status >= 500 else 60  # 4xx: a setting to fix
            # `from None`: the HTTPError's text quotes the full URL, key and all
            raise ChainUnavailable(f"chain RPC {endpoint} answered HTTP {status} to {method}",
                                   retry_after=retry) from None
        except (requests.ConnectionError, requests.Timeout) as exc:
            detail = scrub(str(exc), str(self.endpoint_uri))
            raise ChainUnavailable(
                f"chain RPC {endpoint} unreachable ({method}): {type(exc).__name__}: {detail}"
            ) from None


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
