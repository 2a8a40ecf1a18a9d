"""Copying's background jobs: building a copyability report (the replay can read hundreds of
markets, so it never runs inside a request)."""

from __future__ import annotations

from services.copying import copyability_reports
from worker.jobs import job


@job(copyability_reports.JOB)
def copyability_report(report_id: str) -> str:
    """Build one copyability report (a finished one is left alone); return its status."""
    return copyability_reports.run(report_id)
