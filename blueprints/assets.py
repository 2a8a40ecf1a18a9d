"""Front-end assets from npm packages, served by us (no CDN): the explorer's and the dashboard's.

``vendor_assets.json`` lists each file. A built package carries them under
``static/vendor/<name>/`` (setup.py copies them from ``node_modules`` at build time); a
checkout also serves them straight from ``node_modules``. When some are missing the
app still starts, but says so: a warning at startup naming the fix, and a visible
notice on the pages that need them.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from flask import Blueprint, Flask, abort, send_from_directory

from config import ROOT

log = logging.getLogger(__name__)

NODE_MODULES = ROOT / "node_modules"
VENDORED = ROOT / "static" / "vendor"
TABLE = Path(__file__).with_name("vendor_assets.json")
FIX = ("run `npm install` in the checkout (`make setup` does), or install a package built "
       "with `make dist`, which carries them")

bp = Blueprint("assets", __name__)


def vendor_table() -> dict[str, dict[str, str]]:
    """Each asset bundle's files: name -> {served file name: path inside its npm package}."""
    raw = json.loads(TABLE.read_text())
    return {name: entry["files"] for name, entry in raw.items() if not name.startswith("_")}


def _packages() -> dict[str, str]:
    raw = json.loads(TABLE.read_text())
    return {name: entry["package"] for name, entry in raw.items() if not name.startswith("_")}


def locate(name: str, filename: str, vendored: Path = VENDORED,
           node_modules: Path = NODE_MODULES) -> Path | None:
    """Where one listed file is: vendored into the package, else in node_modules; None if absent."""
    inside = vendor_table().get(name, {}).get(filename)
    if inside is None:
        return None
    for candidate in (vendored / name / filename, node_modules / _packages()[name] / inside):
        if candidate.is_file():
            return candidate
    return None


def missing_assets(vendored: Path = VENDORED, node_modules: Path = NODE_MODULES) -> list[str]:
    """``name/file`` of every listed file found nowhere."""
    return [f"{name}/{filename}" for name, files in vendor_table().items()
            for filename in files if locate(name, filename, vendored, node_modules) is None]


def _serve(name: str, filename: str):
    found = locate(name, filename)
    if found is None:
        abort(404)
    return send_from_directory(found.parent, found.name, max_age=3600)


@bp.get("/api/docs/assets/<path:filename>")
def swagger_asset(filename: str):
    """Swagger UI's scripts and styles, from the swagger-ui-dist npm package."""
    return _serve("swagger-ui", filename)


@bp.get("/assets/vendor/<package>/<path:filename>")
def vendor_asset(package: str, filename: str):
    """The dashboard's htmx and uPlot builds, from their npm packages."""
    if package == "swagger-ui":
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
