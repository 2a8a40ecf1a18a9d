"""The checkout's own Python files, for the tests that read the source."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_files(skip: Collection[str] = ()) -> list[Path]:
    """Every ``.py`` file of the checkout, sorted, but under hidden top-level entries (a
    fresh clone's .venv: tens of thousands of files) and the top-level names in ``skip``."""
    files: list[Path] = []
    for top in ROOT.iterdir():
        if top.name.startswith(".") or top.name in skip:
            continue
        if top.is_dir():
            files += top.rglob("*.py")
        elif top.suffix == ".py":
            files.append(top)
    return sorted(files)
