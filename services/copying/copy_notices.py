"""What a follower is told about their copies (services/notifications): a copy filled or
skipped, a config out of funds, a config stopped. Call sites and their event ids:

- ``enqueue(intent_ids)`` after the copy engine's transaction settles intents: one job
  (``copying.notify``) reads them and emits, so the hot path pays one Redis write;
  ``copy.filled:<intent>`` / ``copy.skipped:<intent>``; a skip for
  ``insufficient_balance`` also emits ``config.out_of_funds:<config>:<hour>`` (one an hour);
- ``config_stopped(config, reason)`` where copying stops (the user: ``crud.stop``; loss
  stops and drawdown: the copy rules), ``config.stopped:<config>:<version>``;
- ``breaker_opened(config, reason)`` for the copy rules' circuit breaker,
  ``config.breaker_opened:<config>:<version>``;
- ``buys_paused(config, reason)`` when the copy engine pauses a config's buying (a loss or
  drawdown stop without a verdict: ``stop_unverified``),
  ``config.buys_paused:<config>:<paused at>``;
- ``unconfirmed(intent, reason, what)`` when a copy acted on a target's match seen pending
  that its mined transaction did not confirm (services/copying/pending_matches.py):
  ``copy.unconfirmed:<intent>``;
- ``feed_degraded(user_ids, engine, episode, reason)`` when a copy engine's live feed drops
  and detection falls back to polling: ``feed.degraded:<user>:<engine>:<episode>``, one per
  user whose configs that engine runs and per drop (a flapping feed is folded into a digest
  by the channels' flood control).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import INTENT_FILLED, INTENT_SKIPPED, CopyConfig, CopyIntent
from services.copying import mirror
from services.copying.mirror import INSUFFICIENT_BALANCE
from services.markets import catalogue, markets
from services.notifications import events
from services.platform import jobs
from services.platform.addresses import short_address, trader_name

log = logging.getLogger(__name__)

JOB_NAME = "copying.notify"
_CENTS = Decimal("0.01")
# Reasons worded for a follower where the copy rules' own words (mirror.REASONS) name fields.
REASONS = {INSUFFICIENT_BALANCE: "not enough pUSD in the trading wallet",
           "reverted": "its transaction reverted",
           "not_mined": "its transaction was never mined (dropped or replaced)",
           "differs": "the mined transaction filled the trader differently",
           mirror.LOSS_STOP: "its loss reached the config's loss stop",
           mirror.DRAWDOWN_STOP: "its PnL fell the config's maximum drawdown from its peak",
           mirror.STOP_UNVERIFIED: "its loss or drawdown stop has not been able to value a "
                                   "held position for over a minute"}


def readable(reason: str) -> str:
    """A reason code in words for a message (``reason`` itself stays in the payload, for
    machines and the preferences' ``reasons``); text that is already words is kept."""
    text = REASONS.get(reason) or mirror.REASONS.get(reason)
    if text is None:
        return reason.replace("_", " ")
    text = text.rstrip(".")
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def trader(config: CopyConfig) -> str:
    """How a config's target is named in a message: its name with a short address."""
    return trader_name(config.target_name, config.target_address)


def _trader(config: CopyConfig) -> dict[str, str]:
    # The payload keeps ``trader`` as it was (the name, or the short address) and adds the
    # address, from which the text shows the name with its short address.
    return {"trader": config.target_name or short_address(config.target_address),
            "trader_address": config.target_address}


def enqueue(intent_ids: Sequence[UUID]) -> None:
    """Queue the job that tells the followers about these settled intents (best effort:
    Redis down costs the messages, never the copy)."""
    if not intent_ids:
        return
    try:
        jobs.enqueue(JOB_NAME, *intent_ids, queue="low")
    except Exception:
        log.warning("copy notifications for %d intents not queued", len(intent_ids),
                    exc_info=True)


def emit_outcomes(intent_ids: Sequence[UUID | str]) -> int:
    """Emit copy.filled / copy.skipped (and out of funds) for final intents; how many."""
    rows = list(CopyIntent.select(CopyIntent, CopyConfig).join(CopyConfig).where(
        CopyIntent.id.in_([UUID(str(i)) for i in intent_ids]),
        CopyIntent.status.in_((INTENT_FILLED, INTENT_SKIPPED))))
    for intent in rows:
        _emit_one(intent)
    return len(rows)


def _emit_one(intent: CopyIntent) -> None:
    config = intent.config
    common: dict[str, Any] = {"config_id": config.id, **_trader(config),
                              "market": intent.market_slug or intent.token_id,
                              "outcome": intent.outcome or None, "paper": intent.paper,
                              **markets.names(intent.market_slug, intent.token_id)}
    if intent.status == INTENT_FILLED:
        size = intent.filled_size or intent.size
        price = intent.filled_price or intent.price
        amount = (size * price).quantize(_CENTS) if size is not None and price else None
        events.emit(intent.user_id, "copy.filled", f"copy.filled:{intent.id}",
                    link="/dashboard/configs", side="Bought" if intent.side == "BUY" else "Sold",
                    size=size, price=price, amount=amount, **common)
        return
    reason = intent.reason or "skipped"
    events.emit(intent.user_id, "copy.skipped", f"copy.skipped:{intent.id}",
                link="/dashboard/configs", reason=reason,
                reason_text=readable(reason), amount=intent.usdc, **common)
    if reason == INSUFFICIENT_BALANCE:
        hour = utcnow().strftime("%Y%m%d%H")
        events.emit(intent.user_id, "config.out_of_funds",
                    f"config.out_of_funds:{config.id}:{hour}", link="/dashboard/wallet",
                    config_id=config.id, **_trader(config), amount=intent.usdc)


def config_stopped(config: CopyConfig, reason: str) -> None:
    """config.stopped: copying this config stopped (``reason``: user, loss_stop, drawdown)."""
    events.emit(config.user_id, "config.stopped", f"config.stopped:{config.id}:{config.version}",
                link="/dashboard/configs", config_id=config.id, **_trader(config),
                reason=reason, reason_text=readable(reason))


def breaker_opened(config: CopyConfig, reason: str) -> None:
    """config.breaker_opened: the copy rules paused this config (``reason`` says why)."""
    events.emit(config.user_id, "config.breaker_opened",
                f"config.breaker_opened:{config.id}:{config.version}",
                link="/dashboard/configs", config_id=config.id, **_trader(config),
                reason=reason, reason_text=readable(reason))


def buys_paused(config: CopyConfig, reason: str) -> None:
    """config.buys_paused: the copy engine paused this config's buying (``reason`` says
    why); once per pause."""
    since = int(config.buys_paused_at.timestamp()) if config.buys_paused_at else 0
    events.emit(config.user_id, "config.buys_paused",
                f"config.buys_paused:{config.id}:{since}", link="/dashboard/configs",
                config_id=config.id, **_trader(config), reason=reason,
                reason_text=readable(reason))


def unconfirmed(intent: CopyIntent, reason: str, what: str) -> None:
    """copy.unconfirmed: this copy acted on a pending match the chain did not confirm
    (``reason``: reverted, not_mined, differs); ``what`` says what became of the copy."""
    config = intent.config
    events.emit(intent.user_id, "copy.unconfirmed", f"copy.unconfirmed:{intent.id}",
                link="/dashboard/configs", config_id=config.id, **_trader(config),
                market=intent.market_slug or intent.token_id, reason=reason,
                **catalogue.named(intent.market_slug, intent.token_id),
                reason_text=readable(reason), what=what, paper=intent.paper)


def feed_degraded(user_ids: Sequence[UUID], engine: str, episode: str, reason: str) -> int:
    """feed.degraded for each of ``user_ids`` (once per engine and drop: ``episode`` is when
    the feed dropped); how many were told."""
    told = 0
    for user_id in user_ids:
        told += events.emit(user_id, "feed.degraded", f"feed.degraded:{user_id}:{engine}:"
                            f"{episode}", link="/dashboard/configs", reason=reason,
                            since=episode) is not None
    return told
