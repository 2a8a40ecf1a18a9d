"""One-click unsubscribe from notification email (RFC 8058) at /notifications/unsubscribe/<token>:
a mail client POSTs ``List-Unsubscribe=One-Click``; a person following the link gets a page
with one button. The token is the whole credential (services/notifications/email_links.py)."""

from __future__ import annotations

from flask import Blueprint, render_template

from services.notifications import email_links

bp = Blueprint("unsubscribe", __name__, url_prefix="/notifications")


@bp.get("/unsubscribe/<token>")
def confirm(token: str) -> tuple[str, int]:
    """The page with the button (a GET changes nothing: link scanners follow links)."""
    found = email_links.channel_for(token) is not None
    return render_template("unsubscribe.html", token=token, found=found, done=False), (
        200 if found else 404)


@bp.post("/unsubscribe/<token>")
def unsubscribe(token: str) -> tuple[str, int]:
    """Turn the email channel off (a mail client's one-click POST, or the page's button)."""
    done = email_links.unsubscribe(token)
    return render_template("unsubscribe.html", token=token, found=done, done=done), (
        200 if done else 404)
