"""Magic-code login and session JWTs.

``request_login`` emails a 6-digit code and a one-time link; ``verify_code`` and
``redeem_link`` turn either into a 24-hour session JWT (HS256 via authlib's joserfc,
signed with a key derived from SECRET_KEY). The first verification creates the
account. Codes live 10 minutes, are single use, are stored as keyed hashes, and
lock after 5 wrong tries.
"""

from __future__ import annotations

import logging
import re
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from models import LoginCode, User
from models.base import db, utcnow
from schemas.vocabulary import ALL_SCOPES, SCOPES
from services import errors, keyring, mailer, tiers
from services.principal import Principal, require_enabled

log = logging.getLogger(__name__)

CODE_TTL = timedelta(minutes=10)
MAX_CODE_ATTEMPTS = 5
SESSION_TTL = timedelta(hours=24)
JWT_ALGORITHM = "HS256"
LOGIN_LINK_PATH = "/dashboard/login"

_EMAIL_RE = re.compile(r"^[^@\s\"'<>,;]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$")
_CODE_RE = re.compile(r"^[0-9]{6}$")
_INVALID_CODE = "The code is invalid or expired; request a new one."


@dataclass(frozen=True)
class Session:
    """A signed-in session: the bearer JWT, when it expires, and whose it is."""

    token: str
    expires_at: datetime
    user: User
    token_type: str = "Bearer"


def normalize_email(raw: Any) -> str:
    """The canonical form of an address (trimmed, lower case); ValidationFailed if not one."""
    email = raw.strip().lower() if isinstance(raw, str) else ""
    if not email or len(email) > 320 or not _EMAIL_RE.match(email):
        raise errors.ValidationFailed("Validation failed: email.",
                                      fields={"email": ["Not a valid email address."]})
    return email


def _code_hash(settings: Mapping[str, Any], email: str, code: str) -> str:
    return keyring.keyed_hash(settings["SECRET_KEY"], "login-code", f"{email}\n{code}")


def _link_hash(settings: Mapping[str, Any], token: str) -> str:
    return keyring.keyed_hash(settings["SECRET_KEY"], "login-link", token)


def login_link(settings: Mapping[str, Any], token: str) -> str:
    """The one-time sign-in URL carrying ``token``."""
    return f"{settings['BASE_URL']}{LOGIN_LINK_PATH}?token={token}"


