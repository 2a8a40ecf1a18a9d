"""The sandbox venue's whole state, behind one lock: catalog, books, ledger, accounts, fills.

HTTP views call the methods here and only shape their answers; every rule of the
venue (order checks, matching, settlement, fees, resolution) lives in this module.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from eth_utils import keccak, to_checksum_address

from devstack.venue import auth
from devstack.venue.catalog import (
    SEED_MARKETS,
    Event,
    Market,
    MarketSeed,
    build_market,
)
from devstack.venue.config import SandboxConfig
from devstack.venue.faults import FaultBoard
from devstack.venue.feed import RtdsHub
from devstack.venue.market_channel import MarketChannel
from devstack.venue.matching import BookOrder, MarketBook, PlannedFill, cost_of, proceeds_of
from devstack.venue.order_signing import (
    SIG_POLY_1271,
    checksum,
    order_digest,
    parse_order,
    recover_order_signer,
)

SCALE = 10**6
D_SCALE = Decimal(SCALE)
ORDER_TYPES = ("GTC", "GTD", "FOK", "FAK")

# Venue error texts (samples README "Errors" and "Deposit wallets").
ERR_INVALID_SIGNATURE = "invalid signature"
ERR_SIGNER_NOT_API_KEY = "the order signer address has to be the address of the API KEY"
ERR_OWNER_NOT_API_KEY = "the order owner has to be the owner of the API KEY"
ERR_EOA_REFUSED = "maker address not allowed, please use the deposit wallet flow"
ERR_BALANCE = "not enough balance / allowance"
ERR_PAYLOAD = "Invalid order payload"
ERR_FOK = "order couldn't be fully filled. FOK orders are fully filled or killed."
ERR_FAK = (
    "no orders found to match with FAK order. FAK orders are partially filled or killed "
    "if no match is found."
)
ERR_UNAUTHORIZED = "Unauthorized/Invalid api key"
ERR_L1 = "Invalid L1 Request headers"

HOUSE_SEED = "sandbox-house"
WHALE_PROFILES: tuple[tuple[str, str], ...] = (
    ("SandboxWhale", "Bold-Harpoon"),
    ("TideRunner", "Quiet-Current"),
    ("DeepBlue", "Patient-Abyss"),
    ("Orca9", "Swift-Pod"),
)


def units(base: int) -> Decimal:
    """Base units (6 decimals) to a Decimal amount."""
    return Decimal(base) / D_SCALE


def to_base(amount: Decimal) -> int:
    """A Decimal amount to base units, half-up."""
    return int((amount * D_SCALE).to_integral_value(ROUND_HALF_UP))


def amount_text(base: int) -> str:
    """Base units as a plain decimal string in units ("1.52", "5")."""
    value = units(base).normalize()
    return format(value, "f")


def derived_address(label: str) -> str:
    """A stable checksummed address for a sandbox actor (house, whales)."""
    return to_checksum_address(keccak(text=label)[-20:])


def iso(moment: datetime) -> str:
    """ISO-8601 with a Z suffix, the way Gamma writes dates."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class VenueRejection(Exception):
    """A request the venue refuses; becomes {"error": message} with `status`."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class ApiKeyRecord:
    """API credentials the venue issued to an address (L1-created)."""

    api_key: str
    secret: str
    passphrase: str
    address: str
    nonce: int


@dataclass
class Fill:
    """One side of one match, as the Data API and RTDS report it."""

    proxy_wallet: str  # checksummed
    side: str
    asset: str
    condition_id: str
    size: int  # shares, base units
    price: Decimal
    usdc: int  # pUSD paid or received, base units (fees excluded)
    fee: int
    timestamp: int
    transaction_hash: str
    role: str  # TAKER or MAKER
    outcome: str
    outcome_index: int
    order_id: str
    trade_id: str
    seq: int
    # When the venue made the fill visible (Data API and RTDS), epoch seconds: the start of
    # a copier's overhead in the latency benchmark (stamped by the venue, like arrivals).
    published_at: float = 0.0


@dataclass
class Redemption:
    """A REDEEM activity row."""

    proxy_wallet: str
    condition_id: str
    asset: str
    size: int
    usdc: int
    timestamp: int
    transaction_hash: str
    outcome: str
    outcome_index: int
    seq: int


@dataclass
class ClobTrade:
    """A CLOB trade (GET /data/trades): one taker order against its maker orders."""

    id: str
    taker_order: BookOrder
    market: Market
    size: int
    price: Decimal
    taker_usdc: int
    fee_rate_bps: int
    match_time: int
    transaction_hash: str
    maker_fills: list[tuple[BookOrder, int, Decimal]] = field(default_factory=list)


@dataclass
class PositionStats:
    """Cost basis of one address in one token."""

    bought: int = 0  # shares bought in total
    cost: int = 0  # pUSD cost of the shares still held
    gross_cost: int = 0  # pUSD paid for every share bought
    fees: int = 0
    realized: int = 0  # pUSD realized on sells and redemptions


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
        self.house = derived_address(HOUSE_SEED)
        self._initial_switches = (self.config.refuse_eoa_makers, set(self.config.legacy_makers))
        self.whales = [derived_address(f"sandbox-whale-{seed}-{i}") for i in range(4)]
        self._reset_locked()

    # ------------------------------------------------------------------ setup

    def reset(self) -> None:
        """Back to the seeded catalog with empty accounts, orders and fills."""
        with self.lock:
            self.config.refuse_eoa_makers = self._initial_switches[0]
            self.config.legacy_makers = set(self._initial_switches[1])
            self._reset_locked()
            self.market_channel.resync()
        self.faults.clear()

    def _reset_locked(self) -> None:
        self.rng = random.Random(self.seed)
        self.markets: dict[str, Market] = {}  # by condition id
        self.markets_by_id: dict[str, Market] = {}
        self.markets_by_slug: dict[str, Market] = {}
        self.tokens: dict[str, tuple[Market, int]] = {}
        self.events: dict[str, Event] = {}
        self.events_by_slug: dict[str, Event] = {}
        self.books: dict[str, MarketBook] = {}
        self.orders: dict[str, BookOrder] = {}
        self.open_by_maker: dict[str, set[str]] = {}
        self.api_keys: dict[str, ApiKeyRecord] = {}
        self.deposit_owners: dict[str, set[str]] = {}
        self.collateral: dict[str, int] = {}
        self.positions: dict[str, dict[str, int]] = {}
        self.stats: dict[tuple[str, str], PositionStats] = {}
        self.fills: list[Fill] = []
        self.redemptions: list[Redemption] = []
        self.clob_trades: dict[str, ClobTrade] = {}
        self.received_orders: list[dict] = []
        self.price_history: dict[str, list[tuple[int, Decimal]]] = {}
        self.profiles: dict[str, tuple[str, str]] = {}
        self._seq = 0
        self._next_market_id = 900001
        self._next_event_id = 90001
        self.started_at = datetime.fromtimestamp(self.clock(), UTC).replace(microsecond=0)
        for index, whale in enumerate(self.whales):
            self.profiles[whale.lower()] = WHALE_PROFILES[index % len(WHALE_PROFILES)]
        self.collateral[self.house.lower()] = 10**18
        for market_seed in SEED_MARKETS:
            self._add_market_locked(market_seed, self.config.house_liquidity)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _random_hash(self) -> str:
        # Not from the seeded rng: hashes must differ between runs, or a consumer that
        # persisted fills of an earlier run would take new fills for already-seen ones.
        return "0x" + secrets.token_bytes(32).hex()

    def add_market(self, seed: MarketSeed, *, house_liquidity: bool | None = None) -> Market:
        """Create a market (and its event if new) from a seed; returns it."""
        with self.lock:
            if seed.slug in self.markets_by_slug:
                raise VenueRejection(f"market slug already exists: {seed.slug}", 409)
            liquidity = self.config.house_liquidity if house_liquidity is None else house_liquidity
            return self._add_market_locked(seed, liquidity)

    def _add_market_locked(self, seed: MarketSeed, house_liquidity: bool) -> Market:
        created = self.started_at - timedelta(days=3)
        end = self.started_at + timedelta(days=seed.days_to_end)
        event = self.events_by_slug.get(seed.event_slug)
        if event is None:
            event = Event(
                id=str(self._next_event_id),
                slug=seed.event_slug,
                title=seed.event_title,
                description=f"Markets on: {seed.event_title}",
                category=seed.category,
                neg_risk=seed.neg_risk,
                neg_risk_market_id=(
                    "0x" + keccak(text=f"sandbox-neg-risk:{seed.event_slug}").hex()
                    if seed.neg_risk
                    else ""
                ),
                created_at=iso(created),
                start_date=iso(created),
                end_date=iso(end),
            )
            self._next_event_id += 1
            self.events[event.id] = event
            self.events_by_slug[event.slug] = event
        market = build_market(
            seed,
            market_id=str(self._next_market_id),
            event=event,
            oracle=self.config.oracle,
            collateral=self.config.collateral,
            created_at=iso(created),
            end_date=iso(end),
            house_liquidity=house_liquidity,
        )
        self._next_market_id += 1
        event.market_ids.append(market.id)
        self.markets[market.condition_id] = market
        self.markets_by_id[market.id] = market
        self.markets_by_slug[market.slug] = market
        for index, token in enumerate(market.token_ids):
            self.tokens[token] = (market, index)
        self.books[market.condition_id] = MarketBook(market.condition_id)
        start_ts = int(created.timestamp())
        self.price_history[market.token_ids[0]] = [(start_ts, market.fair_price)]
        self.price_history[market.token_ids[1]] = [(start_ts, 1 - market.fair_price)]
        if house_liquidity:
            self._replenish_house(market)
        return market

    # ------------------------------------------------------------ house quotes

    def _house_ladder(self, market: Market) -> list[tuple[int, Decimal, int]]:
        """(token index, own price, shares) of the house's quotes around the fair price."""
        spacing = max(market.tick_size, Decimal("0.01"))
        ladder = []
        for level in range(1, 6):
            shares = 250 * level * SCALE
            bid = market.fair_price - spacing * level
            ask = market.fair_price + spacing * level
            if bid >= market.tick_size:
                ladder.append((0, bid, shares))  # house BUYs outcome 0 at bid
            if ask <= 1 - market.tick_size:
                ladder.append((1, 1 - ask, shares))  # house BUYs outcome 1: an outcome-0 ask
        return ladder

    def _replenish_house(self, market: Market) -> None:
        if market.closed or not market.house_liquidity:
            return
        book = self.books[market.condition_id]
        resting: dict[tuple[int, Decimal], int] = {}
        for order in book.orders():
            if order.is_house:
                key = (order.token_index, order.price)
                resting[key] = resting.get(key, 0) + order.remaining
        for index, price, shares in self._house_ladder(market):
            have = resting.get((index, price), 0)
            if have * 2 < shares:
                self._rest_internal(market, self.house, index, "BUY", price, shares - have, True)

    def _rest_internal(
        self, market: Market, maker: str, index: int, side: str, price: Decimal, shares: int,
        is_house: bool,
    ) -> BookOrder:
        order = BookOrder(
            order_id=self._random_hash(),
            condition_id=market.condition_id,
            token_id=market.token_ids[index],
            token_index=index,
            side=side,
            price=price,
            original_size=shares,
            maker=maker,
            signer=maker,
            order_type="GTC",
            created_at=int(self.clock()),
            seq=self._next_seq(),
            outcome=market.outcomes[index],
            is_house=is_house,
        )
        self.orders[order.order_id] = order
        self.open_by_maker.setdefault(maker.lower(), set()).add(order.order_id)
        self.books[market.condition_id].add(order)
        return order

    def recenter_house(self, market: Market, fair_price: Decimal) -> None:
        """Move the house quotes of a market to a new fair price."""
        with self.lock:
            spacing = max(market.tick_size, Decimal("0.01"))
            low, high = spacing * 6, 1 - spacing * 6
            market.fair_price = min(max(fair_price, low), high).quantize(market.tick_size)
            book = self.books[market.condition_id]
            for order in [o for o in book.orders() if o.is_house]:
                self._close_order(order, "CANCELED")
            self._replenish_house(market)
            self.market_channel.publish(market)

    # ---------------------------------------------------------------- lookups

    def market_for_token(self, token_id: str) -> tuple[Market, int]:
        """The market and outcome index of a token id, or VenueRejection 404."""
        found = self.tokens.get(str(token_id))
        if found is None:
            raise VenueRejection("No orderbook exists for the requested token id", 404)
        return found

    def market(self, condition_id: str) -> Market:
        """A market by condition id, or VenueRejection 404."""
        market = self.markets.get(condition_id.lower()) or self.markets.get(condition_id)
        if market is None:
            raise VenueRejection("market not found", 404)
        return market

    # ---------------------------------------------------------------- ledger

    def fund(self, address: str, amount: Decimal) -> int:
        """Add pUSD to an address; returns the new balance in base units."""
        key = address.lower()
        with self.lock:
            self.collateral[key] = self.collateral.get(key, 0) + to_base(amount)
            return self.collateral[key]

    def grant_tokens(self, address: str, token_id: str, shares: Decimal) -> int:
        """Credit outcome tokens to an address (as if split earlier); returns the new size."""
        with self.lock:
            self.market_for_token(token_id)
            held = self.positions.setdefault(address.lower(), {})
            held[token_id] = held.get(token_id, 0) + to_base(shares)
            return held[token_id]

    def balance(self, address: str) -> int:
        """pUSD base units held by an address."""
        return self.collateral.get(address.lower(), 0)

    def token_balance(self, address: str, token_id: str) -> int:
        """Outcome-token base units held by an address."""
        return self.positions.get(address.lower(), {}).get(token_id, 0)

    def _reserved(self, address: str) -> tuple[int, dict[str, int]]:
        """pUSD and tokens locked by an address's open orders."""
        collateral = 0
        tokens: dict[str, int] = {}
        for order_id in self.open_by_maker.get(address.lower(), ()):
            order = self.orders[order_id]
            if order.side == "BUY":
                collateral += cost_of(order.remaining, order.price)
            else:
                tokens[order.token_id] = tokens.get(order.token_id, 0) + order.remaining
        return collateral, tokens

    def register_deposit_wallet(self, wallet: str, owner: str) -> None:
        """Record `owner` (an EOA) as an owner of deposit wallet `wallet`."""
        with self.lock:
            self.deposit_owners.setdefault(wallet.lower(), set()).add(owner.lower())

    def funder_for(self, address: str, signature_type: int) -> str:
        """The funding address behind an API-key address for a signature type."""
        if signature_type in (1, 2, 3):
            for wallet, owners in self.deposit_owners.items():
                if address.lower() in owners:
                    return wallet
        return address.lower()

    def set_eoa_refusal(self, enabled: bool, legacy: list[str] | None = None) -> None:
        """Switch the deposit-wallet-only mode; `legacy` makers stay allowed as EOAs."""
        with self.lock:
            self.config.refuse_eoa_makers = enabled
            if legacy is not None:
                self.config.legacy_makers = {a.lower() for a in legacy}

    # ------------------------------------------------------------------- auth

    def create_api_key(self, address: str, nonce: int) -> ApiKeyRecord:
        """Issue (or re-issue, idempotently) the creds of (address, nonce)."""
        creds = auth.derive_credentials(self.config.server_secret, address, nonce)
        record = ApiKeyRecord(
            api_key=creds["apiKey"], secret=creds["secret"], passphrase=creds["passphrase"],
            address=to_checksum_address(address), nonce=nonce,
        )
        with self.lock:
            self.api_keys[record.api_key] = record
        return record

    def derive_api_key(self, address: str, nonce: int) -> ApiKeyRecord:
        """The creds of (address, nonce) if they were created, else VenueRejection."""
        creds = auth.derive_credentials(self.config.server_secret, address, nonce)
        record = self.api_keys.get(creds["apiKey"])
        if record is None:
            raise VenueRejection("Could not derive api key!", 400)
        return record

    def delete_api_key(self, record: ApiKeyRecord) -> None:
        """Revoke an API key."""
        with self.lock:
            self.api_keys.pop(record.api_key, None)

    def authenticate_l2(
        self, headers: dict[str, str], method: str, path: str, body: str
    ) -> ApiKeyRecord:
        """Check the five L2 headers and the HMAC; returns the key's record or raises 401."""
        record = self.api_keys.get(headers.get("POLY_API_KEY", ""))
        if record is None:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        if headers.get("POLY_PASSPHRASE", "") != record.passphrase:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        if headers.get("POLY_ADDRESS", "").lower() != record.address.lower():
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        ok = auth.verify_hmac(
            record.secret,
            headers.get("POLY_SIGNATURE", ""),
            headers.get("POLY_TIMESTAMP", ""),
            method,
            path,
            body,
        )
        if not ok:
            raise VenueRejection(ERR_UNAUTHORIZED, 401)
        return record

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
            self.received_orders.append(entry)
            try:
                result = self._submit_locked(record, envelope, entry)
            except VenueRejection as exc:
                entry["status"] = exc.status
                entry["error"] = exc.message
                raise
            finally:
                entry["handled_us"] = int((self.clock() - arrived) * 1_000_000)
            entry["status"] = 200
            entry["response"] = result
        return result

    def _submit_locked(self, record: ApiKeyRecord, envelope: object, entry: dict) -> dict:
        if not isinstance(envelope, dict) or not isinstance(envelope.get("order"), dict):
            raise VenueRejection(ERR_PAYLOAD)
        order_type = envelope.get("orderType", "GTC")
        if order_type not in ORDER_TYPES:
            raise VenueRejection(ERR_PAYLOAD)
        post_only = bool(envelope.get("postOnly", False))
        if post_only and order_type in ("FOK", "FAK"):
            raise VenueRejection("invalid post-only order: FOK and FAK orders cannot be post-only")
        try:
            signed = parse_order(envelope["order"])
        except (KeyError, ValueError, TypeError) as exc:
            raise VenueRejection(ERR_PAYLOAD) from exc
        if envelope.get("owner") != record.api_key:
            raise VenueRejection(ERR_OWNER_NOT_API_KEY)
        market, index = self._tradable_market(str(signed.token_id))
        exchange = self.config.exchange_for(market.neg_risk)
        digest = order_digest(signed, self.config.chain_id, exchange)
        order_id = "0x" + digest.hex()
        entry["order_id"] = order_id
        authoriser = recover_order_signer(signed, self.config.chain_id, exchange, digest)
        if authoriser is None:
            raise VenueRejection(ERR_INVALID_SIGNATURE)
        self._check_signer(record, signed, authoriser)
        now = self.clock()
        if signed.expiration and order_type == "GTD" and signed.expiration <= now:
            raise VenueRejection(f"order {order_id} is invalid. Expired.")
        if order_type == "GTD" and not signed.expiration:
            raise VenueRejection(f"order {order_id} is invalid. GTD orders need an expiration.")
        if order_id in self.orders:
            raise VenueRejection(
                f"order {order_id} is invalid. Duplicated. Same order has already been placed, "
                "can't be placed again"
            )
        side = "BUY" if signed.side == 0 else "SELL"
        is_market_buy = side == "BUY" and order_type in ("FOK", "FAK")
        if side == "BUY":
            price = Decimal(signed.maker_amount) / Decimal(signed.taker_amount)
            shares = signed.taker_amount
        else:
            price = Decimal(signed.taker_amount) / Decimal(signed.maker_amount)
            shares = signed.maker_amount
        tick = market.tick_size
        if price < tick or price > 1 - tick:
            raise VenueRejection(
                f"order {order_id} is invalid. Price ({_plain(price)}) breaks minimum tick size "
                f"rule: {tick}"
            )
        if order_type in ("GTC", "GTD"):
            if price % tick != 0:
                raise VenueRejection(
                    f"order {order_id} is invalid. Price ({_plain(price)}) breaks minimum tick "
                    f"size rule: {tick}"
                )
            if units(shares) < market.min_order_size:
                raise VenueRejection(
                    f"order {order_id} is invalid. Size ({amount_text(shares)}) lower than the "
                    f"minimum: {market.min_order_size}"
                )
        maker = signed.maker
        self._check_balance(market, maker, side, signed.maker_amount, shares, price, str(
            signed.token_id))
        order = BookOrder(
            order_id=order_id,
            condition_id=market.condition_id,
            token_id=str(signed.token_id),
            token_index=index,
            side=side,
            price=price,
            original_size=0 if is_market_buy else shares,
            maker=maker,
            signer=signed.signer,
            owner=record.api_key,
            order_type=order_type,
            expiration=signed.expiration,
            created_at=int(now),
            seq=self._next_seq(),
            budget=signed.maker_amount if is_market_buy else None,
            outcome=market.outcomes[index],
        )
        book = self.books[market.condition_id]
        for gone in book.drop_expired(now):
            self._close_order(gone, "EXPIRED", remove=False)
        plan = book.plan(order, now)
        if post_only and plan.fills:
            raise VenueRejection(
                f"order {order_id} is invalid. Post-only order crosses the book."
            )
        if order_type == "FOK" and not plan.complete:
            raise VenueRejection(ERR_FOK)
        if order_type == "FAK" and not plan.fills:
            raise VenueRejection(ERR_FAK)
        self.orders[order_id] = order
        trade = self._execute(market, order, plan.fills, now)
        if order_type in ("GTC", "GTD") and order.remaining > 0:
            book.add(order)
            self.open_by_maker.setdefault(maker.lower(), set()).add(order_id)
            order.status = "LIVE"
        else:
            if is_market_buy:
                order.original_size = order.size_matched
            order.status = "MATCHED" if order.size_matched else "CANCELED"
        self._replenish_house(market)
        self.market_channel.publish(market)
        return self._order_response(order, trade)

    def _tradable_market(self, token_id: str) -> tuple[Market, int]:
        found = self.tokens.get(token_id)
        if found is None:
            raise VenueRejection("Invalid token id")
        market, index = found
        if market.closed or not market.active:
            raise VenueRejection("market is closed, orders are not accepted")
        return market, index

    def _check_signer(self, record: ApiKeyRecord, signed, authoriser: str) -> None:
        """Tie the order to the API key's address, as the venue does per signature type."""
        key_address = record.address.lower()
        if signed.signature_type == SIG_POLY_1271:
            wallet = signed.signer.lower()
            if signed.maker.lower() != wallet:
                raise VenueRejection(ERR_INVALID_SIGNATURE)
            owners = self.deposit_owners.get(wallet, set())
            if authoriser.lower() not in owners:
                raise VenueRejection(ERR_INVALID_SIGNATURE)
            if key_address != wallet and key_address not in owners:
                raise VenueRejection(ERR_SIGNER_NOT_API_KEY)
            return
        if authoriser.lower() != signed.signer.lower():
            raise VenueRejection(ERR_INVALID_SIGNATURE)
        if signed.signer.lower() != key_address:
            raise VenueRejection(ERR_SIGNER_NOT_API_KEY)
        if signed.signature_type == 0 and signed.maker.lower() != signed.signer.lower():
            raise VenueRejection(ERR_INVALID_SIGNATURE)
        if signed.signature_type in (1, 2):
            owners = self.deposit_owners.get(signed.maker.lower(), set())
            if key_address not in owners:
                raise VenueRejection(ERR_INVALID_SIGNATURE)
        if self.config.refuse_eoa_makers and signed.maker.lower() not in (
            self.config.legacy_makers
        ):
            raise VenueRejection(ERR_EOA_REFUSED)

    def _check_balance(
        self, market: Market, maker: str, side: str, maker_amount: int, shares: int,
        price: Decimal, token_id: str,
    ) -> None:
        reserved_collateral, reserved_tokens = self._reserved(maker)
        if side == "BUY":
            need = maker_amount
            if market.fees is not None:
                need += to_base(market.fees.taker_fee(units(shares), price))
            available = self.balance(maker) - reserved_collateral
        else:
            need = maker_amount
            available = self.token_balance(maker, token_id) - reserved_tokens.get(token_id, 0)
        if need > available:
            raise VenueRejection(ERR_BALANCE)

    def _execute(
        self, market: Market, taker: BookOrder, fills: list[PlannedFill], now: float
    ) -> ClobTrade | None:
        """Settle planned fills: move pUSD and tokens, record fills, broadcast them."""
        if not fills:
            return None
        tx_hash = self._random_hash()
        trade = ClobTrade(
            id=str(uuid.uuid4()),
            taker_order=taker,
            market=market,
            size=0,
            price=taker.own_price(fills[0].book_price),
            taker_usdc=0,
            fee_rate_bps=int(market.fees.rate * 10000) if market.fees else 0,
            match_time=int(now),
            transaction_hash=tx_hash,
        )
        new_fills: list[Fill] = []
        for planned in fills:
            resting = planned.resting
            shares = planned.shares
            taker_price = taker.own_price(planned.book_price)
            maker_price = resting.own_price(planned.book_price)
            taker_usdc, taker_fee = self._settle(market, taker, shares, taker_price, True)
            maker_usdc, _ = self._settle(market, resting, shares, maker_price, False)
            taker.size_matched += shares
            if taker.budget is not None:
                taker.spent += taker_usdc
            resting.size_matched += shares
            resting.associate_trades.append(trade.id)
            if resting.remaining <= 0:
                self._close_order(resting, "MATCHED")
            trade.size += shares
            trade.taker_usdc += taker_usdc
            trade.maker_fills.append((resting, shares, maker_price))
            seq = self._next_seq()
            new_fills.append(self._fill(market, taker, shares, taker_price, taker_usdc,
                                        taker_fee, "TAKER", trade, seq, now))
            new_fills.append(self._fill(market, resting, shares, maker_price, maker_usdc,
                                        0, "MAKER", trade, seq, now))
            market.volume += units(taker_usdc)
        taker.associate_trades.append(trade.id)
        last_book_price = fills[-1].book_price
        market.last_trade_price = last_book_price
        ts = int(now)
        self.price_history[market.token_ids[0]].append((ts, last_book_price))
        self.price_history[market.token_ids[1]].append((ts, 1 - last_book_price))
        self.market_channel.note_trade(market, taker.token_index, taker.side, trade.size,
                                       trade.fee_rate_bps, tx_hash, now)
        self.clob_trades[trade.id] = trade
        self.fills.extend(new_fills)
        published = time.time()
        for fill in new_fills:
            fill.published_at = published
        self._broadcast(new_fills, now)
        return trade

    def _settle(
        self, market: Market, order: BookOrder, shares: int, price: Decimal, is_taker: bool
    ) -> tuple[int, int]:
        """Move one participant's pUSD and tokens; returns (pUSD amount, fee)."""
        key = order.maker.lower()
        held = self.positions.setdefault(key, {})
        stats = self.stats.setdefault((key, order.token_id), PositionStats())
        if order.side == "BUY":
            usdc = cost_of(shares, price)
            self.collateral[key] = self.collateral.get(key, 0) - usdc
            held[order.token_id] = held.get(order.token_id, 0) + shares
            stats.bought += shares
            stats.cost += usdc
            stats.gross_cost += usdc
        else:
            usdc = proceeds_of(shares, price)
            before = held.get(order.token_id, 0)
            basis = stats.cost * shares // before if before else 0
            stats.cost -= basis
            stats.realized += usdc - basis
            held[order.token_id] = before - shares
            self.collateral[key] = self.collateral.get(key, 0) + usdc
        fee = 0
        if is_taker and market.fees is not None and not order.is_house:
            fee = to_base(market.fees.taker_fee(units(shares), price))
            fee = max(0, min(fee, self.collateral.get(key, 0)))
            self.collateral[key] = self.collateral.get(key, 0) - fee
            stats.fees += fee
        return usdc, fee

    def _fill(
        self, market: Market, order: BookOrder, shares: int, price: Decimal, usdc: int, fee: int,
        role: str, trade: ClobTrade, seq: int, now: float,
    ) -> Fill:
        return Fill(
            proxy_wallet=checksum(order.maker),
            side=order.side,
            asset=order.token_id,
            condition_id=market.condition_id,
            size=shares,
            price=price,
            usdc=usdc,
            fee=fee,
            timestamp=int(now),
            transaction_hash=trade.transaction_hash,
            role=role,
            outcome=market.outcomes[order.token_index],
            outcome_index=order.token_index,
            order_id=order.order_id,
            trade_id=trade.id,
            seq=seq,
        )

    def _close_order(self, order: BookOrder, status: str, *, remove: bool = True) -> None:
        order.status = status
        if remove:
            self.books[order.condition_id].remove(order)
        self.open_by_maker.get(order.maker.lower(), set()).discard(order.order_id)

    def _order_response(self, order: BookOrder, trade: ClobTrade | None) -> dict:
        if trade is None:
            making = taking = ""
        elif order.side == "BUY":
            making, taking = amount_text(trade.taker_usdc), amount_text(trade.size)
        else:
            making, taking = amount_text(trade.size), amount_text(trade.taker_usdc)
        fully = order.remaining <= 0 or order.order_type in ("FOK", "FAK")
        response = {
            "errorMsg": "",
            "orderID": order.order_id,
            "takingAmount": taking,
            "makingAmount": making,
            "status": "matched" if trade is not None and fully else "live",
            "transactionsHashes": [trade.transaction_hash] if trade else [],
            "success": True,
        }
        if trade is not None:
            response["tradeIDs"] = [trade.id]
        return response

    # ------------------------------------------------------------ cancelling

    def cancel_orders(self, record: ApiKeyRecord, order_ids: list[str]) -> dict:
        """Cancel the key's orders by id; answers {canceled, not_canceled}."""
        canceled: list[str] = []
        not_canceled: dict[str, str] = {}
        with self.lock:
            touched: dict[str, Market] = {}
            for order_id in order_ids:
                order = self.orders.get(order_id)
                if order is None or order.owner != record.api_key:
                    not_canceled[order_id] = "order not found"
                elif order.status != "LIVE":
                    not_canceled[order_id] = "order can't be canceled, already " + (
                        "matched" if order.status == "MATCHED" else "canceled"
                    )
                else:
                    self._close_order(order, "CANCELED")
                    canceled.append(order_id)
                    touched[order.condition_id] = self.markets[order.condition_id]
            for market in touched.values():
                self.market_channel.publish(market)
        return {"canceled": canceled, "not_canceled": not_canceled}

    def cancel_where(
        self, record: ApiKeyRecord, market: str | None = None, asset_id: str | None = None
    ) -> dict:
        """Cancel all the key's live orders, optionally in one market or token."""
        with self.lock:
            ids = [
                o.order_id for o in self._open_orders_of(record)
                if (not market or o.condition_id == market)
                and (not asset_id or o.token_id == asset_id)
            ]
            return self.cancel_orders(record, ids)

    def _open_orders_of(self, record: ApiKeyRecord) -> list[BookOrder]:
        now = self.clock()
        result = []
        for book in self.books.values():
            for order in book.orders():
                if order.owner == record.api_key:
                    if order.expired(now):
                        continue
                    result.append(order)
        result.sort(key=lambda o: o.seq)
        return result

    def open_orders(
        self, record: ApiKeyRecord, *, market: str = "", asset_id: str = "", order_id: str = ""
    ) -> list[BookOrder]:
        """The key's live orders, filtered like GET /data/orders."""
        with self.lock:
            return [
                o for o in self._open_orders_of(record)
                if (not market or o.condition_id == market)
                and (not asset_id or o.token_id == asset_id)
                and (not order_id or o.order_id == order_id)
            ]

    def order_for(self, record: ApiKeyRecord, order_id: str) -> BookOrder:
        """One of the key's orders (any status), or 404."""
        order = self.orders.get(order_id)
        if order is None or order.owner != record.api_key:
            raise VenueRejection("order not found", 404)
        return order

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
            market, index = self.market_for_token(token_id)
            if market.closed:
                raise VenueRejection("market is closed, orders are not accepted")
            if side not in ("BUY", "SELL"):
                raise VenueRejection("side must be BUY or SELL")
            if price is None:
                fair = market.fair_price if index == 0 else 1 - market.fair_price
                price = fair
            price = Decimal(price)
            if not (0 < price < 1):
                raise VenueRejection("price must be between 0 and 1")
            shares = to_base(size if size is not None else Decimal(self.rng.randint(10, 400)))
            now = self.clock()
            wallet_cs = to_checksum_address(wallet)
            # Injected wallets are funded on the fly: the point is the fill, not the money.
            if side == "BUY":
                need = cost_of(shares, price) + to_base(Decimal(1))
                if self.balance(wallet_cs) < need:
                    self.collateral[wallet_cs.lower()] = need
            elif self.token_balance(wallet_cs, token_id) < shares:
                self.positions.setdefault(wallet_cs.lower(), {})[token_id] = shares
            other = to_checksum_address(counterparty) if counterparty else self.house
            taker = BookOrder(
                order_id=self._random_hash(), condition_id=market.condition_id,
                token_id=token_id, token_index=index, side=side, price=price,
                original_size=shares, maker=wallet_cs, signer=wallet_cs, order_type="FAK",
                created_at=int(now), seq=self._next_seq(), outcome=market.outcomes[index],
            )
            # The counterparty buys the complement (mint) or the same token (normal trade).
            maker = BookOrder(
                order_id=self._random_hash(), condition_id=market.condition_id,
                token_id=market.token_ids[1 - index] if side == "BUY" else token_id,
                token_index=1 - index if side == "BUY" else index, side="BUY",
                price=1 - price if side == "BUY" else price, original_size=shares,
                maker=other, signer=other, order_type="GTC", created_at=int(now),
                seq=self._next_seq(), is_house=other == self.house,
            )
            maker.outcome = market.outcomes[maker.token_index]
            if maker.maker.lower() != self.house.lower():
                need = cost_of(shares, maker.price)
                if self.balance(other) < need:
                    self.collateral[other.lower()] = need
            self.orders[taker.order_id] = taker
            self.orders[maker.order_id] = maker
            book_price = price if index == 0 else 1 - price
            before = len(self.fills)
            self._execute(market, taker, [PlannedFill(maker, shares, book_price)], now)
            taker.status = "MATCHED"
            self.market_channel.publish(market)  # the trade price (the book is untouched)
            return self.fills[before:]

    def whale_tick(self) -> list[Fill]:
        """One scripted whale trade: a random whale takes liquidity in a random open market."""
        with self.lock:
            open_markets = [m for m in self.markets.values() if not m.closed]
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
            market = self.market(condition_id)
            if winner not in (0, 1):
                raise VenueRejection("winning outcome index must be 0 or 1")
            market.winner = winner
            market.closed = True
            market.active = True
            market.closed_time = datetime.fromtimestamp(self.clock(), UTC).strftime(
                "%Y-%m-%d %H:%M:%S+00"
            )
            for order in self.books[market.condition_id].orders():
                self._close_order(order, "CANCELED")
            self.market_channel.publish(market)
            return market

    def redeem(self, address: str, condition_id: str) -> Decimal:
        """Pay out a resolved market's winning tokens to `address`; returns pUSD paid."""
        with self.lock:
            market = self.market(condition_id)
            if market.winner is None:
                raise VenueRejection("market is not resolved")
            key = address.lower()
            held = self.positions.get(key, {})
            paid = 0
            now = int(self.clock())
            tx = self._random_hash()
            for index, token in enumerate(market.token_ids):
                shares = held.get(token, 0)
                if shares <= 0:
                    continue
                payout = shares if index == market.winner else 0
                stats = self.stats.setdefault((key, token), PositionStats())
                stats.realized += payout - stats.cost
                stats.cost = 0
                held[token] = 0
                paid += payout
                self.redemptions.append(Redemption(
                    proxy_wallet=to_checksum_address(address), condition_id=market.condition_id,
                    asset=token, size=shares, usdc=payout, timestamp=now, transaction_hash=tx,
                    outcome=market.outcomes[index], outcome_index=index, seq=self._next_seq(),
                ))
            self.collateral[key] = self.collateral.get(key, 0) + paid
            return units(paid)

    # ----------------------------------------------------------- market data

    def token_book(self, token_id: str) -> tuple[Market, int, list, list]:
        """(market, index, bids, asks) for a token: levels (price, shares) best first."""
        with self.lock:
            market, index = self.market_for_token(token_id)
            book = self.books[market.condition_id]
            now = self.clock()
            bids = _levels(book.bids, now)
            asks = _levels(book.asks, now)
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
        market, index = self.market_for_token(token_id)
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
            return list(self.fills)

    def redemptions_snapshot(self) -> list[Redemption]:
        """A copy of every redemption so far."""
        with self.lock:
            return list(self.redemptions)

    def held_positions(self, address: str) -> list[tuple[Market, int, int, PositionStats]]:
        """(market, index, shares, stats) of every token an address holds or held."""
        key = address.lower()
        with self.lock:
            result = []
            for token, shares in self.positions.get(key, {}).items():
                market, index = self.tokens[token]
                stats = self.stats.get((key, token), PositionStats())
                result.append((market, index, shares, stats))
            return result

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
        market = self.markets[fill.condition_id]
        event = self.events[market.event_id]
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


def _levels(orders: list[BookOrder], now: float) -> list[tuple[Decimal, Decimal]]:
    """Aggregate resting orders into (book price, shares) levels, best first."""
    levels: list[tuple[Decimal, int]] = []
    for order in orders:
        if order.expired(now) or order.remaining <= 0:
            continue
        price = order.book_price
        if levels and levels[-1][0] == price:
            levels[-1] = (price, levels[-1][1] + order.remaining)
        else:
            levels.append((price, order.remaining))
    return [(price, units(size)) for price, size in levels]


def _plain(value: Decimal) -> str:
    """A Decimal as short plain text for messages."""
    return format(value.normalize(), "f")
