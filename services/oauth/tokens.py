"""OAuth 2.1 for hosted agents: scopes in plain words, tokens, approvals, the svco_ resolver.

Access tokens are ``svco_`` + 43 URL-safe characters (32 random bytes), valid
ACCESS_TOKEN_TTL; refresh tokens are ``svcr_`` + the same, valid
REFRESH_TOKEN_TTL and single use (each refresh rotates them; presenting a used
one revokes the whole family). Both are stored only as keyed hashes
(services/platform/keyring.py). An Approval records what a user consented to for one
client; revoking it revokes every token issued under it. The authlib glue (grants,
endpoints) is in services/oauth/server.py, clients in services/oauth/clients.py,
resource indicators in services/oauth/resources.py.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from models.base import db, utcnow
from models.oauth import Approval, AuthorizationCode, OAuthClient, OAuthToken
from models.user import User
from schemas.vocabulary import SCOPES
from services.oauth import resources as oauth_resources
from services.platform import errors, keyring
from services.platform.principal import Principal
from services.platform.runtime import runtime

ACCESS_TOKEN_PREFIX = "svco_"
REFRESH_TOKEN_PREFIX = "svcr_"
TOKEN_RANDOM_BYTES = 32
ACCESS_TOKEN_TTL = timedelta(hours=1)
REFRESH_TOKEN_TTL = timedelta(days=30)
CODE_TTL = timedelta(minutes=5)

# SPEC rule 8: what the consent screen ticks by default. wallet:write moves money:
# it is offered only when asked for, and never ticked in advance (rule 11).
RECOMMENDED_SCOPES: tuple[str, ...] = ("read:account", "read:positions", "read:trades",
                                       "read:markets", "trade:execute", "trade:cancel")
OPTIONAL_SCOPES: tuple[str, ...] = ("wallet:write",)

SCOPE_DESCRIPTIONS: dict[str, str] = {
    "read:account": "See your profile, balances and profit-and-loss summary",
    "read:positions": "See your open and paper positions",
    "read:trades": "See your trade history and fills",
    "read:markets": "Search markets and see order books, price history, your open orders "
                    "and leaderboards",
    "trade:execute": "Place orders, and create, start and stop copy-trading configs",
    "trade:cancel": "Cancel your resting orders",
    "wallet:write": "Move money: claim resolved positions and withdraw funds from your "
                    "trading wallet",
}


@dataclass(frozen=True)
class IssuedTokens:
    """A freshly issued token pair: the secrets (shown once) and the stored record."""

    access_token: str
    refresh_token: str | None
    expires_in: int
    scope: str
    record: OAuthToken

    def response(self) -> dict[str, Any]:
        """The RFC 6749 section 5.1 token response body."""
        body: dict[str, Any] = {"access_token": self.access_token, "token_type": "Bearer",
                                "expires_in": self.expires_in, "scope": self.scope}
        if self.refresh_token:
            body["refresh_token"] = self.refresh_token
        return body


def hash_secret(purpose: str, value: str) -> str:
    """The stored form of an OAuth secret (code, token, client secret) for ``purpose``."""
    return keyring.keyed_hash(runtime().settings.secret_key, f"oauth-{purpose}", value)


def ordered_scopes(scopes: Iterable[str]) -> list[str]:
    """Known scopes from ``scopes``, in canonical order, without repeats."""
    wanted = set(scopes)
    return [scope for scope in SCOPES if scope in wanted]


def clamp_scope(scope: str, approval: Approval) -> str:
    """``scope`` limited to what ``approval`` allows now: a narrower re-approval narrows the
    codes and tokens already issued under it (and refresh cannot bring a scope back)."""
    allowed = set(approval.scope.split())
    return " ".join(ordered_scopes(s for s in scope.split() if s in allowed))


def describe_scope(scope: str) -> str:
    """The plain-words description of ``scope`` shown on the consent screen."""
    return SCOPE_DESCRIPTIONS.get(scope, scope)


def new_secret(prefix: str) -> str:
    """A bearer secret: ``prefix`` + 32 random bytes, URL-safe."""
    return prefix + secrets.token_urlsafe(TOKEN_RANDOM_BYTES)


# ---- approvals -----------------------------------------------------------------------------


def record_approval(user: User, client: OAuthClient, scopes: Iterable[str], *,
                    now: datetime | None = None) -> Approval:
    """Store (or renew) the user's consent for ``client`` with exactly ``scopes``."""
    now = now or utcnow()
    scope = " ".join(ordered_scopes(scopes))
    with db.atomic():
        approval = Approval.get_or_none(Approval.user == user.id, Approval.client == client.id)
        if approval is None:
            return Approval.create(user=user, client=client, scope=scope, created_at=now,
                                   updated_at=now)
        (Approval.update(scope=scope, updated_at=now, revoked_at=None)
         .where(Approval.id == approval.id).execute())
    return Approval.get_by_id(approval.id)


