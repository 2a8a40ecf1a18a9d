"""Claims: redeeming resolved positions of the trading wallet into collateral, on chain.

``claimable_positions`` is the one computation of what can be redeemed (the Positions
endpoint reuses it for ``claimable_value``): the venue's Data API lists the wallet's
redeemable positions, whatever brought them there (bought here, deposited, transferred);
their markets are catalogued from Gamma when missing; then the wallet's balances and the
conditions' payouts are read on chain (``balanceOfBatch``, ``payoutDenominator``), which
decide. When the Data API cannot answer, the catalogue's closed markets are the candidates.

``sweep_available`` (job ``claims.sweep_available``, every CLAIM_SWEEP_SECONDS across
workers) looks at every ready account whose Data API listing shows redeemable positions and
tells the user once per market that pays (``claim.available``, wallet_notices).

``claim`` records one Claim per condition and enqueues job ``claims.redeem``, which
redeems through ConditionalTokens ``redeemPositions`` (plain markets) or the
NegRiskCtfCollateralAdapter (neg-risk markets, after approving it on the CTF; the v1
NegRiskAdapter is deprecated, ACCOUNTS.md §5, §11), with the same persist-before-broadcast
and nonce rules as withdrawals.

A protocol-v2 market (Gamma ``version`` "v2", ACCOUNTS.md §11) holds its positions on the
PositionManager and redeems them through the Router's ``redeem(bytes31, outcome, amount)``
(after approving the Router there), pUSD out; its payouts are read from Gamma (a closed,
resolved market's outcome prices), the Router's own resolution interface not being
documented. A claim is a v2 one when its tokens are position ids.

A deposit wallet (type 3), or a grandfathered proxy (1) or Safe (2), holds the positions
itself, not its owner EOA, and pays no gas: its claims list what the wallet (the maker)
holds and redeem through the CtfCollateralAdapter or NegRiskCtfCollateralAdapter as one
relayer transaction per condition (a WALLET batch, or PROXY / SAFE; services/
wallet_batches.py: stored before it leaves, sent at most once), so the payout arrives as
pUSD.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any
from uuid import UUID

from peewee import fn
from web3 import Web3

from chain import ids, transfers
from chain.abi import CONDITIONAL_TOKENS, NEG_RISK_ADAPTER, load_abi
from chain.errors import ChainError
from chain.tokens import (
    from_base_units,
    native_balance_wei,
    outcome_balances_base,
    payout_fractions,
    read,
    to_base_units,
    token_decimals,
)
from chain.transactions import (
    SignedTx,
    build_ctf_approval,
    build_ctf_redeem,
    build_transaction,
    estimate_gas,
    require_gas_for,
    suggest_fees,
)
from models.market import Market, MarketToken
from models.user import User
from models.wallet import (
    CONFIRMED,
    FAILED,
    OPEN_STATES,
    QUEUED,
    SIGNED,
    Claim,
    TradingWallet,
    WalletTransaction,
)
from services.markets import catalogue
from services.platform import chain_access, errors, venues
from services.platform.principal import user_id_of
from services.wallets import (
    broadcast_wait,
    chain_transport,
    money_requests,
    trading_accounts,
    wallet_batches,
    wallet_lifecycle,
    wallet_notices,
    wallet_transactions,
    wallets,
    withdrawals,
)
from venue.accounts.batch import Call
from venue.accounts.wallet_calls import redeem_call, router_redeem_call
from venue.errors import VenueError
from venue.models import REDEEMABLE, REDEEMABLE_LOST
from venue.models import Market as VenueMarket
from venue.models import Position as VenuePosition
from venue.order_versions import is_position_id

log = logging.getLogger(__name__)

JOB_NAME = "claims.redeem"
SWEEP_JOB = "claims.sweep_available"
SWEEP_TIMEOUT = 1800  # seconds: a sweep pages through every ready account
BALANCE_BATCH = 200  # token ids per balanceOfBatch call
# Gas budgeted per neg-risk or v2 claim when it cannot be estimated before the approval
# exists: setApprovalForAll (~50k) plus the adapter's or Router's redeem (~250k), with room.
NEG_RISK_GAS_BUDGET = 400_000
POSITION_DECIMALS = 6  # protocol-v2 positions count in pUSD's base units


@dataclass(frozen=True)
class ClaimablePosition:
    """A position in a resolved market held by the wallet, and what redeeming it pays."""

    token_id: str
    condition_id: str
    outcome_index: int
    outcome: str
    market_slug: str
    market_title: str
    neg_risk: bool
    size: Decimal  # shares (outcome tokens) held
    payout_fraction: Decimal  # collateral per share
    claimable_value: Decimal  # size * payout_fraction, in collateral
    collateral: str  # the token the payout arrives in


def payout_symbol(collateral: str) -> str:
    """The name of the token a claim pays in (``pUSD``, ``USDC.e``); its address if neither."""
    contracts = chain_access.contracts()
    names = {contracts.pusd.lower(): "pUSD", contracts.usdce.lower(): "USDC.e"}
    return names.get(collateral.lower(), collateral)


# A resolved condition's payouts never change: remember them per CTF and condition.
_payouts: dict[tuple[str, str], list[Decimal]] = {}
_adapter_tokens: dict[str, tuple[str, str]] = {}
_cache_lock = threading.Lock()


def _resolved_payouts(w3: Web3, ctf: str, condition_id: str) -> list[Decimal] | None:
    key = (ctf, condition_id.lower())
    with _cache_lock:
        known = _payouts.get(key)
    if known is not None:
        return known
    fractions = payout_fractions(w3, ctf, condition_id)
    if fractions is not None:
        with _cache_lock:
            _payouts[key] = fractions
    return fractions


def neg_risk_tokens(w3: Web3, adapter: str) -> tuple[str, str]:
    """The adapter's (wrapped collateral, payout collateral) addresses."""
    with _cache_lock:
        known = _adapter_tokens.get(adapter)
    if known is not None:
        return known
    contract = w3.eth.contract(address=Web3.to_checksum_address(adapter),
                               abi=load_abi(NEG_RISK_ADAPTER))
    pair = (Web3.to_checksum_address(read(lambda: contract.functions.wcol().call(), "wcol")),
            Web3.to_checksum_address(read(lambda: contract.functions.col().call(), "col")))
    with _cache_lock:
        _adapter_tokens[adapter] = pair
    return pair


