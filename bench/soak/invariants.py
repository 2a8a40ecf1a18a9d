"""The promises the soak checks at the end, each a row of the table: its name, pass or fail,
the numbers it counted and, when it fails, what broke (at most a few examples each).

They read the stack's database (what the app believes), the sandbox venue (what it
matched and holds) and the dev chain (what really moved), and compare them."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from bench.soak.followers import Follower
from bench.soak.receiver import Receiver
from bench.soak.stops import loss_stop_overshoot
from bench.soak.world import World
from venue.models import Side

ZERO = Decimal(0)
BASE_UNIT = Decimal("0.000001")
EXAMPLES = 8  # failures shown per invariant
# A config's stop or end is not a fill's boundary to the second: a fill this close to one
# may or may not have been seen while the config ran.
EDGE_SECONDS = 5


@dataclass
class Row:
    """One invariant's outcome."""

    name: str
    figures: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing broke."""
        return not self.failures

    def fail(self, text: str) -> None:
        """Count a failure (keeping the first few)."""
        self.figures["failures"] = self.figures.get("failures", 0) + 1
        if len(self.failures) < EXAMPLES:
            self.failures.append(text)
        elif len(self.failures) == EXAMPLES:
            self.failures.append("...")

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return {"name": self.name, "ok": self.ok, "figures": self.figures,
                "failures": self.failures}


def _epoch(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def _dec(value: Any) -> Decimal:
    return ZERO if value in (None, "") else Decimal(str(value))


def _target_fills(world: World, target: str) -> list[Any]:
    """The target's fills as the venue's Data API lists them (the app's own parser)."""
    from venue.parse.data_api import parse_activity

    rows = world.http.get(f"{world.venue_url}/data/activity",
                          params={"user": target, "type": "TRADE", "limit": 10000}).json()
    return parse_activity(rows)


def fills_decided_once(world: World, followers: list[Follower], ended: float) -> Row:
    """Every target fill while a config ran has one decision: copied (with its order's
    outcome) or skipped with a reason; none is left open."""
    from models.copying import INTENT_OPEN, INTENT_SKIPPED, KIND_MIRROR, CopyConfig, CopyIntent

    row = Row("every target fill copied or skipped with a reason, once")
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    fills_of: dict[str, list[Any]] = {}
    for follower in followers:
        config = CopyConfig.get_by_id(follower.config_id)
        fills = fills_of.setdefault(follower.target, _target_fills(world, follower.target))
        intents = list(CopyIntent.select().where((CopyIntent.config == config.id)
                                                 & (CopyIntent.kind == KIND_MIRROR)))
        start = (_epoch(config.started_at) or ended) + EDGE_SECONDS
        stop = ended  # the whales' last trade: every fill since has been waited for
        if not config.is_active and config.stopped_at is not None:
            # a fill the engine had not seen yet when a stop hit is not the stopped
            # config's (it was stopped when the fill was seen): its window ends at the
            # last fill it decided before the stop, and no fill before that may lack one
            stop = max((i.target_timestamp or 0 for i in intents
                        if i.created_at <= config.stopped_at), default=0)
        keyed = Counter(i.target_trade_key for i in intents)
        for fill in fills:
            if not start <= fill.timestamp <= stop:
                continue
            key = "|".join(fill.dedup_key)
            counts["fills"] += 1
            if keyed[key] == 0:
                row.fail(f"{follower.name} ({follower.profile['name']}): no decision on "
                         f"{key[:24]}... at {fill.timestamp}")
            elif keyed[key] > 1:
                row.fail(f"{follower.name}: {keyed[key]} decisions on {key[:24]}...")
        for intent in intents:
            counts[intent.status] += 1
            if intent.status in INTENT_OPEN:
                row.fail(f"{follower.name}: decision {intent.id} still {intent.status}")
            elif intent.status == INTENT_SKIPPED:
                reasons[intent.reason or "(none)"] += 1
                if not intent.reason:
                    row.fail(f"{follower.name}: skipped {intent.id} without a reason")
        orders = Counter(i.order_id for i in intents if i.order_id)
        for order_id, times in orders.items():
            if times > 1:
                row.fail(f"{follower.name}: order {order_id[:12]} sent for {times} decisions")
    row.figures.update(counts)
    row.figures["skip reasons"] = dict(reasons.most_common(6))
    return row


def _buy_cost(intent: Any) -> Decimal:
    return _dec(intent.filled_size) * _dec(intent.filled_price) + _dec(intent.fee)


def _sell_value(intent: Any) -> Decimal:
    return _dec(intent.filled_size) * _dec(intent.filled_price) - _dec(intent.fee)


def limits_held(world: World, followers: list[Follower], ended: float) -> Row:
    """No budget, position cap, exposure cap, loss stop or breaker was passed by more than
    one copy in flight."""
    from models.copying import INTENT_FAILED, INTENT_FILLED, CopyConfig, CopyIntent, CopyPosition
    from models.user import User

    row = Row("no stop, budget or cap exceeded beyond one in-flight copy")
    checked: Counter[str] = Counter()
    for follower in followers:
        config = CopyConfig.get_by_id(follower.config_id)
        intents = sorted(CopyIntent.select().where(CopyIntent.config == config.id),
                         key=lambda i: (i.settled_at or i.created_at, str(i.id)))
        buys = [i for i in intents if i.side == Side.BUY and i.status == INTENT_FILLED]
        one = max((_buy_cost(i) for i in buys), default=ZERO)  # the in-flight allowance
        positions = list(CopyPosition.select().where(CopyPosition.config == config.id))
        net, daily, held, peak = ZERO, defaultdict(lambda: ZERO), defaultdict(lambda: ZERO), {}
        open_peak = ZERO
        # a position closed at its payout (a resolution, a claim) holds nothing from then on
        closes = [(p.updated_at, p.token_id) for p in positions if _dec(p.shares) == 0]
        events = [((i.settled_at or i.created_at), i.token_id, i) for i in intents
                  if i.status == INTENT_FILLED] + [(at, token, None) for at, token in closes]
        for _, token, intent in sorted(events, key=lambda e: (e[0], e[2] is not None)):
            if intent is None:
                held[token] = ZERO
                continue
            day = (intent.settled_at or intent.created_at).date()
            if intent.side == Side.BUY:
                cost = _buy_cost(intent)
                net += cost
                daily[day] += cost
                held[token] += _dec(intent.filled_size) * _dec(intent.filled_price)
                peak[token] = max(peak.get(token, ZERO), held[token])
                open_peak = max(open_peak, sum(held.values(), ZERO))
            else:
                value = _sell_value(intent)
                net -= value
                daily[day] -= value
                held[token] = max(ZERO, held[token] - _dec(intent.sold_cost))
        who = f"{follower.name} ({follower.profile['name']})"
        if config.total_budget_usdc is not None:
            checked["total budgets"] += 1
            if net > _dec(config.total_budget_usdc) + one:
                row.fail(f"{who}: spent {net} of a {config.total_budget_usdc} budget")
        if config.daily_budget_usdc is not None:
            checked["daily budgets"] += 1
            for day, spent in daily.items():
                if spent > _dec(config.daily_budget_usdc) + one:
                    row.fail(f"{who}: spent {spent} on {day}, budget "
                             f"{config.daily_budget_usdc}")
        checked["position caps"] += 1
        for token, most in peak.items():
            if most > _dec(config.max_position_usdc) + one:
                row.fail(f"{who}: held {most} in {token[:10]}..., cap "
                         f"{config.max_position_usdc}")
        user = User.get_by_id(config.user_id)
        cap = getattr(user, "max_total_exposure_usdc", None)
        if cap is not None:
            checked["exposure caps"] += 1
            if open_peak > _dec(cap) + one:
                row.fail(f"{who}: {open_peak} open against an exposure cap of {cap}")
        if config.loss_stop_usdc is not None:
            checked["loss stops"] += 1
            pnl = follower.call("GET", f"/api/configs/{config.id}/pnl").json()
            total = _dec(pnl.get("total_pnl", pnl.get("total")))
            row.figures[f"{follower.name} pnl"] = str(total)
            if config.is_active and total <= -_dec(config.loss_stop_usdc) - one:
                row.fail(f"{who}: PnL {total} past its {config.loss_stop_usdc} loss stop, "
                         "still copying")
            if config.stopped_reason == "loss_stop":
                over = loss_stop_overshoot(_dec(config.loss_stop_usdc),
                                           config.price_deviation_bps, total, intents,
                                           positions)
                row.figures[f"{follower.name} loss stop"] = over.figures()
                worst = row.figures.get("worst past a loss stop", ZERO)
                row.figures["worst past a loss stop"] = max(_dec(worst), over.past)
                for failure in over.failures:
                    row.fail(f"{who}: {failure}")
        if config.max_consecutive_failures:
            checked["breakers"] += 1
            run = longest = 0
            for intent in intents:
                run = run + 1 if intent.status == INTENT_FAILED else 0
                longest = max(longest, run)
            if longest > config.max_consecutive_failures + 1:
                row.fail(f"{who}: {longest} failed copies in a row, breaker at "
                         f"{config.max_consecutive_failures}")
        if config.stopped_reason:
            checked[f"stopped: {config.stopped_reason}"] += 1
    row.figures.update(checked)
    return row


def ledger_matches(world: World, followers: list[Follower]) -> Row:
    """Each follower's outcome tokens, as the app's records add them up, equal what the
    chain and the venue hold, to the base unit; its pUSD (deposit, trades, fees, claims,
    withdrawals) equals the chain's and the venue's within the rounding the records keep.

    The app records a trade's value as shares x price (to 8 places) and its taker fee as
    the book walk priced it, not the base units the exchange moved: each filled trade may
    be a base unit off. The row shows the largest drift found (docs/development/soak.md).
    """
    from models.trading import Trade
    from models.wallet import CONFIRMED, Claim, Withdrawal

    row = Row("each user's ledger equals the chain and the venue to the base unit")
    tokens_checked, drift = 0, ZERO
    for follower in followers:
        trades = list(Trade.select().where(Trade.user == follower.user_id))
        pusd, filled = follower.funds, 0
        shares: dict[str, Decimal] = defaultdict(lambda: ZERO)
        for trade in trades:
            value, fee = _dec(trade.filled_value), _dec(trade.fee)
            filled += _dec(trade.filled_size) > 0
            if trade.side == "buy":
                pusd -= value + fee
                shares[trade.token_id] += _dec(trade.filled_size)
            else:
                pusd += value - fee
                shares[trade.token_id] -= _dec(trade.filled_size)
        for claim in Claim.select().where((Claim.user == follower.user_id)
                                          & (Claim.status == CONFIRMED)):
            pusd += claim.payout
            for token in json.loads(claim.token_ids):
                shares[str(token)] = ZERO  # redeemed whole
        for out in Withdrawal.select().where((Withdrawal.user == follower.user_id)
                                             & (Withdrawal.status == CONFIRMED)):
            pusd -= _dec(out.amount)
        chain = world.chain_pusd(follower.maker)
        venue_pusd = world.venue_pusd(follower.maker)
        venue_shares = world.venue_positions(follower.maker)
        off = abs(pusd - chain)
        drift = max(drift, off)
        if chain != venue_pusd or off > filled * BASE_UNIT:
            row.fail(f"{follower.name}: pUSD ledger {pusd}, chain {chain}, venue {venue_pusd}"
                     f" ({filled} trades)")
        for token in set(shares) | set(venue_shares):
            tokens_checked += 1
            on_chain = world.chain_shares(follower.maker, token)
            ours, theirs = shares.get(token, ZERO), venue_shares.get(token, ZERO)
            if not ours == on_chain == theirs:
                row.fail(f"{follower.name}: {token[:10]}... ledger {ours}, chain {on_chain}, "
                         f"venue {theirs}")
    row.figures.update({"users": len(followers), "tokens": tokens_checked,
                        "largest pUSD rounding (base units)": int(drift / BASE_UNIT)})
    return row


def money_moved_once(world: World, followers: list[Follower]) -> Row:
    """Manual orders once per Idempotency-Key, each withdrawal's pUSD arrived once (its
    fresh destination holds exactly it), each market claimed at most once per wallet, and
    the venue accepted each signed order once."""
    from models.trading import Order
    from models.wallet import CONFIRMED, Claim, Withdrawal

    row = Row("no money moved twice")
    figures: Counter[str] = Counter()
    accepted = Counter(entry.get("order_id") for entry in world.control("GET", "/orders")
                       if entry.get("status") == 200 and entry.get("order_id"))
    for order_id, times in accepted.items():
        if times > 1:
            row.fail(f"the venue accepted order {order_id[:12]}... {times} times")
    figures["venue orders"] = len(accepted)
    for follower in followers:
        # each key was sent twice; a refused order (the venue restarting) is not kept as
        # the key's answer, so its retry runs again: only orders that filled moved money
        manual = sum(1 for order in Order.select().where((Order.user == follower.user_id)
                                                         & (Order.source == "manual"))
                     if _dec(order.filled_size) > 0)
        figures["manual orders filled"] += manual
        figures["idempotency keys"] += len(follower.order_keys)
        if manual > len(follower.order_keys):
            row.fail(f"{follower.name}: {manual} manual orders filled for "
                     f"{len(follower.order_keys)} keys, each sent twice")
        for to, withdrawal_id, amount in follower.withdrawals:
            record = Withdrawal.get_by_id(withdrawal_id)
            arrived = world.chain_pusd(to)
            expected = amount if record.status == CONFIRMED else ZERO
            figures[f"withdrawals {record.status}"] += 1
            if arrived != expected:
                row.fail(f"{follower.name}: withdrawal {withdrawal_id} ({record.status}) of "
                         f"{amount}: {arrived} arrived")
        claimed = Counter(c.condition_id for c in Claim.select().where(
            (Claim.user == follower.user_id) & (Claim.status == CONFIRMED)))
        figures["claims confirmed"] += sum(claimed.values())
        for condition, times in claimed.items():
            if times > 1:
                row.fail(f"{follower.name}: market {condition[:12]}... claimed {times} times")
    row.figures.update(figures)
    return row


def notifications_once(followers: list[Follower], receiver: Receiver) -> Row:
    """Every delivery the app recorded as sent reached the follower's webhook (under one
    webhook-id, resent only after a crash), and nothing else did; none is left pending,
    held or failed."""
    from models.notifications import (
        FAILED,
        HELD,
        PENDING,
        SENDING,
        Notification,
        NotificationDelivery,
    )

    row = Row("every notification delivered once per channel")
    figures: Counter[str] = Counter()
    for follower in followers:
        deliveries = list(NotificationDelivery.select().where(
            NotificationDelivery.channel == follower.channel_id))
        received = receiver.counts(follower.name)
        figures["events"] += Notification.select().where(
            Notification.user == follower.user_id).count()
        figures["received"] += sum(received.values())
        sent = set()
        for delivery in deliveries:
            figures[delivery.status] += 1
            if delivery.status in (PENDING, SENDING, HELD, FAILED):
                row.fail(f"{follower.name}: delivery {delivery.id} {delivery.status} "
                         f"({delivery.last_error or ''})")
            elif delivery.status == "sent":
                sent.add(str(delivery.notification_id or delivery.id))
        for times in received.values():
            # a worker SIGKILLed after the POST, before recording it, leaves the delivery
            # to be sent again when its lease runs out: the same webhook-id (Standard
            # Webhooks' at-least-once; receivers drop an id they have seen), counted here
            figures["redelivered (same webhook-id)"] += times - 1
        for message_id in sent - set(received):
            row.fail(f"{follower.name}: {message_id} recorded sent, never received")
        for message_id in set(received) - sent:
            row.fail(f"{follower.name}: {message_id} received, not recorded sent")
    row.figures.update(figures)
    return row


def stood_still(world: World, followers: list[Follower], began: datetime) -> Row:
    """Nothing traded while the checks read: no whale fill, order or copy decision since
    ``began``. The checks read the app, the venue and the chain one after another, so a
    copy filled between two reads shows in one and not the other (a ledger short of the
    chain while its pUSD agrees): such a run proves nothing."""
    from models.copying import CopyIntent
    from models.trading import Order

    row = Row("nothing traded while the checks read")
    moved = {
        "whale fills": sum(1 for target in {f.target for f in followers}
                           for fill in _target_fills(world, target)
                           if fill.timestamp >= int(began.timestamp())),
        "orders": Order.select().where(Order.created_at >= began).count(),
        "copy decisions": CopyIntent.select().where(CopyIntent.created_at >= began).count()}
    for what, count in moved.items():
        if count:
            row.fail(f"{count} {what} since the checks began at {began:%H:%M:%S}")
    row.figures.update({"since": f"{began:%H:%M:%S}", **moved})
    return row


def check_all(world: World, followers: list[Follower], receiver: Receiver,
              ended: float) -> list[Row]:
    """Every invariant, in the table's order, then whether the world stood still."""
    from models import database
    from models.base import utcnow

    bound = database.bind(world.settings.database_url)
    with bound.connection_context():
        from models.user import User

        began = utcnow()
        for follower in followers:
            follower.user_id = User.get(User.email == follower.email).id
        return [fills_decided_once(world, followers, ended),
                limits_held(world, followers, ended),
                ledger_matches(world, followers),
                money_moved_once(world, followers),
                notifications_once(followers, receiver),
                stood_still(world, followers, began)]
