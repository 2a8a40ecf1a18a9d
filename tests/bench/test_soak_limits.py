"""The soak's "no stop, budget or cap exceeded" row on a config's stored records (both
databases): a loss-stopped config is held to what its stop promises (bench/soak/stops.py),
and the budgets and caps read the stored sides as they are written ("BUY", "SELL")."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from bench.soak.invariants import limits_held
from models.base import utcnow
from models.copying import CopyConfig, CopyIntent, CopyPosition
from services.copying.configs import reports

T0 = utcnow() - timedelta(minutes=10)
ROW = "no stop, budget or cap exceeded beyond one in-flight copy"


@dataclass
class Follower:
    """What the row reads of a soak follower; its PnL is the app's own (``reports.pnl``)."""

    config_id: Any
    user: Any
    name: str = "f05"
    profile: dict[str, str] = field(default_factory=lambda: {"name": "loss stop"})

    def call(self, method: str, path: str) -> Any:
        """The follower's GET of its config's PnL, answered by the service the API calls."""
        figures = reports.pnl(self.user, self.config_id)

        class Answer:
            def json(self) -> dict[str, Any]:
                return {"total_pnl": str(figures["total_pnl"])}

        return Answer()


def _config(user: Any, **fields: Any) -> CopyConfig:
    values = {"size_multiplier": Decimal("0.05"), "max_position_usdc": Decimal(20),
              "price_deviation_bps": 200, "paper_trading": False, "is_active": True,
              "started_at": T0, **fields}
    return CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                             blocked_categories="[]", **values)


def _intent(config: CopyConfig, at: datetime, *, kind: str = "mirror", side: str | None,
            token: str = "tok-a", status: str = "filled", size: str = "0", price: str = "0",
            fee: str = "0", sold_cost: str | None = None, usdc: str | None = None,
            limit: str | None = None, reason: str | None = None, detail: str = "",
            settled: datetime | None = None, filled: str | None = None) -> CopyIntent:
    done = side is not None and status != "failed"  # a refused order fills nothing
    return CopyIntent.create(
        config=config.id, user_id=config.user_id, kind=kind,
        target_trade_key=f"{kind}:{uuid.uuid4()}", target_address=config.target_address,
        token_id=token, status=status, side=side, size=Decimal(size) if side else None,
        price=Decimal(limit or price) if side else None,
        usdc=Decimal(usdc) if usdc else None,
        filled_size=Decimal(filled or size) if done else None,
        filled_price=Decimal(price) if done else None, fee=Decimal(fee) if done else None,
        sold_cost=Decimal(sold_cost) if sold_cost else None, reason=reason, detail=detail,
        seen_at=at, created_at=at, settled_at=settled or at)


def _position(config: CopyConfig, token: str, realized: str, at: datetime,
              shares: str = "0", cost: str = "0") -> None:
    CopyPosition.create(config=config.id, token_id=token, shares=Decimal(shares),
                        cost_usdc=Decimal(cost), realized_pnl=Decimal(realized), updated_at=at)


def _stopped(user: Any, stop_pnl: str) -> tuple[CopyConfig, datetime]:
    """A config whose 1 pUSD loss stop fired at ``stop_pnl``, its buys of tok-a (20 shares
    at 0.50) and tok-b (10 at 0.40) made before."""
    at = T0 + timedelta(minutes=2)
    config = _config(user, loss_stop_usdc=Decimal(1), close_positions_on_stop=True,
                     is_active=False, stopped_reason="loss_stop", stopped_at=at)
    _intent(config, T0 + timedelta(seconds=10), side="BUY", size="20", price="0.5")
    _intent(config, T0 + timedelta(seconds=20), side="BUY", token="tok-b", size="10",
            price="0.4")
    _intent(config, at, kind="loss_stop", side=None, status="skipped", reason="loss_stop",
            detail=f"Total PnL {stop_pnl} pUSD reached the loss stop of -1.00 pUSD. "
                   "Closing 1 position at market.")
    return config, at


def _close(config: CopyConfig, at: datetime, price: str) -> None:
    """The stop's close of tok-a's 20 shares, marked at its 0.47 bid, limited at 0.46."""
    _intent(config, at, kind="loss_stop", side="SELL", size="20", price=price,
            limit="0.46", usdc="9.40", sold_cost="10",
            detail="Loss stop: sell all 20.00 shares at market, no lower than 0.46 "
                   "(best bid 0.47).", settled=at + timedelta(seconds=1))


def _row(config: CopyConfig, user: Any) -> Any:
    return limits_held(None, [Follower(config.id, user)], 0)


def test_a_resolution_in_the_check_that_fired_is_what_a_stop_may_overshoot(bound_db, user):
    # tok-b resolved to 0 (-4.00) in the check that fired; tok-a (marked at its 0.47 bid,
    # -0.60) is sold at 0.47: the stop saw -4.60 and the config ends there.
    config, at = _stopped(user, "-4.60")
    _position(config, "tok-b", "-4.00", at - timedelta(seconds=1))
    _close(config, at, "0.47")
    _position(config, "tok-a", "-0.60", at + timedelta(seconds=1))

    row = _row(config, user)

    assert row.ok, row.failures
    figures = row.figures["f05 loss stop"]
    assert figures["stop saw"] == "-4.60" and figures["pnl"] == "-4.600000"
    assert figures["resolution in the check that fired"] == "-4.000000"
    assert figures["exit"] == "0.000000" and figures["past the stop"] == "3.600000"
    assert row.figures["worst past a loss stop"] == Decimal("3.6")


