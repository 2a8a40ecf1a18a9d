"""Copying's background jobs: building a copyability report and screening the ranked traders
(a replay can read hundreds of markets, so it never runs inside a request)."""

from __future__ import annotations

from services.copying import copyability_reports, screening
from worker.jobs import job


@job(copyability_reports.JOB)
def copyability_report(report_id: str) -> str:
    """Build one copyability report (a finished one is left alone); return its status."""
    return copyability_reports.run(report_id)


@job(screening.JOB)
def screening_sweep() -> dict[str, int]:
    """Rank the venue's traders and replay those looked at longest ago, within the budget."""
    return screening.sweep()
