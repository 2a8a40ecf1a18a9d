"""The copy engine's own database reads and writes, blocking (run in threads).

Which targets have active configs, the configs' snapshots (rules and holdings) the
engine keeps in memory, the per-target detection cursors and the configs' last error.
Intents and positions are the services' (``copy_intents``, ``copy_positions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from uuid import UUID

import peewee

from models.base import utcnow
from models.copying import (
    INTENT_FILLED,
    INTENT_PENDING,
    INTENT_SENT,
    KIND_MIRROR,
    KIND_OPEN_POSITION,
    CopyConfig,
    CopyIntent,
    CopyPosition,
    TargetCursor,
)
from models.user import User
from services.copying import copy_notices, reservations
from services.copying.configs.crud import rule_fields
from services.copying.mirror import CopyRules, Holding
from services.trading import copy_positions
from venue.models import Side


@dataclass
class ConfigSnapshot:
    """What an executor keeps in memory about one active config."""

    id: UUID
    user_id: UUID
    target: str
    version: int
    paper: bool
    rules: CopyRules
    started_ts: int = 0  # fills before the config started are not its business
    holdings: dict[str, Holding] = field(default_factory=dict)
    opened: dict[str, int] = field(default_factory=dict)  # token -> times opened (exit keys)
    # token -> buys copied into its position since it was last flat (the entry policy's
    # count, in flight included); market (condition id) -> unix s of the last copy there.
    entries: dict[str, int] = field(default_factory=dict)
    last_copy: dict[str, int] = field(default_factory=dict)
    # What budgets read: pUSD spent net of sells, on ``spent_day`` (UTC) and in all.
    spent_day: date | None = None
    spent_today: Decimal = Decimal(0)
    spent_total: Decimal = Decimal(0)
    # The failure breaker (services.copying.mirror.breaker_after), written through.
    failures: int = 0
    trips: int = 0
    retry_ts: int | None = None  # open until then
    peak_pnl: Decimal = Decimal(0)
    buys_paused: str | None = None  # buying paused with this reason (``stop_unverified``)
    unvalued_since: float | None = None  # since when (unix s) the stops have had no verdict
    stop_unsettled: bool = False  # the last stop check valued a position provisionally

    def spend(self, side: Side | str, paid: Decimal, when: date) -> None:
        """Count a filled copy against the budgets (a sale gives its proceeds back)."""
        amount = paid if side == Side.BUY else -paid
        if self.spent_day != when:
            self.spent_day, self.spent_today = when, Decimal(0)
        self.spent_today += amount
        self.spent_total += amount

    @property
    def open_positions(self) -> int:
        """Positions held, or being opened by a buy in flight."""
        held = {token for token, h in self.holdings.items() if h.shares > 0}
        return len(held | {token for token, n in self.entries.items() if n > 0})

    def copied(self, token: str, market: str, side: Side | str, at: int) -> None:
        """Count a copy just decided: a buy into the token's position, the market's time."""
        if side == Side.BUY:
            self.entries[token] = self.entries.get(token, 0) + 1
        self.last_copy[market] = at

    def spent_on(self, when: date) -> Decimal:
        """Net spending on the UTC day ``when``."""
        return self.spent_today if self.spent_day == when else Decimal(0)

    @property
    def needs_checks(self) -> bool:
        """True when the periodic check has work: TP/SL or market-end exits on held
        positions, a loss or drawdown stop, or the target's positions to copy at start."""
        rules = self.rules
        held = any(h.shares > 0 for h in self.holdings.values())
        return ((held and bool(rules.take_profit_bps or rules.stop_loss_bps
                              or rules.exit_hours_before_end is not None))
                or rules.needs_stop_check
                or rules.start_mode == "copy_open_positions")


def _rules(config: CopyConfig, exposure_limit: Decimal | None = None) -> CopyRules:
    return CopyRules.from_fields(rule_fields(config), exposure_limit=exposure_limit)


