"""CLOB API: books and prices, market parameters, API-key auth, and V2 order placement.

Written once for both transports (see ``venue.gamma``). Authenticated calls take the
``ApiCreds`` explicitly, because one worker trades for many users' wallets.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import partial

from venue.gamma import Returns, Runner
from venue.http import Call, VenueRequest, query
from venue.models import (
    ApiCreds,
    BalanceAllowance,
    CancelResult,
    MarketParameters,
    OpenOrder,
    OpenOrdersPage,
    OrderBook,
    PostOrderResult,
    PriceHistoryPoint,
)
from venue.order_versions import balance_asset_type
from venue.parse import clob as parse
from venue.parse import clob_trades as parse_trades
from venue.rate_tiers import Tier, cancel_all_cost, parse_tier
from venue.signing import SignedOrder, address_of, compact_json, l1_headers, l2_headers

INITIAL_CURSOR = "MA=="
END_CURSOR = "LTE="
MAX_CANCEL_IDS = 1000  # DELETE /orders takes at most this many ids (ACCOUNTS.md §11)

# Market parameters change rarely (tick size can shrink near 0/1), so they get a longer TTL
# than the default metadata TTL would give a busy copy burst.
PARAMETER_TTL = 60.0
# The live parameters of /clob-markets (fd, mos, mts, taker delay) change while a market
# trades (ACCOUNTS.md §11): a short lifetime, and orders re-read them (``fresh``).
LIVE_PARAMETER_TTL = 10.0


class ClobApi:
    """CLOB endpoints; tick size, neg-risk and fee rate are cached per token."""

    def __init__(self, run: Runner, chain_id: int) -> None:
        self._run = run
        self.chain_id = chain_id

    # --- public market data ------------------------------------------------------------

    def book(self, token_id: str) -> Returns[OrderBook]:
        """``GET /book?token_id=``: the order book snapshot."""
        return self._run(Call(VenueRequest("clob", "GET", "/book", query(token_id=token_id)),
                              parse.parse_book))

    def price(self, token_id: str, side: str) -> Returns[Decimal]:
        """``GET /price``: BUY gives the best bid, SELL the best ask."""
        params = query(token_id=token_id, side=side.upper())
        return self._run(Call(VenueRequest("clob", "GET", "/price", params), parse.parse_price))

    def midpoint(self, token_id: str) -> Returns[Decimal]:
        """``GET /midpoint``."""
        request = VenueRequest("clob", "GET", "/midpoint", query(token_id=token_id))
        return self._run(Call(request, parse.parse_midpoint))

    def prices_history(
        self,
        token_id: str,
        *,
        interval: str | None = None,
        start_ts: int | None = None,
        end_ts: int | None = None,
        fidelity: int | None = None,
    ) -> Returns[list[PriceHistoryPoint]]:
        """``GET /prices-history`` (``interval`` like 1h/6h/1d/1w/1m/max, or a ts range)."""
        if interval is None and (start_ts is None or end_ts is None):
            raise ValueError("prices_history needs interval, or both start_ts and end_ts")
        params = query(market=token_id, interval=interval, startTs=start_ts, endTs=end_ts,
                       fidelity=fidelity)
        return self._run(Call(VenueRequest("clob", "GET", "/prices-history", params),
                              parse.parse_prices_history))

    def tick_size(self, token_id: str) -> Returns[Decimal]:
        """``GET /tick-size``: minimum price increment (cached)."""
        request = VenueRequest("clob", "GET", "/tick-size", query(token_id=token_id))
        return self._run(Call(request, parse.parse_tick_size,
                              cache_key=f"clob:tick:{token_id}", cache_ttl=PARAMETER_TTL))

    def neg_risk(self, token_id: str) -> Returns[bool]:
        """``GET /neg-risk``: whether orders go to the NegRisk exchange (cached)."""
        request = VenueRequest("clob", "GET", "/neg-risk", query(token_id=token_id))
        return self._run(Call(request, parse.parse_neg_risk,
                              cache_key=f"clob:negrisk:{token_id}", cache_ttl=PARAMETER_TTL))

    def fee_rate_bps(self, token_id: str) -> Returns[int]:
        """``GET /fee-rate``: base fee in basis points (cached)."""
        request = VenueRequest("clob", "GET", "/fee-rate", query(token_id=token_id))
        return self._run(Call(request, parse.parse_fee_rate_bps,
                              cache_key=f"clob:fee:{token_id}", cache_ttl=PARAMETER_TTL))

    def market_parameters(self, condition_id: str, *, fresh: bool = False
                          ) -> Returns[MarketParameters]:
        """``GET /clob-markets/<cid>``: the market's live tick, minimum, fees and taker delay.

        Cached for ``LIVE_PARAMETER_TTL``; ``fresh`` reads the venue now (and re-caches).
        """
        request = VenueRequest("clob", "GET", f"/clob-markets/{condition_id}")
        return self._run(Call(request, parse.parse_market_parameters,
                              cache_key=f"clob:params:{condition_id}",
                              cache_ttl=LIVE_PARAMETER_TTL, refresh=fresh))

    def server_time(self) -> Returns[int]:
        """``GET /time``: venue clock in unix seconds."""
        return self._run(Call(VenueRequest("clob", "GET", "/time"), parse.parse_server_time))

    def version(self) -> Returns[int]:
        """``GET /version``: order version the exchange accepts (2 after the V2 cutover)."""
        return self._run(Call(VenueRequest("clob", "GET", "/version"), parse.parse_version))

    # --- L1: API credentials -----------------------------------------------------------

    def create_api_key(
        self, private_key: str, nonce: int = 0, timestamp: int | None = None
    ) -> Returns[ApiCreds]:
        """``POST /auth/api-key`` (L1): mint credentials for the key's address."""
        address = address_of(private_key)
        headers = l1_headers(private_key, self.chain_id, timestamp, nonce)
        request = VenueRequest("clob", "POST", "/auth/api-key", headers=headers, retryable=False)
        return self._run(Call(request, lambda body: parse.parse_api_creds(body, address)))

    def derive_api_key(
        self, private_key: str, nonce: int = 0, timestamp: int | None = None
    ) -> Returns[ApiCreds]:
        """``GET /auth/derive-api-key`` (L1): the existing credentials for (address, nonce)."""
        address = address_of(private_key)
        headers = l1_headers(private_key, self.chain_id, timestamp, nonce)
        request = VenueRequest("clob", "GET", "/auth/derive-api-key", headers=headers)
        return self._run(Call(request, lambda body: parse.parse_api_creds(body, address)))

    # --- L2: orders --------------------------------------------------------------------

    def post_order(
        self,
        creds: ApiCreds,
        order: SignedOrder,
        order_type: str | None = None,
        *,
        post_only: bool = False,
        defer_exec: bool = False,
        body: str | None = None,
    ) -> Returns[PostOrderResult]:
        """``POST /order``; never retried: a timeout raises VenueTimeout to reconcile.

        ``body``: the order's JSON already written by ``order.body`` with these same
        arguments (a prepared order's), sent as it is instead of being encoded again.
        """
        if body is None:
            body = order.body(creds.api_key, order_type, post_only, defer_exec)
        headers = l2_headers(creds, "POST", "/order", body)
        request = VenueRequest("clob", "POST", "/order", body=body, headers=headers,
                               retryable=False)
        return self._run(Call(request, parse.parse_post_order,
                              tier=partial(rate_limit_tier_call, creds)))

    def open_orders(
        self,
        creds: ApiCreds,
        *,
        market: str | None = None,
        asset_id: str | None = None,
        order_id: str | None = None,
        next_cursor: str = INITIAL_CURSOR,
    ) -> Returns[OpenOrdersPage]:
        """``GET /data/orders``: one page of the creds' open orders (``asset_id`` only with
        its ``market``: the venue needs both from 2026-12-14, ACCOUNTS.md §12)."""
        if asset_id and not market:
            raise ValueError("open orders filtered by asset_id need the market too")
        params = query(market=market, asset_id=asset_id, id=order_id, next_cursor=next_cursor)
        # The HMAC covers the path only, never the query string.
        headers = l2_headers(creds, "GET", "/data/orders")
        request = VenueRequest("clob", "GET", "/data/orders", params, headers=headers)
        # the tier too when due: a cancel-all sizes its requests by it after this listing
        return self._run(Call(request, parse.parse_open_orders,
                              tier=partial(rate_limit_tier_call, creds)))

    def order(self, creds: ApiCreds, order_id: str) -> Returns[OpenOrder | None]:
        """``GET /data/order/{id}``; None for the empty answer the venue gives finished orders."""
        path = f"/data/order/{order_id}"
        request = VenueRequest("clob", "GET", path, headers=l2_headers(creds, "GET", path))
        return self._run(Call(request, parse_trades.parse_order_or_finished))

    def trades(
        self,
        creds: ApiCreds,
        *,
        trade_id: str | None = None,
        market: str | None = None,
        asset_id: str | None = None,
        after: int | None = None,
        next_cursor: str = INITIAL_CURSOR,
    ) -> Returns[tuple[tuple[parse_trades.VenueTrade, ...], str]]:
        """``GET /data/trades`` (L2): one page of the creds' trades, and the next cursor.

        The venue filters by trade ``id``, ``maker_address``, ``market`` (condition id),
        ``asset_id`` and time (docs.polymarket.com api-reference/trade/get-trades), never by
        order: an order's trades are the ones naming it (``VenueTrade.fill_of``).
        """
        params = query(id=trade_id, market=market, asset_id=asset_id, after=after,
                       next_cursor=next_cursor)
        headers = l2_headers(creds, "GET", "/data/trades")  # the path only, as /data/orders
        request = VenueRequest("clob", "GET", "/data/trades", params, headers=headers)
        return self._run(Call(request, parse_trades.parse_trades))

    def balance_allowance(
        self,
        creds: ApiCreds,
        *,
        asset_type: str | None = None,
        token_id: str | None = None,
        signature_type: int = 0,
    ) -> Returns[Decimal]:
        """``GET /balance-allowance`` (L2): the funder's pUSD (or token) balance, in units.

        ``asset_type`` defaults to the token's: ``COLLATERAL`` without one, else
        ``CONDITIONAL`` or ``CONDITIONAL-V2`` (a protocol-v2 position; the venue refuses the
        other one)."""
        # the official SDK's order: asset_type, signature_type, token_id
        params = query(asset_type=asset_type or balance_asset_type(token_id),
                       signature_type=signature_type, token_id=token_id)
        headers = l2_headers(creds, "GET", "/balance-allowance")
        request = VenueRequest("clob", "GET", "/balance-allowance", params, headers=headers)
        # The venue answers base units (6 decimals) as a decimal string. The signer's tier
        # rides along when due: the copy engine reads balances off the order path, so its
        # orders rarely wait for the lookup.
        return self._run(Call(request, lambda body: Decimal(str(body["balance"])).scaleb(-6),
                              tier=partial(rate_limit_tier_call, creds)))

    def balance_allowances(
        self, creds: ApiCreds, *, signature_type: int = 0
    ) -> Returns[BalanceAllowance]:
        """``GET /balance-allowance`` for collateral: the balance and each spender's allowance."""
        params = query(asset_type="COLLATERAL", signature_type=signature_type)
        headers = l2_headers(creds, "GET", "/balance-allowance")
        request = VenueRequest("clob", "GET", "/balance-allowance", params, headers=headers)
        return self._run(Call(request, parse.parse_balance_allowance))

    def update_balance_allowance(
        self,
        creds: ApiCreds,
        *,
        asset_type: str | None = None,
        token_id: str | None = None,
        signature_type: int = 0,
    ) -> Returns[None]:
        """``GET /balance-allowance/update`` (L2): refresh the CLOB's cached balance and
        allowances after a deposit, wrap or approval (the answer is not relied on); the asset
        type defaults as ``balance_allowance``'s."""
        # the official SDK's order: asset_type, signature_type, token_id
        params = query(asset_type=asset_type or balance_asset_type(token_id),
                       signature_type=signature_type, token_id=token_id)
        headers = l2_headers(creds, "GET", "/balance-allowance/update")
        request = VenueRequest("clob", "GET", "/balance-allowance/update", params,
                               headers=headers)
        return self._run(Call(request, lambda _body: None))

    def cancel_order(self, creds: ApiCreds, order_id: str) -> Returns[CancelResult]:
        """``DELETE /order`` with ``{"orderID"}``; cancelling twice is harmless, so retried."""
        return self._delete(creds, "/order", compact_json({"orderID": order_id}))

    def cancel_orders(self, creds: ApiCreds, order_ids: Sequence[str]) -> Returns[CancelResult]:
        """``DELETE /orders`` with at most ``MAX_CANCEL_IDS`` order ids (the client's
        ``cancel_many`` splits longer lists)."""
        if len(order_ids) > MAX_CANCEL_IDS:
            raise ValueError(f"DELETE /orders takes at most {MAX_CANCEL_IDS} ids")
        return self._delete(creds, "/orders", compact_json(list(order_ids)),
                            weight=max(1, len(order_ids)))

    def cancel_all(self, creds: ApiCreds) -> Returns[CancelResult]:
        """``DELETE /cancel-all``: every open order of the creds; it costs 1 plus one token
        per cancelled order (the client's ``cancel_all_orders`` keeps that within the
        signer's bucket)."""
        return self._delete(creds, "/cancel-all", None, per_cancelled=True)

    def rate_limit_tier(self, creds: ApiCreds) -> Returns[Tier]:
        """``GET /v1/user/rate-limit-tier`` (L2): the creds' signer's rate-limit tier."""
        return self._run(rate_limit_tier_call(creds))

    def cancel_market_orders(
        self, creds: ApiCreds, *, market: str | None = None, asset_id: str | None = None
    ) -> Returns[CancelResult]:
        """``DELETE /cancel-market-orders`` for a condition id and/or token."""
        body = {k: v for k, v in (("market", market), ("asset_id", asset_id)) if v}
        return self._delete(creds, "/cancel-market-orders", compact_json(body),
                            per_cancelled=True)

    def _delete(self, creds: ApiCreds, path: str, body: str | None,
                weight: int = 1, per_cancelled: bool = False) -> Returns[CancelResult]:
        headers = l2_headers(creds, "DELETE", path, body)
        request = VenueRequest("clob", "DELETE", path, body=body, headers=headers,
                               weight=weight)
        return self._run(Call(request, parse.parse_cancel,
                              tier=partial(rate_limit_tier_call, creds),
                              charge=_cancelled if per_cancelled else None))


def _cancelled(result: CancelResult) -> int:
    """The tokens a cancel-all's answer costs beyond its 1: one per cancelled order."""
    return cancel_all_cost(len(result.canceled)) - 1


def rate_limit_tier_call(creds: ApiCreds) -> Call[Tier]:
    """``GET /v1/user/rate-limit-tier`` (L2) as a call; not retried (the next order asks
    again at the next refresh)."""
    path = "/v1/user/rate-limit-tier"
    request = VenueRequest("clob", "GET", path, headers=l2_headers(creds, "GET", path),
                           retryable=False)
    return Call(request, parse_tier)
