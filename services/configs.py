"""Copy configs: validate, preview, create, edit, start/stop, and read their status and PnL.

Every surface (REST, MCP, dashboard) calls these functions with a Principal. Creating a
config needs an unexpired, unused preview of the same fields. ``is_active`` is true
exactly while the config is copying: ``start`` sets it (within the tier's active-config
limit) and nudges the workers, ``stop`` clears it; a running executor sees either within
a second, and the copy intent insert itself refuses an inactive config, so no order for
a stopped config leaves after ``stop`` returns.
"""

from __future__ import annotations

import json
import logging
import re
import statistics
from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import peewee

from models.base import db, utcnow
from models.copying import (
    INTENT_FILLED,
    INTENT_SKIPPED,
    ConfigPreview,
    CopyConfig,
    CopyIntent,
    CopyPosition,
)
from models.user import User
from services import copying, errors, tiers, venues
from services.access import Principal, require_enabled
from services.pagination import Page, paginate

log = logging.getLogger(__name__)

ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")
MAX_SIZE_MULTIPLIER = Decimal(100)
MAX_POSITION_USDC = Decimal(1_000_000)
MAX_BPS = 10000
MAX_EXIT_BPS = 1_000_000
PREVIEW_TTL = timedelta(minutes=10)
MAX_TARGET_NAME = 120
DEFAULT_DEVIATION_BPS = 200

# Fields a PUT may change; the target is fixed for a config's life (create a new one).
EDITABLE_FIELDS: tuple[str, ...] = (
    "target_name", "size_multiplier", "max_position_usdc", "price_deviation_bps",
    "blocked_categories", "take_profit_bps", "stop_loss_bps", "paper_trading",
)
CREATE_FIELDS: tuple[str, ...] = ("target_address", *EDITABLE_FIELDS)
REQUIRED_FIELDS: tuple[str, ...] = ("target_address", "size_multiplier", "max_position_usdc")


# -- validation ---------------------------------------------------------------------

def venue_categories() -> dict[str, str]:
    """The venue's categories: normalised slug/label -> display label (cached by the client)."""
    tags = venues.client().gamma.tags()
    names: dict[str, str] = {}
    for tag in tags:
        for value in (tag.slug, tag.label):
            if value:
                names[next(iter(copying.normalise_categories([value])))] = tag.label
    return names


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value)) if isinstance(value, str | int) else None
    except ArithmeticError:
        return None


