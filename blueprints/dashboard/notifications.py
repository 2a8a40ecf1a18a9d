"""The notification centre at /dashboard/notifications: the bell's unread count (a partial the
top bar loads), the list, marking read (services/notifications/inbox.py)."""

from __future__ import annotations

from flask import render_template, request

from blueprints.dashboard.base import bp, current_principal
from services.notifications import inbox


@bp.get("/notifications/bell")
def notifications_bell() -> str:
    """The top bar's bell with the unread count."""
    return render_template("dashboard/_bell.html",
                           unread=inbox.unread_count(current_principal().user))


def _page() -> str:
    user = current_principal().user
    return render_template("dashboard/notifications.html",
                           items=inbox.list_notifications(user, limit=100).items,
                           unread=inbox.unread_count(user))


@bp.get("/notifications")
def notifications_page() -> str:
    """The user's notifications, newest first."""
    return _page()


@bp.post("/notifications/read")
def notifications_read() -> str:
    """Mark one notification (``id``) or all of them read; the list again."""
    chosen = request.form.get("id")
    inbox.mark_read(current_principal().user, [chosen] if chosen else None)
    return _page()