def _position_collateral(w3: Web3, market: Market, tokens: list[MarketToken]) -> str | None:
    """The collateral the market's token ids are derived from (None if none of ours)."""
    contracts = chain_access.contracts()
    count = max(t.outcome_index for t in tokens) + 1
    by_index = {t.outcome_index: int(t.token_id) for t in tokens}
    candidates = ([neg_risk_tokens(w3, contracts.neg_risk_adapter)[0]] if market.neg_risk
                  else [contracts.usdce, contracts.pusd])
    for collateral in candidates:
        derived = ids.outcome_position_ids(collateral, market.condition_id, count)
        if all(derived[i] == token_id for i, token_id in by_index.items()):
            return collateral
    return None


def _venue_redeemable(owner: str) -> list[VenuePosition] | None:
    """The Data API's redeemable positions of ``owner`` that pay: REDEEMABLE_LOST ones
    (ACCOUNTS.md §12) are never offered; None when it cannot answer."""
    try:
        rows = venues.client().all_positions(owner, status=REDEEMABLE)
    except VenueError as exc:
        log.warning("claims: the Data API's positions of %s failed (%s); falling back to the "
                    "catalogue's closed markets", owner, exc)
        return None
    return [row for row in rows if (row.redeemable or row.status == REDEEMABLE)
            and row.status != REDEEMABLE_LOST and row.size > 0]


def _catalogue_missing(condition_ids: Sequence[str] = (), token_ids: Sequence[str] = ()
                       ) -> None:
    """Fetch from Gamma and catalogue the markets of conditions or tokens we do not list."""
    conditions = {c.lower() for c in condition_ids}
    if conditions:
        known = Market.select(Market.condition_id).where(
            fn.LOWER(Market.condition_id).in_(list(conditions)))
        conditions -= {row.condition_id.lower() for row in known}
    tokens = set(token_ids)
    if tokens:
        known_tokens = MarketToken.select(MarketToken.token_id).where(
            MarketToken.token_id.in_(list(tokens)))
        tokens -= {row.token_id for row in known_tokens}
    if not conditions and not tokens:
        return
    client = venues.client()
    fetched = []
    try:
        # no ``closed`` filter: resolved markets are closed ones; the client asks 100 ids a
        # request at most (ACCOUNTS.md §12)
        for key, values in (("condition_ids", sorted(conditions)),
                            ("clob_token_ids", sorted(tokens))):
            if values:
                fetched += client.list_markets(**{key: values})
    except VenueError as exc:  # those positions wait for the next claim
        log.warning("claims: fetching markets from Gamma failed: %s", exc)
    if fetched:
        catalogue.upsert_markets(fetched)


def _candidate_tokens(owner: str, token_ids: Sequence[str] | None) -> list[MarketToken]:
    """Outcome tokens that may be claimable: checked on chain by the caller."""
    query = MarketToken.select(MarketToken, Market).join(Market)
    if token_ids is not None:
        wanted = [str(t) for t in token_ids]
        if not wanted:
            return []
        _catalogue_missing(token_ids=wanted)
        return list(query.where(MarketToken.token_id.in_(wanted)))
    listed = _venue_redeemable(owner)
    if listed is None:
        # a resolved market is closed on the venue; open ones cannot be redeemed
        return list(query.where(Market.closed == True))  # noqa: E712 - peewee expression
    if not listed:
        return []
    conditions = sorted({row.condition_id.lower() for row in listed if row.condition_id})
    _catalogue_missing(condition_ids=conditions)
    return list(query.where(fn.LOWER(Market.condition_id).in_(conditions)))


