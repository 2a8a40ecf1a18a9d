"""The MCP tool table: each tool's scope, schemas, service call and annotations, declared once.

A tool is a surface like a REST route: it parses its arguments with the marshmallow
schema the REST route uses, calls the same service function, and dumps the result with
the REST response schema. Lists come back wrapped in an object (``{"positions": [...]}``,
paginated ones with a ``pagination`` object) because 2025-era clients require object
results. Write tools add a required ``idempotency_key`` (the same store as REST's
Idempotency-Key); previews accept one. Scope checks, idempotency and error mapping
happen in ``runner.py``; rules live in ``services/``; nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from marshmallow import Schema, fields, validate

from schemas.common import PageArgsSchema, PaginationSchema
from schemas.configs import (
    ConfigCreateRequestSchema,
    ConfigFieldsSchema,
    ConfigPnlSchema,
    ConfigPreviewRequestSchema,
    ConfigPreviewSchema,
    ConfigQualitySchema,
    ConfigStatusSchema,
    CopyConfigSchema,
    DecisionSchema,
    QualityArgsSchema,
    ReadinessSchema,
    SuggestMultiplierArgsSchema,
    SuggestMultiplierSchema,
)
from schemas.copyability import CopyabilityOperationSchema, CopyabilityToolArgsSchema
from schemas.markets import (
    MarketDepthArgsSchema,
    MarketDepthSchema,
    MarketDetailsSchema,
    MarketLookupArgsSchema,
    MarketSearchArgsSchema,
    MarketSummarySchema,
    PriceHistoryArgsSchema,
    PriceHistorySchema,
    TopTradersArgsSchema,
    TraderProfileArgsSchema,
    TraderProfileSchema,
    TraderSchema,
)
from schemas.notifications import (
    UNTRUSTED_NOTE,
    MarkReadRequestSchema,
    MarkReadResultSchema,
    NotificationsArgsSchema,
    NotificationSchema,
)
from schemas.shared_configs import SharedConfigSchema
from schemas.stats import PlatformStatsSchema
from schemas.trading import (
    CancelResultSchema,
    OpenOrderSchema,
    OrderPreviewSchema,
    PlaceOrderRequestSchema,
    PlaceOrderResponseSchema,
    PlaceOrderSchema,
    PositionsArgsSchema,
    PositionSchema,
    TradesArgsSchema,
    TradeSchema,
    UserSummarySchema,
)
from schemas.wallets import ClaimRequestSchema, ClaimResponseSchema
from services.copying import configs, copyability_reports, leaderboard, traders
from services.copying.configs import sharing
from services.identity import money_tools
from services.markets import markets
from services.notifications import inbox
from services.platform.principal import Principal
from services.trading import (
    order_cancels,
    order_reads,
    orders,
    paper,
    positions,
    previews,
    stats,
    trades,
)
from services.wallets import claims, readiness

Idempotency = Literal["none", "optional", "required"]
ServiceCall = Callable[[Principal, dict[str, Any]], Any]

CONFIRMATION_CODE_DOC = (
    "Only when a person must confirm this call: the code an earlier call with the same "
    "arguments answered (in `confirmation`), once the person agreed. Single use, 15 minutes.")
IDEMPOTENCY_KEY_DOC = (
    "A UUID you generate for this action. Retrying with the same key (within 24 hours) "
    "returns the first result without doing it again; use a new key for a new action.")


@dataclass(frozen=True)
class Annotations:
    """MCP tool annotations (hints to clients about what a tool does)."""

    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False

    def as_json(self, title: str) -> dict[str, Any]:
        """The ``annotations`` object of a tool definition."""
        return {"title": title, "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive, "idempotentHint": self.idempotent,
                "openWorldHint": self.open_world}


# Third-party text in results (Tool.untrusted): a market's, a position's, a config's target.
MARKET_TEXT = ("title", "category", "description", "outcomes[].outcome")
POSITION_TEXT = ("positions[].market_title", "positions[].outcome")
CONFIG_TEXT = ("target_name",)
# A shared setup's words are its owner's, another user's.
SHARED_TEXT = ("rules.include_keywords[]", "rules.exclude_keywords[]",
               "rules.blocked_categories[]")

# Reads of our own database; reads that ask the venue or the chain.
LOCAL_READ = Annotations(read_only=True)
VENUE_READ = Annotations(read_only=True, open_world=True)


def _as_is(result: Any) -> Any:
    return result


@dataclass(frozen=True)
class Output:
    """A tool's result: the schema of its structured content and how the result fills it."""

    schema: type[Schema]
    present: Callable[[Any], Any] = _as_is


