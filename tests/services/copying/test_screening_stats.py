"""The screened leaderboard's flags from fills, pure (issue 46): each flag is raised by the
pattern it names, with the numbers behind it, and not by the others' patterns."""

from __future__ import annotations

from decimal import Decimal

import config
from services.copying.mirror import TargetFill
from services.copying.screening_stats import fill_stats, flags
from venue.models import Side

D = Decimal
NOW = 1_800_000_000
LIMITS = config.ScreeningConfig()  # the defaults, as config.load(env={}) has them


def _fill(n: int, at: int, side: Side, size: str, price: str, *, token: str = "yes",
          market: str = "m1") -> TargetFill:
    return TargetFill(key=f"k{n}", wallet="0xabc", token_id=token, side=side, size=D(size),
                      price=D(price), timestamp=at, condition_id=market, outcome="Yes",
                      outcome_index=0, market_slug=market, tx_hash=f"0x{n}",
                      usdc=D(size) * D(price))


def _raised(fills: list[TargetFill], *, edge: str = "0", copier: str = "0",
            roles: list[str | None] | None = None, limits=LIMITS) -> dict:
    stats = fill_stats(fills, {}, roles or [None] * len(fills), limits.mm_quote_seconds)
    return flags(stats, D(edge), D(copier), NOW, limits)


def _quoting(pairs: int) -> list[TargetFill]:
    """A market maker: each minute its bid and its ask are hit in the same second."""
    fills = []
    for n in range(pairs):
        at = NOW - 3600 + 60 * n
        fills += [_fill(2 * n, at, Side.BUY, "100", "0.49"),
                  _fill(2 * n + 1, at + 1, Side.SELL, "100", "0.51")]
    return fills


def test_a_market_maker_quotes_both_sides():
    raised = _raised(_quoting(15))
    assert raised["market_maker"] == {"two_sided_share": D(1), "maker_share": None,
                                      "threshold": D("0.5"), "quote_seconds": 2}
    assert "wash_like" not in raised  # its two sides trade at different prices
    assert "thin_history" not in raised and "inactive" not in raised


def test_mostly_taker_fills_are_not_market_making():
    fills = _quoting(15)
    roles = ["taker"] * 20 + ["maker"] * 10
    assert "market_maker" not in _raised(fills, roles=roles)
    assert "market_maker" in _raised(fills, roles=["maker"] * 30)


def test_a_scalper_is_high_frequency_not_a_market_maker():
    fills = []
    for n in range(12):
        at = NOW - 7200 + 300 * n
        fills += [_fill(2 * n, at, Side.BUY, "100", "0.60"),
                  _fill(2 * n + 1, at + 30, Side.SELL, "100", "0.62")]
    raised = _raised(fills)
    assert raised["high_frequency"] == {"median_hold_seconds": 30, "round_trips": 12,
                                        "max_median_hold_seconds": 300, "min_round_trips": 10}
    assert "market_maker" not in raised


def test_a_patient_trader_with_few_round_trips_is_not_high_frequency():
    fills = [_fill(n, NOW - 86400 + 10 * n, Side.BUY, "10", "0.4") for n in range(20)]
    fills += [_fill(99, NOW - 3600, Side.SELL, "200", "0.6")]
    stats = fill_stats(fills, {}, [None] * len(fills), 2)
    assert stats.round_trips == 1 and stats.median_hold_seconds is not None
    assert "high_frequency" not in flags(stats, D(0), D(0), NOW, LIMITS)


def test_self_matching_is_wash_like():
    fills = []
    for n in range(10):
        at = NOW - 3600 + 60 * n
        fills += [_fill(2 * n, at, Side.BUY, "500", "0.5"),
                  _fill(2 * n + 1, at, Side.SELL, "500", "0.5")]
    raised = _raised(fills)
    assert raised["wash_like"] == {"wash_share": D(1), "threshold": D("0.2")}


def test_toxic_when_the_delay_eats_more_than_the_set_share_of_the_edge():
    fills = _quoting(15)
    raised = _raised(fills, edge="100", copier="80")
    assert raised["toxic_for_copying"] == {"edge_usdc": D(100), "copier_pnl_usdc": D(80),
                                           "lost_share": D("0.2"), "threshold": D("0.15")}
    assert "toxic_for_copying" not in _raised(fills, edge="100", copier="90")
    assert "toxic_for_copying" not in _raised(fills, edge="-5", copier="-50")  # no edge


def test_thin_and_inactive_have_their_thresholds():
    old = [_fill(n, NOW - 10 * 86400 + n, Side.BUY, "10", "0.5") for n in range(3)]
    raised = _raised(old)
    assert raised["thin_history"] == {"fills": 3, "min_fills": 20}
    assert raised["inactive"] == {"days_since_last_fill": 9, "days": 7}
    from dataclasses import replace
    lenient = replace(LIMITS, thin_min_fills=3, inactive_days=10)
    assert _raised(old, limits=lenient) == {}