def claimable_positions(owner: str, token_ids: Sequence[str] | None = None
                        ) -> list[ClaimablePosition]:
    """Positions of ``owner`` in resolved markets, with what redeeming each pays.

    Candidates are the Data API's redeemable positions of ``owner`` (the catalogue's closed
    markets when the Data API cannot answer), or exactly ``token_ids`` when given; markets
    missing from the catalogue are fetched from Gamma and catalogued. Balances and
    resolutions are then read on chain; losing positions are listed with claimable_value 0
    (redeeming them only burns them).
    """
    tokens = _candidate_tokens(owner, token_ids)
    if not tokens:
        return []
    w3 = chain_access.web3()
    ctf = chain_access.contracts().ctf
    pusd = chain_access.contracts().pusd
    balances = _held(w3, owner, tokens)
    held_by_market: dict[UUID, list[MarketToken]] = defaultdict(list)
    for token in tokens:
        if balances.get(int(token.token_id), 0) > 0:
            held_by_market[token.market.id].append(token)
    positions: list[ClaimablePosition] = []
    for held in held_by_market.values():
        market = held[0].market
        if is_position_id(held[0].token_id):
            positions += _v2_claimable(market, held, balances, pusd)
            continue
        fractions = _resolved_payouts(w3, ctf, market.condition_id)
        if fractions is None:
            continue
        all_tokens = list(MarketToken.select().where(MarketToken.market == market.id))
        collateral = _position_collateral(w3, market, all_tokens)
        if collateral is None:
            log.warning("market %s: token ids match none of our collaterals", market.slug)
            continue
        # neg-risk winnings come through the NegRiskCtfCollateralAdapter: pUSD
        payout_token = pusd if market.neg_risk else collateral
        positions += _valued(market, held, balances, fractions, payout_token,
                             token_decimals(w3, payout_token))
    return positions


def _valued(market: Market, held: list[MarketToken], balances: dict[int, int],
            fractions: list[Decimal], payout_token: str, decimals: int
            ) -> list[ClaimablePosition]:
    """Each held token of a resolved market with what redeeming it pays."""
    found = []
    for token in sorted(held, key=lambda t: t.outcome_index):
        if token.outcome_index >= len(fractions):
            continue
        size = from_base_units(balances[int(token.token_id)], decimals)
        fraction = fractions[token.outcome_index]
        found.append(ClaimablePosition(
            token_id=token.token_id, condition_id=market.condition_id,
            outcome_index=token.outcome_index, outcome=token.outcome, market_slug=market.slug,
            market_title=market.title, neg_risk=market.neg_risk, size=size,
            payout_fraction=fraction, claimable_value=size * fraction,
            collateral=payout_token))
    return found


def _held(w3: Web3, owner: str, tokens: Sequence[MarketToken]) -> dict[int, int]:
    """``owner``'s balance of each token: CTF tokens on the CTF, protocol-v2 positions on
    the PositionManager (both ERC-1155 ``balanceOfBatch``)."""
    balances: dict[int, int] = {}
    holders = {False: chain_access.contracts().ctf,
               True: chain_access.contracts().position_manager}
    for v2, holder in holders.items():
        group = [int(t.token_id) for t in tokens if is_position_id(t.token_id) is v2]
        for start in range(0, len(group), BALANCE_BATCH):
            balances.update(outcome_balances_base(w3, holder, owner,
                                                  group[start:start + BALANCE_BATCH]))
    return balances


def resolved_market(condition_id: str) -> VenueMarket | None:
    """The condition's market as Gamma has it once closed and resolved (its outcome prices
    are the payouts); None before, or when Gamma cannot answer."""
    try:
        found = venues.client().list_markets(condition_ids=[condition_id], max_rows=1)
    except VenueError as exc:
        log.warning("Gamma's market of %s failed: %s", condition_id, exc)
        return None
    return found[0] if found and found[0].resolved else None


def _v2_payouts(condition_id: str) -> list[Decimal] | None:
    """A resolved protocol-v2 market's payout per outcome: its Gamma outcome prices once it
    is closed and resolved (None before, or when Gamma cannot answer)."""
    key = ("v2", condition_id.lower())
    with _cache_lock:
        known = _payouts.get(key)
    if known is not None:
        return known
    market = resolved_market(condition_id)
    if market is None:
        return None
    fractions = list(market.outcome_prices)
    with _cache_lock:
        _payouts[key] = fractions
    return fractions


