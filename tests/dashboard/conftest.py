"""Browser-test fixtures: the app on a real threaded server, headless Chromium (Playwright),
a real SMTP inbox for sign-in, an in-process copy engine and worker host, screenshots.

Chromium is Debian's (/usr/bin/chromium; `make setup` installs it). Screenshots go to
test-artifacts/screenshots/ (ignored by git).
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
import trio

from services.platform import runtime
from tests.conftest import DEADLINE, RUN_ID, free_port, one_database, use_queue
from tests.http_helpers import serving
from tests.mail_inbox import Inbox
from tests.worker.conftest import delete_prefixed_keys

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# Every browser wait (actions, navigations, wait_for, expect) lasts the suite's DEADLINE:
# Playwright's own defaults (5 s for expect, 30 s for the rest), and the 15 s set here
# before, are wall-clock bets that a busy machine loses while a request merely takes 6 s.
# A wait ends as soon as its condition holds, so a long one costs a passing test nothing.
BROWSER_WAIT_MS = DEADLINE * 1000
# Screenshots are saved by one of a test's two database runs: both render the same page
# under the same name, and a full-page capture is a quarter of the browser's CPU here.
_SAVING = {"screenshots": True}
# A browser test runs on SQLite only (`make run`'s database): its point is the page, and the
# rows behind it are read and written on both databases by the API and service tests. Both
# runs stay for the tests where another writer commits while the page reads: a copy engine
# or a worker host in a thread of its own (transactions and locks differ between the two).
BOTH_DATABASES = frozenset({"copy_engine", "worker_host"})


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Browser tests on SQLite only, but for those with a concurrent writer (above): marked
    ``one_database`` before pytest reads the marks and the fixture's own two params."""
    names = set(metafunc.fixturenames)
    if "browser" not in names or "database_url" not in names or names & BOTH_DATABASES:
        return
    if any("database_url" in str(mark.args[0])
           for mark in metafunc.definition.iter_markers("parametrize")):
        return  # already chose its database
    metafunc.definition.add_marker(one_database)


