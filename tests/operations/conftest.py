"""Operations test fixtures: the copy engine's (configs, traders, markets, engines) and helpers.

The copy engineer's fixtures are reused as they are: funded copiers, fresh sandbox
markets, active configs, in-process engines under a test key prefix.
"""

from __future__ import annotations

from tests.worker.copy_engine.conftest import (  # noqa: F401 - fixtures for this directory
    engine_prefix,
    make_config,
    make_trader,
    market,
    run_engines,
    target,
    trader,
)