def _v2_claimable(market: Market, held: list[MarketToken], balances: dict[int, int],
                  pusd: str) -> list[ClaimablePosition]:
    """The claimable positions of a resolved protocol-v2 market (the Router pays pUSD)."""
    fractions = _v2_payouts(market.condition_id)
    if fractions is None:
        return []
    return _valued(market, held, balances, fractions, pusd, POSITION_DECIMALS)


def is_v2(claim: Claim) -> bool:
    """Whether a claim redeems protocol-v2 positions (through the Router)."""
    return any(is_position_id(t) for t in claim.token_id_list)


def claimable_value(owner: str, token_id: str) -> Decimal | None:
    """What redeeming one token pays now; None while its market is unresolved or not held."""
    for position in claimable_positions(owner, [token_id]):
        return position.claimable_value
    return None


def _claim_gas_wei(w3: Web3, wallet: TradingWallet, claim: Claim, max_fee: int) -> int:
    """The most gas a claim may cost, at the current fee cap."""
    if claim.neg_risk or is_v2(claim):
        return NEG_RISK_GAS_BUDGET * max_fee
    data = _redeem_calldata(w3, claim)
    gas = estimate_gas(w3, sender=wallet.address, to=chain_access.contracts().ctf, data=data)
    return gas * max_fee


def _redeem_calldata(w3: Web3, claim: Claim) -> bytes:
    contract = w3.eth.contract(abi=load_abi(CONDITIONAL_TOKENS))
    args = [Web3.to_checksum_address(claim.collateral), b"\x00" * 32,
            Web3.to_bytes(hexstr=claim.condition_id),
            [1 << i for i in range(len(claim.token_id_list))]]
    return Web3.to_bytes(hexstr=contract.encode_abi("redeemPositions", args=args))


def _open_claim(wallet: TradingWallet, condition_id: str) -> Claim | None:
    return (Claim.select().where((Claim.wallet == wallet.id)
                                 & (Claim.condition_id == condition_id)
                                 & Claim.status.in_(OPEN_STATES)).first())


def _paying_conditions(positions: list[ClaimablePosition]
                       ) -> list[tuple[str, list[ClaimablePosition], Decimal]]:
    """(condition, its positions by outcome index, payout) for each condition that pays;
    only losing tokens are skipped (redeeming them would spend gas for nothing)."""
    by_condition: dict[str, list[ClaimablePosition]] = defaultdict(list)
    for position in positions:
        by_condition[position.condition_id].append(position)
    paying = []
    for condition_id, held in by_condition.items():
        payout = sum((p.claimable_value for p in held), Decimal(0))
        if payout > 0:
            paying.append((condition_id, sorted(held, key=lambda p: p.outcome_index), payout))
    return paying


def _draft_v2_claim(user_id: UUID, wallet: TradingWallet, held: list[ClaimablePosition],
                    payout: Decimal) -> Claim:
    """An EOA's v2 claim: the Router redeems one position a transaction, so it names the
    paying position worth most (another one left is claimed next time)."""
    best = max((p for p in held if p.claimable_value > 0), key=lambda p: p.claimable_value)
    return Claim(
        user=user_id, wallet=wallet.id, condition_id=best.condition_id, neg_risk=best.neg_risk,
        market_slug=best.market_slug, token_ids=json.dumps([best.token_id]),
        amounts=json.dumps([str(to_base_units(best.size, POSITION_DECIMALS))]),
        collateral=best.collateral, expected_payout=best.claimable_value, status=QUEUED)


def _draft_claims(user_id: UUID, wallet: TradingWallet, positions: list[ClaimablePosition]
                  ) -> list[Claim]:
    w3 = chain_access.web3()
    drafts: list[Claim] = []
    for condition_id, held, payout in _paying_conditions(positions):
        first = held[0]
        if is_position_id(first.token_id):
            drafts.append(_draft_v2_claim(user_id, wallet, held, payout))
            continue
        tokens = list(MarketToken.select().join(Market)
                      .where(Market.condition_id == condition_id)
                      .order_by(MarketToken.outcome_index))
        token_ids = [t.token_id for t in tokens]
        balances = outcome_balances_base(w3, chain_access.contracts().ctf, wallet.address,
                                         token_ids)
        drafts.append(Claim(
            user=user_id, wallet=wallet.id, condition_id=condition_id, neg_risk=first.neg_risk,
            market_slug=first.market_slug, token_ids=json.dumps(token_ids),
            amounts=json.dumps([str(balances[int(t)]) for t in token_ids]),
            collateral=first.collateral,
            expected_payout=payout, status=QUEUED))
    return drafts


