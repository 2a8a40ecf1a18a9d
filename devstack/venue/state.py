"""The sandbox venue's state: a façade over the parts that each own their data.

``Catalog`` (markets, events), ``Ledger`` (balances, positions, reservations),
``ApiKeyRegistry`` (CLOB keys), ``AccountRegistry`` (deposit wallets, approvals, the
balance/allowance cache), ``OrderDesk`` (books, orders: submit, match, settle, fill,
cancel), ``HouseMaker`` (the house's quotes), ``Settlement`` (resolution, redemption),
``Tape`` (fills and trade history) and ``Relayer`` (relayer credentials and transactions,
executed by ``SimulatedWallets``, or ``ChainWallets`` with a dev chain attached). HTTP
views call the methods here and only shape their answers. One re-entrant lock guards every part: the
methods here take it as a whole operation needs, and the parts assume it is held.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

from eth_utils import keccak, to_checksum_address

from devstack.venue.accounts import COLLATERAL_ASSET, AccountRegistry
from devstack.venue.amounts import SCALE, amount_text, to_base, units
from devstack.venue.api_keys import ApiKeyRecord, ApiKeyRegistry
from devstack.venue.catalog import SEED_MARKETS, Catalog, Event, Market, MarketSeed
from devstack.venue.chain_wallets import ChainWallets
from devstack.venue.config import SandboxConfig
from devstack.venue.desk import OrderDesk, order_response
from devstack.venue.faults import FaultBoard
from devstack.venue.feed import RtdsHub
from devstack.venue.house import HouseMaker
from devstack.venue.ledger import Ledger, PositionStats
from devstack.venue.lifecycle import TradeLifecycle
from devstack.venue.market_channel import MarketChannel
from devstack.venue.matching import BookOrder, MarketBook
from devstack.venue.modes import VenueModes
from devstack.venue.onchain import ChainHoldings
from devstack.venue.rejections import ERR_L1, VenueRejection
from devstack.venue.relay import Principal, Relayer, RelayerTransaction, session_signer_json
from devstack.venue.settlement import Settlement
from devstack.venue.tally import RequestTally
from devstack.venue.tape import ClobTrade, Fill, Redemption, Tape
from devstack.venue.wallet_exec import SimulatedWallets

# Routes import these from here: the façade is their one entry point.
__all__ = [
    "ERR_L1",
    "ApiKeyRecord",
    "ClobTrade",
    "Fill",
    "PositionStats",
    "Principal",
    "Redemption",
    "RelayerTransaction",
    "SandboxState",
    "VenueRejection",
    "amount_text",
    "units",
]

log = logging.getLogger(__name__)

# The SandboxConfig addresses a dev chain brings along (POST /_sandbox/chain "contracts").
CHAIN_CONTRACT_FIELDS = frozenset({
    "exchange", "neg_risk_exchange", "collateral", "conditional_tokens", "usdc_e",
    "collateral_onramp", "ctf_collateral_adapter", "neg_risk_collateral_adapter",
    "position_manager"})

HOUSE_SEED = "sandbox-house"
WHALE_PROFILES: tuple[tuple[str, str], ...] = (
    ("SandboxWhale", "Bold-Harpoon"),
    ("TideRunner", "Quiet-Current"),
    ("DeepBlue", "Patient-Abyss"),
    ("Orca9", "Swift-Pod"),
)


def derived_address(label: str) -> str:
    """A stable checksummed address for a sandbox actor (house, whales)."""
    return to_checksum_address(keccak(text=label)[-20:])


class SandboxState:
    """Everything the sandbox venue knows; all public methods are thread-safe."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        seed: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config or SandboxConfig()
        self.seed = seed
        self.clock = clock
        self.lock = threading.RLock()
        self.feed = RtdsHub()
        self.market_channel = MarketChannel(self)
        self.faults = FaultBoard()
        self.modes = VenueModes(clock)
        self.requests = RequestTally(self._now)  # per endpoint per second, for benchmarks
        self.house = derived_address(HOUSE_SEED)
        self._initial_strict = self.config.strict_accounts
        self._initial_order_version = self.config.order_version
        self.whales = [derived_address(f"sandbox-whale-{seed}-{i}") for i in range(4)]
        self.chain: ChainHoldings | None = None
        self.wallet_chain: tuple[str, str, str] | None = None  # (rpc, factory, operator key)
        if self.config.chain_rpc_url:
            self.attach_chain(self.config.chain_rpc_url, self.config.chain_ctf)
        self._reset_locked()

    # ------------------------------------------------------------------ setup

    def reset(self) -> None:
        """Back to the seeded catalog with empty accounts, orders and fills."""
        with self.lock:
            self.config.strict_accounts = self._initial_strict
            self.config.order_version = self._initial_order_version
            self.feed.muted = False
            self._reset_locked()
            self.market_channel.resync()
        self.faults.clear()
        self.modes.reset()

    def _reset_locked(self) -> None:
        self.rng = random.Random(self.seed)
        started_at = datetime.fromtimestamp(self.clock(), UTC).replace(microsecond=0)
        self.catalog = Catalog(self.config.oracle, self.config.collateral, started_at)
        self.ledger = Ledger()
        self.keys = ApiKeyRegistry(self.config.server_secret, self.lock)
        self.accounts = AccountRegistry(self.config)
        self.tape = Tape()
        self.desk = OrderDesk(self.config, self._now, self.catalog, self.ledger, self.accounts,
                              self.tape, self.house, self._broadcast)
        self.desk.listen(self.market_channel)
        self.house_maker = HouseMaker(self.house, self.desk)
        self.settlement = Settlement(self._now, self.catalog, self.desk, self.ledger, self.tape)
        executor: SimulatedWallets | ChainWallets = SimulatedWallets(
            self.config, self._now, self.catalog, self.ledger, self.accounts, self.settlement)
        if self.wallet_chain is not None:
            executor = ChainWallets(*self.wallet_chain, self.accounts)
        self.relayer = Relayer(self.config, self._now, self.accounts, executor)
        self.lifecycle = TradeLifecycle(self._now, self.catalog, self.desk, self.ledger,
                                        self.tape, self._after_match)
        self.profiles: dict[str, tuple[str, str]] = {}
        for index, whale in enumerate(self.whales):
            self.profiles[whale.lower()] = WHALE_PROFILES[index % len(WHALE_PROFILES)]
        self.ledger.set_balance(self.house, 10**18)
        for market_seed in SEED_MARKETS:
            self._add_market_locked(market_seed, self.config.house_liquidity)

    def attach_chain(self, rpc_url: str, ctf: str) -> ChainHoldings | None:
        """Index on-chain holdings of ``ctf`` on ``rpc_url`` (empty URL: stop); kept on reset."""
        holdings = ChainHoldings(rpc_url, ctf) if rpc_url else None
        with self.lock:
            self.chain = holdings
            self.config.chain_rpc_url = rpc_url
            self.config.chain_ctf = ctf if rpc_url else ""
        return holdings

    def attach_wallet_chain(self, rpc_url: str, factory: str, beacon: str,
                            operator_key: str, contracts: dict[str, str] | None = None
                            ) -> ChainWallets:
        """Deploy and run deposit wallets on ``rpc_url`` through ``factory`` (operated by
        ``operator_key``) instead of simulating them; ``contracts`` (SandboxConfig address
        fields: exchange, collateral, adapters...) are that chain's, so orders, approvals
        and the balance/allowance cache use them. Kept on reset."""
        with self.lock:
            for name, address in (contracts or {}).items():
                if name not in CHAIN_CONTRACT_FIELDS:
                    raise ValueError(f"unknown contract {name!r}: one of "
                                     f"{sorted(CHAIN_CONTRACT_FIELDS)}")
                setattr(self.config, name, to_checksum_address(address))
            executor = ChainWallets(rpc_url, factory, operator_key, self.accounts)
            self.config.deposit_wallet_factory = executor.factory
            self.config.deposit_wallet_beacon = beacon
            self.wallet_chain = (rpc_url, factory, operator_key)
            self.relayer.executor = executor
            return executor

    def _now(self) -> float:
        # read at each call: tests swap `clock` on a running state
        return self.clock()

    def _after_match(self, market: Market) -> None:
        self.house_maker.replenish(market)
        self.desk.publish(market)

    def advance(self) -> None:
        """Let time act: delayed orders match, trades settle or fail (lifecycle.py)."""
        if not self.lifecycle.busy():
            return
        with self.lock:
            self.lifecycle.advance()

    def add_market(self, seed: MarketSeed, *, house_liquidity: bool | None = None) -> Market:
        """Create a market (and its event if new) from a seed; returns it."""
        with self.lock:
            if seed.slug in self.catalog.markets_by_slug:
                raise VenueRejection(f"market slug already exists: {seed.slug}", 409)
            liquidity = self.config.house_liquidity if house_liquidity is None else house_liquidity
            return self._add_market_locked(seed, liquidity)

    def _add_market_locked(self, seed: MarketSeed, house_liquidity: bool) -> Market:
        market = self.catalog.add(seed, house_liquidity=house_liquidity)
        self.desk.open_book(market)
        self.tape.open_history(market, int(self.catalog.listed_at.timestamp()))
        if house_liquidity:
            self.house_maker.replenish(market)
        return market

    # ------------------------------------------------------ catalog (read-through)

    @property
    def markets(self) -> dict[str, Market]:
        """Markets by condition id."""
        return self.catalog.markets

    @property
    def markets_by_id(self) -> dict[str, Market]:
        """Markets by Gamma id."""
        return self.catalog.markets_by_id

    @property
    def markets_by_slug(self) -> dict[str, Market]:
        """Markets by slug."""
        return self.catalog.markets_by_slug

    @property
    def tokens(self) -> dict[str, tuple[Market, int]]:
        """(market, outcome index) by token id."""
        return self.catalog.tokens

    @property
    def events(self) -> dict[str, Event]:
        """Events by id."""
        return self.catalog.events

    @property
    def events_by_slug(self) -> dict[str, Event]:
        """Events by slug."""
        return self.catalog.events_by_slug

    @property
    def books(self) -> dict[str, MarketBook]:
        """Order books by condition id."""
        return self.desk.books

    def market_for_token(self, token_id: str) -> tuple[Market, int]:
        """The market and outcome index of a token id, or VenueRejection 404."""
        return self.catalog.market_for_token(token_id)

    def market(self, condition_id: str) -> Market:
        """A market by condition id, or VenueRejection 404."""
        return self.catalog.market(condition_id)

    # ------------------------------------------------------------ house quotes

    def recenter_house(self, market: Market, fair_price: Decimal) -> None:
        """Move the house quotes of a market to a new fair price."""
        with self.lock:
            self.house_maker.recenter(market, fair_price)
            self.desk.publish(market)

    # ---------------------------------------------------------------- ledger

    def fund(self, address: str, amount: Decimal, *, seen: bool = False) -> int:
        """Add pUSD to an address (a deposit: the CLOB's cache sees it after an update, or
        at once when ``seen``); returns the new balance in base units."""
        with self.lock:
            if not seen:
                self.accounts.moved_on_chain(address, to_base(amount))
            return self.ledger.credit(address, to_base(amount))

    def fund_usdc_e(self, address: str, amount: Decimal) -> int:
        """Add USDC.e to an address (to wrap into pUSD); returns its new USDC.e balance."""
        with self.lock:
            return self.accounts.credit_usdc_e(address, to_base(amount))

    def grant_tokens(self, address: str, token_id: str, shares: Decimal, *,
                     seen: bool = False) -> int:
        """Credit outcome tokens to an address (as if split earlier; the cache sees them
        after an update, or at once when ``seen``); returns the new size."""
        with self.lock:
            self.catalog.market_for_token(token_id)
            if not seen:
                self.accounts.moved_on_chain(address, to_base(shares), token_id)
            return self.ledger.grant(address, token_id, to_base(shares))

    def balance(self, address: str) -> int:
        """pUSD base units held by an address."""
        return self.ledger.balance(address)

    def token_balance(self, address: str, token_id: str) -> int:
        """Outcome-token base units held by an address."""
        return self.ledger.token_balance(address, token_id)

    def register_legacy_wallet(self, wallet: str, owner: str, signature_type: int) -> None:
        """Record ``owner`` as the owner of proxy (1) or Safe (2) wallet ``wallet``."""
        with self.lock:
            self.accounts.register_legacy_wallet(wallet, owner, signature_type)

    def register_deposit_wallet(self, wallet: str, owner: str) -> None:
        """Record `owner` (an EOA) as an owner of deposit wallet `wallet`."""
        with self.lock:
            self.accounts.register_deposit_wallet(wallet, owner)

    def funder_for(self, address: str, signature_type: int) -> str:
        """The funding address behind an API-key address for a signature type."""
        with self.lock:
            return self.accounts.funder_for(address, signature_type, self._now())

    def balance_allowance(self, address: str, signature_type: int, token_id: str = ""
                          ) -> dict[str, object]:
        """``GET /balance-allowance``: the cached balance and allowances of the key's funder
        (pUSD, or the outcome token ``token_id``), base units as strings."""
        with self.lock:
            self.relayer.advance()
            funder = self.accounts.funder_for(address, signature_type, self._now())
            asset = token_id or COLLATERAL_ASSET
            live = self.ledger.token_balance(funder, token_id) if token_id else \
                self.ledger.balance(funder)
            allowances = self.accounts.cached_allowance_map(funder, asset)
            return {"balance": str(self.accounts.cached_balance(funder, live, asset)),
                    "allowances": {k: str(v) for k, v in allowances.items()}}

    def update_balance_allowance(self, address: str, signature_type: int,
                                 token_id: str = "") -> None:
        """``GET /balance-allowance/update``: refresh the cache of the key's funder (with a
        chain attached, first index its on-chain pUSD and approvals)."""
        with self.lock:
            self.relayer.advance()
            funder = self.accounts.funder_for(address, signature_type, self._now())
            asset = token_id or COLLATERAL_ASSET
            executor = self.relayer.executor
            if isinstance(executor, ChainWallets):
                try:
                    self._index_chain(executor, funder, asset)
                except Exception as exc:  # a stopped chain must not break the CLOB
                    log.warning("sandbox: indexing %s on %s failed: %s", funder,
                                executor.rpc_url, exc)
            self.accounts.refresh(funder, asset)

    def _index_chain(self, chain: ChainWallets, funder: str, asset: str) -> None:
        """pUSD that moved on chain since the last update (transfers in or out, wraps)
        reaches the ledger as the difference; USDC.e and approvals are read from the chain."""
        if asset == COLLATERAL_ASSET:
            on_chain = chain.erc20_balance(self.config.collateral, funder)
            delta = on_chain - self.accounts.chain_pusd.get(funder.lower(), 0)
            if delta:
                # a debit never takes what open orders hold (the venue would cancel them)
                free = self.ledger.balance(funder) - self.ledger.reserved(funder)[0]
                self.ledger.credit(funder, max(delta, -free))
            self.accounts.chain_pusd[funder.lower()] = on_chain
            # USDC.e lives only on chain: the registry takes its balance as it is
            self.accounts.usdc_e[funder.lower()] = chain.erc20_balance(self.config.usdc_e,
                                                                       funder)
        chain.read_approvals(funder, asset, self.config)

    # ---------------------------------------------------------------- relayer

    def relayer_auth(self, headers: dict[str, str], method: str, path: str, body: str,
                     *, submitting: bool = False) -> Principal:
        """Who calls the relayer (Builder HMAC or Relayer API key), or 401/429/503."""
        with self.lock:
            self.relayer.check_open()
            principal = self.relayer.authenticate(headers, method, path, body)
            self.relayer.check_open(quota=submitting)
            return principal

    def relayer_submit(self, principal: Principal, body: object) -> RelayerTransaction:
        """``POST /submit``: check and queue a WALLET-CREATE or WALLET transaction."""
        with self.lock:
            return self.relayer.submit(principal, body)

    def relayer_transaction(self, tx_id: str) -> RelayerTransaction:
        """A relayer transaction by id, states brought up to date (404 when unknown)."""
        with self.lock:
            self.relayer.check_open()
            return self.relayer.transaction(tx_id)

    def relayer_nonce(self, address: str, kind: str = "WALLET") -> int:
        """The nonce of the wallet an owner or session signer acts for: a deposit wallet's
        Batch nonce, or (``kind`` PROXY / SAFE) the owner's proxy's or Safe's."""
        with self.lock:
            self.relayer.check_open()
            return self.relayer.nonce_of(address, kind)

    def relayer_session_signer(self, principal: Principal, kind: str, body: object,
                               idempotency_key: str) -> dict:
        """``POST /v1/session-signers/{authorizations,revocations}``; a revocation cancels
        the session key's open orders at once (ACCOUNTS.md §2.6)."""
        with self.lock:
            request = self.relayer.session_signer(principal, kind, body, idempotency_key)
            if kind == "revocation":
                signer = to_checksum_address(request.signer)
                for record in [r for r in self.keys.api_keys.values() if r.address == signer]:
                    self.desk.cancel(record, [o.order_id for o in self.desk.open_orders_of(record)])
            return session_signer_json(request)

    def session_signers(self, owner: str) -> dict:
        """``GET /v1/user/session-signers``: the owner's wallet and its session signers in
        force (404 when the address owns no deposit wallet)."""
        with self.lock:
            wallet, signers = self.relayer.session_signers_of(owner)
            return {"wallet": to_checksum_address(wallet.address), "signers": signers}

    def relayer_deployed(self, wallet: str) -> bool:
        """Whether the factory deployed ``wallet``."""
        with self.lock:
            self.relayer.check_open()
            return self.relayer.deployed(wallet)

    # ------------------------------------------------------------------- auth

    def create_api_key(self, address: str, nonce: int) -> ApiKeyRecord:
        """Issue (or re-issue, idempotently) the creds of (address, nonce)."""
        return self.keys.create(address, nonce)

    def derive_api_key(self, address: str, nonce: int) -> ApiKeyRecord:
        """The creds of (address, nonce) if they were created, else VenueRejection."""
        return self.keys.derive(address, nonce)

    def delete_api_key(self, record: ApiKeyRecord) -> None:
        """Revoke an API key."""
        self.keys.delete(record)

    def authenticate_l2(
        self, headers: dict[str, str], method: str, path: str, body: str
    ) -> ApiKeyRecord:
        """Check the five L2 headers and the HMAC; returns the key's record or raises 401."""
        return self.keys.authenticate_l2(headers, method, path, body)

    # ----------------------------------------------------------------- orders

    def submit_order(self, record: ApiKeyRecord, envelope: object,
                     received_at: float | None = None) -> dict:
        """Validate, match and settle one POST /order envelope; returns the venue's answer.

        Raises VenueRejection with the venue's message when the order is refused.
        Every envelope is logged in `received_orders`, accepted or not, with when the
        request arrived (``received_at``, ms; ``received_at`` given by the HTTP layer, else
        now) and how long the venue took from then to its answer (``handled_us``, µs).
        """
        arrived = self.clock() if received_at is None else received_at
        entry: dict = {
            "received_at": int(arrived * 1000),
            "body": envelope,
            "api_key": record.api_key,
            "order_id": "",
        }
        with self.lock:
            self.desk.received_orders.append(entry)
            try:
                market, order, trade = self.desk.submit(record, envelope, entry)
                self._after_match(market)
                self.lifecycle.advance()
                result = order_response(order, trade)
            except VenueRejection as exc:
                entry["status"] = exc.status
                entry["error"] = exc.message
                raise
            finally:
                entry["handled_us"] = int((self.clock() - arrived) * 1_000_000)
            entry["status"] = 200
            entry["response"] = result
        return result

    @property
    def received_orders(self) -> list[dict]:
        """Every POST /order envelope so far, accepted or not (the control API shows them)."""
        return self.desk.received_orders

    def cancel_orders(self, record: ApiKeyRecord, order_ids: list[str]) -> dict:
        """Cancel the key's orders by id; answers {canceled, not_canceled}."""
        with self.lock:
            return self.desk.cancel(record, order_ids)

    def cancel_where(
        self, record: ApiKeyRecord, market: str | None = None, asset_id: str | None = None
    ) -> dict:
        """Cancel all the key's live orders, optionally in one market or token."""
        with self.lock:
            ids = [
                o.order_id for o in self.desk.open_orders_of(record)
                if (not market or o.condition_id == market)
                and (not asset_id or o.token_id == asset_id)
            ]
            return self.cancel_orders(record, ids)

    def open_orders(
        self, record: ApiKeyRecord, *, market: str = "", asset_id: str = "", order_id: str = ""
    ) -> list[BookOrder]:
        """The key's live orders, filtered like GET /data/orders.

        Asked for one ``id``, any status of the key's order answers (delayed, matched,
        cancelled: how the SDK follows a delayed order's ``associate_trades``).
        """
        with self.lock:
            if order_id:
                found = self.desk.orders.get(order_id)
                mine = found is not None and found.owner == record.api_key
                return [found] if mine else []
            return [
                o for o in self.desk.open_orders_of(record)
                if (not market or o.condition_id == market)
                and (not asset_id or o.token_id == asset_id)
                and (not order_id or o.order_id == order_id)
            ]

    def order_for(self, record: ApiKeyRecord, order_id: str) -> BookOrder:
        """One of the key's orders (any status), or 404."""
        return self.desk.order_for(record, order_id)

    # ------------------------------------------------------- whales, injection

    def inject_trade(
        self,
        wallet: str,
        token_id: str,
        side: str,
        *,
        price: Decimal | None = None,
        size: Decimal | None = None,
        counterparty: str | None = None,
    ) -> list[Fill]:
        """A fill for `wallet` as taker against a counterparty (the house by default).

        The book is left alone; balances, positions, Data API, prices and RTDS all see it.
        """
        with self.lock:
            return self.desk.inject(wallet, token_id, side, price=price, size=size,
                                    counterparty=counterparty, rng=self.rng)

    def whale_tick(self) -> list[Fill]:
        """One scripted whale trade: a random whale takes liquidity in a random open market."""
        with self.lock:
            open_markets = [m for m in self.catalog.markets.values() if not m.closed]
            if not open_markets:
                return []
            market = self.rng.choice(open_markets)
            whale = self.rng.choice(self.whales)
            index = self.rng.randint(0, 1)
            token = market.token_ids[index]
            held = self.token_balance(whale, token)
            side = "SELL" if held > 50 * SCALE and self.rng.random() < 0.3 else "BUY"
            shares = Decimal(self.rng.randint(20, 300))
            if side == "SELL":
                shares = min(shares, units(held))
            fair = market.fair_price if index == 0 else 1 - market.fair_price
            spacing = max(market.tick_size, Decimal("0.01"))
            price = fair + spacing if side == "BUY" else fair - spacing
            price = min(max(price, market.tick_size), 1 - market.tick_size)
            fills = self.inject_trade(whale, token, side, price=price, size=shares)
            drift = spacing * self.rng.choice((-1, 0, 0, 1))
            if market.house_liquidity:
                self.recenter_house(market, market.fair_price + drift)
            else:
                market.fair_price = min(max(market.fair_price + drift, spacing), 1 - spacing)
            return fills

    # ------------------------------------------------------------ resolution

    def resolve(self, condition_id: str, winner: int) -> Market:
        """Close a market with outcome `winner` winning; cancels its open orders."""
        with self.lock:
            return self.settlement.resolve(condition_id, winner)

    def redeem(self, address: str, condition_id: str) -> Decimal:
        """Pay out a resolved market's winning tokens to `address`; returns pUSD paid."""
        with self.lock:
            return self.settlement.redeem(address, condition_id)

    # ----------------------------------------------------------- market data

    def token_book(self, token_id: str) -> tuple[Market, int, list, list]:
        """(market, index, bids, asks) for a token: levels (price, shares) best first."""
        with self.lock:
            market, index = self.catalog.market_for_token(token_id)
            bids, asks = self.desk.levels(market)
        if index == 0:
            return market, index, bids, asks
        flip = [(1 - price, size) for price, size in asks]
        flop = [(1 - price, size) for price, size in bids]
        return market, index, flip, flop

    def best_prices(self, token_id: str) -> tuple[Decimal | None, Decimal | None]:
        """(best bid, best ask) of a token, None where a side is empty."""
        _, _, bids, asks = self.token_book(token_id)
        return (bids[0][0] if bids else None, asks[0][0] if asks else None)

    def last_trade_price(self, token_id: str) -> Decimal | None:
        """Last traded price of a token, or None before any trade."""
        market, index = self.catalog.market_for_token(token_id)
        if market.last_trade_price is None:
            return None
        return market.last_trade_price if index == 0 else 1 - market.last_trade_price

    def current_price(self, market: Market, index: int) -> Decimal:
        """Settlement price once resolved, else the midpoint, last trade, or fair price."""
        settled = market.settlement_price(index)
        if settled is not None:
            return settled
        bid, ask = self.best_prices(market.token_ids[index])
        if bid is not None and ask is not None:
            return (bid + ask) / 2
        last = self.last_trade_price(market.token_ids[index])
        if last is not None:
            return last
        return market.fair_price if index == 0 else 1 - market.fair_price

    def fills_snapshot(self) -> list[Fill]:
        """A copy of every fill so far, oldest first."""
        with self.lock:
            return list(self.tape.fills)

    def redemptions_snapshot(self) -> list[Redemption]:
        """A copy of every redemption so far."""
        with self.lock:
            return list(self.tape.redemptions)

    def held_positions(self, address: str) -> list[tuple[Market, int, int, PositionStats]]:
        """(market, index, shares, stats) of every token an address holds or held.

        Shares are the ledger's plus, when a chain is attached, the address's on-chain
        balance of the token (tokens that arrived from outside the venue count too).
        """
        with self.lock:
            held = {token: (shares, stats) for token, shares, stats in self.ledger.held(address)}
            chain = self.chain
            tokens = dict(self.catalog.tokens)
        if chain is not None:
            for token, amount in self._chain_balances(chain, address, list(tokens)).items():
                shares, stats = held.get(token, (0, PositionStats()))
                held[token] = (shares + amount, stats)
        return [(*tokens[token], shares, stats) for token, (shares, stats) in held.items()]

    @staticmethod
    def _chain_balances(chain: ChainHoldings, address: str, tokens: list[str]) -> dict[str, int]:
        try:
            return chain.balances(address, tokens)
        except Exception as exc:  # a stopped chain must not break the Data API
            log.warning("sandbox: reading balances from %s failed: %s", chain.rpc_url, exc)
            return {}

    def redeemable(self, market: Market) -> bool:
        """Resolved here, or (attached to a chain) its condition's payouts are reported there."""
        if market.winner is not None:
            return True
        chain = self.chain
        if chain is None:
            return False
        try:
            return chain.resolved(market.condition_id)
        except Exception as exc:  # as above
            log.warning("sandbox: reading payouts from %s failed: %s", chain.rpc_url, exc)
            return False

    # -------------------------------------------------------------- feeds

    def _broadcast(self, fills: list[Fill], now: float) -> None:
        if not self.feed.count():
            return
        payloads = [self.rtds_payload(f) for f in fills]
        self.feed.publish("activity", "trades", payloads, int(now * 1000))

    def profile(self, address: str) -> tuple[str, str]:
        """(name, pseudonym) shown for an address."""
        return self.profiles.get(address.lower(), ("", ""))

    def rtds_payload(self, fill: Fill) -> dict:
        """The RTDS activity/trades payload for one fill (proxyWallet checksummed)."""
        market = self.catalog.markets[fill.condition_id]
        event = self.catalog.events[market.event_id]
        name, pseudonym = self.profile(fill.proxy_wallet)
        payload = {
            "asset": fill.asset,
            "bio": "",
            "conditionId": fill.condition_id,
            "eventSlug": event.slug,
            "icon": market.image,
            "name": name,
            "outcome": fill.outcome,
            "outcomeIndex": fill.outcome_index,
            "price": fill.price,
            "profileImage": "",
            "proxyWallet": fill.proxy_wallet,
            "pseudonym": pseudonym,
            "side": fill.side,
            "size": units(fill.size),
            "slug": market.slug,
            "timestamp": fill.timestamp,
            "title": market.question,
            "transactionHash": fill.transaction_hash,
        }
        if fill.fee:
            payload["fee"] = units(fill.fee)
        return dict(sorted(payload.items()))
