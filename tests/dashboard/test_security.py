"""The dashboard under its Content-Security-Policy in a real browser."""

from __future__ import annotations


def test_the_browser_enforces_the_csp_and_the_fixture_sees_violations(page) -> None:
    page.goto("/dashboard/login")
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        ran = page.evaluate("""() => {
            const script = document.createElement("script");
            script.textContent = "window.injected = true";
            document.body.appendChild(script);
            return window.injected === true;
        }""")
    assert ran is False  # an injected inline script does not run
    assert any("Content Security Policy" in text for text in page.csp_blocked)
    page.csp_blocked.clear()  # provoked on purpose: the fixture's check must not fail
