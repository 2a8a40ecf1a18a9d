"""Reservations against a user's exposure cap and a config's budgets (issue 41).

``max_total_exposure_usdc`` (the user's, across its configs) and ``daily_budget_usdc`` /
``total_budget_usdc`` (a config's) count what is held **and what is in flight**. A buy
reserves its most possible cost (shares x (limit + the taker fee at it), or its signed
order's collateral if more) as ``reserved_usdc`` on its intent, written in the same
transaction as the intent. The reservation is the intent row: it counts while the intent is
open (pending, sent) and stops counting once it is final, when what filled is in the
position's cost basis and the budgets' spending and the rest is free (a failed or cancelled
copy frees all). A worker that dies with a copy in flight leaves the intent open, so its
reservation holds until the reconciler settles it (filled, failed as ``not_sent``, ...), and
the cap can never be passed by a copy whose outcome nobody knows yet.

Atomic across workers: ``headroom`` runs inside the intent write's transaction and first
locks the users' rows (``FOR NO KEY UPDATE`` on PostgreSQL, which does not block the
foreign-key checks of inserts naming the user; on SQLite every write transaction is
``IMMEDIATE``, so it holds the database's write lock from its first statement). Two engines
copying for one user therefore read what is held and in flight one after the other, each
seeing the other's committed intents. The database, not Redis, because the reservation must
commit or vanish with the intent it belongs to: a Redis counter would need its own recovery
after a crash between the two writes. Only buys decided under a cap or a budget
(``CopyIntentDraft.guarded``) take the lock; other copies never wait for it.

``mirror.decide`` stays pure: the engine decides with the exposure as read
(``exposure``: held plus in flight), and this step, around it, cuts or skips a buy that
others' copies recorded since (``mirror.fit_spending``, the reasons ``exposure_limit``,
``daily_budget_exhausted``, ``total_budget_exhausted``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_CEILING, Decimal
from typing import Any
from uuid import UUID

from models.base import db, utcnow
from models.copying import (
    INTENT_OPEN,
    INTENT_PENDING,
    INTENT_SKIPPED,
    CopyConfig,
    CopyIntent,
    CopyPosition,
)
from models.user import User
from services.copying import mirror
from services.copying.intents import CopyIntentDraft
from services.copying.mirror import MarketView
from services.platform import numbers
from services.trading import copy_positions
from venue.models import Side

ZERO = Decimal(0)
MICRO = Decimal("0.000001")  # pUSD base unit: reservations are rounded up to it


def _amount(value: Any) -> Decimal:
    return Decimal(str(value)) if value is not None else ZERO


def _maybe(value: Any) -> Decimal | None:
    return _amount(value) if value is not None else None


def held(user_ids: Iterable[UUID], paper: bool) -> dict[UUID, Decimal]:
    """Cost basis every config of each user holds (live or paper positions)."""
    ids = list(set(user_ids))
    exposure = dict.fromkeys(ids, ZERO)
    rows = (CopyPosition.select(CopyConfig.user, CopyPosition.shares, CopyPosition.cost_usdc)
            .join(CopyConfig).where(CopyConfig.user.in_(ids), CopyPosition.paper == paper)
            .tuples())
    for user_id, shares, cost in rows:  # amounts are text: compared here, not in SQL
        if _amount(shares) > 0:
            exposure[user_id] += _amount(cost)
    return exposure


def _open_buys(**where: Sequence[UUID]) -> list[tuple[UUID, UUID, bool, Decimal]]:
    """(user, config, paper, reserved pUSD) of the open buys of these users or configs."""
    column = CopyIntent.user_id if "users" in where else CopyIntent.config
    ids = list(where.get("users") or where.get("configs") or ())
    found = []
    for start in range(0, len(ids), 500):
        rows = (CopyIntent.select(CopyIntent.user_id, CopyIntent.config, CopyIntent.paper,
                                  CopyIntent.reserved_usdc, CopyIntent.usdc)
                .where(column.in_(ids[start:start + 500]),
                       CopyIntent.status.in_(INTENT_OPEN), CopyIntent.side == Side.BUY.value)
                .tuples())
        # An intent written before reservations existed counts what it meant to spend.
        found += [(user, config, bool(paper), _amount(reserved if reserved is not None
                                                       else usdc))
                  for user, config, paper, reserved, usdc in rows]
    return found


def exposure(user_ids: Iterable[UUID], paper: bool) -> dict[UUID, Decimal]:
    """What counts against each user's exposure cap: the cost basis held plus the
    reservations of its buys in flight (live or paper)."""
    counted = held(user_ids, paper)
    for user, _, is_paper, reserved in _open_buys(users=list(counted)):
        if is_paper == paper:
            counted[user] += reserved
    return counted


def spent(configs: Mapping[UUID, bool], today: date) -> dict[UUID, tuple[Decimal, Decimal]]:
    """Net pUSD each config's fills spent (buys minus sales' proceeds, fees included) on the
    UTC day ``today`` and in all, counting the fills of its mode (``configs``: id -> paper)."""
    totals = {cid: (ZERO, ZERO) for cid in configs}
    ids = list(configs)
    for start in range(0, len(ids), 500):
        rows = (CopyIntent.select(CopyIntent.config, CopyIntent.side, CopyIntent.paper,
                                  CopyIntent.filled_size, CopyIntent.filled_price,
                                  CopyIntent.fee, CopyIntent.settled_at, CopyIntent.created_at)
                .where(CopyIntent.config.in_(ids[start:start + 500]),
                       CopyIntent.filled_size.is_null(False)))
        for row in rows:
            if row.paper != configs[row.config_id] or not row.side or not row.filled_size:
                continue
            side = Side.parse(row.side)
            paid = copy_positions.fee_inclusive(
                side, row.filled_size * (row.filled_price or 0), row.fee)
            amount = paid if side == Side.BUY else -paid
            day, total = totals[row.config_id]
            when = (row.settled_at or row.created_at).date()
            totals[row.config_id] = (day + amount if when == today else day, total + amount)
    return totals


@dataclass
class Headroom:
    """What the users' caps and the configs' budgets leave, read under the users' locks;
    ``take`` counts each reservation made in the same write."""

    caps: dict[UUID, Decimal | None] = field(default_factory=dict)  # user -> cap
    exposure: dict[tuple[UUID, bool], Decimal] = field(default_factory=dict)  # held + in flight
    budgets: dict[UUID, tuple[Decimal | None, Decimal | None]] = field(default_factory=dict)
    spent: dict[UUID, tuple[Decimal, Decimal]] = field(default_factory=dict)  # + in flight

    def bounds(self, draft: CopyIntentDraft) -> list[tuple[str, Decimal, str]]:
        """(reason, pUSD left, rule) of every cap and budget over ``draft``."""
        daily, total = self.budgets.get(draft.config_id, (None, None))
        today, overall = self.spent.get(draft.config_id, (ZERO, ZERO))
        return mirror.budget_bounds(daily, total, self.caps.get(draft.user_id),
                                    spent_today=today, spent_total=overall,
                                    exposure=self.exposure.get((draft.user_id, draft.paper)))

    def take(self, draft: CopyIntentDraft, amount: Decimal) -> None:
        """Count ``amount`` reserved by ``draft`` against its user's cap and its budgets."""
        key = (draft.user_id, draft.paper)
        if key in self.exposure:
            self.exposure[key] += amount
        if draft.config_id in self.spent:
            today, overall = self.spent[draft.config_id]
            self.spent[draft.config_id] = (today + amount, overall + amount)