@pytest.fixture(autouse=True)
def _screenshots_once(request: pytest.FixtureRequest) -> Iterator[None]:
    callspec = getattr(request.node, "callspec", None)
    _SAVING["screenshots"] = (callspec is None
                              or callspec.params.get("database_url") != "postgresql")
    yield
    _SAVING["screenshots"] = True


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by Playwright, for the dashboard tests only.

    Package scope, not session: Playwright's sync API keeps an asyncio loop running on
    the main thread while it is open, which would break every later ``asyncio.run``.
    """
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=BROWSER_WAIT_MS)
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def live_server(app: Any, set_settings: Any) -> Iterator[str]:
    """The app on a real threaded HTTP server on a free port; its base URL."""
    port = free_port()
    set_settings(base_url=f"http://127.0.0.1:{port}")  # sign-in links point here
    with serving(app, port) as base:
        yield base


@pytest.fixture
def page(browser: Any, live_server: str) -> Iterator[Any]:
    """A fresh browser context (no cookies) and page at desktop width."""
    context = new_context(browser, live_server)
    tab = context.new_page()
    tab.on("dialog", lambda dialog: dialog.accept())  # hx-confirm prompts: say yes
    # The pages send a strict CSP; the browser reports what it blocks only on the console.
    blocked: list[str] = []
    tab.on("console", lambda message: blocked.append(message.text)
           if message.type == "error" and _is_csp_violation(message.text) else None)
    tab.on("pageerror", lambda error: blocked.append(f"uncaught: {error}"))
    tab.csp_blocked = blocked  # a test that provokes a violation on purpose reads and clears it
    wait_for_htmx(tab)
    yield tab
    context.close()
    assert not blocked, f"the page broke its Content-Security-Policy or threw: {blocked}"


# Set before any page script runs (through the DevTools protocol, so the CSP allows it):
# htmx fires htmx:load on the body once it has processed the page.
_HTMX_LOADED = "document.addEventListener('htmx:load', () => { window.__htmxLoaded = true; });"
# (A page without htmx, the OAuth consent page or about:blank, is ready once loaded.)
HTMX_READY = ("() => !document.querySelector('script[src*=htmx]')"
              " || (!!window.htmx && window.__htmxLoaded === true)")


def wait_for_htmx(tab: Any) -> None:
    """After each navigation through ``tab.goto``, ``reload``, ``wait_for_url`` or
    ``go_back``, wait until htmx has processed the page, so that a click that follows is
    never a plain link or form submission htmx had not taken over yet."""
    tab.add_init_script(_HTMX_LOADED)
    for name in ("goto", "reload", "wait_for_url", "go_back"):
        navigate = getattr(tab, name)

        def then_ready(*args: Any, _navigate: Any = navigate, **kwargs: Any) -> Any:
            answer = _navigate(*args, **kwargs)
            tab.wait_for_function(HTMX_READY)
            return answer

        setattr(tab, name, then_ready)


def new_context(browser: Any, base_url: str, **options: Any) -> Any:
    """A fresh browser context (no cookies, desktop width unless ``options`` say otherwise)
    on ``base_url`` whose waits last BROWSER_WAIT_MS."""
    context = browser.new_context(base_url=base_url, **{"viewport": DESKTOP, **options})
    context.set_default_timeout(BROWSER_WAIT_MS)
    return context


def _is_csp_violation(text: str) -> bool:
    return "Content Security Policy" in text or text.startswith("Refused to")


def screenshot(page: Any, name: str, *, phone: bool = False) -> Path:
    """Save a full-page screenshot of ``page`` (optionally at phone width), in the SQLite run
    of a test only."""
    path = SCREENSHOTS / f"{name}.png"
    if not _SAVING["screenshots"]:
        return path
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if phone:
        page.set_viewport_size(PHONE)
    page.screenshot(path=str(path), full_page=True)
    if phone:
        page.set_viewport_size(DESKTOP)
    return path


DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def docs_screenshot(page: Any, name: str) -> None:
    """Save a full-page screenshot of ``page`` as it is sized now to docs/screenshots/ (the
    pictures the docs show), in the SQLite run of a test only."""
    if _SAVING["screenshots"]:
        page.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}.png"), full_page=True)


# Pages whose tables fit their cards at both widths (others may still scroll inside theirs).
TABLES_FIT = {"positions", "traders-compare"}


def docs_shots(page: Any, name: str) -> None:
    """``page`` at desktop width, then at 390 px: no sideways scroll, no table wider than
    its card where that is promised, a title's buttons clear of what follows; saved each
    time as docs/screenshots/<name>-desktop.png and <name>-phone.png. Left at phone width."""
    for size in (DESKTOP, PHONE):
        width = size["width"]
        page.set_viewport_size(size)
        page.wait_for_timeout(100)  # a relayout, not a wait for the server
        wide = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert wide[0] <= wide[1], f"{name}: {wide[0]} px wide at {wide[1]} px"
        # Nor inside its cards: a table wider than its card scrolls there (positions did).
        inner = page.evaluate("() => [...document.querySelectorAll('main .table-wrap')]"
                              ".filter(w => w.scrollWidth > w.clientWidth + 1)"
                              ".map(w => w.scrollWidth + ' px in ' + w.clientWidth + ' px')")
        assert not inner or name not in TABLES_FIT, f"{name} at {width} px: tables {inner}"
        # A title's buttons, wrapped under it on a phone, do not touch what follows them.
        gap = page.evaluate(
            "() => { const h = document.querySelector('main .heading'); if (!h) return null;"
            " let n = h.nextElementSibling; while (n && !n.getClientRects().length)"
            " n = n.nextElementSibling; return n ? n.getBoundingClientRect().top"
            " - h.lastElementChild.getBoundingClientRect().bottom : null; }")
        assert gap is None or gap >= 8, f"{name}: {gap} px under the title's buttons at {width} px"
        docs_screenshot(page, f"{name}-{'phone' if size is PHONE else 'desktop'}")


def accessible_and_fits_a_phone(page: Any, name: str) -> None:
    """axe-core's serious and critical violations are none; at 390 px nothing overflows and
    every table but a compact one is stacked rows (its header hidden, each row a block)."""
    # Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text() + "\n;0")
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']}))"
                          ".violations.filter(v => ['serious', 'critical'].includes(v.impact))"
                          ".map(v => v.id + ': ' + v.nodes.map(n => n.target).join(' '))")
    assert found == [], f"{name}: {found}"
    screenshot(page, name)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(100)  # a relayout, not a wait for the server
    wide = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert wide <= PHONE["width"], f"{name}: {wide} px wide at {PHONE['width']} px"
    unstacked = page.evaluate(
        # uPlot's legend, and compact tables (an order book's few figures) stay tables
        "() => [...document.querySelectorAll('table:not(.u-legend):not(.compact)')]"
        ".filter(t => t.offsetParent !== null)"
        ".filter(t => !t.classList.contains('rows') || (t.tHead && t.tHead.offsetParent)"
        " || [...t.tBodies].some(b => [...b.rows].some("
        "r => getComputedStyle(r).display !== 'block'))).map(t => t.outerHTML.slice(0, 80))")
    assert unstacked == [], f"{name}: tables not stacked at phone width: {unstacked}"
    screenshot(page, f"{name}-phone")
    page.set_viewport_size(DESKTOP)


def sign_in(page: Any, inbox: Inbox, email: str | None = None) -> str:
    """Sign in with the code from the delivered email, then open the home page; the address
    used. The sign-in requests go over HTTP from the page's context (its cookies), without
    rendering the sign-in pages: tests/dashboard/test_sign_in.py drives those in the
    browser, and rendering them for every other test cost Chromium two page loads each."""
    email = email or f"{secrets.token_hex(5)}@example.com"
    login = page.request.get("/dashboard/login")
    assert login.ok, login.status
    found = re.search(r'<meta name="csrf-token" content="([^"]+)"', login.text())
    assert found, "the sign-in page carries no CSRF token"
    csrf = {"X-CSRF-Token": found.group(1)}
    sent = page.request.post("/dashboard/login", form={"email": email}, headers=csrf)
    assert sent.ok, (sent.status, sent.text())
    code, _token = inbox.last_for(email)
    verified = page.request.post("/dashboard/login/verify", form={"email": email, "code": code},
                                 headers=csrf, max_redirects=0)
    assert verified.status == 303, (verified.status, verified.text())
    page.goto("/dashboard")
    page.wait_for_url(re.compile(r".*/dashboard$"))
    return email


def approved_app(user: Any, name: str, scopes: list[str]) -> Any:
    """A registered OAuth client ``name`` that ``user`` approved for ``scopes``."""
    from models.oauth import OAuthClient
    from services.oauth import tokens as oauth

    client = OAuthClient.create(client_id=f"client-{secrets.token_hex(4)}", kind="registered",
                                client_name=name, redirect_uris='["https://agent.example/cb"]',
                                grant_types="authorization_code refresh_token",
                                response_types="code", token_endpoint_auth_method="none")
    oauth.record_approval(user, client, scopes)
    return client


@pytest.fixture
def job_prefix(app: Any, redis_url: str) -> Iterator[str]:
    """A Redis prefix of this test's own for jobs and copy-engine leases (cleaned after)."""
    prefix = f"ct-test-{RUN_ID}-dash-{secrets.token_hex(3)}:"
    saved = use_queue(redis_url, prefix)
    yield prefix
    delete_prefixed_keys(redis.Redis.from_url(redis_url), prefix)
    runtime.install(saved)


