"""The `chain` fixture lives in tests/conftest.py (API and service tests use it too).

One anvil node per test session with our contracts deployed. Tests that need a wallet
make a fresh one with `chain.new_wallet()`, so they never share nonces or balances with
other tests on the session's chain.
"""

from __future__ import annotations

from tests.conftest import ONE_MATIC, DevChain

__all__ = ["ONE_MATIC", "DevChain"]
