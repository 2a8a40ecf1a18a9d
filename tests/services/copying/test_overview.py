"""The overview's word for each config's health (issue 29, "Overview"): breaker open, out of
funds, feed degraded, paused, copying or stopped; "out of funds" is the config card's own
(``configs.status``), so the home page and the configs page never disagree."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest

from models.base import utcnow
from models.copying import CopyIntent
from services.copying import configs, overview
from services.copying.mirror import INSUFFICIENT_BALANCE
from tests.services.copying.test_pnl_history import _config

ACTIVE, STOPPED = SimpleNamespace(is_active=True), SimpleNamespace(is_active=False)
RUNNING = {"executor_running": True, "detection": "feed", "breaker": {"state": "closed"},
           "out_of_funds": False}


@pytest.mark.parametrize(("config", "status", "word"), [
    (STOPPED, RUNNING, "stopped"),
    (ACTIVE, RUNNING, "copying"),
    (ACTIVE, {**RUNNING, "executor_running": False}, "paused"),
    (ACTIVE, {**RUNNING, "detection": "poll"}, "feed_degraded"),
    (ACTIVE, {**RUNNING, "detection": "poll", "out_of_funds": True}, "out_of_funds"),
    (ACTIVE, {**RUNNING, "out_of_funds": True, "breaker": {"state": "open"}}, "breaker_open"),
    (ACTIVE, {**RUNNING, "detection": "poll", "buys_paused": {"reason": "stop_unverified"}},
     "buys_paused"),
])
def test_one_word_worst_first(config, status, word):
    assert overview.health(config, status) == word
    assert word in overview.HEALTH


def _decision(config, status: str, reason: str | None, minutes_ago: int) -> None:
    at = utcnow() - timedelta(minutes=minutes_ago)
    CopyIntent.create(config=config.id, user_id=config.user_id,
                      target_trade_key=secrets.token_hex(8),
                      target_address=config.target_address, token_id="1", paper=True,
                      status=status, reason=reason, side="BUY", size=Decimal(5),
                      price=Decimal("0.5"), filled_size=Decimal(5) if status == "filled" else None,
                      filled_price=Decimal("0.5") if status == "filled" else None,
                      seen_at=at, created_at=at)


def test_a_skip_for_balance_is_out_of_funds_until_a_copy_fills(bound_db, user):
    config = _config(user)
    config.is_active = True
    config.save()
    assert configs.status(user, config.id)["out_of_funds"] is False
    _decision(config, "skipped", INSUFFICIENT_BALANCE, 2)
    status = configs.status(user, config.id)
    assert status["out_of_funds"] is True
    assert overview.health(config, status) == "out_of_funds"
    _decision(config, "filled", None, 1)  # funded again: a copy went through
    assert configs.status(user, config.id)["out_of_funds"] is False
