"""Front-end files from npm packages, served by us (no CDN): the explorer's and the dashboard's.

``vendor_assets.json`` lists each file and the package version it comes from. They are
committed under ``static/vendor/<name>/`` (``tools/vendor_assets.py`` refreshes them), so
every install has them: a wheel, ``pip install`` of a source tree, an editable checkout,
none needing Node. Should one be missing all the same, the app still starts but says so:
a warning at startup naming the files and the fix, a visible notice on the pages that need
them, and ``/api/docs`` then references none of the explorer's files (no blank page).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from flask import Blueprint, Flask, abort, send_from_directory

from config import ROOT

log = logging.getLogger(__name__)

VENDORED = ROOT / "static" / "vendor"
TABLE = Path(__file__).with_name("vendor_assets.json")
EXPLORER = "swagger-ui"
FIX = ("the installed copy of static/vendor/ is incomplete: reinstall copytrade, or in a "
       "checkout restore it with `git checkout -- static/vendor` (`make vendor-assets` "
       "refreshes it from npm)")

bp = Blueprint("assets", __name__)


def vendor_table() -> dict[str, dict[str, str]]:
    """Each asset bundle's files: name -> {served file name: path inside its npm package}."""
    raw = json.loads(TABLE.read_text())
    # Entries with their own ``dir`` belong to the docs site, not to the app.
    return {name: entry["files"] for name, entry in raw.items()
            if not name.startswith("_") and "dir" not in entry}


def locate(name: str, filename: str, vendored: Path | None = None) -> Path | None:
    """Where one listed file is (under ``vendored``, by default ``static/vendor``); None if
    it is not listed or not there."""
    if filename not in vendor_table().get(name, {}):
        return None
    candidate = (vendored or VENDORED) / name / filename
    return candidate if candidate.is_file() else None


def missing_assets(vendored: Path | None = None) -> list[str]:
    """``name/file`` of every listed file that is not there."""
    return [f"{name}/{filename}" for name, files in vendor_table().items()
            for filename in files if locate(name, filename, vendored) is None]


def _serve(name: str, filename: str):
    found = locate(name, filename)
    if found is None:
        abort(404)
    return send_from_directory(found.parent, found.name, max_age=3600)


@bp.get("/api/docs/assets/<path:filename>")
def swagger_asset(filename: str):
    """Swagger UI's scripts and styles, from the swagger-ui-dist npm package."""
    return _serve(EXPLORER, filename)


@bp.get("/assets/vendor/<package>/<path:filename>")
def vendor_asset(package: str, filename: str):
    """The dashboard's htmx and uPlot builds, from their npm packages."""
    if package == EXPLORER:
        abort(404)  # served under /api/docs/assets/
    return _serve(package, filename)


@bp.get("/favicon.ico")
def favicon():
    """The site icon (browsers ask for it on every page; a 404 there is noise in every log)."""
    return send_from_directory(ROOT / "static", "favicon.ico", mimetype="image/x-icon",
                               max_age=86400)


def init_app(app: Flask) -> None:
    """Serve the assets; warn at startup, and tell the pages, when some are missing."""
    app.register_blueprint(bp)
    missing = missing_assets()
    if missing:
        log.warning("front-end assets missing (%s): the API explorer and the dashboard "
                    "cannot load their scripts; %s", ", ".join(missing), FIX)
    notice = (f"Front-end assets are missing ({', '.join(missing)}): {FIX}."
              if missing else None)
    app.jinja_env.globals["missing_assets_notice"] = notice
    # The explorer page leaves out its scripts and styles when any is gone: a page that
    # says why beats a blank one with 404s behind it.
    app.jinja_env.globals["explorer_assets_missing"] = any(
        entry.startswith(f"{EXPLORER}/") for entry in missing)
