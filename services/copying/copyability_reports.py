"""Copyability reports: asking for one, the job that builds it, the cache, reading it back.

``request`` validates the question (a window, the user's rules or one of their configs,
optionally a delay assumption), fixes the delays (the deployment's measured detection delay,
a stated default when too few copies were measured, or the caller's assumption) and hashes
the inputs. A finished, unexpired report of the same (address, window, inputs hash) is
answered at once; one still being built is followed; otherwise a row is written and the
``copyability.report`` job builds it (``run``), reporting its progress on the row. The
replay itself is pure: ``services.copying.copyability``.

A replay reads hundreds of markets for up to JOB_TIMEOUT, and any reader may ask for one: a
user may have ``copyability_in_flight`` of their own replays queued or running and queue
``copyability_per_day`` in any 24 hours (one more is refused, 429 with Retry-After; cached
and followed answers count for neither), and the jobs wait on their own queue
(``jobs.REPLAY_QUEUE``), which workers serve only in slots of its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import peewee

from models.base import atomic, db, utcnow
from models.copying import (
    KIND_MIRROR,
    REPORT_DONE,
    REPORT_FAILED,
    REPORT_QUEUED,
    REPORT_RUNNING,
    CopyabilityReport,
    CopyIntent,
)
from models.user import User
from schemas import rule_fields
from services.copying import copyability
from services.copying import mirror as copying
from services.copying.configs import crud
from services.copying.configs.rules import (
    check_combination,
    validate_fields,
    with_defaults,
)
from services.copying.traders import wallet_address
from services.markets import parameters
from services.platform import errors, jobs, venues
from services.platform.principal import user_id_of
from services.platform.runtime import runtime
from venue.errors import VenueError, VenueNotFound
from venue.models import ActivityItem, Position, Side

log = logging.getLogger(__name__)

JOB = "copyability.report"
JOB_TIMEOUT = 900  # seconds: a 90-day window of a busy wallet reads many markets
WINDOWS = {"7d": 7, "30d": 30, "90d": 90}
CACHE_TTL = timedelta(minutes=15)  # a report answers the same question this long
# Retry-After of a request refused for reports in flight: a typical replay's length (a
# stuck one stops counting once its row expires, JOB_TIMEOUT + CACHE_TTL after it was asked).
IN_FLIGHT_RETRY_SECONDS = 30
MAX_FILLS = 5000  # the most fills one report replays (the newest; the report says so)
MAX_DELAY_MS = 3_600_000
# The measured detection delay: copies of the last DELAY_DAYS, at least DELAY_MIN_SAMPLES.
DELAY_DAYS = 7
DELAY_MIN_SAMPLES = 20
DELAY_MAX_SAMPLES = 5000
# Without enough measurements: the live feed's typical delay, and the Data API's (about
# 22 s behind a fill) for the slow tail when the feed falls back to polling.
DEFAULT_DELAY_P50_MS = 2_000
DEFAULT_DELAY_P95_MS = 25_000
P50, P95 = Decimal("0.5"), Decimal("0.95")
RULE_NAMES = tuple(f.name for f in copying.CopyRules.__dataclass_fields__.values()
                   if f.name != "max_total_exposure_usdc")


def measured_delays() -> dict[str, Any]:
    """The deployment's detection delay (p50, p95 ms) over recent copies, or the default."""
    since = utcnow() - timedelta(days=DELAY_DAYS)
    samples = [row.detection_delay_ms for row in CopyIntent.select(
        CopyIntent.detection_delay_ms).where(
        CopyIntent.detection_delay_ms.is_null(False), CopyIntent.kind == KIND_MIRROR,
        CopyIntent.created_at >= since).order_by(CopyIntent.created_at.desc()).limit(
        DELAY_MAX_SAMPLES)]
    if len(samples) < DELAY_MIN_SAMPLES:
        return {"p50_ms": DEFAULT_DELAY_P50_MS, "p95_ms": DEFAULT_DELAY_P95_MS,
                "source": "default", "samples": len(samples)}
    return {"p50_ms": copyability.percentile(samples, P50),
            "p95_ms": copyability.percentile(samples, P95),
            "source": "measured", "samples": len(samples)}


