"""Target profiles: what the venue shows of a wallet worth copying, and a sizing suggestion."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.user import User
from services.copying import mirror as copying
from services.platform import errors, venues
from services.platform.addresses import checked_address
from services.platform.principal import user_id_of


def target_profile(address: str, *, limit: int = 100) -> dict[str, Any]:
    """The target's recent fills, typical trade size, exposure, PnL and categories (venue)."""
    client = venues.client()
    try:
        rows = [r for r in client.activity_history(address, types="TRADE", max_rows=limit)
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
        "last_trade_at": datetime.fromtimestamp(rows[0].timestamp, UTC) if rows else None,
        "open_positions": len(positions),
        "exposure_usdc": exposure,
        "pnl_usdc": pnl,
        "categories": [{"category": k, "trades": v}
                       for k, v in sorted(categories.items(), key=lambda kv: -kv[1])],
        "recent": [{"side": r.side, "size": r.size, "price": r.price, "market_slug": r.slug,
                    "outcome": r.outcome, "at": datetime.fromtimestamp(r.timestamp, UTC)}
                   for r in rows[:10]],
    }


def suggest_multiplier(user: User | UUID | str, target_address: str | None = None,
                       balance: Decimal | None = None) -> dict[str, Any]:
    """A size_multiplier from the balance and the target's typical trade and exposure."""
    target_address = checked_address(target_address, "target_address")
    if balance is not None and balance < 0:
        raise errors.ValidationFailed(fields={"balance": ["Must be 0 or more."]})
    source = "override"
    if balance is None:
        from services.wallets import readiness

        balance = readiness.available_usdc(user_id_of(user))
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
