"""Front-end assets installed from the npm registry at setup and served by us (no CDN)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, abort, send_from_directory

from config import ROOT

NODE_MODULES = ROOT / "node_modules"
SWAGGER_UI = NODE_MODULES / "swagger-ui-dist"
# The dashboard's browser libraries: package -> the folder of its built files.
DASHBOARD_VENDOR = {
    "htmx": NODE_MODULES / "htmx.org" / "dist",
    "uplot": NODE_MODULES / "uplot" / "dist",
}

bp = Blueprint("assets", __name__)


def _serve(folder: Path, filename: str):
    if not folder.is_dir():
        abort(404)
    return send_from_directory(folder, filename, max_age=3600)


@bp.get("/api/docs/assets/<path:filename>")
def swagger_asset(filename: str):
    """Swagger UI's scripts and styles, from the swagger-ui-dist npm package."""
    return _serve(SWAGGER_UI, filename)


@bp.get("/assets/vendor/<package>/<path:filename>")
def vendor_asset(package: str, filename: str):
    """The dashboard's htmx and uPlot builds, from their npm packages."""
    folder = DASHBOARD_VENDOR.get(package)
    if folder is None:
        abort(404)
    return _serve(folder, filename)