def _indexed_claimable(maker: str, token_ids: Sequence[str] | None
                       ) -> list[ClaimablePosition]:
    """The Data API's redeemable positions of ``maker`` (a deposit wallet the chain does not
    hold, as the sandbox's simulated ones): its size and settlement price decide."""
    listed = _venue_redeemable(maker) or []
    wanted = None if token_ids is None else {str(t) for t in token_ids}
    pusd = trading_accounts.contracts().collateral_token
    return [ClaimablePosition(
        token_id=row.asset, condition_id=row.condition_id, outcome_index=row.outcome_index or 0,
        outcome=row.outcome, market_slug=row.slug, market_title=row.title,
        neg_risk=row.negative_risk, size=row.size, payout_fraction=row.cur_price,
        claimable_value=row.size * row.cur_price, collateral=pusd)
        for row in listed if wanted is None or row.asset in wanted]


def maker_claimable(wallet: TradingWallet, token_ids: Sequence[str] | None = None
                    ) -> list[ClaimablePosition]:
    """What a relayer-operated wallet (deposit, proxy, Safe) can claim: read on chain when
    the wallet is deployed there, else as the venue indexes it; the payout is pUSD (the
    collateral adapters pay it)."""
    maker = wallets.maker(wallet)
    if chain_access.current().rpc_url and chain_access.web3().eth.get_code(maker):
        pusd = trading_accounts.contracts().collateral_token
        return [replace(p, collateral=pusd) for p in claimable_positions(maker, token_ids)]
    return _indexed_claimable(maker, token_ids)


def wallet_claimable(wallet: TradingWallet, token_ids: Sequence[str] | None = None
                     ) -> list[ClaimablePosition]:
    """What the account can claim, read where its positions are: the maker (a deposit
    wallet, or a connected account's wallet), never the owner or signer key."""
    if trading_accounts.uses_relayer(wallet):
        return maker_claimable(wallet, token_ids)
    return claimable_positions(wallets.maker(wallet), token_ids)


def _draft_relayer_claims(user_id: UUID, wallet: TradingWallet,
                          positions: list[ClaimablePosition]) -> list[Claim]:
    """One claim per condition with a payout; the batch redeems both outcomes at once."""
    drafts: list[Claim] = []
    for condition_id, held, payout in _paying_conditions(positions):
        drafts.append(Claim(
            user=user_id, wallet=wallet.id, condition_id=condition_id,
            neg_risk=held[0].neg_risk, market_slug=held[0].market_slug,
            token_ids=json.dumps([p.token_id for p in held]),
            amounts=json.dumps([str(to_base_units(p.size, withdrawals.RELAYER_TOKEN_DECIMALS))
                                for p in held]),
            collateral=held[0].collateral, expected_payout=payout, status=QUEUED))
    return drafts


def _last_confirmed(wallet: TradingWallet, condition_id: str) -> Claim | None:
    return (Claim.select().where((Claim.wallet == wallet.id)
                                 & (Claim.condition_id == condition_id)
                                 & (Claim.status == CONFIRMED))
            .order_by(Claim.updated_at.desc()).first())


def _confirmed_block(claim: Claim) -> int | None:
    """The block a confirmed claim's redemption mined in, as the RPC knows it: its own
    transaction's, or its relayer transaction's receipt (None when unknown there)."""
    if claim.transaction_id is not None:
        return claim.transaction.block_number
    tx_hash = claim.relayer_transaction_hash
    if not tx_hash or not chain_access.current().rpc_url:
        return None
    w3 = chain_access.web3()
    try:
        receipt = read(lambda: w3.eth.get_transaction_receipt(tx_hash), "a claim's receipt")
    except ChainError:  # not a chain hash, or a node that has not seen it yet
        return None
    return int(receipt["blockNumber"])


def _chain_caught_up(claim: Claim) -> bool:
    """Whether balances read now are read at or after the confirmed claim's block."""
    if not chain_access.current().rpc_url:
        return True  # balances are the venue's index, which holds no block
    block = _confirmed_block(claim)
    if block is None:
        return claim.transaction_id is None and not _relayer_ran_on_chain(claim)
    return int(read(lambda: chain_access.web3().eth.block_number, "the latest block")) >= block


def _relayer_ran_on_chain(claim: Claim) -> bool:
    """Whether the relayer claim's wallet lives on this chain (its hash must be found)."""
    maker = wallets.maker(claim.wallet)
    return bool(chain_access.web3().eth.get_code(maker))


def _keep_new(wallet: TradingWallet, drafts: list[Claim],
              redraft: Callable[[list[str]], list[Claim]]) -> tuple[list[Claim], list[Claim]]:
    """(claims to answer, drafts to save): a condition already being claimed answers its
    open claim instead of a second one; one whose last claim confirmed is drafted again
    from balances read now, at or after that claim's block (those drafted from may have
    been read before its redemption mined), and not at all when nothing is left."""
    claims: list[Claim] = []
    fresh: list[Claim] = []
    for draft in drafts:
        existing = _open_claim(wallet, draft.condition_id)
        if existing is not None:
            claims.append(existing)
            continue
        last = _last_confirmed(wallet, draft.condition_id)
        if last is not None:
            if not _chain_caught_up(last):
                log.warning("claims: the chain has not caught up with claim %s of %s yet; "
                            "not claiming that market again now", last.id, draft.condition_id)
                continue
            again = [d for d in redraft(draft.token_id_list)
                     if d.condition_id == draft.condition_id]
            if not again:
                continue
            draft = again[0]
        fresh.append(draft)
    return claims, fresh


