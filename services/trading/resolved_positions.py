"""Copy positions in resolved markets closed at their payout: on a confirmed claim.

A claim redeems every token of its condition that the trading wallet holds, and the
wallet is the one all of the user's live configs trade from: each of their positions in
those tokens closes at the payout per share (``copy_positions.close_at_payout``; the copy
engine closes them the same way when a stop check sees the market resolved). Booked once:
a closed position holds no shares.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from uuid import UUID

from models.copying import CopyConfig
from models.wallet import CONFIRMED, Claim
from services.trading import copy_positions
from services.wallets import claims

log = logging.getLogger(__name__)


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
