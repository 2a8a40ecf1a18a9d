"""Every stage's floor on this machine: the same work as the copy path's stage, in a minimal
script (one module per stage beside this one), CPU ms per copy order.

    .venv/bin/python bench/floors/run.py [--copies 10]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The stage (bench/stages.py's key) and the module measuring its floor.
STAGES = {"detect": "parsing", "decide": "decision", "plan": "planning", "sign": "signing",
          "record": "record", "http": "exchange", "settle": "settlement"}


def measure(copies: int) -> dict[str, float]:
    """Each stage's floor, ms of CPU per copy order (a fill fans out to ``copies``)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))  # the floors import each other by their names
    return {stage: importlib.import_module(module).measure(copies)
            for stage, module in STAGES.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    for stage, ms in measure(parser.parse_args().copies).items():
        print(f"{stage}: {ms:.4f} ms per copy")
