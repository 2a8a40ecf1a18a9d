"""Tier limits: one table, the active-config quota others call."""

from __future__ import annotations

import pytest

import config
from models import User
from services import errors, tiers


def test_limits_come_from_the_config_table():
    for tier, row in config.TIER_LIMITS.items():
        limits = tiers.limits_for(tier)
        assert (limits.max_active_configs, limits.max_api_keys) == (
            row["max_active_configs"], row["max_api_keys"])
    assert tiers.limits_for("platinum").tier == "free"
    assert tiers.TIERS == ("free", "pro", "elite")


def test_active_config_quota_reads_the_current_tier(user):
    tiers.check_active_config_quota(user, 0)
    with pytest.raises(errors.TierLimitExceeded) as refused:
        tiers.check_active_config_quota(user, 1)
    assert refused.value.code == "tier_limit_exceeded"
    User.update(tier="pro").where(User.id == user.id).execute()
    tiers.check_active_config_quota(user, 9)
    with pytest.raises(errors.TierLimitExceeded):
        tiers.check_active_config_quota(user, 10)