def _delay(raw: Mapping[str, Any], name: str) -> int | None:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DELAY_MS:
        raise errors.ValidationFailed(f"Invalid {name}.", fields={
            name: [f"A whole number of milliseconds, 0 to {MAX_DELAY_MS}."]})
    return value


def _delays(raw: Mapping[str, Any]) -> dict[str, Any]:
    p50, p95 = _delay(raw, "delay_p50_ms"), _delay(raw, "delay_p95_ms")
    if p50 is None and p95 is None:
        return measured_delays()
    p50 = p95 if p50 is None else p50
    p95 = p50 if p95 is None else p95
    assert p50 is not None and p95 is not None
    if p95 < p50:
        raise errors.ValidationFailed("Invalid delay_p95_ms.", fields={
            "delay_p95_ms": ["Must be at least delay_p50_ms."]})
    return {"p50_ms": p50, "p95_ms": p95, "source": "assumed", "samples": 0}


def _rule_fields(user: User | UUID | str, address: str, raw: Mapping[str, Any]
                 ) -> dict[str, Any]:
    """The rules asked about: the body's ``rules`` (a config's fields) or a config's own."""
    rules, config_id = raw.get("rules"), raw.get("config_id")
    if raw.get("preview_id") is not None and rules is None and config_id is None:
        # The dashboard's config preview: the fields the user just previewed.
        fields = crud.previewed_fields(user, raw["preview_id"])
        check_combination(fields)
        return {name: fields.get(name) for name in RULE_NAMES}
    if (rules is None) == (config_id is None):
        raise errors.ValidationFailed("Give rules or config_id (one of them).", fields={
            "rules": ["Give rules or config_id, not both and not neither."]})
    if config_id is not None:
        try:
            config = crud.get(user, config_id)
        except errors.NotFound:
            raise errors.ValidationFailed("Unknown config_id.", fields={
                "config_id": ["Not one of your configs."]}) from None
        fields = crud.rule_fields(config)
    else:
        if not isinstance(rules, Mapping):
            raise errors.ValidationFailed(fields={"rules": ["An object of config fields."]})
        try:
            clean = validate_fields({**rules, "target_address": address})
            fields = with_defaults(user_id_of(user), clean)
            check_combination(fields)
        except errors.ValidationFailed as exc:
            raise errors.ValidationFailed(exc.message, fields={
                f"rules.{name}": problems for name, problems in exc.fields.items()}) from None
    check_combination(fields)
    return {name: fields.get(name) for name in RULE_NAMES}