def _spending(snapshots: dict[UUID, ConfigSnapshot]) -> None:
    """Fill the budgets' spending of the snapshots that have a budget, from their fills."""
    wanted = {cid: snap.paper for cid, snap in snapshots.items() if snap.rules.needs_spending}
    if not wanted:
        return
    today = utcnow().date()
    for cid, (spent_today, spent_total) in reservations.spent(wanted, today).items():
        snap = snapshots[cid]
        snap.spent_day, snap.spent_today, snap.spent_total = today, spent_today, spent_total


def _last_copies(snapshots: dict[UUID, ConfigSnapshot]) -> None:
    """When each snapshot with a market cooldown last copied in each market (its copies
    within the longest cooldown: older ones wait for nothing)."""
    wanted = {cid: snap for cid, snap in snapshots.items()
              if snap.rules.market_cooldown_seconds is not None}
    if not wanted:
        return
    longest = max(snap.rules.market_cooldown_seconds or 0 for snap in wanted.values())
    since = utcnow() - timedelta(seconds=longest)
    rows = (CopyIntent.select(CopyIntent.config, CopyIntent.condition_id, CopyIntent.token_id,
                              CopyIntent.seen_at)
            .where(CopyIntent.config.in_(list(wanted)), CopyIntent.seen_at >= since,
                   CopyIntent.status.in_((INTENT_PENDING, INTENT_SENT, INTENT_FILLED)),
                   CopyIntent.kind.in_((KIND_MIRROR, KIND_OPEN_POSITION))))
    for intent in rows:
        market, at = intent.condition_id or intent.token_id, int(intent.seen_at.timestamp())
        snap = wanted[intent.config_id]
        snap.last_copy[market] = max(at, snap.last_copy.get(market, 0))


def active_targets(targets: Sequence[str] | None = None) -> dict[str, int]:
    """Every target with active configs (or those of ``targets``), and how many copy it."""
    query = (CopyConfig.select(CopyConfig.target_address,
                               peewee.fn.COUNT(CopyConfig.id).alias("n"))
             .where(CopyConfig.is_active, CopyConfig.deleted_at.is_null()))
    if targets is None:
        return {target: count for target, count in
                query.group_by(CopyConfig.target_address).tuples()}
    found: dict[str, int] = {}
    for start in range(0, len(targets), 500):
        chunk = list(targets[start:start + 500])
        rows = (query.where(CopyConfig.target_address.in_(chunk))
                .group_by(CopyConfig.target_address).tuples())
        found.update({target: count for target, count in rows})
    return found


@dataclass(frozen=True)
class ConfigChange:
    """One config written since the sweep's last look."""

    id: UUID
    target: str
    version: int
    active: bool  # running (active and not deleted)
    revision: int


def latest_revision() -> int:
    """The highest config revision (one probe of its index): where a sweep starts."""
    return int(CopyConfig.select(peewee.fn.COALESCE(peewee.fn.MAX(CopyConfig.revision), 0))
               .scalar())


def config_changes(since: int) -> list[ConfigChange]:
    """The configs written after revision ``since`` (every insert and update moves a
    config's revision: the m0101 trigger), read through the revision index."""
    rows = (CopyConfig.select(CopyConfig.id, CopyConfig.target_address, CopyConfig.version,
                              CopyConfig.is_active, CopyConfig.deleted_at,
                              CopyConfig.revision)
            .where(CopyConfig.revision > since).order_by(CopyConfig.revision).tuples())
    return [ConfigChange(cid, target, version, bool(active) and deleted is None, revision)
            for cid, target, version, active, deleted, revision in rows]


def config_versions(targets: Sequence[str]) -> dict[UUID, tuple[str, int]]:
    """Active configs of ``targets``: id -> (target, version)."""
    found: dict[UUID, tuple[str, int]] = {}
    for start in range(0, len(targets), 500):
        chunk = list(targets[start:start + 500])
        rows = (CopyConfig.select(CopyConfig.id, CopyConfig.target_address, CopyConfig.version)
                .where(CopyConfig.target_address.in_(chunk), CopyConfig.is_active,
                       CopyConfig.deleted_at.is_null()).tuples())
        for config_id, target, version in rows:
            found[config_id] = (target, version)
    return found