def validate_fields(raw: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """Check config fields; the cleaned values, or ValidationFailed naming each bad field."""
    problems: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}
    unknown = set(raw) - set(CREATE_FIELDS) - {"preview_id"}
    for name in sorted(unknown):
        problems[name] = ["Unknown field."]
    if not partial:
        for name in REQUIRED_FIELDS:
            if raw.get(name) is None:
                problems[name] = ["Missing data for required field."]

    def bad(name: str, message: str) -> None:
        problems.setdefault(name, []).append(message)

    if raw.get("target_address") is not None:
        address = raw["target_address"]
        if not isinstance(address, str) or not ADDRESS_RE.match(address):
            bad("target_address", "Must match ^0x[0-9a-fA-F]{40}$.")
        else:
            clean["target_address"] = address.lower()
    if "target_name" in raw:
        name = raw["target_name"] if raw["target_name"] is not None else ""
        if not isinstance(name, str) or len(name.strip()) > MAX_TARGET_NAME:
            bad("target_name", f"A string of at most {MAX_TARGET_NAME} characters.")
        else:
            clean["target_name"] = name.strip()
    if raw.get("size_multiplier") is not None:
        value = _decimal(raw["size_multiplier"])
        if value is None or not 0 < value <= MAX_SIZE_MULTIPLIER:
            bad("size_multiplier", f"Must be greater than 0 and at most {MAX_SIZE_MULTIPLIER}.")
        elif value.as_tuple().exponent < -6:  # type: ignore[operator]
            bad("size_multiplier", "At most 6 decimal places.")
        else:
            clean["size_multiplier"] = value
    if raw.get("max_position_usdc") is not None:
        value = _decimal(raw["max_position_usdc"])
        if value is None or not 0 < value <= MAX_POSITION_USDC:
            bad("max_position_usdc", f"Must be greater than 0 and at most {MAX_POSITION_USDC}.")
        elif value.as_tuple().exponent < -6:  # type: ignore[operator]
            bad("max_position_usdc", "At most 6 decimal places.")
        else:
            clean["max_position_usdc"] = value
    if raw.get("price_deviation_bps") is not None:
        value = raw["price_deviation_bps"]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BPS:
            bad("price_deviation_bps", f"An integer from 0 to {MAX_BPS}.")
        else:
            clean["price_deviation_bps"] = value
    for name in ("take_profit_bps", "stop_loss_bps"):
        if name in raw:
            value = raw[name]
            if value is None:
                clean[name] = None
            elif isinstance(value, bool) or not isinstance(value, int) or not (
                    0 < value <= (MAX_BPS if name == "stop_loss_bps" else MAX_EXIT_BPS)):
                limit = MAX_BPS if name == "stop_loss_bps" else MAX_EXIT_BPS
                bad(name, f"Null or a positive integer up to {limit}.")
            else:
                clean[name] = value
    if "paper_trading" in raw and raw["paper_trading"] is not None:
        if not isinstance(raw["paper_trading"], bool):
            bad("paper_trading", "Must be a boolean.")
        else:
            clean["paper_trading"] = raw["paper_trading"]
    if "blocked_categories" in raw:
        values = raw["blocked_categories"] or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            bad("blocked_categories", "A list of category names.")
        else:
            wanted = sorted(copying.normalise_categories(values))
            if wanted:
                known = venue_categories()
                unknown_cats = [v for v in wanted if v not in known]
                if unknown_cats:
                    bad("blocked_categories",
                        f"Unknown categories {unknown_cats}; the venue's are "
                        f"{sorted(set(known.values()))}.")
            clean["blocked_categories"] = wanted
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def _with_defaults(user_id: UUID, clean: dict[str, Any]) -> dict[str, Any]:
    full = {
        "target_name": "", "price_deviation_bps": DEFAULT_DEVIATION_BPS,
        "blocked_categories": [], "take_profit_bps": None, "stop_loss_bps": None, **clean,
    }
    if full.get("paper_trading") is None:
        # A new target runs on paper first (the spec's advice made the default).
        full["paper_trading"] = not _has_copied_before(user_id, full["target_address"])
    return full


def _has_copied_before(user_id: UUID, target: str) -> bool:
    return CopyConfig.select().where(CopyConfig.user == user_id,
                                     CopyConfig.target_address == target).exists()


def _encode(fields: Mapping[str, Any]) -> str:
    return json.dumps({k: str(v) if isinstance(v, Decimal) else v for k, v in fields.items()},
                      sort_keys=True)


def _decode(text: str) -> dict[str, Any]:
    data = json.loads(text)
    for name in ("size_multiplier", "max_position_usdc"):
        if data.get(name) is not None:
            data[name] = Decimal(data[name])
    return data


# -- previews -------------------------------------------------------------------------

