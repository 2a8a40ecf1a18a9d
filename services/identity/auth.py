"""Magic-code login, session JWTs, sign-out and step-up.

``request_login`` emails a 6-digit code and a one-time link; ``verify_code`` and
``redeem_link`` turn either into a 24-hour session JWT (HS256 via authlib's joserfc,
signed with a key derived from SECRET_KEY). The first verification creates the
account. Codes live 10 minutes, are single use, are stored as keyed hashes, and
lock after 5 wrong tries; across codes, services/identity/sign_in_budget.py bounds emails and
wrong codes per address and per client IP. A new email leaves earlier open codes valid;
using one retires the rest.

Sessions end early by ``sign_out`` (its ``jti`` is recorded as revoked) or
``sign_out_everywhere`` (``users.sessions_valid_after``). Moving money with a session, or
connecting the wallet money goes to, needs a step-up token: a 5-minute JWT bound to the
session, issued for a fresh confirmation code (``request_step_up`` then ``verify_step_up``).
"""

from __future__ import annotations

import logging
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from models import LoginCode, RevokedSession, User
from models.base import db, utcnow
from models.identity import SIGN_IN, STEP_UP
from schemas.vocabulary import ALL_SCOPES, SCOPES
from services.identity import sign_in_budget
from services.platform import credential_generation, errors, keyring, mailer, tiers
from services.platform.principal import Principal, require_enabled
from services.platform.runtime import runtime
from services.wallets import account_setup

log = logging.getLogger(__name__)

CODE_TTL = timedelta(minutes=10)
MAX_CODE_ATTEMPTS = 5
SESSION_TTL = timedelta(hours=24)
JWT_ALGORITHM = "HS256"
STEP_UP_HEADER = "X-Step-Up-Token"
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


def _code_hash(email: str, code: str) -> str:
    return keyring.keyed_hash(runtime().settings.secret_key, "login-code", f"{email}\n{code}")


def _link_hash(token: str) -> str:
    return keyring.keyed_hash(runtime().settings.secret_key, "login-link", token)


def _browser_hash(nonce: str) -> str:
    return keyring.keyed_hash(runtime().settings.secret_key, "login-browser", nonce)


def login_link(token: str) -> str:
    """The one-time sign-in URL carrying ``token``."""
    return f"{runtime().settings.base_url}{LOGIN_LINK_PATH}?token={token}"


def codes_by_mail() -> bool:
    """Whether codes go out by email (SMTP_URL set) rather than to the server's log."""
    return bool(runtime().settings.smtp_url)


def _send(email: str, subject: str, text: str, code: str, link: str | None) -> None:
    settings = runtime().settings
    smtp_url = settings.smtp_url
    if not smtp_url:
        # No mail server configured (a laptop run): the operator reads the log (the one
        # message services/platform/logs.py lets through unmasked).
        log.warning("SMTP_URL is not set; sign-in code for %s: %s (%s)", email, code,
                    f"link: {link}" if link else "confirmation code, for a step-up")
        return
    message = mailer.build_message(settings.mail_from, email, subject, text)
    mailer.send(smtp_url, message)


def _new_code(email: str, purpose: str, browser: str | None) -> tuple[str, str]:
    """Store a fresh code and link token for ``email``; (code, link token)."""
    code = f"{secrets.randbelow(1_000_000):06d}"
    link_token = secrets.token_urlsafe(32)
    now = utcnow()
    LoginCode.create(email=email, code_hash=_code_hash(email, code),
                     link_hash=_link_hash(link_token), purpose=purpose,
                     browser_hash=_browser_hash(browser) if browser else None,
                     created_at=now, expires_at=now + CODE_TTL)
    return code, link_token


