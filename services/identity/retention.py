"""Purging what sign-in and OAuth leave behind, so anonymous requests cannot grow the
database without bound.

Run by the maintenance job (worker/maintenance.py). Rows go once they can no longer be
used and a retention (``AUTH_RETENTION_DAYS``, default 7) has passed, long enough to
investigate an incident: used or expired login codes; sign-in budget events older than
the budget window; revoked sessions whose JWT has expired anyway; OAuth authorization
codes, expired or revoked tokens, revoked approvals, and clients nobody approved or holds
a token of.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from models import LoginCode, RevokedSession
from models.base import utcnow
from models.oauth import Approval, AuthorizationCode, OAuthClient, OAuthToken
from services.identity import sign_in_budget


def purge(retention: timedelta, budget_window: timedelta, *,
          now: datetime | None = None) -> dict[str, int]:
    """Delete spent identity rows older than ``retention``; counts per table."""
    now = now or utcnow()
    cutoff = now - retention
    counts = {
        "login_codes": LoginCode.delete().where(
            (LoginCode.expires_at < cutoff)
            | (LoginCode.consumed_at.is_null(False) & (LoginCode.consumed_at < cutoff))
        ).execute(),
        "sign_in_events": sign_in_budget.purge_before(now - budget_window),
        "revoked_sessions": RevokedSession.delete().where(
            RevokedSession.expires_at < now).execute(),
        "oauth_codes": AuthorizationCode.delete().where(
            AuthorizationCode.expires_at < cutoff).execute(),
        # A rotated token is kept until its refresh token would have expired: reusing it
        # must still revoke its family.
        "oauth_tokens": OAuthToken.delete().where(
            (OAuthToken.revoked_at.is_null(False) & (OAuthToken.revoked_at < cutoff))
            | (OAuthToken.refresh_expires_at.is_null(False)
               & (OAuthToken.refresh_expires_at < cutoff))
            | (OAuthToken.refresh_expires_at.is_null()
               & (OAuthToken.access_expires_at < cutoff))
        ).execute(),
    }
    counts["oauth_approvals"] = Approval.delete().where(
        Approval.revoked_at.is_null(False), Approval.revoked_at < cutoff,
        Approval.id.not_in(OAuthToken.select(OAuthToken.approval)),
        Approval.id.not_in(AuthorizationCode.select(AuthorizationCode.approval))).execute()
    counts["oauth_clients"] = OAuthClient.delete().where(
        OAuthClient.created_at < cutoff,
        OAuthClient.id.not_in(Approval.select(Approval.client)),
        OAuthClient.id.not_in(OAuthToken.select(OAuthToken.client)),
        OAuthClient.id.not_in(AuthorizationCode.select(AuthorizationCode.client))).execute()
    return counts