def request_login(email: str, settings: Mapping[str, Any]) -> None:
    """Email a fresh code and link to ``email`` (known or not); older open codes stop working."""
    email = normalize_email(email)
    code = f"{secrets.randbelow(1_000_000):06d}"
    link_token = secrets.token_urlsafe(32)
    now = utcnow()
    with db.atomic():
        # Only the newest code counts: a stolen older email is worthless.
        (LoginCode.update(consumed_at=now)
         .where(LoginCode.email == email, LoginCode.consumed_at.is_null())
         .execute())
        LoginCode.create(email=email, code_hash=_code_hash(settings, email, code),
                         link_hash=_link_hash(settings, link_token), created_at=now,
                         expires_at=now + CODE_TTL)
    link = login_link(settings, link_token)
    minutes = int(CODE_TTL.total_seconds() // 60)
    text = (f"Your copytrade sign-in code is {code}\n\n"
            f"Or open this link to sign in:\n{link}\n\n"
            f"The code and the link work once and expire in {minutes} minutes.\n"
            "If you did not ask to sign in, ignore this email.\n")
    smtp_url = settings.get("SMTP_URL")
    if not smtp_url:
        # No mail server configured (a laptop run): the operator reads the log.
        log.warning("SMTP_URL is not set; sign-in code for %s: %s (link: %s)", email, code, link)
        return
    message = mailer.build_message(settings.get("MAIL_FROM") or "copytrade <no-reply@localhost>",
                                   email, f"Your copytrade sign-in code: {code}", text)
    mailer.send(smtp_url, message)


def _open_code_for(email: str, now: datetime) -> LoginCode | None:
    return (LoginCode.select()
            .where(LoginCode.email == email, LoginCode.consumed_at.is_null(),
                   LoginCode.expires_at > now)
            .order_by(LoginCode.created_at.desc()).first())


def _consume(login: LoginCode, now: datetime) -> bool:
    """Mark ``login`` used, once: only one of two racing requests wins."""
    return bool(LoginCode.update(consumed_at=now)
                .where(LoginCode.id == login.id, LoginCode.consumed_at.is_null(),
                       LoginCode.attempts < MAX_CODE_ATTEMPTS, LoginCode.expires_at > now)
                .execute())


def verify_code(email: str, code: str, settings: Mapping[str, Any]) -> Session:
    """Exchange an emailed code for a session; InvalidToken (401) when wrong, used or expired."""
    email = normalize_email(email)
    if not isinstance(code, str) or not _CODE_RE.match(code.strip()):
        raise errors.ValidationFailed("Validation failed: code.",
                                      fields={"code": ["Must be the 6-digit code."]})
    code = code.strip()
    now = utcnow()
    login = _open_code_for(email, now)
    if login is None:
        raise errors.InvalidToken(_INVALID_CODE)
    if login.attempts >= MAX_CODE_ATTEMPTS:
        raise errors.InvalidToken("Too many wrong codes; request a new one.")
    if not keyring.same(login.code_hash, _code_hash(settings, email, code)):
        # Count the miss atomically so parallel guesses cannot exceed the limit.
        (LoginCode.update(attempts=LoginCode.attempts + 1)
         .where(LoginCode.id == login.id).execute())
        left = MAX_CODE_ATTEMPTS - login.attempts - 1
        raise errors.InvalidToken(_INVALID_CODE if left > 0
                                  else "Too many wrong codes; request a new one.")
    if not _consume(login, now):
        raise errors.InvalidToken(_INVALID_CODE)
    return issue_session(_user_for(email), settings)


def redeem_link(token: str, settings: Mapping[str, Any]) -> Session:
    """Exchange the emailed link's token for a session; InvalidToken (401) when not valid."""
    if not isinstance(token, str) or not token.strip():
        raise errors.InvalidToken(_INVALID_CODE)
    now = utcnow()
    login = LoginCode.get_or_none(LoginCode.link_hash == _link_hash(settings, token.strip()))
    if login is None or not _consume(login, now):
        raise errors.InvalidToken(_INVALID_CODE)
    return issue_session(_user_for(login.email), settings)


def _user_for(email: str) -> User:
    """The account for ``email``, created on the default tier at its first verified sign-in.

    InvalidToken (401) when the operator disabled it.
    """
    user = User.get_or_none(User.email == email)
    if user is None:
        try:
            with db.atomic():
                return User.create(email=email, tier=tiers.default_tier())
        except peewee.IntegrityError:  # a parallel first sign-in created it
            user = User.get(User.email == email)
    require_enabled(user)
    return user


def _jwt_key(settings: Mapping[str, Any]) -> OctKey:
    return OctKey.import_key(keyring.derive_key(settings["SECRET_KEY"], "session-jwt"))


def _issuer(settings: Mapping[str, Any]) -> str:
    return str(settings.get("BASE_URL") or "copytrade")


def issue_session(user: User, settings: Mapping[str, Any], *,
                  now: datetime | None = None) -> Session:
    """A signed session JWT for ``user``: full account scope, valid SESSION_TTL."""
    issued = (now or utcnow()).astimezone(UTC).replace(microsecond=0)
    expires = issued + SESSION_TTL
    claims = {
        "iss": _issuer(settings), "sub": str(user.id), "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()), "jti": uuid.uuid4().hex, "typ": "session",
        "scope": " ".join(SCOPES),
    }
    token = jwt.encode({"alg": JWT_ALGORITHM, "typ": "JWT"}, claims, _jwt_key(settings))
    return Session(token=token, expires_at=expires, user=user)


def resolve_session(token: str, settings: Mapping[str, Any]) -> Principal:
    """The Principal of a session JWT; InvalidToken (401) when forged, expired or orphaned."""
    try:
        decoded = jwt.decode(token, _jwt_key(settings), algorithms=[JWT_ALGORITHM])
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": _issuer(settings)},
            sub={"essential": True}, exp={"essential": True},
            typ={"essential": True, "value": "session"},
        ).validate(decoded.claims)
        user_id = uuid.UUID(str(decoded.claims["sub"]))
    except (JoseError, ValueError, TypeError) as exc:
        raise errors.InvalidToken() from exc
    user = User.get_or_none(User.id == user_id)
    if user is None:
        raise errors.InvalidToken()
    return Principal(user=user, kind="session", scopes=ALL_SCOPES)