def request(user: User | UUID | str, token_ids: Sequence[str] | None = None) -> list[Claim]:
    """Record claims for the user's claimable positions (one per condition); 402 without gas.

    A condition already being claimed returns its open claim instead of a second one. A
    deposit wallet's claims need no gas (the relayer pays it).
    """
    user_id = user_id_of(user)
    wallet = wallets.get_or_create(user_id)
    if trading_accounts.uses_relayer(wallet):
        def relayer_drafts(tokens: Sequence[str] | None) -> list[Claim]:
            return _draft_relayer_claims(user_id, wallet, maker_claimable(wallet, tokens))

        claims, drafts = _keep_new(wallet, relayer_drafts(token_ids), relayer_drafts)
        for draft in drafts:
            draft.save(force_insert=True)
        return claims + drafts

    def eoa_drafts(tokens: Sequence[str] | None) -> list[Claim]:
        return _draft_claims(user_id, wallet, claimable_positions(wallet.address, tokens))

    claims, drafts = _keep_new(wallet, eoa_drafts(token_ids), eoa_drafts)
    if drafts:
        w3 = chain_access.web3()
        fees = suggest_fees(w3)
        needed = sum(_claim_gas_wei(w3, wallet, d, fees.max_fee_per_gas) for d in drafts)
        reserved = wallet_transactions.reserved_wei(wallet, w3)
        free = native_balance_wei(w3, wallet.address) - reserved
        if free < needed:
            raise errors.InsufficientBalance(
                "The trading wallet needs MATIC to pay gas for these claims: about "
                f"{wallet_transactions.matic(needed)} MATIC, it has "
                f"{wallet_transactions.matic(max(free, 0))}. Deposit MATIC to the deposit "
                f"address ({withdrawals.DEPOSIT_ADDRESS_WHERE}).")
        for draft in drafts:
            draft.save(force_insert=True)
            claims.append(draft)
    return claims


def announce(user_id: UUID, positions: list[ClaimablePosition]) -> int:
    """claim.available for each market in ``positions`` that pays (once per user and
    market, whoever calls); how many were new."""
    told = 0
    for condition_id, held, payout in _paying_conditions(positions):
        market = held[0].market_title or held[0].market_slug or condition_id
        told += wallet_notices.claim_available(user_id, condition_id, market, payout)
    return told


def sweep_available(accounts: Any) -> int:
    """Tell the owners of ``accounts`` (TradingWallets) about winnings to claim; how many
    were told. An account whose Data API listing shows nothing redeemable (or cannot be
    read) costs one request and is looked at again next sweep."""
    told = 0
    for wallet in accounts:
        try:
            if not _venue_redeemable(wallets.maker(wallet)):
                continue
            told += announce(wallet.user_id, wallet_claimable(wallet))
        except Exception as exc:  # one account's chain or venue trouble stops no other
            log.warning("claim sweep of wallet %s failed: %s", wallet.id, exc)
    return told


def enqueue_sweep() -> None:
    """Queue the claim sweep (once while one is pending)."""
    from services.platform import jobs

    jobs.enqueue(SWEEP_JOB, job_id=jobs.logical_job_id(SWEEP_JOB), queue="low",
                 timeout=SWEEP_TIMEOUT)


def enqueue(claim: Claim) -> None:
    """Queue the redeem job for a claim (queued once per claim)."""
    from services.platform import jobs

    jobs.enqueue(JOB_NAME, claim.id, job_id=jobs.logical_job_id(JOB_NAME, claim.id),
                 queue="high", timeout=wallet_lifecycle.job_timeout())


def describe(claim: Claim) -> dict[str, Any]:
    """A claim as the API shows it."""
    tx: WalletTransaction | None = claim.transaction if claim.transaction_id else None
    return {
        "id": claim.id, "status": claim.status, "condition_id": claim.condition_id,
        "market_slug": claim.market_slug, "neg_risk": claim.neg_risk,
        "token_ids": claim.token_id_list, "expected_payout": claim.payout,
        "tx_hash": broadcast_wait.tx_hash(claim),
        "approval_tx_hash": (claim.approval_transaction.tx_hash
                             if claim.approval_transaction_id else None),
        "block_number": tx.block_number if tx else None,
        "gas_fee": tx.gas_fee if tx else None, "error": claim.error,
        "relayer_transaction_id": claim.relayer_transaction_id,
        "created_at": claim.created_at, "updated_at": claim.updated_at,
    }