def test_what_a_refused_or_part_filled_close_leaves_rides_on_from_the_stops_mark(
        bound_db, user):
    # Seed 4307's f05: tok-b's market resolved between the check (bid 0.45, +0.50) and its
    # close, which the venue refused; it then paid 0 (-4.00). tok-a's close (bid 0.47,
    # -0.60) sold all but 0.1 share, which paid 0 too. With -1.00 realized before, the
    # stop saw -1.10 and the config ends at -5.647: 4.547 under that, all of it what the
    # closes could not sell, at the stop's mark (tok-b's bid from its usdc, cut to the cent).
    config, at = _stopped(user, "-1.10")
    _position(config, "tok-c", "-1.00", T0 + timedelta(seconds=30))
    _intent(config, at, kind="loss_stop", side="SELL", size="20", filled="19.9",
            price="0.47", limit="0.46", usdc="9.40", sold_cost="9.95",
            detail="Loss stop: sell all 20.00 shares at market, no lower than 0.46 "
                   "(best bid 0.47).", settled=at + timedelta(seconds=1))
    _intent(config, at, kind="loss_stop", side="SELL", token="tok-b", status="failed",
            size="10", limit="0.44", usdc="4.50", reason="order_refused",
            detail="market is closed, orders are not accepted",
            settled=at + timedelta(seconds=1))
    _position(config, "tok-a", "-0.647", at + timedelta(minutes=3))
    _position(config, "tok-b", "-4.00", at + timedelta(minutes=3))

    row = _row(config, user)

    assert row.ok, row.failures
    figures = row.figures["f05 loss stop"]
    assert figures["pnl"] == "-5.647000" and figures["past the stop"] == "4.647000"
    assert figures["left open"] == "4.557000"  # 0.1 x 0.47 + 10 x (4.50 + 0.01) / 10
    assert figures["exit"] == "0.000000"

    # a close the venue refused is no licence: losing past what it left open still fails
    _position(config, "tok-d", "-0.02", at + timedelta(minutes=4))
    failures = _row(config, user).failures
    assert any("after the stop" in failure for failure in failures), failures


def test_a_stopped_config_losing_past_its_exit_fails_the_row(bound_db, user):
    # The stop saw -1.10, its close sold tok-a at its bid: the config cannot end at -8.
    config, at = _stopped(user, "-1.10")
    _close(config, at, "0.47")
    _position(config, "tok-a", "-0.60", at + timedelta(seconds=1))
    _position(config, "tok-b", "-7.40", at + timedelta(minutes=3))  # later: not the stop's

    row = _row(config, user)

    assert not row.ok
    assert any("after the stop" in failure for failure in row.failures), row.failures
    # tok-b was held at the stop and no close decided on it: it rode to its resolution
    assert any("tok-b... held at the stop, left open" in f for f in row.failures), row.failures


def test_a_buy_after_the_stop_and_a_close_under_its_limit_fail_the_row(bound_db, user):
    config, at = _stopped(user, "-1.10")
    _close(config, at, "0.40")
    _intent(config, at + timedelta(seconds=5), side="BUY", token="tok-c", size="5",
            price="0.5")
    _position(config, "tok-a", "-2.00", at + timedelta(seconds=1))

    failures = " | ".join(_row(config, user).failures)

    assert "1 buy(s) decided after the stop" in failures
    assert "filled at 0.40, under its limit 0.46" in failures


def test_budgets_and_caps_read_the_stored_sides(bound_db, user):
    # 3 buys of 5 pUSD against a total budget of 8 (one copy in flight allowed: 13).
    config = _config(user, total_budget_usdc=Decimal(8), max_position_usdc=Decimal(3))
    for n in range(3):
        _intent(config, T0 + timedelta(seconds=n), side="BUY", size="10", price="0.5")

    failures = " | ".join(limits_held(None, [Follower(config.id, user)], 0).failures)

    assert "spent 15.0 of a 8 budget" in failures
    assert "held 15.0 in tok-a..., cap 3" in failures


def test_a_payout_close_frees_the_exposure_cap(bound_db, user):
    user.max_total_exposure_usdc = Decimal(5)
    user.save()
    config = _config(user)
    _intent(config, T0, side="BUY", size="8", price="0.5")  # 4 held
    _position(config, "tok-a", "-4", T0 + timedelta(seconds=5))  # resolved: nothing held
    _intent(config, T0 + timedelta(seconds=10), side="BUY", token="tok-b", size="8",
            price="0.5")
    _position(config, "tok-b", "0", T0 + timedelta(seconds=10), shares="8", cost="4")

    row = limits_held(None, [Follower(config.id, user)], 0)
    assert row.ok, row.failures

    _intent(config, T0 + timedelta(seconds=20), side="BUY", token="tok-c", size="12",
            price="0.5")  # 4 + 6 held: past the cap, by less than one copy (6)
    _intent(config, T0 + timedelta(seconds=30), side="BUY", token="tok-d", size="12",
            price="0.5")  # 16 held
    failures = " | ".join(limits_held(None, [Follower(config.id, user)], 0).failures)
    assert "open against an exposure cap of 5" in failures
