"""The screened leaderboard's store: every trader the venue ranks, replayed in the background.

A sweep (the ``screening.sweep`` job, on the replays' own queue, queued by each worker's
scheduler once per ``SCREENING_INTERVAL_SECONDS`` across workers) reads the venue's
leaderboards (PnL and volume; day, week, month, all), then looks at the traders whose last
look is oldest. A look reads only the fills since the row's ``cursor``; with none new (and a
replay younger than ``REFRESH_AFTER``) nothing more is read. Otherwise the window's fills
(the stored ones and the new) are replayed through ``DEFAULT_RULES`` at the deployment's
measured p50 and p95 detection delay, exactly as a copyability report over the same window
would (``copyability_reports.replay_numbers``), and the numbers, the flags
(``screening_stats``) and the fills are stored.

Every venue request a sweep makes is counted against ``SCREENING_VENUE_CALLS_PER_MINUTE``
(a Redis counter per minute, shared by every worker): a look that might not fit the rest of
the minute is left for the next sweep.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import redis

from chain.tokens import to_base_units
from config import ScreeningConfig
from models.base import utcnow
from models.copying import TraderScreening
from services.copying import copyability, copyability_reports, screening_stats
from services.copying import mirror as copying
from services.copying.configs.rules import validate_fields, with_defaults
from services.copying.screening_rows import DECIMALS, WINDOW
from services.platform import errors, jobs, venues
from services.platform.runtime import runtime
from venue.models import ActivityItem

log = logging.getLogger(__name__)

JOB = "screening.sweep"
JOB_TIMEOUT = 900
DEFAULT_RULES = {"size_multiplier": "1", "max_position_usdc": "100"}
PERIODS = ("DAY", "WEEK", "MONTH", "ALL")
ORDERS = ("PNL", "VOL")
BOARD_SIZE = 50  # the venue's largest leaderboard page
REFRESH_AFTER = timedelta(hours=1)  # marks move: replay again this often without new fills
LOOK_CALLS = 2  # the fills since the cursor, the positions
TOKEN_CALLS = 3  # per token: its market, its book, its price history


def default_rules() -> dict[str, Any]:
    """The rule set every trader is screened through: a copy config's defaults with a
    multiplier of 1 and positions capped at 100 pUSD."""
    clean = validate_fields({**DEFAULT_RULES, "target_address": "0x" + "0" * 40,
                             "paper_trading": True})
    fields = with_defaults(uuid.UUID(int=0), clean)
    return {name: fields.get(name) for name in copyability_reports.RULE_NAMES}


def units(amount: Decimal) -> int:
    """A reported amount (to the base unit) in integer base units."""
    return to_base_units(copyability.money(amount), DECIMALS)


# -- the budget --------------------------------------------------------------------------


def _budget_key(prefix: str, minute: int) -> str:
    return f"{prefix}screening-calls:{minute}"


def minute() -> int:
    """The minute the budget counts in (minutes since the epoch)."""
    return int(time.time() // 60)


def budget(client: redis.Redis, prefix: str, per_minute: int) -> dict[str, int]:
    """This minute's venue calls: used and allowed."""
    used = client.get(_budget_key(prefix, minute()))
    return {"used": int(used or 0), "per_minute": per_minute}


def take(calls: int) -> bool:
    """Count ``calls`` against this minute's budget; False (nothing counted) when they do
    not fit."""
    connection = jobs.connection()
    key = _budget_key(jobs.current_config().prefix, minute())
    used = connection.incrby(key, calls)
    connection.expire(key, 120)
    if used > runtime().settings.screening.venue_calls_per_minute:
        connection.decrby(key, calls)
        return False
    return True


# -- the ranked traders ------------------------------------------------------------------