def guarded_buys(drafts: Iterable[CopyIntentDraft]) -> list[CopyIntentDraft]:
    """The drafts that reserve: pending buys decided under a cap or a budget."""
    return [d for d in drafts
            if d.guarded and d.status == INTENT_PENDING and d.side is Side.BUY]


def headroom(drafts: Sequence[CopyIntentDraft]) -> Headroom:
    """Lock the users of the guarded buys and read what their caps and their configs'
    budgets leave (call inside the intent write's transaction)."""
    buys = guarded_buys(drafts)
    room = Headroom()
    if not buys:
        return room
    users = sorted({d.user_id for d in buys})
    query = (User.select(User.id, User.max_total_exposure_usdc).where(User.id.in_(users))
             .order_by(User.id))  # one lock order for every writer: no deadlock between them
    if db.for_update:  # PostgreSQL; SQLite's IMMEDIATE transaction holds the write lock
        query = query.for_update("FOR NO KEY UPDATE")
    room.caps = {user: _maybe(cap) for user, cap in query.tuples()}
    for paper in {d.paper for d in buys}:
        capped = [u for u in {d.user_id for d in buys if d.paper == paper}
                  if room.caps.get(u) is not None]
        if capped:
            room.exposure.update({(user, paper): amount
                                  for user, amount in exposure(capped, paper).items()})
    configs = {d.config_id: d.paper for d in buys}
    rows = CopyConfig.select(CopyConfig.id, CopyConfig.daily_budget_usdc,
                             CopyConfig.total_budget_usdc).where(
        CopyConfig.id.in_(list(configs)), (CopyConfig.daily_budget_usdc.is_null(False))
        | (CopyConfig.total_budget_usdc.is_null(False))).tuples()
    room.budgets = {cid: (_maybe(daily), _maybe(total)) for cid, daily, total in rows}
    budgeted = {cid: configs[cid] for cid in room.budgets}
    if budgeted:
        room.spent = spent(budgeted, utcnow().date())
        for _, config, paper, reserved in _open_buys(configs=list(budgeted)):
            if paper == budgeted[config]:
                today, overall = room.spent[config]
                room.spent[config] = (today + reserved, overall + reserved)
    return room


