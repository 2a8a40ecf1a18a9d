"""The contract ABIs the product calls on Polygon, committed so production needs no compiler.

Each is the subset of the real contract's ABI we use; tests check that our local stand-in
contracts expose the same signatures.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_DIR = Path(__file__).resolve().parent

ERC20 = "erc20"
CONDITIONAL_TOKENS = "conditional_tokens"
NEG_RISK_ADAPTER = "neg_risk_adapter"


@cache
def _load(name: str) -> str:
    return (_DIR / f"{name}.json").read_text()


def load_abi(name: str) -> list[dict[str, Any]]:
    """Return the ABI named `name` (erc20, conditional_tokens, neg_risk_adapter)."""
    # a fresh list each time, so callers cannot mutate the cached one
    return json.loads(_load(name))
