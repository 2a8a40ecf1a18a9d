"""Copy configs' life: preview, create, read, edit, start, stop and delete.

Creating a config needs an unexpired, unused preview of the same fields. ``is_active``
is true exactly while the config is copying: ``start`` sets it (within the tier's
active-config limit) and nudges the workers, ``stop`` clears it; a running executor sees
either within a second, and the copy intent insert itself refuses an inactive config, so
no order for a stopped config leaves after ``stop`` returns.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import peewee

from models.base import db, utcnow
from models.copying import ConfigPreview, CopyConfig
from models.user import User
from schemas import rule_fields as rule_table
from services.copying import copy_notices, rule_labels
from services.copying import mirror as copying
from services.copying.configs.rules import (
    EDITABLE_FIELDS,
    LIST_FIELDS,
    check_combination,
    sizing_as_set,
    validate_fields,
    validate_limits,
    with_defaults,
)
from services.copying.configs.targets import target_profile
from services.markets import parameters
from services.platform import credential_generation, errors, tiers, venues
from services.platform.principal import require_enabled, user_id_of
from services.wallets import trading_accounts

log = logging.getLogger(__name__)

PREVIEW_TTL = timedelta(minutes=10)


def _encode(fields: Mapping[str, Any]) -> str:
    return json.dumps({k: str(v) if isinstance(v, Decimal) else v for k, v in fields.items()},
                      sort_keys=True)


def _decode(text: str) -> dict[str, Any]:
    data = json.loads(text)
    for rule in rule_table.RULES:
        if rule.name in data:
            data[rule.name] = rule.decode(data[rule.name])
    return data


def preview(user: User | UUID | str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the fields and summarise what the config would do; returns a preview_id."""
    clean = validate_fields({k: v for k, v in raw.items() if k != "preview_id"})
    fields = with_defaults(user_id_of(user), clean)
    check_combination(fields)
    profile = target_profile(fields["target_address"])
    typical = profile["typical_trade_usdc"]
    mirrored = _typical_copy(user_id_of(user), fields, typical, profile["exposure_usdc"])
    simulated = _simulate(fields, profile)
    warnings = []
    if not fields["paper_trading"]:
        warnings.append("Live mode: mirrored orders spend real funds.")
    if profile["recent_trades"] == 0:
        warnings.append("The target has no recent trades to mirror.")
    if mirrored > fields["max_position_usdc"]:
        warnings.append("A typical target trade, mirrored, exceeds the max position; "
                        "trades will be capped.")
    now = utcnow()
    sized = rule_labels.sizing(fields["sizing_mode"], fields["size_multiplier"],
                               fields["fixed_usdc"])
    summary = {
        "config": fields,
        "target": profile,
        "sizing": {
            "sizing_mode": fields["sizing_mode"],
            "size_multiplier": fields["size_multiplier"],
            "fixed_usdc": fields["fixed_usdc"],
            "typical_mirrored_trade_usdc": mirrored,
            "max_position_usdc": fields["max_position_usdc"],
            "min_trade_usdc": fields["min_trade_usdc"],
            "max_trade_usdc": fields["max_trade_usdc"],
            "round_up_to_min": fields["round_up_to_min"],
            "rule": f"Buys: {sized}{_SIZING_RULES[fields['sizing_mode']]}. Each buy is "
                    "capped by the max position (and the max per trade, budgets and the "
                    "exposure limit); sells mirror the share of its position the trader sold.",
        },
        "guards": {name: fields[name] for name in rule_table.NAMES
                   if name not in _SIZING_FIELDS},
        "mode": "paper" if fields["paper_trading"] else "live",
        "recent_buys": simulated,
        "warnings": warnings,
    }
    with db.atomic():
        row = ConfigPreview.create(user=user_id_of(user), fields=_encode(fields),
                                   summary=json.dumps(summary, default=str),
                                   created_at=now, expires_at=now + PREVIEW_TTL)
    return {"preview_id": row.id, "expires_at": row.expires_at, **summary}


# The rules the preview shows under sizing; the others are its guards.
_SIZING_FIELDS = ("size_multiplier", "max_position_usdc", "sizing_mode", "fixed_usdc",
                  "min_trade_usdc", "max_trade_usdc", "round_up_to_min")
_SIZING_RULES = {  # what each mode's words (rule_labels.sizing) leave to say
    "multiplier": "",
    "fixed_usdc": ", at most: whole hundredths of a share at the order's limit price, the "
                  "taker fee included",
    "proportional": "",
}


def _typical_copy(user_id: UUID, fields: Mapping[str, Any], typical: Decimal,
                  target_value: Decimal) -> Decimal:
    """What a typical target trade becomes under the sizing mode (balance: the live one)."""
    if fields["sizing_mode"] == "fixed_usdc":
        mirrored = fields["fixed_usdc"]
    elif fields["sizing_mode"] == "proportional":
        from services.wallets import readiness

        try:
            balance = readiness.available_usdc(user_id)
        except Exception:  # no wallet yet: a preview still shows the rest
            balance = Decimal(0)
        ratio = balance / target_value if target_value > 0 else Decimal(0)
        mirrored = typical * ratio * fields["size_multiplier"]
    else:
        mirrored = typical * fields["size_multiplier"]
    if fields.get("max_trade_usdc") is not None:
        mirrored = min(mirrored, fields["max_trade_usdc"])
    return mirrored.quantize(Decimal("0.01"))