def rank() -> int:
    """Read every leaderboard (when the budget allows) and store where each trader ranks;
    how many traders are ranked."""
    if not take(len(PERIODS) * len(ORDERS)):
        return 0
    client = venues.client()
    found: dict[str, dict[str, Any]] = {}
    try:
        boards = {(period, order): client.data.leaderboard(time_period=period, order_by=order,
                                                           limit=BOARD_SIZE)
                  for period in PERIODS for order in ORDERS}
    except Exception as exc:
        if errors.from_external(exc) is None:
            raise
        log.warning("screening: the venue's leaderboards could not be read: %s", exc)
        return 0  # the traders already ranked are still looked at
    for (period, order), entries in boards.items():
        for entry in entries:
            row = found.setdefault(entry.proxy_wallet.lower(),
                                   {"name": entry.user_name or "", "ranks": {}})
            row["ranks"][f"{period.lower()}:{'pnl' if order == 'PNL' else 'volume'}"] = \
                entry.rank
    now = utcnow()
    for address, row in found.items():
        updated = (TraderScreening.update(name=row["name"][:200],
                                          ranks=json.dumps(row["ranks"], sort_keys=True),
                                          ranked_at=now)
                   .where(TraderScreening.address == address).execute())
        if not updated:
            TraderScreening.insert(address=address, name=row["name"][:200],
                                   ranks=json.dumps(row["ranks"], sort_keys=True),
                                   ranked_at=now).on_conflict_ignore().execute()
    return len(found)


# -- one trader --------------------------------------------------------------------------


def _stored_fills(row: TraderScreening) -> list[ActivityItem]:
    items = []
    for raw in json.loads(row.fills or "[]"):
        for name in ("size", "price", "usdc_size", "fee"):
            if raw.get(name) is not None:
                raw[name] = Decimal(raw[name])
        items.append(ActivityItem(**raw))
    return items


def _fill_text(items: list[ActivityItem]) -> str:
    return json.dumps([{k: (str(v) if isinstance(v, Decimal) else v)
                        for k, v in asdict(item).items()} for item in items])


def _key(item: ActivityItem) -> tuple[str, str, str, int]:
    return (item.transaction_hash, item.asset, item.side, item.timestamp)


def screen(address: str, *, force: bool = False) -> bool:
    """Look at one trader: read its fills since the cursor and, when there are new ones (or
    the replay is old, or ``force``), replay the window and store it. False when the budget
    had no room (nothing read)."""
    address = address.lower()
    row = TraderScreening.get_or_none(TraderScreening.address == address)
    if row is None:
        row = TraderScreening.create(address=address)
    if not take(LOOK_CALLS):
        return False
    end = int(time.time())
    start = end - copyability_reports.WINDOWS[WINDOW] * 86400
    stored = [item for item in _stored_fills(row) if item.timestamp >= start]
    # The cursor's own second is read again (a fill may have landed in it after the last
    # read): what is stored from it on is replaced by what the venue answers now.
    since = start if row.cursor is None else max(start, row.cursor)
    kept = [item for item in stored if item.timestamp < since]
    read = copyability_reports.target_fills(address, since)
    changed = [_key(i) for i in read] != [_key(i) for i in stored if i.timestamp >= since]
    fresh = row.updated_at is not None and utcnow() - row.updated_at < REFRESH_AFTER
    if not changed and fresh and not force:
        TraderScreening.update(checked_at=utcnow()).where(
            TraderScreening.id == row.id).execute()
        return True
    items = kept + read
    tokens = sorted({item.asset for item in items})
    needed = len(tokens) * TOKEN_CALLS
    per_minute = runtime().settings.screening.venue_calls_per_minute
    if needed > per_minute:
        # It would never fit: say so and move on, or it would hold up every trader after it.
        TraderScreening.update(
            error=f"Its {len(tokens)} markets need {needed} venue requests, more than "
                  f"SCREENING_VENUE_CALLS_PER_MINUTE ({per_minute}) allows in a minute.",
            checked_at=utcnow()).where(TraderScreening.id == row.id).execute()
        return True
    if not take(needed):
        return False
    positions = venues.client().data.positions(address, limit=500)
    rules_fields = default_rules()
    rules = copying.CopyRules.from_fields(rules_fields)
    delays = copyability_reports.measured_delays()
    facts = copyability_reports.market_facts(tokens, start, end, rules.direction)
    numbers = copyability_reports.replay_numbers(items, positions, facts, rules, delays,
                                                 with_edge=True)
    _store(row, items, facts, numbers, delays, rules_fields, end)
    return True


