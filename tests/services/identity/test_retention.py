"""Issue 18, finding 10: spent sign-in and OAuth rows are purged by the maintenance job;
live ones stay. On SQLite and PostgreSQL."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta

from models import LoginCode, RevokedSession, SignInEvent, User
from models.base import utcnow
from models.oauth import Approval, AuthorizationCode, OAuthClient, OAuthToken
from services.platform import runtime
from worker import maintenance

OLD = timedelta(days=30)


def _code(email: str, *, age: timedelta, consumed: bool = False) -> LoginCode:
    created = utcnow() - age
    return LoginCode.create(email=email, code_hash=secrets.token_hex(32),
                            link_hash=secrets.token_hex(32), created_at=created,
                            expires_at=created + timedelta(minutes=10),
                            consumed_at=created if consumed else None)


def _client(name: str, *, age: timedelta) -> OAuthClient:
    return OAuthClient.create(client_id=f"{name}-{uuid.uuid4()}", kind="registered",
                              redirect_uris='["http://127.0.0.1/cb"]',
                              grant_types="authorization_code refresh_token",
                              response_types="code", token_endpoint_auth_method="none",
                              created_at=utcnow() - age)


def _token(client: OAuthClient, approval: Approval, *, access_age: timedelta,
           refresh_left: timedelta | None, revoked_age: timedelta | None = None) -> OAuthToken:
    now = utcnow()
    return OAuthToken.create(
        access_token_hash=secrets.token_hex(32), refresh_token_hash=secrets.token_hex(32),
        client=client, user=approval.user, approval=approval, scope="read:account",
        resource="http://127.0.0.1/api", family_id=uuid.uuid4(), created_at=now - access_age,
        access_expires_at=now - access_age + timedelta(hours=1),
        refresh_expires_at=now + refresh_left if refresh_left is not None else None,
        revoked_at=now - revoked_age if revoked_age is not None else None)


def _auth_code(client: OAuthClient, approval: Approval, *, age: timedelta) -> AuthorizationCode:
    created = utcnow() - age
    return AuthorizationCode.create(
        code_hash=secrets.token_hex(32), client=client, user=approval.user, approval=approval,
        redirect_uri="http://127.0.0.1/cb", scope="read:account",
        resource="http://127.0.0.1/api", code_challenge="x" * 43, code_challenge_method="S256",
        family_id=uuid.uuid4(), created_at=created, expires_at=created + timedelta(minutes=1))


def test_purge_deletes_spent_rows_and_keeps_live_ones(app, bound_db, user):
    spent_codes = [_code("a@example.com", age=OLD), _code("b@example.com", age=OLD,
                                                          consumed=True)]
    live_code = _code("c@example.com", age=timedelta(minutes=1))
    recent_used = _code("d@example.com", age=timedelta(hours=1), consumed=True)
    SignInEvent.create(kind="miss", email="a@example.com", ip="10.0.0.1",
                       created_at=utcnow() - timedelta(hours=2))
    counted = SignInEvent.create(kind="miss", email="a@example.com", ip="10.0.0.1",
                                 created_at=utcnow() - timedelta(minutes=5))
    RevokedSession.create(jti=uuid.uuid4().hex, user=user,
                          expires_at=utcnow() - timedelta(minutes=1))
    still_revoked = RevokedSession.create(jti=uuid.uuid4().hex, user=user,
                                          expires_at=utcnow() + timedelta(hours=3))

    # A stranger's registrations nobody ever approved: gone once old.
    abandoned = _client("abandoned", age=OLD)
    fresh = _client("fresh", age=timedelta(minutes=5))
    # An app in use: its approval, live token and client stay; its dead rows go.
    used = _client("used", age=OLD)
    approval = Approval.create(user=user, client=used, scope="read:account",
                               created_at=utcnow() - OLD, updated_at=utcnow() - OLD)
    live_token = _token(used, approval, access_age=timedelta(minutes=5),
                        refresh_left=timedelta(days=20))
    expired_token = _token(used, approval, access_age=OLD * 3, refresh_left=-OLD)
    revoked_token = _token(used, approval, access_age=OLD, refresh_left=timedelta(days=1),
                           revoked_age=OLD)
    old_code = _auth_code(used, approval, age=OLD)
    # An app the user revoked long ago: approval, tokens and client go.
    dropped = _client("dropped", age=OLD * 2)
    other = User.create(email=f"{secrets.token_hex(4)}@example.com")
    dropped_approval = Approval.create(user=other, client=dropped, scope="read:account",
                                       created_at=utcnow() - OLD * 2,
                                       updated_at=utcnow() - OLD, revoked_at=utcnow() - OLD)
    _token(dropped, dropped_approval, access_age=OLD * 2, refresh_left=timedelta(days=1),
           revoked_age=OLD)

    counts = maintenance.purge()

    assert runtime.runtime().settings.sign_in.retention_days == 7
    assert counts["login_codes"] == 2 and counts["sign_in_events"] == 1
    assert not LoginCode.select().where(LoginCode.id.in_([c.id for c in spent_codes])).exists()
    assert {c.id for c in LoginCode.select()} == {live_code.id, recent_used.id}
    assert [e.id for e in SignInEvent.select()] == [counted.id]
    assert [r.id for r in RevokedSession.select()] == [still_revoked.id]
    assert {t.id for t in OAuthToken.select()} == {live_token.id}
    assert expired_token.id not in {t.id for t in OAuthToken.select()}
    assert revoked_token.id not in {t.id for t in OAuthToken.select()}
    assert not AuthorizationCode.select().where(AuthorizationCode.id == old_code.id).exists()
    assert [a.id for a in Approval.select()] == [approval.id]
    assert {c.id for c in OAuthClient.select()} == {fresh.id, used.id}
    assert abandoned.id not in {c.id for c in OAuthClient.select()}
    # A second run finds nothing more to do.
    assert set(maintenance.purge().values()) <= {0}
