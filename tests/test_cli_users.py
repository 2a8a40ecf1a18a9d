"""``copytrade users``: list, set-tier, disable and enable, against the real test databases.

Each command runs in-process through click's CliRunner with the deployment's environment,
building its own runtime as an operator's shell would; the app under test sees the result.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest
import redis
from click.testing import CliRunner, Result
from eth_account import Account

from cli import main
from models import User
from models.base import utcnow
from models.copying import CopyConfig
from services.identity import auth
from services.platform import copy_control, runtime


@pytest.fixture
def operator(app, tmp_path, monkeypatch) -> Iterator[Callable[..., Result]]:
    """``operator(*args)`` runs ``copytrade ARGS`` against the app's database and Redis."""
    saved = runtime.runtime()  # each command installs its own runtime: restored afterwards
    built = app.extensions["runtime"]
    prefix = f"{built.settings.redis_prefix}cli-{secrets.token_hex(3)}:"
    for name, value in {"COPYTRADE_INSTANCE": str(tmp_path),
                        "DATABASE_URL": built.settings.database_url,
                        "REDIS_URL": built.redis_url, "REDIS_PREFIX": prefix,
                        "SECRET_KEY": built.settings.secret_key}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TIERS_FILE", raising=False)
    monkeypatch.delenv("DEFAULT_TIER", raising=False)

    def run(*args: str) -> Result:
        try:
            return CliRunner().invoke(main, list(args))
        finally:
            runtime.install(saved)

    run.prefix = prefix  # type: ignore[attr-defined]
    yield run
    runtime.install(saved)


def _active_config(user: User) -> CopyConfig:
    return CopyConfig.create(user=user.id, target_address=Account.create().address.lower(),
                             size_multiplier=Decimal(1), max_position_usdc=Decimal(100),
                             price_deviation_bps=500, paper_trading=True, is_active=True,
                             started_at=utcnow(), blocked_categories="[]")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_set_tier_raises_limits_and_me_shows_them(app, client, user, operator, api_key):
    token = auth.issue_session(user).token
    me = client.get("/api/users/me", headers=_bearer(token)).get_json()
    assert me["tier"] == "free"
    assert me["limits"] == {"max_active_configs": 1, "max_api_keys": 3}
    for _ in range(3):
        api_key("read:account")
    refused = client.post("/api/keys", headers=_bearer(token),
                          json={"name": "fourth", "scopes": ["read:account"]})
    assert refused.status_code == 403 and refused.get_json()["code"] == "tier_limit_exceeded"

    done = operator("users", "set-tier", user.email.upper(), "self-hosted")
    assert done.exit_code == 0, done.output
    assert "tier self-hosted (active configs unlimited, API keys unlimited)" in done.output
    me = client.get("/api/users/me", headers=_bearer(token)).get_json()
    assert me["tier"] == "self-hosted"
    assert me["limits"] == {"max_active_configs": None, "max_api_keys": None}
    minted = client.post("/api/keys", headers=_bearer(token),
                         json={"name": "fourth", "scopes": ["read:account"]})
    assert minted.status_code == 201, minted.data

    assert operator("users", "set-tier", user.email, "pro").exit_code == 0
    me = client.get("/api/users/me", headers=_bearer(token)).get_json()
    assert (me["tier"], me["limits"]["max_api_keys"]) == ("pro", 10)


def test_set_tier_refuses_unknown_tier_or_email(user, operator):
    unknown_tier = operator("users", "set-tier", user.email, "platinum")
    assert unknown_tier.exit_code != 0
    assert "No tier 'platinum'" in unknown_tier.output and "self-hosted" in unknown_tier.output
    assert User.get_by_id(user.id).tier == "free"
    unknown_user = operator("users", "set-tier", "nobody@example.com", "pro")
    assert unknown_user.exit_code != 0 and "nobody@example.com" in unknown_user.output


def test_list_shows_usage_against_limits(user, operator, api_key, bound_db):
    _active_config(user)
    api_key("read:account")
    other = User.create(email=f"{secrets.token_hex(4)}@example.com", tier="gone")
    text = operator("users", "list")
    assert text.exit_code == 0, text.output
    line = next(row for row in text.output.splitlines() if user.email in row)
    assert line.split()[1:] == ["free", "1/1", "1/3", "-"]
    assert "gone (unknown: self-hosted limits)" in text.output  # unknown tier: default's

    listed = operator("users", "list", "--json")
    assert listed.exit_code == 0, listed.output
    rows = {row["email"]: row for row in json.loads(listed.output)}
    assert rows[user.email] | {"disabled_at": None} == {
        **rows[user.email], "tier": "free", "effective_tier": "free",
        "max_active_configs": 1, "max_api_keys": 3, "active_configs": 1, "api_keys": 1}
    assert rows[other.email]["effective_tier"] == "self-hosted"
    assert rows[other.email]["max_api_keys"] is None


def test_disable_refuses_every_credential_and_stops_configs(app, client, user, operator,
                                                           api_key, bound_db):
    token = auth.issue_session(user).token
    key = api_key("read:account")
    config = _active_config(user)
    listener = redis.Redis.from_url(app.extensions["runtime"].redis_url).pubsub()
    listener.subscribe(copy_control.channel(operator.prefix))
    listener.get_message(timeout=1)  # the subscribe confirmation

    done = operator("users", "disable", user.email)
    assert done.exit_code == 0, done.output
    assert "disabled; stopped 1 copy config" in done.output
    stopped = CopyConfig.get_by_id(config.id)
    assert not stopped.is_active and stopped.stopped_at is not None
    nudge = copy_control.decode_message(listener.get_message(timeout=5))
    assert nudge == {"op": "copy.stop", "config_id": str(config.id)}  # executors end
    listener.close()

    for credential in (token, key):
        refused = client.get("/api/users/me", headers=_bearer(credential))
        assert refused.status_code == 401, refused.data
        assert refused.get_json()["code"] == "invalid_token"
    listed = json.loads(operator("users", "list", "--json").output)
    assert listed[0]["disabled_at"] is not None
    again = operator("users", "disable", user.email)  # idempotent
    assert again.exit_code == 0 and "stopped 0" in again.output

    assert operator("users", "enable", user.email).exit_code == 0
    for credential in (token, key):
        assert client.get("/api/users/me", headers=_bearer(credential)).status_code == 200
    assert not CopyConfig.get_by_id(config.id).is_active  # enabling restarts nothing



def test_a_start_resolved_before_disable_is_refused(user, operator, bound_db):
    from services.copying import configs
    from services.platform import errors

    # the request authenticated before the operator disabled the account: it holds the
    # user row it resolved then
    config = _active_config(user)
    CopyConfig.update(is_active=False).where(CopyConfig.id == config.id).execute()
    assert operator("users", "disable", user.email).exit_code == 0
    with pytest.raises(errors.InvalidToken):
        configs.start(user, config.id)
    assert not CopyConfig.get_by_id(config.id).is_active