def list_approvals(principal: Principal) -> list[Approval]:
    """The user's active approvals, most recently granted first (session only)."""
    principal.require_session()
    return list(Approval.select(Approval, OAuthClient).join(OAuthClient)
                .where(Approval.user == principal.user_id, Approval.revoked_at.is_null())
                .order_by(Approval.updated_at.desc(), Approval.id.desc()))


def revoke_approval(principal: Principal, approval_id: UUID) -> None:
    """Withdraw a consent and revoke its tokens and open codes; NotFound (404) if not yours."""
    principal.require_session()
    approval = Approval.get_or_none(Approval.id == approval_id,
                                    Approval.user == principal.user_id,
                                    Approval.revoked_at.is_null())
    if approval is None:
        raise errors.NotFound("No such approval.")
    now = utcnow()
    with db.atomic():
        Approval.update(revoked_at=now).where(Approval.id == approval.id).execute()
        (OAuthToken.update(revoked_at=now)
         .where(OAuthToken.approval == approval.id, OAuthToken.revoked_at.is_null()).execute())
        (AuthorizationCode.update(used_at=now)
         .where(AuthorizationCode.approval == approval.id,
                AuthorizationCode.used_at.is_null()).execute())


# ---- codes ---------------------------------------------------------------------------------


def new_code() -> str:
    """A fresh authorization code (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(TOKEN_RANDOM_BYTES)


def store_code(code: str, *, client: OAuthClient, user: User, approval: Approval,
               redirect_uri: str, scope: str, resource: str,
               code_challenge: str, code_challenge_method: str,
               now: datetime | None = None) -> AuthorizationCode:
    """Store a one-time authorization code (only its hash), valid CODE_TTL."""
    now = now or utcnow()
    return AuthorizationCode.create(
        code_hash=hash_secret("code", code), client=client, user=user,
        approval=approval, redirect_uri=redirect_uri, scope=scope, resource=resource,
        code_challenge=code_challenge, code_challenge_method=code_challenge_method,
        family_id=uuid.uuid4(), created_at=now, expires_at=now + CODE_TTL)


def find_code(code: str, client: OAuthClient) -> AuthorizationCode | None:
    """The usable code ``code`` of ``client``; a reused code revokes what it issued (None)."""
    record = AuthorizationCode.get_or_none(
        AuthorizationCode.code_hash == hash_secret("code", code))
    if record is None or record.client_id != client.id:
        return None
    if record.used_at is not None:
        # RFC 6749 4.1.2: a code used twice is likely stolen; revoke what it issued.
        revoke_family(record.family_id)
        return None
    if record.expires_at <= utcnow():
        return None
    return record


def consume_code(record: AuthorizationCode) -> bool:
    """Mark the code used, once: of two racing exchanges only one wins."""
    return bool(AuthorizationCode.update(used_at=utcnow())
                .where(AuthorizationCode.id == record.id,
                       AuthorizationCode.used_at.is_null()).execute())


# ---- tokens --------------------------------------------------------------------------------


def issue_tokens(*, client: OAuthClient, user: User, approval: Approval, scope: str,
                 resource: str, family_id: UUID,
                 with_refresh: bool, now: datetime | None = None) -> IssuedTokens:
    """Mint an access token (and a refresh token when ``with_refresh``) and store their hashes."""
    now = now or utcnow()
    access_token = new_secret(ACCESS_TOKEN_PREFIX)
    refresh_token = new_secret(REFRESH_TOKEN_PREFIX) if with_refresh else None
    record = OAuthToken.create(
        access_token_hash=hash_secret("access", access_token),
        refresh_token_hash=hash_secret("refresh", refresh_token)
        if refresh_token else None,
        client=client, user=user, approval=approval, scope=scope, resource=resource,
        family_id=family_id, created_at=now, access_expires_at=now + ACCESS_TOKEN_TTL,
        refresh_expires_at=now + REFRESH_TOKEN_TTL if refresh_token else None)
    return IssuedTokens(access_token=access_token, refresh_token=refresh_token,
                        expires_in=int(ACCESS_TOKEN_TTL.total_seconds()), scope=scope,
                        record=record)


def find_access_token(token: str) -> OAuthToken | None:
    """The record of an access token (valid or not)."""
    if not token.startswith(ACCESS_TOKEN_PREFIX):
        return None
    return OAuthToken.get_or_none(
        OAuthToken.access_token_hash == hash_secret("access", token))


def find_refresh_token(token: str) -> OAuthToken | None:
    """The record of a refresh token (valid or not)."""
    if not token.startswith(REFRESH_TOKEN_PREFIX):
        return None
    return OAuthToken.get_or_none(
        OAuthToken.refresh_token_hash == hash_secret("refresh", token))


def usable_refresh_token(token: str) -> OAuthToken | None:
    """The refresh token's record if it may be exchanged; a reused one revokes its family."""
    record = find_refresh_token(token)
    if record is None or record.revoked_at is not None:
        return None
    if record.rotated_at is not None:
        # OAuth 2.1 4.3.1: a rotated refresh token came back; someone holds a copy.
        revoke_family(record.family_id)
        return None
    if record.refresh_expires_at is None or record.refresh_expires_at <= utcnow():
        return None
    return record