def load_configs(config_ids: Iterable[UUID]) -> list[ConfigSnapshot]:
    """Snapshots (rules and holdings) of the given configs that are still active."""
    ids = list(config_ids)
    snapshots: dict[UUID, ConfigSnapshot] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for config in (CopyConfig.select(CopyConfig, User.id, User.max_total_exposure_usdc)
                       .join(User).where(CopyConfig.id.in_(chunk), CopyConfig.is_active,
                                         CopyConfig.deleted_at.is_null())):
            limit = config.user.max_total_exposure_usdc
            open_until = (int(config.breaker_retry_at.timestamp())
                          if config.breaker_state == "open" and config.breaker_retry_at
                          else None)
            snapshots[config.id] = ConfigSnapshot(
                id=config.id, user_id=config.user_id, target=config.target_address,
                version=config.version, paper=config.paper_trading,
                rules=_rules(config, limit),
                started_ts=int(config.started_at.timestamp()) if config.started_at else 0,
                failures=config.breaker_failures, trips=config.breaker_trips,
                retry_ts=open_until, peak_pnl=config.pnl_peak_usdc or Decimal(0),
                buys_paused=config.buys_paused_reason)
        for position in CopyPosition.select().where(CopyPosition.config.in_(chunk)):
            snap = snapshots.get(position.config_id)
            if snap is not None and position.paper == snap.paper:
                snap.holdings[position.token_id] = Holding(position.shares, position.cost_usdc)
                snap.opened[position.token_id] = position.opened
                if position.shares > 0:
                    snap.entries[position.token_id] = position.entries
    _spending(snapshots)
    _last_copies(snapshots)
    return list(snapshots.values())


def read_cursor(target: str) -> int | None:
    """The newest fill timestamp already read for ``target``, if any."""
    row = TargetCursor.get_or_none(TargetCursor.target_address == target)
    return row.last_timestamp if row else None


def write_cursor(target: str, timestamp: int) -> None:
    """Move the target's cursor forward (never back)."""
    now = utcnow()
    (TargetCursor.insert(target_address=target, last_timestamp=timestamp, updated_at=now)
     .on_conflict(conflict_target=[TargetCursor.target_address],
                  update={TargetCursor.last_timestamp: peewee.Case(
                      None, [(TargetCursor.last_timestamp < timestamp, timestamp)],
                      TargetCursor.last_timestamp),
                      TargetCursor.updated_at: now})
     .execute())


def record_error(config_ids: Iterable[UUID], message: str) -> None:
    """Remember the latest error of configs (shown by /status)."""
    ids = list(config_ids)
    if ids:
        CopyConfig.update(last_error=message[:2000], last_error_at=utcnow()).where(
            CopyConfig.id.in_(ids)).execute()


def opening_key(token_id: str, started_ts: int) -> str:
    """The target trade key of a start copy (``copy_open_positions``) of one position."""
    return f"{KIND_OPEN_POSITION}:{token_id}:{started_ts}"


def opened_at_start(starts: Mapping[UUID, int], tokens: Iterable[str]
                    ) -> dict[UUID, set[str]]:
    """For each config (id: its start), those of ``tokens`` whose start copy of that start
    it recorded already (configs with none left out)."""
    keys = {opening_key(token, started): token for started in set(starts.values())
            for token in tokens}
    found: dict[UUID, set[str]] = {}
    chunk = list(keys)
    for start in range(0, len(chunk), 500):  # by the (config, key) unique index
        rows = (CopyIntent.select(CopyIntent.config, CopyIntent.target_trade_key)
                .where(CopyIntent.config.in_(list(starts)),
                       CopyIntent.target_trade_key.in_(chunk[start:start + 500])).tuples())
        for config_id, key in rows:
            token = keys[key]
            if key == opening_key(token, starts[config_id]):  # its own start's, not another's
                found.setdefault(config_id, set()).add(token)
    return found