def target_profile(address: str, *, limit: int = 100) -> dict[str, Any]:
    """The target's recent fills, typical trade size, exposure, PnL and categories (venue)."""
    client = venues.client()
    try:
        rows = [r for r in client.data.activity(address, types="TRADE", limit=limit)
                if r.is_trade]
        positions = client.data.positions(address, limit=100)
    except Exception as exc:
        raise errors.from_external(exc) or exc from None
    sizes = [r.usdc_size if r.usdc_size is not None else r.size * r.price for r in rows]
    exposure = sum((p.current_value for p in positions), Decimal(0))
    pnl = sum(((p.cash_pnl or Decimal(0)) + (p.realized_pnl or Decimal(0)) for p in positions),
              Decimal(0))
    categories: dict[str, int] = {}
    for slug in list(dict.fromkeys(r.slug for r in rows if r.slug))[:10]:
        try:
            market = client.gamma.market_by_slug(slug)
        except Exception:  # a vanished market only loses its category
            continue
        label = market.tags[0].label if market.tags else "Uncategorised"
        categories[label] = categories.get(label, 0) + sum(1 for r in rows if r.slug == slug)
    return {
        "address": address,
        "name": next((r.name or r.pseudonym for r in rows if r.name or r.pseudonym), ""),
        "recent_trades": len(rows),
        "buys": sum(1 for r in rows if r.side == copying.BUY),
        "sells": sum(1 for r in rows if r.side == copying.SELL),
        "volume_usdc": sum(sizes, Decimal(0)),
        "typical_trade_usdc": statistics.median(sizes) if sizes else Decimal(0),
        "last_trade_at": datetime.fromtimestamp(rows[0].timestamp).astimezone()
        if rows else None,
        "open_positions": len(positions),
        "exposure_usdc": exposure,
        "pnl_usdc": pnl,
        "categories": [{"category": k, "trades": v}
                       for k, v in sorted(categories.items(), key=lambda kv: -kv[1])],
        "recent": [{"side": r.side, "size": r.size, "price": r.price, "market_slug": r.slug,
                    "outcome": r.outcome, "timestamp": r.timestamp} for r in rows[:10]],
    }