def _trio_thread(name: str, start: Callable[[Any], Any]) -> tuple[threading.Thread, dict]:
    """Run ``start(nursery)`` (returns the started object) under trio in a thread."""
    started = threading.Event()
    box: dict[str, Any] = {}

    def serve() -> None:
        async def main() -> None:
            async with trio.open_nursery() as nursery:
                box["cancel"] = nursery.cancel_scope
                box["object"] = await start(nursery)
                box["token"] = trio.lowlevel.current_trio_token()
                started.set()

        trio.run(main)

    thread = threading.Thread(target=serve, name=name, daemon=True)
    thread.start()
    assert started.wait(20), f"{name} did not start"
    return thread, box


@pytest.fixture
def copy_engine(app: Any, redis_url: str, job_prefix: str) -> Iterator[Any]:
    """A copy engine (fast test timings) running in a thread on this test's prefix."""
    from tests.worker.copy_engine.conftest import FAST
    from worker.copy_engine.engine import CopyEngine

    client = redis.Redis.from_url(redis_url)
    # Timings a busy machine cannot beat are off. Leases of DEADLINE, not FAST's 2 s: a
    # thread starved for 1.4 s would stop its targets (the lease clock) and take them again,
    # the page meanwhile showing "waiting for a worker" and the feed's fills of the
    # restarting target passed over. No stale-feed timer (30 s without a trade frame): the
    # sandbox trades only when a test says so, so the timer would only time the test's own
    # sign-in and page loads, and a slow one would find the feed "stale" before its first
    # trade. These tests watch one engine copy, and kill the feed by closing it.
    settings = replace(FAST, lease_ms=int(DEADLINE * 1000), feed_stale_seconds=0)
    engine = CopyEngine(f"dash-engine-{secrets.token_hex(3)}", client, job_prefix, settings)

    async def start(nursery: Any) -> Any:
        return await nursery.start(engine.run)

    thread, box = _trio_thread("dashboard-copy-engine", start)
    yield engine
    trio.from_thread.run_sync(box["cancel"].cancel, trio_token=box["token"])
    thread.join(15)


@pytest.fixture
def worker_host(app: Any, redis_url: str, job_prefix: str, wallet_chain: Any) -> Iterator[Any]:
    """A real worker host (Trio, jobs in threads) serving this test's queues on anvil."""
    from worker import jobs as job_table
    from worker.host import WorkerHost, WorkerSettings

    job_table.load_modules("")
    settings = WorkerSettings(redis_url=redis_url, prefix=job_prefix, capacity=4,
                              grace_seconds=2, heartbeat_seconds=0.5, poll_seconds=0.05)

    async def start(nursery: Any) -> Any:
        return await nursery.start(WorkerHost(settings).run)

    thread, box = _trio_thread("dashboard-worker", start)
    yield box["object"]
    trio.from_thread.run_sync(box["object"].request_shutdown, trio_token=box["token"])
    thread.join(15)