def _simulate(fields: Mapping[str, Any], profile: Mapping[str, Any]) -> dict[str, Any]:
    """What the rules would have decided about the target's recent buys (the pure rules of
    ``services.copying.mirror``, each at its own price and with nothing spent yet)."""
    rules = copying.CopyRules.from_fields(fields)
    client = venues.client()
    now = int(time.time())
    outcomes: dict[str, int] = {}
    for trade in profile["recent"]:
        if trade["side"] != copying.BUY:
            continue
        try:
            market = client.gamma.market_by_slug(trade["market_slug"])
        except Exception:  # a vanished market: not simulated
            continue
        names = [n for tag in market.tags for n in (tag.label, tag.slug) if n]
        limits = parameters.of(market)  # the live mts/mos, as copies decide with
        view = copying.MarketView(
            category=market.tags[0].label if market.tags else "",
            tick_size=limits.tick_size, min_order_size=limits.min_order_size,
            best_bid=trade["price"], best_ask=trade["price"],
            categories=copying.normalise_categories(names), question=market.question,
            end_ts=int(market.end_date.timestamp()) if market.end_date else None)
        fill = copying.TargetFill(key="", wallet=profile["address"], token_id="",
                                  side=copying.BUY, size=trade["size"], price=trade["price"],
                                  timestamp=int(trade["at"].timestamp()))
        context = copying.CopyContext(now=now, target_value_usdc=profile["exposure_usdc"])
        decision = copying.decide(rules, fill, view, copying.Holding(), context=context)
        key = "copied" if decision.copies else decision.reason or "skipped"
        outcomes[key] = outcomes.get(key, 0) + 1
    return {"decided": sum(outcomes.values()), "outcomes": outcomes,
            "rule": "The target's recent buys decided by these rules at their own price "
                    "(no budget spent yet; a proportional size needs the live balance)."}


def _stored(name: str, value: Any) -> Any:
    """A field's value as the model stores it (lists as JSON text)."""
    return json.dumps(value) if name in LIST_FIELDS else value


def create(user: User | UUID | str, raw: Mapping[str, Any]) -> CopyConfig:
    """Create an inactive config from an unexpired, unused preview with the same fields."""
    preview_id = raw.get("preview_id")
    if not preview_id:
        raise errors.ValidationFailed("A preview_id is required; call POST /api/configs/preview.",
                                      fields={"preview_id": ["Missing data for required field."]})
    given = validate_fields({k: v for k, v in raw.items() if k != "preview_id"}, partial=True)
    now = utcnow()
    with db.atomic():
        try:
            query = ConfigPreview.select().where(ConfigPreview.id == UUID(str(preview_id)),
                                                 ConfigPreview.user == user_id_of(user))
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
        if fields["sizing_mode"] == "fixed_usdc":
            given.pop("size_multiplier", None)  # dropped by the preview too (sizing_as_set)
        differing = sorted(k for k, v in given.items() if fields.get(k) != v)
        if differing:
            raise errors.ValidationFailed(
                "The request differs from the preview; preview the new values.",
                fields={k: ["Differs from the previewed value."] for k in differing})
        config = CopyConfig.create(
            user=user_id_of(user), target_address=fields["target_address"],
            target_name=fields.get("target_name") or "",
            paper_trading=fields["paper_trading"], is_active=False,
            **{rule.name: rule.stored(fields.get(rule.name, rule_table.default(rule.name)))
               for rule in rule_table.RULES},
            created_at=now, updated_at=now)
        previewed.consumed_at = now
        previewed.config_id = config.id
        previewed.save()
    return config


def previewed_fields(user: User | UUID | str, preview_id: UUID | str) -> dict[str, Any]:
    """The fields of one of the user's previews (used or not); NotFound otherwise."""
    try:
        key = UUID(str(preview_id))
    except ValueError:
        raise errors.NotFound("No such preview.") from None
    row = ConfigPreview.get_or_none(ConfigPreview.id == key,
                                    ConfigPreview.user == user_id_of(user))
    if row is None:
        raise errors.NotFound("No such preview.")
    return _decode(row.fields)


def rule_fields(config: CopyConfig) -> dict[str, Any]:
    """The config's editable fields as ``validate_fields`` cleans them (lists decoded)."""
    return {name: (json.loads(getattr(config, name) or "[]") if name in LIST_FIELDS
                   else getattr(config, name)) for name in EDITABLE_FIELDS}


def config_rules(config: CopyConfig) -> dict[str, Any]:
    """The config's copy rules only, as a dict by field (a shared setup carries these)."""
    return {rule.name: rule.loaded(getattr(config, rule.name)) for rule in rule_table.RULES}


