"""Compile our Solidity contracts with solcjs (npm `solc`) and cache the artifacts.

Only the local chain needs this: production reads the committed ABIs in `chain/abi/`.
Artifacts are cached in `build/contracts/<hash>.json`, keyed by the sources, the compiler
settings and the compiler version, so a test session compiles at most once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack.chain.errors import DevChainError

CONTRACTS_DIR = Path(__file__).resolve().parent / "contracts"
REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "build" / "contracts"

# Polygon PoS supports Cancun; pinning it keeps bytecode valid on anvil and on Polygon alike.
SETTINGS: dict[str, Any] = {
    "optimizer": {"enabled": True, "runs": 200},
    "evmVersion": "cancun",
    "outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}},
}


class CompileError(DevChainError):
    """solcjs is missing or the contracts did not compile."""


@dataclass(frozen=True)
class Artifact:
    """A compiled contract: its ABI and creation bytecode (0x-prefixed hex)."""

    name: str
    abi: list[dict[str, Any]]
    bytecode: str


def find_solc_package() -> Path | None:
    """Return the directory of the npm `solc` package (solcjs), or None if not installed."""
    local = REPO_ROOT / "node_modules" / "solc"
    return local if (local / "package.json").is_file() and shutil.which("node") else None


# Runs solcjs through its JS API and writes the result to a file: the solcjs command line
# may exit before a large piped stdout is flushed, and prefixes notices to its JSON.
_RUNNER = """
const fs = require("fs");
const solc = require(process.argv[1]);
fs.writeFileSync(process.argv[2], solc.compile(fs.readFileSync(0, "utf8")));
"""


def _run_solc(package: Path, args: list[str], stdin: str = "") -> str:
    node = shutil.which("node") or "node"
    with tempfile.TemporaryDirectory(prefix="solcjs-") as tmp:
        out = Path(tmp) / "out.json"
        done = subprocess.run(
            [node, "-e", _RUNNER, str(package), *args, str(out)],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or not out.is_file():
            raise CompileError(f"solcjs failed: {done.stderr.strip() or done.stdout.strip()}")
        return out.read_text()


def _sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(CONTRACTS_DIR.glob("*.sol"))}


def compile_contracts(*, use_cache: bool = True) -> dict[str, Artifact]:
    """Compile every contract in devstack/chain/contracts; return artifacts by contract name."""
    package = find_solc_package()
    if package is None:
        raise CompileError("solcjs not found: run `npm install` in the repository root")
    sources = _sources()
    # the package version pins the compiler build; reading it avoids starting solcjs
    version = json.loads((package / "package.json").read_text())["version"]
    key_material = json.dumps([version, SETTINGS, sources], sort_keys=True).encode()
    cache_file = BUILD_DIR / f"{hashlib.sha256(key_material).hexdigest()[:32]}.json"
    if use_cache and cache_file.is_file():
        return _artifacts(json.loads(cache_file.read_text()))

    standard_input = {
        "language": "Solidity",
        "sources": {name: {"content": text} for name, text in sources.items()},
        "settings": SETTINGS,
    }
    output = json.loads(_run_solc(package, [], json.dumps(standard_input)))
    errors = [e for e in output.get("errors", []) if e.get("severity") == "error"]
    if errors:
        raise CompileError("\n".join(e.get("formattedMessage", e["message"]) for e in errors))

    compiled = {
        name: {"abi": body["abi"], "bytecode": "0x" + body["evm"]["bytecode"]["object"]}
        for file_contracts in output["contracts"].values()
        for name, body in file_contracts.items()
    }
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # write then rename, so that a concurrent reader never sees half a file
    tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(compiled))
    tmp.replace(cache_file)
    return _artifacts(compiled)


def _artifacts(compiled: dict[str, dict[str, Any]]) -> dict[str, Artifact]:
    return {
        name: Artifact(name=name, abi=body["abi"], bytecode=body["bytecode"])
        for name, body in compiled.items()
    }
