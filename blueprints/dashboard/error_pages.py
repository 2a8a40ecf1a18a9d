"""How the dashboard shows errors: the one mapping (blueprints/errors.py), our presentation.

htmx requests get an inline fragment carrying the API's ``code`` (registered with
``register_renderer("htmx", ...)``), swapped into the element the request named in
``X-Error-Target`` (the form's own message slot). Full-page requests get the error
page. Either way the code and status are those the REST API answers. (A missing session
never gets here: the dashboard's guard sends the browser to the sign-in page first.)
"""

from __future__ import annotations

import re

from flask import Response, make_response, render_template, request

from blueprints import errors as error_mapping
from blueprints.dashboard.base import bp
from services.platform import errors

_TARGET = re.compile(r"^#[A-Za-z][\w-]{0,80}$")


def render_fragment(err: errors.CopytradeError) -> Response:
    """An htmx request's error as an inline message, retargeted to the form's slot."""
    body = err.to_dict()
    html = render_template("dashboard/_error.html", message=body["error"], code=body["code"],
                           fields=body.get("fields") if isinstance(body.get("fields"), dict)
                           else None)
    response = make_response(html, err.status)
    for name, value in err.headers.items():
        response.headers[name] = value
    if err.retry_after is not None:
        response.headers["Retry-After"] = str(int(err.retry_after))
    target = request.headers.get("X-Error-Target", "")
    if _TARGET.match(target):
        response.headers["HX-Retarget"] = target
        response.headers["HX-Reswap"] = "innerHTML"
    return response


def handle(exc: BaseException) -> Response:
    """The dashboard's error handler: the shared mapping, then a fragment or a page."""
    response = error_mapping.handle(exc)
    if request.headers.get("HX-Request") or not response.is_json:
        return response
    body = response.get_json(silent=True) or {}
    page = make_response(render_template(
        "dashboard/error.html", message=body.get("error", "Error."),
        code=body.get("code", "internal_error"),
        fields=body.get("fields") if isinstance(body.get("fields"), dict) else None),
        response.status_code)
    for name in ("Retry-After", "Allow"):
        if name in response.headers:
            page.headers[name] = response.headers[name]
    return page


@bp.get("/<path:unknown>")
def not_found(unknown: str) -> Response:
    """A dashboard address naming no page: the error page in the dashboard's layout (the
    sign-in page first when signed out), not the API's JSON."""
    raise errors.NotFound("No such page.")