def decided_for(config_ids: Sequence[UUID], keys: Sequence[str]) -> dict[str, set[UUID]]:
    """For each target trade key, which of these configs have a decision (an intent) on it."""
    found: dict[str, set[UUID]] = {}
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), 500):  # by the (config, key) unique index
        rows = (CopyIntent.select(CopyIntent.target_trade_key, CopyIntent.config)
                .where(CopyIntent.config.in_(list(config_ids)),
                       CopyIntent.target_trade_key.in_(unique[start:start + 500])).tuples())
        for key, config_id in rows:
            found.setdefault(key, set()).add(config_id)
    return found


def write_breaker(config_id: UUID, failures: int, trips: int, retry_at: datetime | None,
                  reason: str | None, error: str | None, *, tripped: bool = False) -> None:
    """Write the config's breaker (open while ``retry_at`` is set); the follower is told
    when it trips."""
    CopyConfig.update(
        breaker_state="open" if retry_at is not None else "closed",
        breaker_failures=failures, breaker_trips=trips, breaker_retry_at=retry_at,
        breaker_last_reason=reason, breaker_last_error=error[:2000] if error else None,
    ).where(CopyConfig.id == config_id).execute()
    if tripped:
        copy_notices.breaker_opened(CopyConfig.get_by_id(config_id), reason or "failures")


def realized_pnls(configs: Mapping[UUID, bool]) -> dict[UUID, Decimal]:
    """The realized PnL of each config's positions (config id: paper or live), 0 for none."""
    totals = dict.fromkeys(configs, Decimal(0))
    for paper in (False, True):
        ids = [cid for cid, is_paper in configs.items() if is_paper == paper]
        for start in range(0, len(ids), 500):
            rows = (CopyPosition.select(CopyPosition.config, CopyPosition.realized_pnl)
                    .where(CopyPosition.config.in_(ids[start:start + 500]),
                           CopyPosition.paper == paper).tuples())
            for config_id, realized in rows:
                totals[config_id] += realized
    return totals


def write_peak(config_id: UUID, peak: Decimal) -> None:
    """Remember the config's highest total PnL (the drawdown stop's reference)."""
    CopyConfig.update(pnl_peak_usdc=peak).where(CopyConfig.id == config_id).execute()


def stop_by_rule(config_id: UUID, reason: str, detail: str) -> bool:
    """Stop a running config because a stop rule hit; False when it was no longer running."""
    now = utcnow()
    stopped = bool(CopyConfig.update(
        is_active=False, stopped_reason=reason, stopped_at=now, updated_at=now,
        last_error=detail[:2000], last_error_at=now, version=CopyConfig.version + 1,
    ).where(CopyConfig.id == config_id, CopyConfig.is_active).execute())
    if stopped:
        copy_notices.config_stopped(CopyConfig.get_by_id(config_id), reason)
    return stopped


def close_resolved(config_id: UUID, paper: bool, payouts: dict[str, Decimal]
                   ) -> list[copy_positions.Closed]:
    """Close the config's positions in resolved tokens at their payout (realized once)."""
    return copy_positions.close_at_payout([config_id], payouts, paper=paper)


def pause_buys(config_id: UUID, reason: str, detail: str) -> bool:
    """Pause a running config's buying with a reason (a skip reason code); its follower is
    told once per pause. False when it was paused already or no longer running."""
    now = utcnow()
    paused = bool(CopyConfig.update(
        buys_paused_reason=reason, buys_paused_at=now, last_error=detail[:2000],
        last_error_at=now,
    ).where(CopyConfig.id == config_id, CopyConfig.is_active,
            CopyConfig.buys_paused_reason.is_null()).execute())
    if paused:
        copy_notices.buys_paused(CopyConfig.get_by_id(config_id), reason)
    return paused


def resume_buys(config_id: UUID) -> None:
    """Lift the engine's pause on a config's buying."""
    CopyConfig.update(buys_paused_reason=None, buys_paused_at=None).where(
        CopyConfig.id == config_id).execute()