def encode(value: Any) -> Any:
    """``value`` with decimals as text and times in ISO 8601, for JSON."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def request(user: User | UUID | str, address: str, raw: Mapping[str, Any]
            ) -> tuple[bool, dict[str, Any]]:
    """Ask for a report: (True, the finished report) when cached, else (False, the job's
    operation: id, status, progress), queuing the job when nobody is building it."""
    address = wallet_address(address)
    window = raw.get("window") or "30d"
    if window not in WINDOWS:
        raise errors.ValidationFailed(fields={"window": [f"One of {', '.join(WINDOWS)}."]})
    fields = _rule_fields(user, address, raw)
    owner = User.get_by_id(user_id_of(user))
    inputs: dict[str, Any] = {"rules": fields, "delays": _delays(raw),
                              "exposure_limit": owner.max_total_exposure_usdc}
    if fields["sizing_mode"] == "proportional":
        from services.wallets import readiness

        try:
            inputs["balance_usdc"] = readiness.available_usdc(owner.id)
        except Exception:  # no trading account: nothing to size against
            inputs["balance_usdc"] = Decimal(0)
    text = json.dumps(encode(inputs), sort_keys=True)
    digest = hashlib.sha256(f"{address}|{window}|{text}".encode()).hexdigest()
    now = utcnow()
    with atomic():
        found = _cached(address, window, digest, now)
        if found is not None:
            return found.status == REPORT_DONE, describe(found)
        _check_limits(owner.id, now)
        row = CopyabilityReport.create(
            address=address, window=window, inputs_hash=digest, inputs=text,
            status=REPORT_QUEUED, created_at=now, requested_by=owner.id,
            expires_at=now + timedelta(seconds=JOB_TIMEOUT) + CACHE_TTL)
    try:
        jobs.enqueue(JOB, row.id, job_id=jobs.logical_job_id(JOB, row.id),
                     timeout=JOB_TIMEOUT, queue=jobs.REPLAY_QUEUE)
    except Exception:
        # Not queued: the row must not count against the user's reports in flight.
        CopyabilityReport.delete().where(CopyabilityReport.id == row.id).execute()
        raise
    return False, describe(row)


def _cached(address: str, window: str, digest: str, now: datetime
            ) -> CopyabilityReport | None:
    """The unexpired report (done, or still being built) answering the same question."""
    return (CopyabilityReport.select().where(
        CopyabilityReport.address == address, CopyabilityReport.window == window,
        CopyabilityReport.inputs_hash == digest, CopyabilityReport.expires_at > now,
        CopyabilityReport.status != REPORT_FAILED)
        .order_by(CopyabilityReport.created_at.desc()).first())


def _check_limits(user_id: UUID, now: datetime) -> None:
    """Refuse (RateLimited, with Retry-After) a replay past the user's limits: reports in
    flight (queued or running, not yet expired) and reports queued in the last 24 hours."""
    settings = runtime().settings
    # One user's requests take turns here (PostgreSQL locks the user's row; SQLite has one
    # writer), so two at once cannot both pass the count.
    lock = User.select(User.id).where(User.id == user_id)
    if isinstance(db.obj, peewee.PostgresqlDatabase):
        lock = lock.for_update()
    lock.first()
    mine = CopyabilityReport.requested_by == user_id
    day_ago = now - timedelta(days=1)
    today = list(CopyabilityReport.select(CopyabilityReport.created_at).where(
        mine, CopyabilityReport.created_at > day_ago)
        .order_by(CopyabilityReport.created_at).limit(settings.copyability_per_day))
    if len(today) >= settings.copyability_per_day:
        wait = (today[0].created_at + timedelta(days=1) - now).total_seconds()
        raise errors.RateLimited(
            f"At most {settings.copyability_per_day} copyability reports a day; the next "
            "can be asked for once the oldest of the last 24 hours is a day old.",
            retry_after=max(1, math.ceil(wait)), limit="reports_per_day",
            allowed=settings.copyability_per_day)
    flying = list(CopyabilityReport.select(CopyabilityReport.id, CopyabilityReport.address,
                                           CopyabilityReport.expires_at).where(
        mine, CopyabilityReport.status.in_((REPORT_QUEUED, REPORT_RUNNING)),
        CopyabilityReport.expires_at > now).order_by(CopyabilityReport.created_at))
    if len(flying) >= settings.copyability_in_flight:
        raise errors.RateLimited(
            f"At most {settings.copyability_in_flight} copyability reports in flight at "
            "once; follow those (in_flight) and ask again when one is done.",
            retry_after=IN_FLIGHT_RETRY_SECONDS, limit="reports_in_flight",
            allowed=settings.copyability_in_flight,
            in_flight=[location(row) for row in flying])


def get(report_id: UUID | str, address: str | None = None) -> CopyabilityReport:
    """One report row (of ``address`` when given); NotFound when there is none."""
    try:
        key = UUID(str(report_id))
    except ValueError:
        raise errors.NotFound("No such report.") from None
    row = CopyabilityReport.get_or_none(CopyabilityReport.id == key)
    if row is None or (address is not None and row.address != address.lower()):
        raise errors.NotFound("No such report.")
    return row


def location(row: CopyabilityReport) -> str:
    """Where a report is followed (REST)."""
    return f"/api/traders/{row.address}/copyability/{row.id}"


def describe(row: CopyabilityReport) -> dict[str, Any]:
    """A report row as the API shows it: the operation, and the report once done."""
    return {
        "id": row.id, "address": row.address, "window": row.window, "status": row.status,
        "progress": {"done": row.progress_done, "total": row.progress_total,
                     "stage": row.stage},
        "location": location(row),
        "created_at": row.created_at, "finished_at": row.finished_at,
        "expires_at": row.expires_at, "error": row.error,
        "report": _stored_report(row.report) if row.report else None,
    }


def _stored_report(text: str) -> dict[str, Any]:
    report = json.loads(text)
    for name in ("window_start", "window_end", "generated_at"):
        report[name] = datetime.fromisoformat(report[name])
    return report


def _progress(row: CopyabilityReport, stage: str, done: int, total: int) -> None:
    CopyabilityReport.update(stage=stage, progress_done=done, progress_total=total).where(
        CopyabilityReport.id == row.id).execute()


def run(report_id: UUID | str) -> str:
    """Build one report (the job): read, replay, store; safe to run again (a finished row
    is left alone; a row gone meanwhile is nothing to do). Returns the row's status."""
    try:
        row = get(report_id)
    except errors.NotFound:
        return "gone"
    if row.status in (REPORT_DONE, REPORT_FAILED):
        return row.status
    CopyabilityReport.update(status=REPORT_RUNNING).where(
        CopyabilityReport.id == row.id).execute()
    try:
        report = _build(row)
    except Exception as exc:
        known = errors.from_external(exc)
        log.warning("copyability report %s failed: %s", row.id, exc)
        CopyabilityReport.update(status=REPORT_FAILED, finished_at=utcnow(),
                                 error=str(known or "The report could not be built.")).where(
            CopyabilityReport.id == row.id).execute()
        if known is None:
            raise
        return REPORT_FAILED
    finished = utcnow()
    CopyabilityReport.update(status=REPORT_DONE, finished_at=finished,
                             expires_at=finished + CACHE_TTL, stage="done",
                             progress_done=CopyabilityReport.progress_total,
                             report=json.dumps(encode(report), sort_keys=True)).where(
        CopyabilityReport.id == row.id).execute()
    return REPORT_DONE


