"""copytrade installed into a fresh virtualenv and served from an empty folder, as a user
would run it: nothing of the checkout on ``sys.path``.

The fresh venv borrows only third-party dependencies from the running interpreter's
site-packages (a path in a ``.pth`` file: the editable copytrade install there is not
activated), so every file of copytrade itself comes from what was installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from devstack.chain.devchain import die_with_parent
from tests.conftest import DEADLINE, REDIS_URL, RUN_ID, free_port
from tests.operations.stack import stop

CHECKOUT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """This environment without anything that would put the checkout on ``sys.path``."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def clean_source_tree(target: Path) -> Path:
    """The checkout as a fresh clone of it would hold it (with this change's new files)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=CHECKOUT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = CHECKOUT / name
        if source.is_file():  # a deleted but still tracked file is skipped
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    assert not (target / "node_modules").exists()
    return target


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 300) -> str:
    """Run a command; its stdout, or an assertion naming its output."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def install(work: Path, *what: str | Path) -> Path:
    """A fresh virtualenv under ``work`` with ``what`` pip-installed (``--no-deps``); its
    bin folder."""
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    bin_dir = env_dir / "bin"
    purelib = run(bin_dir / "python", "-c",
                  "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                  cwd=work).strip()
    run(sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--no-deps",
        "-q", *what, cwd=work)
    # After installing: pip would otherwise see the editable copytrade there and skip ours.
    Path(purelib, "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


@contextmanager
def serving(installed: Path, home: Path, name: str) -> Iterator[tuple[str, Path]]:
    """``copytrade serve`` from the venv whose bin folder is ``installed``, in ``home``; its
    base URL and its log file (read it after the block: the server has stopped)."""
    port = free_port()
    env = clean_env()
    env.update({
        "PATH": f"{installed}:{env.get('PATH', '')}",
        "COPYTRADE_INSTANCE": str(home / "instance"),
        "DATABASE_URL": f"sqlite:///{home / 'copytrade.db'}",
        "REDIS_URL": REDIS_URL, "REDIS_PREFIX": f"ct-test-{RUN_ID}-{name}:",
        "BASE_URL": f"http://127.0.0.1:{port}", "LOG_FORMAT": "text",
    })
    where = run(installed / "python", "-c",
                "import app, sys; print(app.__file__); print(*sys.path, sep='\\n')",
                cwd=home, env=env).splitlines()
    # The borrowed site-packages may sit inside the checkout (.venv/...); the checkout itself
    # must not be a path entry, nor the app come from it.
    assert CHECKOUT not in Path(where[0]).resolve().parents, where[0]
    assert CHECKOUT not in {Path(entry).resolve() for entry in where[1:] if entry}, \
        "the checkout leaked onto sys.path"
    run(installed / "copytrade", "migrate", cwd=home, env=env)
    log_path = home / "serve.log"
    log = log_path.open("w")
    server = subprocess.Popen([str(installed / "copytrade"), "serve", "--host", "127.0.0.1",
                               "--port", str(port), "--workers", "1"],
                              cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=die_with_parent)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            assert server.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.3)
        yield base, log_path
    finally:
        stop(server)  # never fails the test: a graceful stop slow under load is killed
        log.close()


CHROMIUM = "/usr/bin/chromium"


def assert_chromium_renders_the_explorer(base: str) -> None:
    """Chromium renders ``/api/docs`` at ``base`` with every operation, and nothing it asks
    for fails."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), \
        f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)"
    failed: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.set_default_timeout(DEADLINE * 1000)  # a busy machine renders slowly
            page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                    if r.status >= 400 else None)
            page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
            page.goto(base + "/api/docs")
            page.wait_for_selector(".swagger-ui .opblock")
            assert page.locator(".swagger-ui .info .title").inner_text().startswith(
                "copytrade")
            assert page.locator(".opblock").count() > 20  # every operation, rendered
            assert page.locator("#missing-assets").count() == 0
        finally:
            browser.close()
    assert failed == []