def claim(user: User | UUID | str, token_ids: Sequence[str] | None = None,
          wait_seconds: float | None = None) -> dict[str, Any]:
    """Submit claims for claimable positions and briefly await their broadcast."""
    claims = request(user, token_ids)
    money_requests.queue_or_fail(claims, enqueue, "claim")
    claims = (money_requests.await_hashes(Claim, [c.id for c in claims], wait_seconds)
              if claims else [])
    described = [describe(c) for c in claims]
    if not claims:
        message = "Nothing to claim: no resolved positions with a payout in the trading wallet."
    else:
        pending = sum(1 for c in claims if c.status in (QUEUED, SIGNED))
        message = f"{len(claims)} claim{'s' if len(claims) != 1 else ''} submitted."
        if pending:
            message += f" {pending} still queued."
    summary = message  # the dashboard follows each claim itself: no /api path in its text
    if claims and pending:
        message = message[:-1] + "; follow each at /api/positions/claims/{id}."
    total = sum((c.payout for c in claims if c.status != FAILED), Decimal(0))
    return {"claims": described, "message": message, "summary": summary,
            "expected_payout": total}


def get(user: User | UUID | str, claim_id: UUID | str) -> Claim:
    """One of the user's claims; NotFound otherwise."""
    try:
        cid = UUID(str(claim_id))
    except ValueError:
        raise errors.NotFound("No such claim.") from None
    found = Claim.get_or_none((Claim.id == cid) & (Claim.user == user_id_of(user)))
    if found is None:
        raise errors.NotFound("No such claim.")
    return found


# ---- the job -----------------------------------------------------------------------------

def _approval_of(claim: Claim) -> tuple[str, str]:
    """(ERC-1155 holding the claim's tokens, operator its redeem needs approved there): the
    PositionManager and the Router for v2, the CTF and the NegRiskCtfCollateralAdapter for
    neg-risk."""
    contracts = chain_access.contracts()
    if is_v2(claim):
        return contracts.position_manager, contracts.protocol_v2_router
    return contracts.ctf, contracts.neg_risk_collateral_adapter


def _is_approved(w3: Web3, owner: str, token: str, operator: str) -> bool:
    ctf = w3.eth.contract(address=Web3.to_checksum_address(token),
                          abi=load_abi(CONDITIONAL_TOKENS))
    return bool(read(lambda: ctf.functions.isApprovedForAll(
        Web3.to_checksum_address(owner), Web3.to_checksum_address(operator)).call(),
        "isApprovedForAll"))


def _approved_first(wallet: TradingWallet) -> Any:
    """Neg-risk or v2: the redeeming contract (the collateral adapter, the Router) may move the
    wallet's tokens before the redeem is signed: an approval transaction of its own (linked to
    the claim), mined first."""

    def before(claim: Claim) -> None:
        if not (claim.neg_risk or is_v2(claim)):
            return
        token, operator = _approval_of(claim)
        if claim.approval_transaction_id is None:
            if _is_approved(chain_access.web3(), wallet.address, token, operator):
                return

            def build(w3: Web3, key: bytes, nonce: int) -> SignedTx:
                signed = build_ctf_approval(w3, private_key=key, ctf=token, operator=operator,
                                            nonce=nonce, chain_id=chain_access.chain_id())
                require_gas_for(w3, signed)
                return signed

            chain_transport.send(wallet, "approval", build, wallet_transactions.Link(
                Claim, claim.id, "approval_transaction"))
            claim = Claim.get_by_id(claim.id)
        try:
            chain_transport.settled(claim.approval_transaction, "approval", raise_pending=True)
        except wallet_lifecycle.Failed as exc:
            what = "the Router" if is_v2(claim) else "the neg-risk collateral adapter"
            raise wallet_lifecycle.Refused(
                exc.message, f"Approving {what} failed; nothing was redeemed.") from exc

    return before


def _redeem_builder(claim: Claim, wallet: TradingWallet) -> Any:
    contracts = chain_access.contracts()
    # the wallet calls' table, with the chain's own addresses (as every EOA read here)
    accounts = replace(trading_accounts.contracts(), collateral_token=contracts.pusd,
                       neg_risk_collateral_adapter=contracts.neg_risk_collateral_adapter,
                       position_manager=contracts.position_manager,
                       protocol_v2_router=contracts.protocol_v2_router)

    def build(w3: Web3, key: bytes, nonce: int) -> SignedTx:
        signed = _redeem(w3, key, nonce)
        require_gas_for(w3, signed)
        return signed

    def _redeem(w3: Web3, key: bytes, nonce: int) -> SignedTx:
        call = None
        if is_v2(claim):
            # the balance now, not when the claim was recorded: more would revert
            [token] = claim.token_id_list
            held = outcome_balances_base(w3, accounts.position_manager, wallet.address, [token])
            call = router_redeem_call(token, held[int(token)], accounts)
        elif claim.neg_risk:  # the current adapter; the v1 NegRiskAdapter is deprecated
            call = redeem_call(claim.condition_id, neg_risk=True, contracts=accounts)
        if call is not None:
            return build_transaction(w3, private_key=key, to=call.target,
                                     data=Web3.to_bytes(hexstr=call.data), nonce=nonce,
                                     chain_id=chain_access.chain_id())
        return build_ctf_redeem(w3, private_key=key, ctf=contracts.ctf,
                                collateral=claim.collateral, condition_id=claim.condition_id,
                                index_sets=[1 << i for i in range(len(claim.token_id_list))],
                                nonce=nonce, chain_id=chain_access.chain_id())

    return build