def single(schema: type[Schema]) -> Output:
    """The service's result is the structured content."""
    return Output(schema)


def listing(key: str, item: type[Schema], name: str) -> Output:
    """A bare list from the service, answered as ``{key: [...]}``."""
    wrapper = Schema.from_dict({key: fields.List(fields.Nested(item), required=True)},
                               name=name)
    return Output(wrapper, lambda items: {key: list(items)})


def page_of(key: str, item: type[Schema], name: str) -> Output:
    """A services.platform.pagination.Page, answered as ``{key: [...], pagination: {...}}``."""
    wrapper = Schema.from_dict({
        key: fields.List(fields.Nested(item), required=True),
        "pagination": fields.Nested(PaginationSchema, required=True, metadata={
            "description": "has_next is exact: call again with offset + limit for more."}),
    }, name=name)
    return Output(wrapper, lambda page: {key: list(page.items), "pagination": page.meta()})


def arguments(name: str, *bases: type[Schema], **extra: fields.Field) -> type[Schema]:
    """An input schema: ``bases`` (REST's own schemas) plus ``extra`` fields (path params)."""
    return type(name, bases or (Schema,), dict(extra))


NO_ARGUMENTS = arguments("NoArguments")


def _config_id(description: str = "The copy config's id (from list_copy_configs).") -> Any:
    return fields.UUID(required=True, metadata={"description": description})