def _inputs(row: CopyabilityReport) -> dict[str, Any]:
    inputs = json.loads(row.inputs)
    rules = inputs["rules"]
    for rule in rule_fields.RULES:
        if rule.name in rules:
            rules[rule.name] = rule.decode(rules[rule.name])
    for name in ("exposure_limit", "balance_usdc"):
        if inputs.get(name) is not None:
            inputs[name] = Decimal(inputs[name])
    return inputs


def fill_of(row: ActivityItem) -> copying.TargetFill:
    return copying.TargetFill(
        key=f"{row.transaction_hash}:{row.asset}:{row.side}", wallet=row.wallet,
        token_id=row.asset, side=Side.parse(row.side), size=row.size, price=row.price,
        timestamp=row.timestamp, condition_id=row.condition_id, outcome=row.outcome,
        outcome_index=row.outcome_index, market_slug=row.slug, tx_hash=row.transaction_hash,
        usdc=row.usdc_size)


def positions_after(fills: list[copying.TargetFill], now_held: Mapping[str, Decimal]
                    ) -> dict[str, Decimal | None]:
    """The target's position in each fill's token just after it, walked back from what it
    holds now (None once the walk goes negative: redeemed or moved away). ``fills`` oldest
    first; those of one second in the order they happened."""
    held: dict[str, Decimal | None] = dict(now_held)
    after: dict[str, Decimal | None] = {}
    for fill in reversed(sorted(fills, key=lambda f: f.timestamp)):
        position = held.get(fill.token_id, Decimal(0))
        after[fill.key] = position
        if position is not None:
            position += -fill.size if fill.side == Side.BUY else fill.size
            held[fill.token_id] = position if position >= 0 else None
    return after


def _token_facts(token: str, start: int, end: int) -> copyability.TokenFacts:
    client = venues.client()
    market = client.gamma.market_by_token(token)
    book = None
    if not market.closed:
        try:
            book = client.clob.book(token)
        except VenueNotFound:
            book = None
    limits = parameters.of(market, book)
    try:
        points = client.clob.prices_history(token, start_ts=start, end_ts=end, fidelity=1)
    except VenueError as exc:
        log.info("no price history for %s: %s", token, exc)
        points = []
    tokens = market.token_ids  # the version's ids: positionIds for a v2 market
    index = tokens.index(token) if token in tokens else None
    mark = None
    if market.closed and index is not None and len(market.outcome_prices) > index \
            and market.outcome_prices[index] in (0, 1):
        mark = market.outcome_prices[index]  # resolved: the payout
    others = [t for t in tokens if t != token]
    names = [n for tag in market.tags for n in (tag.label, tag.slug) if n]
    view = copying.MarketView(
        category=market.tags[0].label if market.tags else "", tick_size=limits.tick_size,
        min_order_size=limits.min_order_size, categories=copying.normalise_categories(names),
        fees=limits.fees, question=market.question,
        end_ts=int(market.end_date.timestamp()) if market.end_date else None)
    return copyability.TokenFacts(
        token_id=token, market_slug=market.slug, view=view,
        book=book if book is not None and book.bids and book.asks else None,
        history=tuple(sorted((p.t, p.p) for p in points)), mark=mark,
        other_token_id=others[0] if len(others) == 1 else None)