def rotate(record: OAuthToken) -> bool:
    """Retire ``record``'s refresh token, once: a racing second exchange loses."""
    return bool(OAuthToken.update(rotated_at=utcnow())
                .where(OAuthToken.id == record.id, OAuthToken.rotated_at.is_null(),
                       OAuthToken.revoked_at.is_null()).execute())


def revoke_family(family_id: UUID) -> int:
    """Revoke every token of a family (one authorization and its rotations)."""
    return (OAuthToken.update(revoked_at=utcnow())
            .where(OAuthToken.family_id == family_id, OAuthToken.revoked_at.is_null())
            .execute())


def revoke_token(record: OAuthToken, *, whole_family: bool) -> None:
    """Revoke one token pair, or (for a refresh token) its whole family."""
    if whole_family:
        revoke_family(record.family_id)
        return
    (OAuthToken.update(revoked_at=utcnow())
     .where(OAuthToken.id == record.id, OAuthToken.revoked_at.is_null()).execute())


def resolve_for_resource(token: str, resource: str | None) -> Principal:
    """The Principal of an access token presented to ``resource``; InvalidToken (401) otherwise."""
    record = find_access_token(token)
    if record is None or record.revoked_at is not None or record.access_expires_at <= utcnow():
        raise errors.InvalidToken()
    if resource is None or record.resource != resource:
        raise errors.InvalidToken(
            "This OAuth token was issued for another resource (RFC 8707 audience).")
    scopes = clamp_scope(record.scope, record.approval).split()
    return Principal(user=record.user, kind="oauth", scopes=frozenset(scopes),
                     credential_id=record.id,
                     extra={"client_id": record.client.client_id, "resource": record.resource,
                            "approval_id": record.approval_id})


def resolve(token: str) -> Principal:
    """The ``svco_`` resolver: the token checked against the resource the request targets."""
    return resolve_for_resource(token, oauth_resources.request_resource.get())