def request_login(email: str, *, client_ip: str | None = None,
                  browser: str | None = None) -> None:
    """Email a fresh code and link to ``email`` (known or not), within its budgets.

    Earlier open codes keep working until used or expired: asking for a new email must not
    void a code its owner is about to type. Past the address's email budget nothing is sent
    and nothing is said (the answer does not reveal the address); past the client IP's,
    RateLimited (429). ``browser`` is the asking browser's nonce (the link remembers it).
    """
    email = normalize_email(email)
    if not sign_in_budget.take_email(email, client_ip):
        log.info("sign-in email budget spent for an address; nothing sent")
        return
    code, link_token = _new_code(email, SIGN_IN, browser)
    link = login_link(link_token)
    minutes = int(CODE_TTL.total_seconds() // 60)
    text = (f"Your copytrade sign-in code is {code}\n\n"
            f"Or open this link to sign in:\n{link}\n\n"
            f"The code and the link work once and expire in {minutes} minutes.\n"
            "If you did not ask to sign in, ignore this email.\n")
    _send(email, f"Your copytrade sign-in code: {code}", text, code, link)


def request_step_up(email: str, *, client_ip: str | None = None) -> None:
    """Email the account of ``email`` a confirmation code for moving money (no link).

    Within the same budgets as sign-in emails; an unknown address gets nothing, and the
    caller answers as if it had (the answer does not reveal accounts).
    """
    email = normalize_email(email)
    if not sign_in_budget.take_email(email, client_ip):
        log.info("sign-in email budget spent for an address; no step-up code sent")
        return
    if User.get_or_none(User.email == email) is None:
        return
    code, _ = _new_code(email, STEP_UP, None)
    minutes = int(CODE_TTL.total_seconds() // 60)
    text = (f"Your copytrade confirmation code is {code}\n\n"
            "Enter it to confirm a withdrawal, an API key that can move money, or connecting "
            "a wallet to your account.\n"
            f"It works once and expires in {minutes} minutes. If you did not ask for it, "
            "someone may be using your session: sign out everywhere.\n")
    _send(email, f"Your copytrade confirmation code: {code}", text, code, None)


def _open_codes(email: str, purpose: str, now: datetime) -> list[LoginCode]:
    return list(LoginCode.select()
                .where(LoginCode.email == email, LoginCode.purpose == purpose,
                       LoginCode.consumed_at.is_null(), LoginCode.expires_at > now)
                .order_by(LoginCode.created_at.desc()))


def _consume(login: LoginCode, now: datetime) -> bool:
    """Mark ``login`` used, once: only one of two racing requests wins."""
    return bool(LoginCode.update(consumed_at=now)
                .where(LoginCode.id == login.id, LoginCode.consumed_at.is_null(),
                       LoginCode.attempts < MAX_CODE_ATTEMPTS, LoginCode.expires_at > now)
                .execute())


def _retire_others(email: str, purpose: str, now: datetime) -> None:
    """Once one email's code or link is used, the others sent before it stop working."""
    (LoginCode.update(consumed_at=now)
     .where(LoginCode.email == email, LoginCode.purpose == purpose,
            LoginCode.consumed_at.is_null(), LoginCode.created_at <= now)
     .execute())


def _check_code(email: str, code: Any, purpose: str, client_ip: str | None) -> None:
    """Spend the matching open code of ``purpose``; 429 while locked, 401 when wrong."""
    if not isinstance(code, str) or not _CODE_RE.match(code.strip()):
        raise errors.ValidationFailed("Validation failed: code.",
                                      fields={"code": ["Must be the 6-digit code."]})
    attempt = sign_in_budget.begin_try(email, client_ip)
    now = utcnow()
    wanted = _code_hash(email, code.strip())
    codes = _open_codes(email, purpose, now)
    usable = [login for login in codes if login.attempts < MAX_CODE_ATTEMPTS]
    match = next((login for login in usable if keyring.same(login.code_hash, wanted)), None)
    if match is None:
        if usable:
            # Count the miss atomically so parallel guesses cannot exceed the limit.
            (LoginCode.update(attempts=LoginCode.attempts + 1)
             .where(LoginCode.id.in_([login.id for login in usable])).execute())
        left = max((MAX_CODE_ATTEMPTS - login.attempts - 1 for login in usable), default=0)
        raise errors.InvalidToken(_INVALID_CODE if left > 0 or not codes
                                  else "Too many wrong codes; request a new one.")
    if not _consume(match, now):
        raise errors.InvalidToken(_INVALID_CODE)
    attempt.succeeded()
    _retire_others(email, purpose, now)


def verify_code(email: str, code: str, *, client_ip: str | None = None) -> Session:
    """Exchange an emailed code for a session; InvalidToken (401) when wrong, used or
    expired; RateLimited (429) while the address or client IP is locked out."""
    email = normalize_email(email)
    _check_code(email, code, SIGN_IN, client_ip)
    return issue_session(_user_for(email))


@dataclass(frozen=True)
class LinkInfo:
    """Whose sign-in link a token is, and whether this browser asked for it."""

    email: str
    same_browser: bool


def link_info(token: Any, browser: str | None) -> LinkInfo | None:
    """The open link's account and whether ``browser`` asked for it; None if not open."""
    if not isinstance(token, str) or not token.strip():
        return None
    login = LoginCode.get_or_none(LoginCode.link_hash == _link_hash(token.strip()),
                                  LoginCode.purpose == SIGN_IN)
    now = utcnow()
    if (login is None or login.consumed_at is not None or login.expires_at <= now
            or login.attempts >= MAX_CODE_ATTEMPTS):
        return None
    same = bool(browser and login.browser_hash
                and keyring.same(login.browser_hash, _browser_hash(browser)))
    return LinkInfo(email=login.email, same_browser=same)


def redeem_link(token: str) -> Session:
    """Exchange the emailed link's token for a session; InvalidToken (401) when not valid."""
    if not isinstance(token, str) or not token.strip():
        raise errors.InvalidToken(_INVALID_CODE)
    now = utcnow()
    login = LoginCode.get_or_none(LoginCode.link_hash == _link_hash(token.strip()),
                                  LoginCode.purpose == SIGN_IN)
    if login is None or not _consume(login, now):
        raise errors.InvalidToken(_INVALID_CODE)
    _retire_others(login.email, SIGN_IN, now)
    return issue_session(_user_for(login.email))


def _user_for(email: str) -> User:
    """The account for ``email``, created on the default tier at its first verified sign-in;
    its trading setup is started if nobody started it (``account_setup``: a new account's
    deposit wallet made and its onboarding queued).

    InvalidToken (401) when the operator disabled it.
    """
    user = User.get_or_none(User.email == email)
    if user is None:
        try:
            with db.atomic():
                user = User.create(email=email, tier=tiers.default_tier())
        except peewee.IntegrityError:  # a parallel first sign-in created it
            user = User.get(User.email == email)
    require_enabled(user)
    # A new account's setup starts now, so trading straight after sign-in finds it under
    # way or done; accounts whose setup nobody started (made before this) catch up.
    account_setup.start(user)
    return user


def _jwt_key() -> OctKey:
    return OctKey.import_key(keyring.derive_key(runtime().settings.secret_key, "session-jwt"))


def _issuer() -> str:
    return runtime().settings.base_url


def _encode(claims: dict[str, Any]) -> str:
    return jwt.encode({"alg": JWT_ALGORITHM, "typ": "JWT"}, claims, _jwt_key())


def _decode(token: str, typ: str) -> dict[str, Any]:
    """The validated claims of one of our JWTs of type ``typ``; InvalidToken otherwise."""
    try:
        decoded = jwt.decode(token, _jwt_key(), algorithms=[JWT_ALGORITHM])
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": _issuer()},
            sub={"essential": True}, exp={"essential": True}, jti={"essential": True},
            typ={"essential": True, "value": typ},
        ).validate(decoded.claims)
        uuid.UUID(str(decoded.claims["sub"]))
        uuid.UUID(str(decoded.claims["jti"]))
    except (JoseError, ValueError, TypeError) as exc:
        raise errors.InvalidToken() from exc
    return dict(decoded.claims)


def _micros(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000 + moment.microsecond


def issue_session(user: User, *, now: datetime | None = None) -> Session:
    """A signed session JWT for ``user``: full account scope, valid SESSION_TTL."""
    moment = (now or utcnow()).astimezone(UTC)
    issued = moment.replace(microsecond=0)
    expires = issued + SESSION_TTL
    claims = {
        "iss": _issuer(), "sub": str(user.id), "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()), "jti": uuid.uuid4().hex, "typ": "session",
        "scope": " ".join(SCOPES),
        # The issue time to the microsecond: "sign out everywhere" compares against it.
        "iat_us": _micros(moment),
    }
    return Session(token=_encode(claims), expires_at=expires, user=user)


def resolve_session(token: str) -> Principal:
    """The Principal of a session JWT; InvalidToken (401) when forged, expired, signed out
    or orphaned."""
    claims = _decode(token, "session")
    user = User.get_or_none(User.id == uuid.UUID(str(claims["sub"])))
    if user is None:
        raise errors.InvalidToken()
    issued_us = claims.get("iat_us")
    if not isinstance(issued_us, int):
        issued_us = int(claims.get("iat") or 0) * 1_000_000
    if user.sessions_valid_after is not None and issued_us < _micros(
            user.sessions_valid_after):
        raise errors.InvalidToken("This session was signed out; sign in again.")
    jti = uuid.UUID(str(claims["jti"]))
    if RevokedSession.select().where(RevokedSession.jti == jti.hex).exists():
        raise errors.InvalidToken("This session was signed out; sign in again.")
    expires = datetime.fromtimestamp(int(claims["exp"]), UTC)
    return Principal(user=user, kind="session", scopes=ALL_SCOPES, credential_id=jti,
                     extra={"expires_at": expires})


def sign_out(principal: Principal) -> None:
    """End the principal's session: its JWT answers 401 from now on."""
    principal.require_session()
    if principal.credential_id is None:
        return
    expires = principal.extra.get("expires_at") or utcnow() + SESSION_TTL
    try:
        with db.atomic():
            RevokedSession.create(jti=principal.credential_id.hex, user=principal.user_id,
                                  expires_at=expires)
    except peewee.IntegrityError:  # signed out twice
        pass


def sign_out_everywhere(principal: Principal) -> None:
    """End every session of the principal's user, this one included."""
    principal.require_session()
    User.update(sessions_valid_after=utcnow()).where(User.id == principal.user_id).execute()
    credential_generation.bump()  # cached keys carry the account's row


@dataclass(frozen=True)
class StepUp:
    """Proof of a fresh code for one session: presented before moving money."""

    token: str
    expires_at: datetime


def step_up_ttl() -> timedelta:
    """How long a step-up token is valid (STEP_UP_SECONDS)."""
    return timedelta(seconds=runtime().settings.sign_in.step_up_seconds)


def issue_step_up(principal: Principal, *, now: datetime | None = None) -> StepUp:
    """A step-up token for the principal's session (no code checked: callers check one)."""
    principal.require_session()
    issued = (now or utcnow()).astimezone(UTC).replace(microsecond=0)
    expires = issued + step_up_ttl()
    claims = {
        "iss": _issuer(), "sub": str(principal.user_id), "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()), "jti": uuid.uuid4().hex, "typ": "step_up",
        # Bound to the session that proved the code: useless with any other credential.
        "sid": principal.credential_id.hex if principal.credential_id else "",
    }
    return StepUp(token=_encode(claims), expires_at=expires)


def verify_step_up(principal: Principal, code: Any, *,
                   client_ip: str | None = None) -> StepUp:
    """Exchange a fresh confirmation code for a step-up token bound to this session."""
    principal.require_session()
    _check_code(principal.user.email, code, STEP_UP, client_ip)
    return issue_step_up(principal)


def step_up_valid(principal: Principal, token: Any) -> bool:
    """True when ``token`` is a live step-up token of the principal's own session."""
    if not isinstance(token, str) or not token.strip():
        return False
    try:
        claims = _decode(token.strip(), "step_up")
    except errors.InvalidToken:
        return False
    session_id = principal.credential_id.hex if principal.credential_id else None
    return (claims["sub"] == str(principal.user_id) and bool(session_id)
            and claims.get("sid") == session_id)


def require_step_up(principal: Principal, token: Any) -> None:
    """Refuse (403 scope_required) a session without a live step-up token.

    API keys and OAuth tokens pass: a key holding ``wallet:write`` was itself minted with
    a step-up, and it is the scope that gates them.
    """
    if not principal.is_session or step_up_valid(principal, token):
        return
    raise errors.Forbidden(
        "This action needs a fresh confirmation code: request one with POST /api/auth/magic "
        "{email, purpose: \"step_up\"}, exchange it at POST /api/auth/step-up, and send the "
        f"token as {STEP_UP_HEADER}.")