def worst_cost(draft: CopyIntentDraft, view: MarketView) -> Decimal:
    """The most a buy of the draft's shares can cost at its limit, taker fee included."""
    assert draft.size is not None and draft.price is not None
    return (draft.size * view.buy_cost_per_share(draft.price)).quantize(MICRO, ROUND_CEILING)


def reserve(drafts: Sequence[CopyIntentDraft], view: MarketView, *,
            cost: Callable[[CopyIntentDraft], Decimal],
            resized: Callable[[CopyIntentDraft], None],
            skipped: Callable[[CopyIntentDraft], None]) -> None:
    """Reserve each guarded buy's ``cost`` against what is left, in the intent write's
    transaction: cut to what is left (``resized`` re-signs its order), or skipped with the
    cap's or budget's reason (``skipped`` drops its order) when under the market minimum."""
    room = headroom(drafts)
    for draft in guarded_buys(drafts):
        assert draft.size is not None and draft.price is not None
        per_share = view.buy_cost_per_share(draft.price)
        amount = cost(draft)
        while True:
            bounds = room.bounds(draft)
            over = [(reason, left, name) for reason, left, name in bounds if amount > left]
            if not over:
                break
            fit = mirror.fit_spending(draft.size, per_share, draft.price, bounds,
                                      view.min_order_size, draft.size)
            if not fit.skips and fit.shares >= draft.size:
                # Rounding, or a fee the order's walk pays above the limit's: a step less.
                reason, left, name = over[0]
                fewer = draft.size - mirror.SHARE_STEP
                fit = (mirror.Fit(fewer, fewer,
                                  (f"reduced to {numbers.shares(fewer)} shares by the {name}",))
                       if fewer >= view.min_order_size else mirror.Fit(
                           ZERO, ZERO, (), reason,
                           f"The {numbers.money(max(left, ZERO))} left of the {name} cannot "
                           f"buy the minimum {numbers.shares(view.min_order_size)} shares."))
            if fit.skips:
                draft.failed({"status": INTENT_SKIPPED, "reason": fit.reason,
                              "detail": fit.detail + " (copies in flight counted)",
                              "settled_at": utcnow()})
                skipped(draft)
                break
            note = "; ".join(fit.notes) or f"reduced to {fit.shares} shares"
            draft.detail = (draft.detail.rstrip(".") + f"; {note}, counting copies in flight.")
            draft.size = fit.shares
            draft.usdc = (fit.shares * draft.price).quantize(mirror.USDC_STEP, ROUND_CEILING)
            resized(draft)
            if draft.status != INTENT_PENDING:
                break  # its order could not be signed again: failed with the reason
            amount = cost(draft)
        if draft.status == INTENT_PENDING:
            draft.reserved_usdc = amount
            room.take(draft, amount)


__all__ = ["Headroom", "exposure", "guarded_buys", "headroom", "held", "reserve", "spent",
           "worst_cost"]