def _v2_amounts(claim: Claim, wallet: TradingWallet) -> list[tuple[str, int]]:
    """(position, amount) to redeem: the maker's balances on chain when it is there, else
    what the claim recorded."""
    tokens = claim.token_id_list
    maker = wallets.maker(wallet)
    if chain_access.current().rpc_url and chain_access.web3().eth.get_code(maker):
        held = outcome_balances_base(chain_access.web3(),
                                     chain_access.contracts().position_manager, maker, tokens)
        return [(t, held[int(t)]) for t in tokens]
    return [(t, int(a)) for t, a in zip(tokens, json.loads(claim.amounts), strict=True)]


def redeem_by_relayer(claim_id: UUID | str, max_polls: int | None = None) -> str:
    """The job for a relayer-operated wallet: one relayer transaction redeeming the
    condition through the collateral adapter (pUSD out), submitted once and followed to a
    final state (services/wallets/wallet_batches.py), then the CLOB re-reads the balance. An open
    status returned means: run again later."""
    claim = Claim.get_by_id(UUID(str(claim_id)))
    wallet = TradingWallet.get_by_id(claim.wallet_id)
    contracts = trading_accounts.contracts()

    def calls(row: Claim) -> list[Call]:
        if is_v2(row):  # one Router redeem per position held (the SDK's batch)
            return [router_redeem_call(token, amount, contracts)
                    for token, amount in _v2_amounts(row, wallet) if amount > 0]
        return [redeem_call(row.condition_id, neg_risk=row.neg_risk, contracts=contracts)]

    status = wallet_batches.run(wallet_batches.BatchRow(Claim, claim.id), wallet, calls,
                                "copytrade claim", "claim", max_polls)
    if status == CONFIRMED:
        book_paid(claim.id)
        withdrawals.refresh_venue_balance(wallet)
    return status


def book_paid(claim_id: UUID) -> Decimal | None:
    """Record what a confirmed claim's redemption paid, from its receipt's collateral
    transfers to the wallet (once; None when no chain has its receipt, as a simulated
    relayer's): a claim of tokens already redeemed books nothing, whatever it expected."""
    claim = Claim.get_by_id(claim_id)
    if claim.status != CONFIRMED or not chain_access.current().rpc_url:
        return None
    if claim.paid is not None:
        return Decimal(claim.paid)
    if claim.transaction_id is not None:
        tx_hash, receiver = claim.transaction.tx_hash, claim.wallet.address
    else:
        tx_hash, receiver = claim.relayer_transaction_hash, wallets.maker(claim.wallet)
    if not tx_hash:
        return None
    w3 = chain_access.web3()
    try:
        base = transfers.received_in(w3, tx_hash, claim.collateral, receiver)
        paid = from_base_units(base, token_decimals(w3, claim.collateral))
    except ChainError as exc:  # a hash no chain holds, or a node not reached
        log.warning("claim %s: what it paid is not readable (%s); it keeps its expected "
                    "payout", claim.id, exc)
        return None
    if paid != claim.payout:
        log.warning("claim %s paid %s, not the %s expected", claim.id, paid, claim.payout)
    Claim.update(paid=paid).where((Claim.id == claim.id) & Claim.paid.is_null()).execute()
    return paid


def redeem(claim_id: UUID | str) -> str:
    """The job: the claim through the one wallet lifecycle (services/wallets/
    wallet_lifecycle.py), on chain (a neg-risk claim's approval mined first) or through the
    relayer; then the CLOB re-reads the balance. An open status returned means: run again."""
    found = Claim.get_by_id(UUID(str(claim_id)))
    if trading_accounts.uses_relayer(found.wallet):
        return redeem_by_relayer(found.id)
    wallet = TradingWallet.get_by_id(found.wallet_id)
    status = wallet_lifecycle.run(Claim, found.id, wallet, chain_transport.ChainTransport(
        Claim, found.id, wallet, "claim", _redeem_builder(found, wallet),
        before=_approved_first(wallet)))
    if status == CONFIRMED:
        book_paid(found.id)
        withdrawals.refresh_venue_balance(wallet)
    log.info("claim %s: %s", found.id, status)
    return status
