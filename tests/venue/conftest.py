"""Venue test helpers: the real Polymarket samples (copied from /work/shared/venue-samples)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from venue.parse.values import loads

SAMPLES = Path(__file__).parent / "samples"


def sample_text(name: str) -> str:
    """Raw text of a sample file."""
    return (SAMPLES / name).read_text(encoding="utf-8")


def sample(name: str) -> Any:
    """A sample decoded the way the client decodes venue answers (floats as Decimal)."""
    return loads(sample_text(name))


@pytest.fixture
def samples_dir() -> Path:
    """Directory of the JSON samples."""
    return SAMPLES