def target_fills(address: str, start: int) -> list[ActivityItem]:
    """The wallet's trades since ``start`` (the newest MAX_FILLS), oldest first; same-second
    fills in the order they happened (the Data API answers newest first)."""
    return [r for r in reversed(venues.client().activity_history(
        address, types="TRADE", start=start, max_rows=MAX_FILLS))
        if r.is_trade and r.timestamp >= start]


def market_facts(tokens: list[str], start: int, end: int, direction: str,
                 progress: Callable[[int], object] | None = None
                 ) -> dict[str, copyability.TokenFacts]:
    """What the replay knows of each token (its other outcome too for inverse copies);
    ``progress`` is told how many tokens are read."""
    facts: dict[str, copyability.TokenFacts] = {}
    for number, token in enumerate(tokens, start=1):
        facts[token] = _token_facts(token, start, end)
        other = facts[token].other_token_id
        if direction == "inverse" and other and other not in facts:
            facts[other] = _token_facts(other, start, end)
        if progress is not None:
            progress(number)
    return facts


def replay_numbers(items: list[ActivityItem], positions: list[Position],
                   facts: Mapping[str, copyability.TokenFacts], rules: copying.CopyRules,
                   delays: Mapping[str, Any], balance_usdc: Decimal | None = None, *,
                   with_edge: bool = False) -> dict[str, Any]:
    """The report's numbers (``copyability.build_report``) of the trades ``items`` (oldest
    first), given what the wallet holds now (``positions``); with ``with_edge``, also the
    p50 replay's equity curve (``equity``) and the same copies' PnL made without delay
    (``instant_pnl_usdc``: the edge our delay eats into)."""
    fills = [fill_of(r) for r in items]
    fees = {f.key: r.fee for f, r in zip(fills, items, strict=True) if r.fee}
    held: dict[str, Decimal] = {}
    for position in positions:
        held[position.asset] = held.get(position.asset, Decimal(0)) + position.size
    target_value = sum((p.current_value for p in positions), Decimal(0))
    after = positions_after(fills, held)
    numbers = copyability.build_report(
        fills, facts, rules, (delays["p50_ms"], delays["p95_ms"]), target_fees=fees,
        target_after=after, balance_usdc=balance_usdc, target_value_usdc=target_value)
    if with_edge:
        typical, instant = (copyability.replay(
            fills, facts, rules, delay, target_after=after, balance_usdc=balance_usdc,
            target_value_usdc=target_value) for delay in (delays["p50_ms"], 0))
        numbers["equity"] = copyability.equity_curve(typical)
        numbers["instant_pnl_usdc"] = copyability.money(instant.pnl)
    return numbers


def _build(row: CopyabilityReport) -> dict[str, Any]:
    inputs = _inputs(row)
    rules = copying.CopyRules.from_fields(inputs["rules"],
                                          exposure_limit=inputs.get("exposure_limit"))
    delays = inputs["delays"]
    end = int(time.time())
    start = end - WINDOWS[row.window] * 86400
    _progress(row, "fills", 0, 1)
    items = target_fills(row.address, start)
    positions = venues.client().data.positions(row.address, limit=500)
    tokens = sorted({r.asset for r in items})
    total = len(tokens) + 2
    _progress(row, "markets", 1, total)
    facts = market_facts(tokens, start, end, rules.direction,
                         lambda number: _progress(row, "markets", 1 + number, total))
    numbers = replay_numbers(items, positions, facts, rules, delays,
                             inputs.get("balance_usdc"))
    return {
        "address": row.address, "window": row.window,
        "window_start": datetime.fromtimestamp(start, UTC),
        "window_end": datetime.fromtimestamp(end, UTC),
        "generated_at": utcnow(), "delays": delays, "truncated": len(items) >= MAX_FILLS,
        "rules": inputs["rules"], **numbers,
    }


__all__ = ["JOB", "WINDOWS", "describe", "encode", "fill_of", "get", "market_facts",
           "measured_delays", "positions_after", "replay_numbers", "request", "run", "target_fills"]