def preview(principal: Principal, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the fields and summarise what the config would do; returns a preview_id."""
    clean = validate_fields({k: v for k, v in raw.items() if k != "preview_id"})
    fields = _with_defaults(principal.user_id, clean)
    profile = target_profile(fields["target_address"])
    typical = profile["typical_trade_usdc"]
    mirrored = (typical * fields["size_multiplier"]).quantize(Decimal("0.01"))
    warnings = []
    if not fields["paper_trading"]:
        warnings.append("Live mode: mirrored orders spend real funds.")
    if profile["recent_trades"] == 0:
        warnings.append("The target has no recent trades to mirror.")
    if mirrored > fields["max_position_usdc"]:
        warnings.append("A typical target trade, mirrored, exceeds max_position_usdc; "
                        "trades will be capped.")
    now = utcnow()
    summary = {
        "config": fields,
        "target": profile,
        "sizing": {
            "size_multiplier": fields["size_multiplier"],
            "typical_mirrored_trade_usdc": mirrored,
            "max_position_usdc": fields["max_position_usdc"],
            "rule": "Buys mirror target shares x size_multiplier, capped per position by "
                    "max_position_usdc; sells mirror the share of its position the target "
                    "sold.",
        },
        "guards": {
            "price_deviation_bps": fields["price_deviation_bps"],
            "blocked_categories": fields["blocked_categories"],
            "take_profit_bps": fields["take_profit_bps"],
            "stop_loss_bps": fields["stop_loss_bps"],
        },
        "mode": "paper" if fields["paper_trading"] else "live",
        "warnings": warnings,
    }
    with db.atomic():
        row = ConfigPreview.create(user=principal.user_id, fields=_encode(fields),
                                   summary=json.dumps(summary, default=str),
                                   created_at=now, expires_at=now + PREVIEW_TTL)
    return {"preview_id": row.id, "expires_at": row.expires_at, **summary}


# -- create / read / edit -----------------------------------------------------------------

def _write_transaction() -> Any:
    # SQLite: take the write lock up front (a deferred read-then-write can fail to upgrade).
    if isinstance(db.obj, peewee.SqliteDatabase):
        return db.atomic("IMMEDIATE")
    return db.atomic()


def _require_trade(principal: Principal) -> None:
    principal.require_scope("trade:execute")


def create(principal: Principal, raw: Mapping[str, Any]) -> CopyConfig:
    """Create an inactive config from an unexpired, unused preview with the same fields."""
    _require_trade(principal)
    preview_id = raw.get("preview_id")
    if not preview_id:
        raise errors.ValidationFailed("A preview_id is required; call POST /api/configs/preview.",
                                      fields={"preview_id": ["Missing data for required field."]})
    given = validate_fields({k: v for k, v in raw.items() if k != "preview_id"}, partial=True)
    now = utcnow()
    with db.atomic():
        try:
            query = ConfigPreview.select().where(ConfigPreview.id == UUID(str(preview_id)),
                                                 ConfigPreview.user == principal.user_id)
        except ValueError:
            raise errors.ValidationFailed(fields={"preview_id": ["Not a preview id."]}) from None
        if isinstance(db.obj, peewee.PostgresqlDatabase):
            query = query.for_update()
        previewed = query.first()
        if previewed is None:
            raise errors.ValidationFailed("Unknown preview_id.",
                                          fields={"preview_id": ["Unknown preview."]})
        if previewed.consumed_at is not None:
            raise errors.ValidationFailed("This preview was already used.",
                                          fields={"preview_id": ["Already used."]})
        if previewed.expires_at <= now:
            raise errors.ValidationFailed("The preview expired; preview again.",
                                          fields={"preview_id": ["Expired."]})
        fields = _decode(previewed.fields)
        differing = sorted(k for k, v in given.items() if fields.get(k) != v)
        if differing:
            raise errors.ValidationFailed(
                "The request differs from the preview; preview the new values.",
                fields={k: ["Differs from the previewed value."] for k in differing})
        config = CopyConfig.create(
            user=principal.user_id, target_address=fields["target_address"],
            target_name=fields.get("target_name") or "",
            size_multiplier=fields["size_multiplier"],
            max_position_usdc=fields["max_position_usdc"],
            price_deviation_bps=fields["price_deviation_bps"],
            blocked_categories=json.dumps(fields["blocked_categories"]),
            take_profit_bps=fields["take_profit_bps"], stop_loss_bps=fields["stop_loss_bps"],
            paper_trading=fields["paper_trading"], is_active=False,
            created_at=now, updated_at=now)
        previewed.consumed_at = now
        previewed.config_id = config.id
        previewed.save()
    return config


def get(principal: Principal, config_id: UUID | str) -> CopyConfig:
    """The caller's config; NotFound for another user's or a deleted one."""
    try:
        key = UUID(str(config_id))
    except ValueError:
        raise errors.NotFound("No such config.") from None
    config = CopyConfig.get_or_none(CopyConfig.id == key, CopyConfig.user == principal.user_id,
                                    CopyConfig.deleted_at.is_null())
    if config is None:
        raise errors.NotFound("No such config.")
    return config


def list_configs(principal: Principal) -> list[CopyConfig]:
    """The caller's configs, newest first."""
    return list(CopyConfig.select().where(CopyConfig.user == principal.user_id,
                                          CopyConfig.deleted_at.is_null())
                .order_by(CopyConfig.created_at.desc()))


def update(principal: Principal, config_id: UUID | str, raw: Mapping[str, Any]) -> CopyConfig:
    """Change editable fields; a running executor applies them from its next decision."""
    _require_trade(principal)
    if "target_address" in raw:
        raise errors.ValidationFailed(
            "target_address cannot change; create a new config for another target.",
            fields={"target_address": ["Not editable."]})
    clean = validate_fields(raw, partial=True)
    with db.atomic():
        config = get(principal, config_id)
        for name, value in clean.items():
            setattr(config, name, json.dumps(value) if name == "blocked_categories" else value)
        config.version += 1
        config.updated_at = utcnow()
        config.save()
    _nudge("copy.reload", config.id)
    return config


def delete(principal: Principal, config_id: UUID | str) -> None:
    """Stop the config and remove it from every list (its decision history stays)."""
    _require_trade(principal)
    with db.atomic():
        config = get(principal, config_id)
        was_active = config.is_active
        config.is_active = False
        config.deleted_at = config.stopped_at = config.updated_at = utcnow()
        config.version += 1
        config.save()
    if was_active:
        _nudge("copy.stop", config.id)


def start(principal: Principal, config_id: UUID | str) -> CopyConfig:
    """Start copying (within the tier's active-config limit); idempotent when running."""
    _require_trade(principal)
    with _write_transaction():
        config = get(principal, config_id)
        if config.is_active:
            return config
        # Lock the user first so two concurrent starts count each other (PostgreSQL).
        query = User.select().where(User.id == principal.user_id)
        if isinstance(db.obj, peewee.PostgresqlDatabase):
            query = query.for_update()
        user = query.get()
        # Read under the lock: a start racing `copytrade users disable` either finishes
        # first (and is stopped by it) or sees the account disabled.
        require_enabled(user)
        tiers.check_active_config_quota(user, tiers.active_configs(user.id).count())
        now = utcnow()
        config.is_active = True
        config.started_at = config.updated_at = now
        config.last_error = None
        config.version += 1
        config.save()
    _nudge("copy.start", config.id)
    return config


def stop(principal: Principal, config_id: UUID | str) -> CopyConfig:
    """Stop copying; no order for this config leaves once this returns."""
    _require_trade(principal)
    with db.atomic():
        config = get(principal, config_id)
        if not config.is_active:
            return config
        config.is_active = False
        config.stopped_at = config.updated_at = utcnow()
        config.version += 1
        config.save()
    _nudge("copy.stop", config.id)
    return config


def _nudge(job_name: str, config_id: UUID) -> None:
    """Tell the workers now (the engines also poll the database, so this is best-effort)."""
    try:
        from services import copy_control

        copy_control.publish(job_name, str(config_id))
    except Exception as exc:  # Redis down: the engines' database sweep still catches it
        log.warning("could not nudge workers about %s %s: %s", job_name, config_id, exc)


# -- status, pnl, decisions --------------------------------------------------------------

def status(principal: Principal, config_id: UUID | str) -> dict[str, Any]:
    """Whether an executor runs it (and where), last detection and error, recent fills/skips."""
    from services import copy_control

    config = get(principal, config_id)
    now = utcnow()
    owner = copy_control.owner_of_target(config.target_address) if config.is_active else None
    heartbeat = copy_control.engine_heartbeat(owner) if owner else None
    last = (CopyIntent.select().where(CopyIntent.config == config.id)
            .order_by(CopyIntent.created_at.desc()).first())

    def count(status_value: str, since: datetime) -> int:
        return CopyIntent.select().where(CopyIntent.config == config.id,
                                         CopyIntent.status == status_value,
                                         CopyIntent.created_at >= since).count()

    last_skip = (CopyIntent.select().where(CopyIntent.config == config.id,
                                           CopyIntent.status == INTENT_SKIPPED)
                 .order_by(CopyIntent.created_at.desc()).first())
    return {
        "config_id": config.id,
        "is_active": config.is_active,
        "executor_running": bool(config.is_active and owner),
        "worker": owner,
        "worker_heartbeat_at": heartbeat,
        "mode": "paper" if config.paper_trading else "live",
        "target_address": config.target_address,
        "last_detection_at": last.seen_at if last else None,
        "last_decision": decision_view(last) if last else None,
        "last_skip": decision_view(last_skip) if last_skip else None,
        "last_error": config.last_error,
        "last_error_at": config.last_error_at,
        "fills_last_hour": count(INTENT_FILLED, now - timedelta(hours=1)),
        "fills_last_day": count(INTENT_FILLED, now - timedelta(days=1)),
        "skips_last_hour": count(INTENT_SKIPPED, now - timedelta(hours=1)),
        "skips_last_day": count(INTENT_SKIPPED, now - timedelta(days=1)),
        "started_at": config.started_at,
        "stopped_at": config.stopped_at,
    }


def pnl(principal: Principal, config_id: UUID | str) -> dict[str, Any]:
    """Realized plus unrealized PnL of the config, per position (best bid as the mark)."""
    config = get(principal, config_id)
    rows = list(CopyPosition.select().where(CopyPosition.config == config.id))
    client = venues.client()
    positions = []
    realized = unrealized = Decimal(0)
    for row in rows:
        price = None
        if row.shares > 0:
            try:
                price = client.clob.price(row.token_id, "BUY")  # best bid: what selling gets
            except Exception:
                price = None
        value = row.shares * price if price is not None else None
        open_pnl = value - row.cost_usdc if value is not None else Decimal(0)
        realized += row.realized_pnl
        unrealized += open_pnl
        positions.append({
            "token_id": row.token_id, "market_slug": row.market_slug, "outcome": row.outcome,
            "paper": row.paper, "size": row.shares, "cost_basis": row.cost_usdc,
            "current_price": price, "current_value": value, "unrealized_pnl": open_pnl,
            "realized_pnl": row.realized_pnl,
        })
    return {"config_id": config.id, "realized_pnl": realized, "unrealized_pnl": unrealized,
            "total_pnl": realized + unrealized, "positions": positions}


_TRADE_STATUS = {"pending": "pending", "sent": "pending", "filled": "filled",
                 "failed": "failed", "cancelled": "cancelled", "skipped": "cancelled"}


def decision_view(intent: CopyIntent) -> dict[str, Any]:
    """A decision in the Trade shape, plus whether it was copied or skipped and why."""
    filled = intent.filled_size or Decimal(0)
    price = intent.filled_price or Decimal(0)
    side = intent.side or intent.target_side or ""
    return {
        "id": intent.id, "token_id": intent.token_id, "market_slug": intent.market_slug,
        "side": side.lower(),
        "size": filled if filled > 0 else (intent.size or Decimal(0)),
        "price": intent.price or intent.target_price or Decimal(0),
        "filled_price": price, "usdc_value": (filled * price).quantize(Decimal("0.000001")),
        "fee": intent.fee or Decimal(0), "latency_ms": intent.latency_ms,
        "status": _TRADE_STATUS.get(intent.status, "pending"),
        "created_at": intent.created_at, "filled_at": intent.settled_at if filled > 0 else None,
        "config_id": intent.config_id, "order_id": intent.order_id,
        "decision": "skipped" if intent.status == INTENT_SKIPPED else "copied",
        "intent_status": intent.status, "kind": intent.kind, "reason": intent.reason,
        "detail": intent.detail, "paper": intent.paper, "trade_id": intent.trade_id,
        "outcome": intent.outcome, "outcome_index": intent.outcome_index,
        "target_trade": {
            "key": intent.target_trade_key, "side": (intent.target_side or "").lower() or None,
            "size": intent.target_size, "price": intent.target_price,
            "timestamp": intent.target_timestamp, "tx_hash": intent.target_tx_hash,
        } if intent.kind == "mirror" else None,
        "detection_delay_ms": intent.detection_delay_ms,
    }


def decisions(principal: Principal, config_id: UUID | str, *, limit: int = 50,
              offset: int = 0) -> Page[dict[str, Any]]:
    """The config's decisions (copied and skipped, with reasons), newest first, one page."""
    config = get(principal, config_id)
    query = (CopyIntent.select().where(CopyIntent.config == config.id)
             .order_by(CopyIntent.created_at.desc(), CopyIntent.id.desc()))
    return paginate(query, limit, offset).map(decision_view)


def suggest_multiplier(principal: Principal, target_address: str | None = None,
                       balance: Decimal | None = None) -> dict[str, Any]:
    """A size_multiplier from the balance and the target's typical trade and exposure."""
    if target_address is None or not ADDRESS_RE.match(target_address or ""):
        raise errors.ValidationFailed(fields={"target_address": [
            "Must match ^0x[0-9a-fA-F]{40}$."]})
    if balance is not None and balance < 0:
        raise errors.ValidationFailed(fields={"balance": ["Must be 0 or more."]})
    source = "override"
    if balance is None:
        from services import readiness

        balance = readiness.available_usdc(principal.user_id)
        source = "live"
    profile = target_profile(target_address.lower())
    multiplier, how = copying.suggest_multiplier(balance, profile["typical_trade_usdc"],
                                                 profile["exposure_usdc"])
    return {
        "size_multiplier": multiplier, "balance": balance, "balance_source": source,
        "target_address": target_address.lower(),
        "typical_trade_usdc": profile["typical_trade_usdc"],
        "target_exposure_usdc": profile["exposure_usdc"],
        "recent_trades": profile["recent_trades"], "explanation": how,
    }