@dataclass(frozen=True)
class Tool:
    """One MCP tool: a name agents call, the scope it needs, and the capability behind it."""

    name: str
    title: str
    description: str
    scope: str | None
    input: type[Schema]
    output: Output
    call: ServiceCall
    annotations: Annotations
    idempotency: Idempotency = "none"
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Argument groups of which a call must give at least one whole group ("slug or
    # token_id"): published as inputSchema ``anyOf`` of ``required``, since agents build
    # calls from the schema and the service would refuse the call otherwise.
    one_of: tuple[tuple[str, ...], ...] = ()
    # Where the result holds third-party text (``markets[].title``): marked for agents as
    # untrusted data (blueprints/mcp/untrusted.py).
    untrusted: tuple[str, ...] = ()

    @property
    def is_write(self) -> bool:
        """True when the tool changes state (and so requires an idempotency_key)."""
        return self.idempotency == "required"


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="get_platform_stats", title="Platform statistics", scope=None,
        description=(
            "Public figures about the platform: number of users, copy trades and pUSD "
            "volume in the last 24 hours, and median / p95 copy latency (ms from a target "
            "wallet's trade being detected to our order being acknowledged). Needs no scope."),
        input=NO_ARGUMENTS, output=single(PlatformStatsSchema),
        call=lambda principal, args: stats.platform_stats(),
        annotations=LOCAL_READ),
    Tool(
        name="get_trading_readiness", title="Trading readiness", scope="read:account",
        description=(
            "Can this account trade and copy live right now? Reports the trading account "
            "(kind, maker wallet), its onboarding steps (deploy, approvals, credentials, "
            "balance update), its pUSD at the venue and the exchanges' allowances, USDC.e "
            "to wrap, gas for accounts that pay it, active configs against the plan's "
            "limit, `ready_to_trade`, and `blockers`, one per missing step (each with a "
            "code and what to do). Call it before going live. Setting the account up "
            "(connecting a key) is done on the dashboard, never here."),
        input=NO_ARGUMENTS, output=single(ReadinessSchema),
        call=lambda principal, args: readiness.readiness(principal.user),
        annotations=VENUE_READ),
    Tool(
        name="search_markets", title="Search markets", scope="read:markets",
        untrusted=tuple(f"markets[].{path}" for path in MARKET_TEXT),
        description=(
            "Find prediction markets by text (e.g. `bitcoin`, `election`). Each result has "
            "its slug, title, category, status and outcomes with their token_id and price "
            "(0-1, the implied probability). Use a token_id for depth, history and orders."),
        input=MarketSearchArgsSchema, output=listing("markets", MarketSummarySchema,
                                                     "MarketSearchResult"),
        call=lambda principal, args: markets.search_markets(
            args["query"], limit=args["limit"], include_closed=args["include_closed"]),
        annotations=VENUE_READ),
    Tool(
        name="get_market_details", title="Market details", scope="read:markets",
        untrusted=MARKET_TEXT,
        description=(
            "One market by `slug` or by one of its outcome `token_id`s: status, outcomes "
            "with token ids and prices, best bid/ask, last trade, volume, liquidity, tick "
            "size, minimum order size, neg-risk flag and taker fee rate."),
        input=MarketLookupArgsSchema, output=single(MarketDetailsSchema),
        call=lambda principal, args: markets.market_details(args["slug"], args["token_id"]),
        annotations=VENUE_READ, one_of=(("slug",), ("token_id",))),
    Tool(
        name="get_market_depth", title="Order book depth", scope="read:markets",
        description=(
            "The order book of one outcome token: best bid/ask, midpoint, spread, the top "
            "`levels` price levels per side with cumulative size, and pUSD resting within "
            "1, 2 and 5 cents of the midpoint. Use it to judge how much can trade and at "
            "what slippage."),
        input=MarketDepthArgsSchema, output=single(MarketDepthSchema),
        call=lambda principal, args: markets.market_depth(args["token_id"], args["levels"]),
        annotations=VENUE_READ),
    Tool(
        name="get_market_price_history", title="Price history", scope="read:markets",
        description=(
            "Price points of one outcome token over `interval` (1h, 6h, 1d, 1w, 1m, max) "
            "with open, latest, high, low and change (absolute and percent)."),
        input=PriceHistoryArgsSchema, output=single(PriceHistorySchema),
        call=lambda principal, args: markets.price_history(
            args["token_id"], args["interval"], args["fidelity"]),
        annotations=VENUE_READ),
    Tool(
        name="list_top_traders", title="Top traders", scope="read:markets",
        untrusted=("traders[].name", "traders[].screening.categories[]"),
        description=(
            "The venue's leaderboard for a period (DAY, WEEK, MONTH, ALL), ranked by PnL or "
            "volume: wallet address, name, PnL, volume. Candidates for `target_address` in "
            "preview_copy_config. Screened: each row's `screening` is the trader's last 30 "
            "days replayed through default rules at our measured p50/p95 delay after fees "
            "(a replay: `fills` it rests on, `updated_at`, `cannot_know`), with flags "
            "(market_maker, high_frequency, toxic_for_copying, thin_history, wash_like, "
            "inactive) and their numbers; `sort`/`direction`, `min_<column>`/`max_<column>`, "
            "`flag`, `without_flag`, `traded_category`, `active_within_days` and `q` (address "
            "or name) sort, filter and search as GET /api/traders does."),
        input=TopTradersArgsSchema, output=listing("traders", TraderSchema,
                                                   "TopTradersResult"),
        call=lambda principal, args: leaderboard.top_traders(
            args.pop("period"), args.pop("order_by"), args.pop("limit"), args.pop("category"),
            **args),
        annotations=VENUE_READ),
    Tool(
        name="get_trader_profile", title="Trader profile", scope="read:markets",
        untrusted=("name", "markets[].title", "recent_trades[].title",
                   "recent_trades[].outcome", "positions[].title", "positions[].outcome",
                   "screening.categories[]"),
        description=(
            "One wallet as the venue shows it, to judge whether to copy it: PnL over time "
            "(its recent trades and redemptions replayed at average cost, the last point "
            "with open positions' unrealized PnL), volume, markets traded, recent trades and "
            "open positions. A mixed-case address must pass its EIP-55 checksum."),
        input=TraderProfileArgsSchema, output=single(TraderProfileSchema),
        call=lambda principal, args: traders.trader_profile(
            traders.wallet_address(args["address"])),
        annotations=VENUE_READ),
    Tool(
        name="get_shared_config", title="Shared copy setup", scope="read:markets",
        untrusted=SHARED_TEXT,
        description=(
            "A copy setup someone shared by link: the trader it copies (`target_address`) "
            "and its rules (`rules`: the fields preview_copy_config takes, without "
            "target_name and paper_trading); `results` (the config's realized, unrealized "
            "and total PnL, filled copies, whether on paper) only when its owner chose to "
            "show them, null otherwise. `token` is the link's last part "
            "(.../dashboard/shared/<token>). An unknown or revoked link fails with "
            "`not_found`. To copy the setup, call preview_copy_config with target_address "
            "and the rules. Sharing a config is done on the dashboard or over REST (POST "
            "/api/configs/{id}/share): its link is shown once and never stored, so no "
            "tool's replayable result may hold it."),
        input=arguments("GetSharedConfigArgs", token=fields.String(
            required=True, validate=validate.Length(min=1, max=100),
            metadata={"description": "The link's token: what follows /dashboard/shared/."})),
        output=single(SharedConfigSchema),
        call=lambda principal, args: sharing.read(args["token"]),
        annotations=VENUE_READ),
    Tool(
        name="get_copyability_report", title="Copyability report", scope="read:markets",
        description=(
            "Would copying this trader have worked? Replays its fills over `window` (7d, "
            "30d, 90d) through your rules (`rules`: a copy config's fields, or `config_id`: "
            "one of your configs), each decided and priced at our detection delay (p50 and "
            "p95 measured on this deployment, a stated default, or delay_p50_ms/"
            "delay_p95_ms) on price history and the book, less the venue's fees. Reports "
            "copies, skips by reason, expected PnL at both delays against the target's own, "
            "max drawdown, capital needed, the share of its PnL we could not have copied, "
            "and reliability (sample size, market concentration, a bootstrap interval). "
            "Built by a background job: while `status` is queued or running, call again "
            "with the same arguments (cached 15 minutes) until it is `done`. New reports "
            "are bounded per user (a few in flight, a number a day): past either, "
            "`rate_limited` with `retry_after`; an identical call is never refused."),
        input=CopyabilityToolArgsSchema, output=single(CopyabilityOperationSchema),
        call=lambda principal, args: copyability_reports.request(
            principal.user, args["address"], args)[1],
        annotations=VENUE_READ, one_of=(("rules",), ("config_id",))),
    Tool(
        name="list_open_positions", title="Open positions", scope="read:positions",
        untrusted=POSITION_TEXT,
        description=(
            "The live positions of the trading wallet: shares, cost basis, current price "
            "(the book's midpoint, or the settlement price once resolved), value, "
            "unrealized and realized PnL, and `claimable_value` for resolved winners "
            "(claim them with claim_positions). `status` is the venue's, kept as it wrote "
            "it: `REDEEMABLE_LOST` pays nothing, `MERGEABLE` shows `merge_value` (pUSD a "
            "merge of the complete sets held returns), an unknown one is shown as it is."),
        input=PositionsArgsSchema, output=listing("positions", PositionSchema,
                                                  "OpenPositionsResult"),
        call=lambda principal, args: positions.list_positions(principal.user,
                                                              args["active_only"]),
        annotations=VENUE_READ),
    Tool(
        name="list_paper_positions", title="Paper positions", scope="read:positions",
        untrusted=POSITION_TEXT,
        description=(
            "Positions of the paper (simulated) book that paper-trading copy configs fill, "
            "valued at the live book's midpoint. No real funds are involved."),
        input=PositionsArgsSchema, output=listing("positions", PositionSchema,
                                                  "PaperPositionsResult"),
        call=lambda principal, args: paper.list_positions(principal.user,
                                                          args["active_only"]),
        annotations=VENUE_READ),
    Tool(
        name="list_trades", title="Trades", scope="read:trades",
        description=(
            "The account's live trades, newest first, one page at a time (`limit`, "
            "`offset`; `config_id` keeps one copy config's). Status: pending, filled, "
            "cancelled or failed; `latency_ms` is set on copy trades."),
        input=TradesArgsSchema, output=page_of("trades", TradeSchema, "TradesResult"),
        call=lambda principal, args: trades.list_trades(principal.user, **args),
        annotations=VENUE_READ),
    Tool(
        name="list_notifications", title="Notifications", scope="read:account",
        description=(
            "What happened to the account, newest first, one page at a time (`limit`, "
            "`offset`; `unread` keeps unread ones): copies filled or skipped (with the "
            "reason), configs stopped, paused or out of funds, orders filled or failed, "
            "claims, withdrawals, deposits. " + UNTRUSTED_NOTE),
        input=NotificationsArgsSchema,
        output=page_of("notifications", NotificationSchema, "NotificationsResult"),
        call=lambda principal, args: inbox.list_notifications(principal.user, **args),
        annotations=LOCAL_READ),
    Tool(
        name="mark_notifications_read", title="Mark notifications read", scope="trade:execute",
        description=(
            "Mark notifications read by `ids` (from list_notifications), or all of them "
            "without `ids`; answers how many changed and how many stay unread."),
        input=arguments("MarkNotificationsReadArgs", MarkReadRequestSchema),
        output=single(MarkReadResultSchema),
        call=lambda principal, args: inbox.mark_read(principal.user, args.get("ids")),
        annotations=Annotations(read_only=False, idempotent=True),
        idempotency="optional"),
    Tool(
        name="get_user_summary", title="PnL summary", scope="read:account",
        description=(
            "The account's PnL: total (realized from fills plus unrealized at the live "
            "book), realized, number of filled trades and fees paid, in pUSD."),
        input=NO_ARGUMENTS, output=single(UserSummarySchema),
        call=lambda principal, args: stats.user_summary(principal.user),
        annotations=VENUE_READ),
    Tool(
        name="list_copy_configs", title="Copy configs", scope="read:account",
        untrusted=("configs[].target_name",),
        description=(
            "The account's copy-trading configs, newest first: target wallet, sizing "
            "(size_multiplier, max_position_usdc), guards, `is_active` (copying now) and "
            "`paper_trading` (simulated fills)."),
        input=NO_ARGUMENTS, output=listing("configs", CopyConfigSchema, "CopyConfigsResult"),
        call=lambda principal, args: configs.list_configs(principal.user),
        annotations=LOCAL_READ),
    Tool(
        name="get_copy_config", title="Copy config", scope="read:account",
        untrusted=CONFIG_TEXT,
        description="One copy config by id.",
        input=arguments("GetCopyConfigArgs", config_id=_config_id()),
        output=single(CopyConfigSchema),
        call=lambda principal, args: configs.get(principal.user, args["config_id"]),
        annotations=LOCAL_READ),
    Tool(
        name="get_config_pnl", title="Copy config PnL", scope="read:account",
        untrusted=("positions[].outcome",),
        description=(
            "Realized plus unrealized PnL of one copy config, with each of its positions "
            "marked at the best bid (what selling would get now)."),
        input=arguments("GetConfigPnlArgs", config_id=_config_id()),
        output=single(ConfigPnlSchema),
        call=lambda principal, args: configs.pnl(principal.user, args["config_id"]),
        annotations=VENUE_READ),
    Tool(
        name="get_config_status", title="Copy config status", scope="read:account",
        description=(
            "Is one copy config being copied right now, and how are its target's trades "
            "detected: whether an executor runs it and on which worker; `detection` (feed: "
            "the live RTDS feed; matched: its orders_matched type; chain: the exchanges' "
            "logs while the feed is degraded; poll: the Data API), `detection_since`, the "
            "feed's last gap (`detection_last_gap_at`, `detection_last_gap_seconds`), "
            "`polls_per_minute`, `chain_calls_per_minute`, on-chain detection "
            "(`detection_chain`, its mode, `detection_pending`); the last detection, "
            "decision, skip and error; fills and skips in the last hour and day; the "
            "failure breaker."),
        input=arguments("GetConfigStatusArgs", config_id=_config_id()),
        output=single(ConfigStatusSchema),
        call=lambda principal, args: configs.status(principal.user, args["config_id"]),
        annotations=LOCAL_READ),
    Tool(
        name="get_config_quality", title="Copy config execution quality",
        scope="read:account",
        description=(
            "How well one copy config executes over `period` (24h, 7d or 30d): p50, p95 "
            "and max delay of each stage (detection, decision, placement, venue "
            "acknowledgement, settlement, taker delay), mean and p95 slippage in bps "
            "against the target's fill prices (positive: we paid more or sold for less), "
            "fees, fill ratio, and counts of copies, skips and failures."),
        input=arguments("GetConfigQualityArgs", QualityArgsSchema, config_id=_config_id()),
        output=single(ConfigQualitySchema),
        call=lambda principal, args: configs.quality(principal.user, args["config_id"],
                                                     args["period"]),
        annotations=LOCAL_READ),
    Tool(
        name="get_config_trades", title="Copy config decisions", scope="read:trades",
        untrusted=("trades[].outcome",),
        description=(
            "Every decision one copy config made, newest first, one page at a time: "
            "copied trades with their order's outcome, and skipped ones with `reason` and "
            "`detail` (why the target's trade was not mirrored)."),
        input=arguments("GetConfigTradesArgs", PageArgsSchema, config_id=_config_id()),
        output=page_of("trades", DecisionSchema, "ConfigTradesResult"),
        call=lambda principal, args: configs.decisions(
            principal.user, args["config_id"], limit=args["limit"], offset=args["offset"]),
        annotations=LOCAL_READ),
    Tool(
        name="suggest_multiplier", title="Suggest a size multiplier", scope="read:markets",
        description=(
            "Recommend a `size_multiplier` for copying `target_address`: a typical target "
            "trade, mirrored, risks about 5% of the balance (the live venue balance, or "
            "`balance` if given). Read-only; use the result in preview_copy_config."),
        input=SuggestMultiplierArgsSchema, output=single(SuggestMultiplierSchema),
        call=lambda principal, args: configs.suggest_multiplier(
            principal.user, args["target_address"], args.get("balance")),
        annotations=VENUE_READ),
    Tool(
        name="preview_copy_config", title="Preview a copy config", scope="trade:execute",
        description=(
            "Step 1 of 2 to start copying a wallet: validate the settings and summarise "
            "what the config would do (the target's recent activity, PnL and categories, "
            "sizing, caps, guards, paper or live mode, warnings). Nothing is created. "
            "Returns a `preview_id` for create_copy_config, valid 10 minutes, usable once. "
            "Start new targets with `paper_trading: true`."),
        input=ConfigPreviewRequestSchema, output=single(ConfigPreviewSchema),
        call=lambda principal, args: configs.preview(principal.user, args),
        annotations=Annotations(read_only=False, idempotent=False, open_world=True),
        idempotency="optional"),
    Tool(
        name="create_copy_config", title="Create a copy config", scope="trade:execute",
        untrusted=CONFIG_TEXT,
        description=(
            "Step 2 of 2: create the config previewed by preview_copy_config (pass its "
            "unexpired `preview_id`; other fields, if sent, must equal the previewed ones). "
            "The config is created stopped: call start_copying to begin."),
        input=arguments("CreateCopyConfigArgs", ConfigCreateRequestSchema),
        output=single(CopyConfigSchema),
        call=lambda principal, args: configs.create(principal.user, args),
        annotations=Annotations(read_only=False, idempotent=False),
        idempotency="required"),
    Tool(
        name="update_copy_config", title="Update a copy config", scope="trade:execute",
        untrusted=CONFIG_TEXT,
        description=(
            "Change a copy config's rules (any of the fields preview_copy_config takes "
            "except `target_address`; the others stay). A running config applies them from "
            "the target's next trade; a trade already decided is never copied again. Bad "
            "values or contradicting rules fail with `validation_failed` naming the field."),
        input=arguments("UpdateCopyConfigArgs", ConfigFieldsSchema, config_id=_config_id()),
        output=single(CopyConfigSchema),
        call=lambda principal, args: configs.update(
            principal.user, args["config_id"],
            {k: v for k, v in args.items() if k != "config_id"}),
        annotations=Annotations(read_only=False, idempotent=True),
        idempotency="required"),
    Tool(
        name="start_copying", title="Start copying", scope="trade:execute",
        untrusted=CONFIG_TEXT,
        description=(
            "Start a copy config: new trades of its target wallet are mirrored (on the "
            "paper book when `paper_trading`, else with real funds). Fails with "
            "`tier_limit_exceeded` past the plan's active-config limit. Starting a running "
            "config changes nothing."),
        input=arguments("StartCopyingArgs", config_id=_config_id()),
        output=single(CopyConfigSchema),
        call=lambda principal, args: configs.start(principal.user, args["config_id"]),
        annotations=Annotations(read_only=False, idempotent=True),
        idempotency="required"),
    Tool(
        name="stop_copying", title="Stop copying", scope="trade:execute",
        untrusted=CONFIG_TEXT,
        description=(
            "Stop a copy config: no new order is made for it once this returns. Positions "
            "it holds stay open. Stopping a stopped config changes nothing."),
        input=arguments("StopCopyingArgs", config_id=_config_id()),
        output=single(CopyConfigSchema),
        call=lambda principal, args: configs.stop(principal.user, args["config_id"]),
        annotations=Annotations(read_only=False, idempotent=True),
        idempotency="required"),
    Tool(
        name="delete_copy_config", title="Delete a copy config", scope="trade:execute",
        description=(
            "Stop and delete a copy config. Its decision history stays in the trades "
            "ledger; positions it holds stay open. Cannot be undone."),
        input=arguments("DeleteCopyConfigArgs", config_id=_config_id()),
        output=single(Schema.from_dict({
            "deleted": fields.Boolean(required=True),
            "config_id": fields.UUID(required=True)}, name="DeleteCopyConfigResult")),
        call=lambda principal, args: (configs.delete(principal.user, args["config_id"])
                                      or {"deleted": True, "config_id": args["config_id"]}),
        annotations=Annotations(read_only=False, destructive=True, idempotent=True),
        idempotency="required"),
    Tool(
        name="preview_market_order", title="Preview an order", scope="trade:execute",
        untrusted=("market_title", "outcome"),
        description=(
            "Step 1 of 2 to trade: quote an order on one outcome token against the live "
            "book without sending it. `size` is in shares; `order_type` is `market` "
            "(fill-or-kill at a protective limit) or `limit` (good-till-cancelled at "
            "`price`, 0-1; `post_only: true` makes it rest or be refused, never match at "
            "once, and is what the venue accepts in its post-only window after a restart). "
            "Shows expected price, shares, cost, fee, slippage and a "
            "confirmation line to show the user. Returns a `preview_id` for "
            "place_market_order, valid 3 minutes, for exactly this order, usable once."),
        input=PlaceOrderRequestSchema, output=single(OrderPreviewSchema),
        call=lambda principal, args: previews.create(principal.user, **args),
        annotations=Annotations(read_only=False, idempotent=False, open_world=True),
        idempotency="optional"),
    Tool(
        name="place_market_order", title="Place an order", scope="trade:execute",
        untrusted=("reason",),
        description=(
            "Step 2 of 2: place the order quoted by preview_market_order, with real funds. "
            "Send the same token_id, side, size, order_type (and price, post_only) plus its "
            "unexpired "
            "`preview_id`. Answers the venue's order id and status: `filled`, `accepted` "
            "(resting) or `rejected` (with `reason`). A buy needing more pUSD than the "
            "wallet holds fails with `insufficient_balance` before anything is sent. While "
            "the venue restarts or is restricted, or its answer is lost, it fails with "
            "`polymarket_unavailable` and `retry_after`: call again with the same "
            "idempotency_key and preview_id; the order is placed once."),
        input=arguments("PlaceMarketOrderArgs", PlaceOrderSchema, preview_id=fields.UUID(
            required=True, metadata={"description": "From preview_market_order for exactly "
                                                    "this order: unexpired and unused."})),
        output=single(PlaceOrderResponseSchema),
        call=lambda principal, args: orders.placed_view(orders.place_order(
            principal.user, source="manual", **args)),
        annotations=Annotations(read_only=False, destructive=True, idempotent=False,
                                open_world=True),
        idempotency="required"),
    Tool(
        name="list_open_orders", title="Open orders", scope="read:markets",
        description=(
            "The account's orders resting on the venue's book, newest first: price, size, "
            "filled size, side, type. Cancel them with cancel_order."),
        input=NO_ARGUMENTS, output=listing("orders", OpenOrderSchema, "OpenOrdersResult"),
        call=lambda principal, args: order_reads.open_orders(principal.user),
        annotations=VENUE_READ),
    Tool(
        name="cancel_order", title="Cancel an order", scope="trade:cancel",
        description=(
            "Cancel one resting order by its `order_id` (from list_open_orders or "
            "place_market_order). An order already filled or cancelled comes back in "
            "`not_canceled` with the venue's reason."),
        input=arguments("CancelOrderArgs", order_id=fields.String(required=True, metadata={
            "description": "The venue's order id (0x... hash)."})),
        output=single(CancelResultSchema),
        call=lambda principal, args: order_cancels.cancel_order(principal.user, args["order_id"]),
        annotations=Annotations(read_only=False, destructive=True, idempotent=True,
                                open_world=True),
        idempotency="required"),
    Tool(
        name="claim_positions", title="Claim resolved positions", scope="wallet:write",
        untrusted=("claims[].error",),
        description=(
            "Redeem resolved winning positions into collateral on chain (all claimable "
            "ones, or `token_ids`). Needs MATIC for gas (`insufficient_balance` otherwise). "
            "Each claim is broadcast by a background job; the answer lists each claim with "
            "its tx_hash, or `queued`. A market already being claimed answers its open "
            "claim rather than a second one."),
        input=arguments("ClaimPositionsArgs", ClaimRequestSchema),
        output=single(ClaimResponseSchema),
        call=lambda principal, args: claims.claim(principal.user, args.get("token_ids")),
        annotations=Annotations(read_only=False, idempotent=True, open_world=True),
        idempotency="required"),
)

TOOLS_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def with_idempotency_key(tool: Tool) -> type[Schema]:
    """The tool's full input schema: its arguments plus ``idempotency_key`` when it takes one,
    and ``confirmation_code`` when it may move money."""
    if tool.idempotency == "none":
        return tool.input
    extra: dict[str, fields.Field] = {"idempotency_key": fields.UUID(
        required=tool.idempotency == "required", metadata={"description": IDEMPOTENCY_KEY_DOC})}
    if money_tools.guarded(tool.name):
        extra["confirmation_code"] = fields.String(
            load_default=None, validate=validate.Length(max=20),
            metadata={"description": CONFIRMATION_CODE_DOC})
    return type(f"{tool.input.__name__}WithKey", (tool.input,), extra)


def visible_to(principal: Principal) -> list[Tool]:
    """The tools the principal's scopes permit, in table order (public ones always)."""
    return [tool for tool in TOOLS if tool.scope is None or principal.has_scope(tool.scope)]