def _store(row: TraderScreening, items: list[ActivityItem],
           facts: dict[str, copyability.TokenFacts], numbers: dict[str, Any],
           delays: dict[str, Any], rules_fields: dict[str, Any], now: int) -> None:
    fills = [copyability_reports.fill_of(item) for item in items]
    limits = runtime().settings.screening
    stats = screening_stats.fill_stats(fills, facts, [item.role for item in items],
                                       limits.mm_quote_seconds)
    trader = numbers["target"]["pnl_usdc"]
    p50, p95 = numbers["p50"]["expected_pnl_usdc"], numbers["p95"]["expected_pnl_usdc"]
    raised = screening_stats.flags(stats, numbers["instant_pnl_usdc"], p50, now, limits)
    kept = (p50 / trader * 10000).to_integral_value() if trader > 0 else None
    name = row.name or next((i.name or i.pseudonym for i in items if i.name or i.pseudonym),
                            "")
    report = {**numbers, "delays": delays, "rules": rules_fields, "window": WINDOW,
              "generated_at": utcnow()}
    TraderScreening.update(
        name=name[:200], copier_pnl_p50=units(p50), copier_pnl_p95=units(p95),
        trader_pnl=units(trader), kept_share_bps=None if kept is None else int(kept),
        win_rate_bps=None if stats.win_rate is None else int(stats.win_rate * 10000),
        trades=stats.trades, volume=units(stats.volume),
        avg_hold_seconds=stats.avg_hold_seconds,
        drawdown=units(numbers["p50"]["max_drawdown_usdc"]), markets=stats.markets,
        categories=json.dumps(list(stats.categories)),
        last_active_at=(None if stats.last_active is None
                        else datetime.fromtimestamp(stats.last_active, UTC)),
        fill_count=len(items), fills=_fill_text(items),
        cursor=max((i.timestamp for i in items), default=row.cursor),
        report=json.dumps(copyability_reports.encode(report), sort_keys=True),
        flags=json.dumps(copyability_reports.encode(raised), sort_keys=True), error=None,
        updated_at=utcnow(), checked_at=utcnow()).where(
        TraderScreening.id == row.id).execute()


# -- the sweep ---------------------------------------------------------------------------


def sweep() -> dict[str, int]:
    """Rank, then look at the traders looked at longest ago until the budget runs out."""
    ranked = rank()
    looked = 0
    order = (TraderScreening.checked_at.is_null(False), TraderScreening.checked_at,
             TraderScreening.address)
    # Read in full before the first replay: a lazily iterated select holds SQLite's read
    # snapshot across the loop's venue calls, and the row's write after another process's
    # commit then fails at once with "database is locked", the busy timeout notwithstanding.
    addresses = [row.address for row in TraderScreening.select(TraderScreening.address).where(
        TraderScreening.ranks != "{}").order_by(*order)]
    for address in addresses:
        try:
            if not screen(address):
                break  # the minute's budget is spent: the next sweep goes on
        except Exception as exc:
            known = errors.from_external(exc)
            log.warning("screening %s failed: %s", address, exc)
            TraderScreening.update(error=str(known or exc)[:500], checked_at=utcnow()).where(
                TraderScreening.address == address).execute()
            if known is None:
                raise
        looked += 1
    return {"ranked": ranked, "looked": looked}


def enqueue_sweep() -> None:
    """Queue a sweep on the replays' queue (once: a sweep queued or running is not queued
    again)."""
    jobs.enqueue(JOB, job_id=jobs.logical_job_id(JOB), timeout=JOB_TIMEOUT,
                 queue=jobs.REPLAY_QUEUE)


def status(client: redis.Redis, prefix: str, settings: ScreeningConfig) -> dict[str, Any]:
    """For ``copytrade status``: traders ranked and screened, the newest and oldest replay,
    the flags raised, and this minute's venue calls against the budget."""
    rows = list(TraderScreening.select(TraderScreening.updated_at, TraderScreening.flags,
                                       TraderScreening.error, TraderScreening.ranks))
    replayed = [r.updated_at for r in rows if r.updated_at is not None]
    counts: dict[str, int] = {}
    for r in rows:
        for flag in json.loads(r.flags or "{}"):
            counts[flag] = counts.get(flag, 0) + 1
    try:
        calls = budget(client, prefix, settings.venue_calls_per_minute)
    except Exception:  # Redis down: status still answers
        calls = {"used": -1, "per_minute": settings.venue_calls_per_minute}
    return {"enabled": settings.interval_seconds > 0,
            "interval_seconds": settings.interval_seconds,
            "ranked": sum(1 for r in rows if r.ranks != "{}"), "screened": len(replayed),
            "failed": sum(1 for r in rows if r.error),
            "newest_replay": max(replayed, default=None),
            "oldest_replay": min(replayed, default=None),
            "flags": dict(sorted(counts.items())), "venue_calls": calls}


__all__ = ["DEFAULT_RULES", "JOB", "budget", "default_rules", "enqueue_sweep", "rank",
           "screen", "status", "sweep", "take", "units"]
