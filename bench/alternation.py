"""Run a benchmark on an earlier commit and on this tree alternately, in one sitting.

On a machine other work shares, a figure measured alone says little: the load moves it
more than a change does. Runs of the two trees taken in turns (ABAB...) see about the same
load, so each claim is a ratio of medians, printed with the load each run had.

The earlier commit is checked out with ``git worktree add --detach`` into a temp dir
(removed afterwards); every run is this tree's harness (``bench/<script>``) with
``--code`` naming the tree whose code it runs, and ``--summary`` a JSON file of figures.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Figures compared (JSON key, label); lower is better for all of them.
COMPARED = [("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"), ("cpu_ms_per_copy", "CPU ms/copy"),
            ("sql_per_copy", "SQL/copy"), ("commits_per_copy", "commits/copy"),
            ("to_run_s", "start s"), ("takeover_after_expiry_s", "take-over s"),
            ("rss_mb", "RSS MB")]


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def alternate(script: str, rev: str, runs: int, options: list[str]) -> None:
    """Run ``script`` with ``options`` on ``rev`` and on this tree, ``runs`` times each in
    turns; print each run's figures and the ratios of their medians (this / ``rev``)."""
    here = Path(script).resolve().parent.parent
    commits = {"before": _git(here, "rev-parse", "--short", rev),
               "this": _git(here, "rev-parse", "--short", "HEAD")}
    dirty = bool(_git(here, "status", "--porcelain", "--untracked-files=no"))
    figures: dict[str, list[dict[str, float]]] = {"before": [], "this": []}
    failed = {"before": 0, "this": 0}
    with tempfile.TemporaryDirectory(prefix="bench-before-") as temp:
        before = Path(temp) / "tree"
        _git(here, "worktree", "add", "--detach", str(before), rev)
        try:
            trees = {"before": before, "this": here}
            for n in range(runs):
                for label in (("before", "this") if n % 2 == 0 else ("this", "before")):
                    summary = Path(temp) / f"{label}-{n}.json"
                    # A run that fails (a loaded machine: the venue process slow to come
                    # up) is tried once more, then left out and counted.
                    for attempt in (1, 2):
                        print(f"== run {n + 1}/{runs}: {label} ({commits[label]}), attempt "
                              f"{attempt}", flush=True)
                        done = subprocess.run([sys.executable, script, *options, "--code",
                                               str(trees[label]), "--summary", str(summary)])
                        if done.returncode == 0:
                            figures[label].append(json.loads(summary.read_text()))
                            break
                    else:
                        failed[label] += 1
        finally:
            _git(here, "worktree", "remove", "--force", str(before))
    print(f"\nalternated runs: {runs} of each, {commits['before']} (before) and "
          f"{commits['this']} (this{', with uncommitted changes' if dirty else ''}); "
          f"options: {' '.join(options)}; runs that failed twice: {failed}")
    if figures["before"] and figures["this"]:
        print(report(figures))


def report(figures: dict[str, list[dict[str, float]]]) -> str:
    """Markdown: each run's figures with its load, then the medians and their ratio."""
    keys = [(k, label) for k, label in COMPARED
            if any(k in run for runs in figures.values() for run in runs)]
    lines = ["| run | " + " | ".join(label for _, label in keys) + " | load |",
             "|---|" + "---|" * (len(keys) + 1)]
    for name, runs in figures.items():
        for n, run in enumerate(runs):
            lines.append(f"| {name} {n + 1} | " + " | ".join(
                _cell(run.get(k)) for k, _ in keys) + f" | {run['load_copies']:.1f} |")
    medians = {name: {k: statistics.median([r[k] for r in runs if k in r])
                      for k, _ in keys if any(k in r for r in runs)}
               for name, runs in figures.items()}
    for name in figures:
        lines.append(f"| {name}, median | " + " | ".join(
            _cell(medians[name].get(k)) for k, _ in keys) + " | " + _cell(
            statistics.median(r["load_copies"] for r in figures[name])) + " |")
    lines.append("| this / before | " + " | ".join(
        _ratio(medians["this"].get(k), medians["before"].get(k)) for k, _ in keys) + " | |")
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}"


def _ratio(this: float | None, before: float | None) -> str:
    if this is None or not before:
        return "—"
    return f"{this / before:.2f}"


__all__ = ["alternate", "report"]
