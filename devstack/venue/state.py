"""The sandbox venue's state: a façade over the parts that each own their data.

``Catalog`` (markets, events), ``Ledger`` (balances, positions, reservations),
``ApiKeyRegistry`` (CLOB keys), ``AccountRegistry`` (deposit wallets, approvals, the
balance/allowance cache), ``OrderDesk`` (books, orders: submit, match, settle, fill,
cancel), ``HouseMaker`` (the house's quotes), ``Settlement`` (resolution, redemption),
``Tape`` (fills and trade history) and ``Relayer`` (relayer credentials and transactions,
executed by ``SimulatedWallets``, or ``ChainWallets`` with a dev chain attached). HTTP
views call the part that owns what they ask for (``state.catalog.market(...)``), and the
methods here only for what spans several parts (orders, funding, the balance cache, market
data, positions). One re-entrant lock guards every part: the methods here take it as a
whole operation needs; the parts assume it is held, so a view calling a part holds
``state.lock`` (``ApiKeyRegistry`` takes it itself). A reset replaces the parts: read them
through the state, never keep one.
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
from devstack.venue.catalog import SEED_MARKETS, Catalog, Market, MarketSeed
from devstack.venue.chain_oracle import report_resolution
from devstack.venue.chain_settlement import PUSD, ChainSettlement
from devstack.venue.chain_wallets import ChainWallets
from devstack.venue.config import SandboxConfig
from devstack.venue.desk import OrderDesk, order_response
from devstack.venue.faults import FaultBoard
from devstack.venue.feed import ACTIVITY_TYPES, RtdsHub
from devstack.venue.house import HouseMaker
from devstack.venue.ledger import Ledger, PositionStats
from devstack.venue.lifecycle import TradeLifecycle
from devstack.venue.lifespans import drawn_winner, set_end, stagger, successor_seed
from devstack.venue.list_rules import ListRules
from devstack.venue.market_channel import MarketChannel
from devstack.venue.modes import VenueModes
from devstack.venue.onchain import ChainHoldings
from devstack.venue.rate_tiers import RateTiers
from devstack.venue.rejections import ERR_L1, VenueRejection
from devstack.venue.relay import Principal, Relayer, RelayerTransaction, session_signer_json
from devstack.venue.settlement import Settlement
from devstack.venue.signer_limits import SignerLimits
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
    "position_manager", "neg_risk_adapter_v1"})

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
        self.modes = VenueModes(self._now)  # the state's clock, swapped or not
        self.requests = RequestTally(self._now)  # per endpoint per second, for benchmarks
        self.signer_limits = SignerLimits(self._now)  # per-signer warnings (off until set)
        self.rate_tiers = RateTiers(self._now)  # tiers and their buckets (enforced when set)
        self.list_rules = ListRules()  # keyset/offset lists, position statuses (§12)
        self.house = derived_address(HOUSE_SEED)
        self._initial_strict = self.config.strict_accounts
        self._initial_order_version = self.config.order_version
        self._initial_lifespans = (self.config.market_lifetime, self.config.replenish_markets)
        self.whales = [derived_address(f"sandbox-whale-{seed}-{i}") for i in range(4)]
        self.chain: ChainHoldings | None = None
        self.wallet_chain: tuple[str, str, str] | None = None  # (rpc, factory, operator key)
        # trades settle on that chain's exchanges when they are deployed there
        self.chain_settlement: ChainSettlement | None = None
        if self.config.chain_rpc_url:
            self.attach_chain(self.config.chain_rpc_url, self.config.chain_ctf)
        self._reset_locked()

    # ------------------------------------------------------------------ setup

    def reset(self) -> None:
        """Back to the seeded catalog with empty accounts, orders and fills."""
        with self.lock:
            self.config.strict_accounts = self._initial_strict
            self.config.order_version = self._initial_order_version
            self.config.market_lifetime, self.config.replenish_markets = self._initial_lifespans
            self.feed.muted = False
            self.feed.down = False
            self.feed.activity = dict.fromkeys(ACTIVITY_TYPES, "on")
            self._reset_locked()
            self.market_channel.resync()
        self.faults.clear()
        self.modes.reset()
        self.signer_limits.reset()
        self.rate_tiers.reset()
        self.list_rules.reset()

    def _reset_locked(self) -> None:
        self.rng = random.Random(self.seed)
        started_at = datetime.fromtimestamp(self.clock(), UTC).replace(microsecond=0)
        # before the catalog: on a dev chain, the neg-risk questions it lists are its adapter's
        self.chain_settlement = self._attach_settlement()
        self.catalog = Catalog(self.config.oracle, self._position_collateral(), started_at,
                               None if self.chain_settlement is None
                               else self.chain_settlement.neg_risk_adapter())
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
        self.desk.settle = self._settle_trade
        self.profiles: dict[str, tuple[str, str]] = {}
        for index, whale in enumerate(self.whales):
            self.profiles[whale.lower()] = WHALE_PROFILES[index % len(WHALE_PROFILES)]
        self.ledger.set_balance(self.house, 10**18)
        self.rounds = 0  # successors listed since the reset (lifespans.py)
        for market_seed in SEED_MARKETS:
            self._add_market_locked(market_seed, self.config.house_liquidity)
        if self.config.market_lifetime:
            stagger(list(self.catalog.markets.values()), self._now(),
                    self.config.market_lifetime)

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
            if self.catalog.collateral.lower() != self._position_collateral().lower():
                # outcome token ids derive from the collateral: the venue starts afresh on
                # the chain's USDC.e, so its markets' tokens can be split and moved there
                self._reset_locked()
                self.market_channel.resync()
                return self.relayer.executor  # type: ignore[return-value]
            self.relayer.executor = executor
            self.chain_settlement = self._attach_settlement()
            return executor

    def _position_collateral(self) -> str:
        """What the markets' outcome tokens are split from: on a wallet chain, its USDC.e, as
        on Polygon (the collateral adapters redeem them into pUSD); else the pUSD address."""
        return self.config.usdc_e if self.wallet_chain is not None else self.config.collateral

    def _attach_settlement(self) -> ChainSettlement | None:
        """Settle trades on the wallet chain when its exchanges are the dev chain's."""
        if self.wallet_chain is None:
            return None
        rpc_url, _, operator_key = self.wallet_chain
        try:
            return ChainSettlement.attach(rpc_url, operator_key, self.config, self.config.oracle)
        except Exception as exc:  # a stopped chain: the ledger alone, as without one
            log.warning("sandbox: no on-chain settlement on %s: %s", rpc_url, exc)
            return None

    def _settle_trade(self, trade: ClobTrade, fills: list[Fill]) -> None:
        """A match's settlement: none for a trade ``fail_next`` picks; with a chain attached,
        on chain (the fills take its transaction hash); a revert fails the trade. The split
        switch decides here how many trades ``/data/trades`` shows for it."""
        self.lifecycle.split(trade)
        if self.lifecycle.picks_to_fail(trade):
            return
        chain = self.chain_settlement
        if chain is None or not chain.settles(trade.market):
            return
        try:
            tx_hash = chain.settle(trade, fills, self._moved_on_chain)
        except Exception as exc:  # a revert, or the chain is gone: the trade fails
            log.warning("sandbox: settling trade %s on %s failed: %s", trade.id,
                        chain.rpc_url, exc)
            self.lifecycle.fail(trade)
            return
        trade.transaction_hash = tx_hash
        for fill in fills:
            fill.transaction_hash = tx_hash

    def _moved_on_chain(self, address: str, token: int, amount: int) -> None:
        """The venue moved ``amount`` (signed) of pUSD or a token to ``address`` on chain,
        and its ledger counts it already: indexing the chain must not count it again."""
        if token == PUSD:
            key = address.lower()
            self.accounts.chain_pusd[key] = self.accounts.chain_pusd.get(key, 0) + amount
        else:
            self.ledger.moved_on_chain(address, str(token), amount)

    def _now(self) -> float:
        # read at each call: tests swap `clock` on a running state
        return self.clock()

    def _after_match(self, market: Market) -> None:
        self.house_maker.replenish(market)
        self.desk.publish(market)

    def add_market(self, seed: MarketSeed, *, house_liquidity: bool | None = None) -> Market:
        """Create a market (and its event if new) from a seed; returns it."""
        with self.lock:
            if seed.slug in self.catalog.markets_by_slug:
                raise VenueRejection(f"market slug already exists: {seed.slug}", 409)
            liquidity = self.config.house_liquidity if house_liquidity is None else house_liquidity
            market = self._add_market_locked(seed, liquidity)
            if self.config.market_lifetime:
                set_end(market, self._now() + self.config.market_lifetime)
            return market

    def _add_market_locked(self, seed: MarketSeed, house_liquidity: bool) -> Market:
        market = self.catalog.add(seed, house_liquidity=house_liquidity)
        self.desk.open_book(market)
        self.tape.open_history(market, int(self.catalog.listed_at.timestamp()))
        if house_liquidity:
            self.house_maker.replenish(market)
        return market

    # ------------------------------------------------------------ resolution

    def resolve(self, condition_id: str, winner: int | None = None) -> Market:
        """Resolve a market with outcome ``winner`` winning (None: the leading one); where
        trades settle on a dev chain, its payouts are reported there first, so claims pay."""
        with self.lock:
            market = self.catalog.market(condition_id)
            if winner is None:
                winner = self.leading_outcome(market)
            if winner not in (0, 1):
                raise VenueRejection("winning outcome index must be 0 or 1")
            chain = self.chain_settlement
            if chain is not None and market.winner not in (None, winner):
                raise VenueRejection(f"{market.slug} resolved for "
                                     f"{market.outcomes[market.winner]}: payouts reported on "
                                     "chain never change", 409)
            if chain is not None:
                try:
                    report_resolution(chain, market, winner)
                except Exception as exc:  # the ledger resolves only what the chain does
                    raise VenueRejection(f"reporting the payouts of {market.slug} on "
                                         f"{chain.rpc_url} failed: {exc}", 502) from exc
            market.ends_at = None
            return self.settlement.resolve(market.condition_id, winner)

    def leading_outcome(self, market: Market) -> int:
        """The outcome the market favours now: 0 when its price is at least one half."""
        return 0 if self.current_price(market, 0) >= Decimal("0.5") else 1

    def set_lifespans(self, lifetime: float, replenish: bool) -> None:
        """Markets end ``lifetime`` s after now (those open now staggered over it; 0: never),
        with successors listed in their place when ``replenish`` (lifespans.py)."""
        with self.lock:
            self.config.market_lifetime = lifetime
            self.config.replenish_markets = replenish
            markets = list(self.catalog.markets.values())
            for market in markets:
                market.ends_at = None
            if lifetime:
                stagger(markets, self._now(), lifetime)

    def end_due_markets(self) -> list[Market]:
        """Resolve every open market whose end has come (its winner drawn by its price) and,
        replenishing, list a successor of each; the markets that ended."""
        ended: list[Market] = []
        with self.lock:
            now = self._now()
            due = [m for m in self.catalog.markets.values()
                   if not m.closed and m.ends_at is not None and m.ends_at <= now]
            for market in due:
                winner = drawn_winner(self.current_price(market, 0), self.rng)
                try:
                    self.resolve(market.condition_id, winner)
                except VenueRejection as exc:  # the chain refused: tried again next time
                    log.warning("sandbox: %s did not end: %s", market.slug, exc.message)
                    continue
                ended.append(market)
                if self.config.replenish_markets:
                    self._list_successor(market)
        return ended

    def _list_successor(self, market: Market) -> Market:
        """List the next round of an ended market, ending one lifetime from now."""
        event = self.catalog.events[market.event_id]
        while True:
            self.rounds += 1
            seed = successor_seed(market, event, self.rounds, self.rng)
            if seed.slug not in self.catalog.markets_by_slug:
                break
        return self.add_market(seed)

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
            if self.chain_settlement is not None:  # the chain is the truth: mint it there
                self._provision(address, pusd=to_base(amount))
            if not seen:
                self.accounts.moved_on_chain(address, to_base(amount))
            return self.ledger.credit(address, to_base(amount))

    def grant_tokens(self, address: str, token_id: str, shares: Decimal, *,
                     seen: bool = False) -> int:
        """Credit outcome tokens to an address (as if split earlier; the cache sees them
        after an update, or at once when ``seen``); returns the new size."""
        with self.lock:
            market, _ = self.catalog.market_for_token(token_id)
            if self.chain_settlement is not None and self.chain_settlement.settles(market):
                self._provision(address, market, token_id, to_base(shares))
            if not seen:
                self.accounts.moved_on_chain(address, to_base(shares), token_id)
            return self.ledger.grant(address, token_id, to_base(shares))

    def _provision(self, address: str, market: Market | None = None, token_id: str = "",
                   shares: int = 0, *, pusd: int = 0) -> None:
        """Mint pUSD or split tokens to ``address`` on the attached chain (the control API's
        funding, with a chain the balances live on)."""
        chain = self.chain_settlement
        assert chain is not None
        try:
            chain.provision(address, market, pusd=pusd, token=token_id, amount=shares,
                            moved=self._moved_on_chain)
        except Exception as exc:
            raise VenueRejection(f"funding {address} on {chain.rpc_url} failed: {exc}",
                                 502) from exc

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

    def relayer_session_signer(self, principal: Principal, kind: str, body: object,
                               idempotency_key: str) -> dict:
        """``POST /v1/session-signers/{authorizations,revocations}``; a revocation cancels
        the session key's open orders at once (ACCOUNTS.md §2.6)."""
        with self.lock:
            request = self.relayer.session_signer(principal, kind, body, idempotency_key)
            if kind == "revocation":
                signer = to_checksum_address(request.signer)
                for record in [r for r in self.keys.api_keys.values() if r.address == signer]:
                    self.desk.cancel_where(record)
            return session_signer_json(request)

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

    # ----------------------------------------------------------------- whales

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
            held = self.ledger.token_balance(whale, token)
            side = "SELL" if held > 50 * SCALE and self.rng.random() < 0.3 else "BUY"
            shares = Decimal(self.rng.randint(20, 300))
            if side == "SELL":
                shares = min(shares, units(held))
            fair = market.fair_price if index == 0 else 1 - market.fair_price
            spacing = max(market.tick_size, Decimal("0.01"))
            price = fair + spacing if side == "BUY" else fair - spacing
            price = min(max(price, market.tick_size), 1 - market.tick_size)
            fills = self.desk.inject(whale, token, side, price=price, size=shares,
                                    counterparty=None, rng=self.rng)
            drift = spacing * self.rng.choice((-1, 0, 0, 1))
            if market.house_liquidity:
                self.recenter_house(market, market.fair_price + drift)
            else:
                market.fair_price = min(max(market.fair_price + drift, spacing), 1 - spacing)
            return fills

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

    def held_positions(self, address: str) -> list[tuple[Market, int, int, PositionStats]]:
        """(market, index, shares, stats) of every token an address holds or held.

        Shares are the ledger's plus, when a chain is attached, what the address's on-chain
        balance of the token holds beyond what the venue moved there itself (tokens that
        arrived from outside the venue count too).
        """
        with self.lock:
            held = {token: (shares, stats) for token, shares, stats in self.ledger.held(address)}
            chain = self.chain
            tokens = dict(self.catalog.tokens)
            ledger = self.ledger
        balances = None if chain is None else self._chain_balances(chain, address, list(tokens))
        if balances is not None:
            # what the venue moved there itself the ledger counts already
            moved = {t for (a, t) in ledger.onchain if a == address.lower() and t in tokens}
            for token in set(balances) | moved:
                extra = ledger.from_outside(address, token, balances.get(token, 0))
                shares, stats = held.get(token, (0, PositionStats()))
                held[token] = (shares + extra, stats)
        return [(*tokens[token], shares, stats) for token, (shares, stats) in held.items()]

    @staticmethod
    def _chain_balances(chain: ChainHoldings, address: str, tokens: list[str]
                        ) -> dict[str, int] | None:
        try:
            return chain.balances(address, tokens)
        except Exception as exc:  # a stopped chain must not break the Data API
            log.warning("sandbox: reading balances from %s failed: %s", chain.rpc_url, exc)
            return None

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
        for kind in ACTIVITY_TYPES:  # the same trade payload under either type
            self.feed.publish("activity", kind, payloads, int(now * 1000))

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
