"""The sandbox venue's state on disk, so `copytrade up` finds it again after a restart.

A snapshot holds the data of each part (markets, books, orders, balances, API keys,
deposit wallets, relayer transactions, fills...), never its wiring (the config, the clock,
the other parts, listeners, locks): loading fills the freshly built parts' data in place.
Parts share objects (an order sits in the desk, its book and the ledger's open orders), so
the data is pickled as one graph, which keeps those links; reading it admits only plain
data and the venue's own record classes (``_PlainUnpickler``), never arbitrary code. It is
written whole to a temporary file and renamed, so a kill leaves the previous one intact.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from devstack.files import write_atomically

if TYPE_CHECKING:
    from devstack.venue.state import SandboxState

log = logging.getLogger(__name__)

# Bumped when a part's data changes shape: an older snapshot is then set aside, not loaded.
FORMAT = 1
# The parts whose data a snapshot holds; the others keep nothing (house, settlement) or
# only switches a test sets (faults, modes, limits).
PARTS = ("catalog", "ledger", "keys", "accounts", "tape", "desk", "relayer", "lifecycle")
# Attributes that wire a part to the others, the config or the clock: rebuilt, not saved.
WIRING = frozenset({"config", "now", "catalog", "ledger", "accounts", "tape", "desk",
                    "publish_fills", "listeners", "settle", "lock", "executor",
                    "after_match", "server_secret"})
# What a snapshot may contain besides builtins: numbers, times, and the venue's records.
ALLOWED_MODULES = ("decimal", "datetime", "collections", "devstack.venue.")
ALLOWED_BUILTINS = frozenset({"set", "frozenset", "tuple", "list", "dict", "bytes",
                              "bytearray", "int", "float", "str", "bool", "complex",
                              "slice", "range", "getattr", "object"})


class SnapshotError(Exception):
    """A snapshot file that cannot be read back."""


class _PlainUnpickler(pickle.Unpickler):
    """Refuse any class outside the venue's records and plain data."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if module != "builtins" and any(module == allowed.rstrip(".") or
                                        module.startswith(allowed)
                                        for allowed in ALLOWED_MODULES):
            found = super().find_class(module, name)
            if callable(found) and not isinstance(found, type):
                raise SnapshotError(f"a snapshot holds no functions: {module}.{name}")
            return found
        raise SnapshotError(f"a snapshot holds no {module}.{name}")


def capture(state: SandboxState) -> bytes:
    """The state's data as bytes; the caller holds nothing (this takes ``state.lock``)."""
    with state.lock:
        parts = {name: {key: value for key, value in vars(getattr(state, name)).items()
                        if key not in WIRING and not callable(value)}
                 for name in PARTS}
        body = {"format": FORMAT, "parts": parts, "profiles": state.profiles,
                "rng": state.rng.getstate()}
        return pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL)


def restore(state: SandboxState, data: bytes) -> None:
    """Fill ``state``'s parts with the data ``capture`` took."""
    try:
        body = _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotError:
        raise
    except Exception as exc:
        raise SnapshotError(f"unreadable snapshot: {exc}") from exc
    found = body.get("format") if isinstance(body, dict) else None
    if found != FORMAT:
        raise SnapshotError(f"snapshot format {found}, this venue reads {FORMAT}")
    parts, profiles, rng = body.get("parts"), body.get("profiles"), body.get("rng")
    if (not isinstance(parts, dict) or set(parts) != set(PARTS)
            or not all(isinstance(fields, dict) for fields in parts.values())
            or not isinstance(profiles, dict) or not isinstance(rng, tuple)):
        raise SnapshotError("snapshot without the venue's parts")
    with state.lock:
        for name, fields in parts.items():
            vars(getattr(state, name)).update(fields)
        state.profiles = profiles
        state.rng.setstate(rng)
        state.market_channel.resync()


def save(state: SandboxState, path: str | os.PathLike[str]) -> Path:
    """Write the state to ``path`` atomically (a temporary file renamed over it)."""
    return write_atomically(path, capture(state))


def load(state: SandboxState, path: str | os.PathLike[str]) -> bool:
    """Fill ``state`` from ``path``; False when there is none. A snapshot this venue cannot
    read is moved aside (``.unreadable``) with a warning, and the venue starts afresh."""
    source = Path(path)
    if not source.is_file():
        return False
    try:
        restore(state, source.read_bytes())
    except SnapshotError as exc:
        aside = source.with_name(source.name + ".unreadable")
        source.replace(aside)
        log.warning("sandbox: %s; moved it to %s and started afresh", exc, aside)
        state.reset()
        return False
    return True
