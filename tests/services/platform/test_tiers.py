"""Tier limits: the configured table, unlimited tiers, the active-config quota others call."""

from __future__ import annotations

from types import MappingProxyType

import pytest

import config
from models import User
from services.platform import errors, tiers


def test_limits_come_from_the_configured_table(app):
    plans = tiers.configured()
    for tier, row in config.TIER_LIMITS.items():
        limits = tiers.limits_for(tier)
        assert (limits.max_active_configs, limits.max_api_keys) == (
            row["max_active_configs"], row["max_api_keys"])
    # a tier the table lacks (removed from TIERS_FILE, say) gets the default tier's limits
    assert plans.default == tiers.default_tier() == "self-hosted"
    assert tiers.limits_for("platinum") == tiers.limits_for("self-hosted")
    assert tiers.names() == ("self-hosted", "free", "pro", "elite")


def test_limits_follow_a_given_table():
    plans = config.TierSettings(default="house", table=MappingProxyType({
        "house": config.PlanLimits(2, None), "free": config.PlanLimits(1, 3)}))
    assert tiers.limits_for("gone", plans) == tiers.TierLimits("house", 2, None)
    assert tiers.names(plans) == ("house", "free")


def test_active_config_quota_reads_the_current_tier(user):
    tiers.check_active_config_quota(user, 0)
    with pytest.raises(errors.TierLimitExceeded) as refused:
        tiers.check_active_config_quota(user, 1)
    assert refused.value.code == "tier_limit_exceeded"
    User.update(tier="pro").where(User.id == user.id).execute()
    tiers.check_active_config_quota(user, 9)
    with pytest.raises(errors.TierLimitExceeded):
        tiers.check_active_config_quota(user, 10)


def test_unlimited_tiers_are_never_checked(user, api_key):
    User.update(tier="self-hosted").where(User.id == user.id).execute()
    tiers.check_active_config_quota(user, 10_000)
    for _ in range(12):
        api_key("read:account")
    tiers.check_api_key_quota(user)
    assert tiers.count_api_keys(user.id) == 12
