"""Copy positions in resolved markets closed at their payout: on a confirmed claim, and by
the upkeep's sweep for every config (paper ones and those without a stop included).

A claim redeems every token of its condition that the trading wallet holds, and the
wallet is the one all of the user's live configs trade from: each of their positions in
those tokens closes at the payout per share (``copy_positions.close_at_payout``; the copy
engine closes them the same way when a stop check sees the market resolved). Booked once:
a closed position holds no shares.
"""

from __future__ import annotations

import logging
import threading
import time
from decimal import Decimal
from uuid import UUID

from models.copying import CopyConfig, CopyPosition
from models.wallet import CONFIRMED, Claim
from services.trading import copy_positions
from services.wallets import claims

log = logging.getLogger(__name__)

# Conditions whose market Gamma is asked about per sweep (one read each), and how long an
# unresolved one is left before it is asked again: the sweep's load on Gamma stays bounded
# however many positions are open.
SWEEP_CONDITIONS = 50
RECHECK_SECONDS = 600.0
_asked: dict[str, float] = {}  # condition -> when (monotonic) it was last found unresolved
_asked_lock = threading.Lock()


def payouts(condition_id: str) -> dict[str, Decimal] | None:
    """Each token's payout per share once the condition's market resolved (Gamma's
    outcome prices); None while it is not resolved or Gamma cannot say."""
    market = claims.resolved_market(condition_id)
    if market is None:
        return None
    paid = {token: market.payout(token) for token in market.token_ids}
    return {token: value for token, value in paid.items() if value is not None}


def close_claimed(claim_id: UUID | str) -> list[copy_positions.Closed]:
    """Close the user's live copy positions in a confirmed claim's tokens at their payout;
    what was closed (nothing before the claim is confirmed)."""
    claim = Claim.get_by_id(UUID(str(claim_id)))
    if claim.status != CONFIRMED:
        return []
    paid = payouts(claim.condition_id)
    if not paid:
        return []
    tokens = {t: paid[t] for t in claim.token_id_list if t in paid}
    configs = [row.id for row in CopyConfig.select(CopyConfig.id)
               .where(CopyConfig.user == claim.user_id)]
    closed = copy_positions.close_at_payout(configs, tokens, paper=False)
    for row in closed:
        log.info("claim %s closed copy position %s/%s: %s shares, realized %s", claim.id,
                 row.config_id, row.token_id, row.shares, row.realized)
    return closed


def open_conditions() -> list[str]:
    """The conditions of every config's open copy positions (paper and live), oldest first."""
    rows = (CopyPosition.select(CopyPosition.condition_id, CopyPosition.shares)
            .where(CopyPosition.condition_id != "").order_by(CopyPosition.updated_at))
    return list(dict.fromkeys(row.condition_id for row in rows if row.shares > 0))


def close_resolved_markets(limit: int = SWEEP_CONDITIONS) -> list[copy_positions.Closed]:
    """Close every config's open positions in markets that resolved at their payout (paper
    and live, with or without a stop: their PnL and the exposure cap stop counting a market
    that is over); what was closed. Up to ``limit`` conditions are asked per call, and one
    found unresolved is not asked again for ``RECHECK_SECONDS``."""
    now = time.monotonic()
    with _asked_lock:
        for condition in [c for c, at in _asked.items() if now - at >= RECHECK_SECONDS]:
            del _asked[condition]
        due = [c for c in open_conditions() if c not in _asked][:limit]
    closed: list[copy_positions.Closed] = []
    for condition in due:
        paid = payouts(condition)
        if not paid:
            with _asked_lock:
                _asked[condition] = now
            continue
        configs = [row.config_id for row in CopyPosition.select(CopyPosition.config)
                   .where(CopyPosition.condition_id == condition).distinct()]
        for row in copy_positions.close_at_payout(configs, paid):
            log.info("market %s resolved: copy position %s/%s closed, %s shares, realized %s",
                     condition, row.config_id, row.token_id, row.shares, row.realized)
            closed.append(row)
    return closed
