"""`copytrade up`'s summary walks a newcomer through the first copy without reading source."""

from __future__ import annotations

import sys
from pathlib import Path

from devstack.stack import cli_path, first_steps

WHALES = ["0x" + "a" * 40, "0x" + "b" * 40]


def test_the_steps_are_numbered_and_say_where_the_code_is_and_whom_to_copy() -> None:
    lines = first_steps(8000, "/x/.venv/bin/copytrade", WHALES, mail=False, chain=True)
    text = "\n".join(lines)
    assert lines[0] == "First steps:"
    assert [line.split(".")[0].strip() for line in lines if line[:4].strip().endswith(".")
            and line.strip()[0].isdigit()] == ["1", "2", "3", "4", "5"]
    assert "http://127.0.0.1:8000/dashboard" in text
    assert "printed in this terminal" in text and "sign-in code" in text
    assert "/x/.venv/bin/copytrade dev fund ADDRESS" in text
    assert all(f"     {w}" in lines for w in WHALES)
    # README.md's walkthrough, step for step: Traders, a whale's profile, Copy this trader.
    assert "Traders page" in text and "Copy this trader" in text
    assert "New copy config" not in text


def test_with_mail_and_without_a_chain_or_whales_the_steps_say_so() -> None:
    text = "\n".join(first_steps(9000, "copytrade", [], mail=True, chain=False))
    assert "it arrives by email" in text and "printed in this terminal" not in text
    assert "anvil is missing" in text and "dev fund" not in text
    assert "scripted traders" not in text


def test_the_cli_is_named_by_its_path_when_a_shell_would_not_find_it(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    beside = Path(sys.executable).with_name("copytrade")
    assert cli_path() == (str(beside) if beside.exists() else "copytrade")