def get(user: User | UUID | str, config_id: UUID | str) -> CopyConfig:
    """The caller's config; NotFound for another user's or a deleted one."""
    try:
        key = UUID(str(config_id))
    except ValueError:
        raise errors.NotFound("No such config.") from None
    config = CopyConfig.get_or_none(CopyConfig.id == key, CopyConfig.user == user_id_of(user),
                                    CopyConfig.deleted_at.is_null())
    if config is None:
        raise errors.NotFound("No such config.")
    return config


def list_configs(user: User | UUID | str) -> list[CopyConfig]:
    """The caller's configs, newest first."""
    return list(CopyConfig.select().where(CopyConfig.user == user_id_of(user),
                                          CopyConfig.deleted_at.is_null())
                .order_by(CopyConfig.created_at.desc()))


def update(user: User | UUID | str, config_id: UUID | str, raw: Mapping[str, Any]) -> CopyConfig:
    """Change editable fields; a running executor applies them from its next decision."""
    if "target_address" in raw:
        raise errors.ValidationFailed(
            "target_address cannot change; create a new config for another target.",
            fields={"target_address": ["Not editable."]})
    clean = validate_fields(raw, partial=True)
    with db.atomic():
        config = get(user, config_id)
        clean = sizing_as_set(clean, rule_fields(config))
        check_combination({**rule_fields(config), **clean})
        for name, value in clean.items():
            setattr(config, name, _stored(name, value))
        config.version += 1
        config.updated_at = utcnow()
        config.save()
    _nudge("copy.reload", config.id)
    return config


def delete(user: User | UUID | str, config_id: UUID | str) -> None:
    """Stop the config and remove it from every list (its decision history stays)."""
    with db.atomic():
        config = get(user, config_id)
        was_active = config.is_active
        config.is_active = False
        config.deleted_at = config.stopped_at = config.updated_at = utcnow()
        config.version += 1
        config.save()
    if was_active:
        _nudge("copy.stop", config.id)


def start(user: User | UUID | str, config_id: UUID | str) -> CopyConfig:
    """Start copying (within the tier's active-config limit); idempotent when running."""
    with db.atomic():
        config = get(user, config_id)
        if config.is_active:
            return config
        # Lock the user first so two concurrent starts count each other (PostgreSQL).
        query = User.select().where(User.id == user_id_of(user))
        if isinstance(db.obj, peewee.PostgresqlDatabase):
            query = query.for_update()
        owner = query.get()
        # Read under the lock: a start racing `copytrade users disable` either finishes
        # first (and is stopped by it) or sees the account disabled.
        require_enabled(owner)
        if not config.paper_trading:
            trading_accounts.require_live(owner)
        tiers.check_active_config_quota(owner, tiers.active_configs(owner.id).count())
        now = utcnow()
        config.is_active = True
        config.started_at = config.updated_at = now
        config.last_error = None
        # A restart begins afresh: no stop reason, the breaker closed, buying not paused.
        config.stopped_reason = config.breaker_retry_at = config.breaker_last_error = None
        config.breaker_last_reason = config.buys_paused_reason = config.buys_paused_at = None
        config.breaker_state, config.breaker_failures, config.breaker_trips = "closed", 0, 0
        config.version += 1
        config.save()
    _nudge("copy.start", config.id)
    return config


def stop(user: User | UUID | str, config_id: UUID | str) -> CopyConfig:
    """Stop copying; no order for this config leaves once this returns."""
    with db.atomic():
        config = get(user, config_id)
        if not config.is_active:
            return config
        config.is_active = False
        config.stopped_at = config.updated_at = utcnow()
        config.version += 1
        config.save()
    _nudge("copy.stop", config.id)
    copy_notices.config_stopped(config, "stopped by you")
    return config


def limits(user: User | UUID | str) -> dict[str, Any]:
    """The user's limits across all its copy configs."""
    owner = User.get_by_id(user_id_of(user))
    return {"max_total_exposure_usdc": owner.max_total_exposure_usdc}


def set_limits(user: User | UUID | str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Set the user's limits across its configs; running configs apply them from the next
    fill (each is reloaded)."""
    clean = validate_limits(raw)
    if not clean:
        return limits(user)  # nothing to change
    with db.atomic():
        User.update(**clean).where(User.id == user_id_of(user)).execute()
        running = list(CopyConfig.select(CopyConfig.id).where(
            CopyConfig.user == user_id_of(user), CopyConfig.is_active,
            CopyConfig.deleted_at.is_null()))
        if running:
            CopyConfig.update(version=CopyConfig.version + 1, updated_at=utcnow()).where(
                CopyConfig.id.in_([c.id for c in running])).execute()
    credential_generation.bump()  # cached keys carry the account's row, limits included
    for config in running:
        _nudge("copy.reload", config.id)
    return limits(user)


def _nudge(job_name: str, config_id: UUID) -> None:
    """Tell the workers now (the engines also poll the database, so this is best-effort)."""
    try:
        from services.platform import copy_control

        copy_control.publish(job_name, str(config_id))
    except Exception as exc:  # Redis down: the engines' database sweep still catches it
        log.warning("could not nudge workers about %s %s: %s", job_name, config_id, exc)
