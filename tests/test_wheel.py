"""The built wheel alone serves a working API explorer and dashboard (no checkout, no Node).

The wheel is built from this checkout (the build vendors the npm assets), installed with
``--no-deps`` into a fresh virtualenv, and run as ``copytrade serve`` from an empty
folder. The fresh venv borrows only third-party dependencies from the running
interpreter's site-packages (a path in a ``.pth`` file: the editable copytrade install
there is not activated, and the checkout is never on ``sys.path``), so every file of
copytrade itself comes from the wheel. Then every script and stylesheet that
``/api/docs`` and a dashboard page reference must answer 200 with a body.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from devstack.chain.devchain import die_with_parent
from tests.conftest import REDIS_URL, RUN_ID, free_port

CHECKOUT = Path(__file__).resolve().parents[1]
ASSET_REFERENCE = re.compile(r'<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"')


def _clean_env() -> dict[str, str]:
    """This environment without anything that would put the checkout on ``sys.path``."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 300) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env or _clean_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the wheel built from this checkout; its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist",
         CHECKOUT, cwd=work)
    (wheel,) = (work / "dist").glob("copytrade-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    bin_dir = env_dir / "bin"
    purelib = _run(bin_dir / "python", "-c",
                   "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                   cwd=work).strip()
    _run(sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--no-deps",
         "-q", wheel, cwd=work)
    # After installing: pip would otherwise see the editable copytrade there and skip ours.
    Path(purelib, "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


@pytest.fixture(scope="module")
def served(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``copytrade serve`` from the fresh venv, in an empty folder; its base URL."""
    home = tmp_path_factory.mktemp("served")
    port = free_port()
    env = _clean_env()
    env.update({
        "PATH": f"{installed}:{env.get('PATH', '')}",
        "COPYTRADE_INSTANCE": str(home / "instance"),
        "DATABASE_URL": f"sqlite:///{home / 'copytrade.db'}",
        "REDIS_URL": REDIS_URL, "REDIS_PREFIX": f"ct-test-{RUN_ID}-wheel:",
        "BASE_URL": f"http://127.0.0.1:{port}", "LOG_FORMAT": "text",
    })
    where = _run(installed / "python", "-c",
                 "import app, sys; print(app.__file__); print(*sys.path, sep='\\n')",
                 cwd=home, env=env).splitlines()
    assert str(installed.parent) in where[0]
    # The borrowed site-packages may sit inside the checkout (.venv/...); the checkout itself
    # must not be a path entry.
    assert CHECKOUT not in {Path(entry).resolve() for entry in where[1:] if entry}, \
        "the checkout leaked onto sys.path"
    _run(installed / "copytrade", "migrate", cwd=home, env=env)
    log = (home / "serve.log").open("w")
    server = subprocess.Popen([str(installed / "copytrade"), "serve", "--host", "127.0.0.1",
                               "--port", str(port), "--workers", "1"],
                              cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=die_with_parent)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (home / "serve.log").read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (home / "serve.log").read_text()
            time.sleep(0.3)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    assert "front-end assets missing" not in (home / "serve.log").read_text()


@pytest.mark.parametrize("page", ["/api/docs", "/dashboard/login"])
def test_the_installed_wheel_serves_every_asset_its_pages_reference(served: str, page: str):
    html = httpx.get(served + page, timeout=10)
    assert html.status_code == 200
    assert "missing-assets" not in html.text
    references = ASSET_REFERENCE.findall(html.text)
    assert any(ref.endswith(".js") for ref in references), references
    for ref in references:
        asset = httpx.get(served + ref, timeout=10)
        assert asset.status_code == 200 and asset.content, ref


def test_the_installed_wheel_serves_the_config_chart_library(served: str):
    for name in ("uPlot.iife.min.js", "uPlot.min.css"):
        asset = httpx.get(f"{served}/assets/vendor/uplot/{name}", timeout=10)
        assert asset.status_code == 200 and asset.content, name


def test_missing_assets_are_named_and_found_in_either_place(tmp_path: Path):
    from blueprints import assets

    listed = {f"{name}/{filename}" for name, files in assets.vendor_table().items()
              for filename in files}
    assert set(assets.missing_assets(tmp_path, tmp_path)) == listed
    assert assets.missing_assets(tmp_path, CHECKOUT / "node_modules") == []
    htmx = tmp_path / "htmx" / "htmx.min.js"
    htmx.parent.mkdir()
    htmx.write_text("htmx")
    assert assets.locate("htmx", "htmx.min.js", tmp_path, tmp_path) == htmx
    assert "htmx/htmx.min.js" not in assets.missing_assets(tmp_path, tmp_path)
