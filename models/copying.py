"""Copy trading: configs, their previews, per-target detection cursors, copy intents, positions.

A ``CopyIntent`` is the durable record of one decision about one target trade for one
config (copied or skipped, and why). It is written, under a unique (config, target
trade) constraint, before any order leaves the process: that constraint is what makes
mirroring exactly-once across retries, restarts and several workers.
"""

from __future__ import annotations

import json
from decimal import Decimal

import peewee

from models.base import BaseModel, DecimalTextField, UTCDateTimeField, utcnow
from models.user import User

# Intent statuses. ``pending``: written, the order may or may not have left (the
# reconciler asks the venue); ``sent``: the venue answered with a resting/unknown order;
# ``filled``/``failed``/``cancelled``: final; ``skipped``: decided not to copy (reason set).
INTENT_PENDING, INTENT_SENT, INTENT_FILLED, INTENT_FAILED, INTENT_SKIPPED, INTENT_CANCELLED = (
    "pending", "sent", "filled", "failed", "skipped", "cancelled")
INTENT_OPEN = (INTENT_PENDING, INTENT_SENT)
INTENT_FINAL = (INTENT_FILLED, INTENT_FAILED, INTENT_SKIPPED, INTENT_CANCELLED)
# Monotonic transitions: each status, with the statuses it may be written over (a final
# outcome is written once; a write whose predecessor is gone lost a race).
INTENT_PREDECESSORS: dict[str, tuple[str, ...]] = {
    INTENT_PENDING: (INTENT_PENDING,),
    INTENT_SENT: INTENT_OPEN,
    **{final: INTENT_OPEN for final in INTENT_FINAL},
}

# Why an intent exists: mirroring a target fill, or an exit the config's TP/SL triggered.
KIND_MIRROR, KIND_TAKE_PROFIT, KIND_STOP_LOSS = "mirror", "take_profit", "stop_loss"
# Sells of a config's positions when a loss/drawdown stop closes them, or before a market ends;
# the target's open positions mirrored when a config starts with copy_open_positions.
KIND_LOSS_STOP, KIND_DRAWDOWN_STOP, KIND_MARKET_END, KIND_OPEN_POSITION = (
    "loss_stop", "drawdown_stop", "market_end", "open_position")


class CopyConfig(BaseModel):
    """A user's instruction to mirror one target wallet, with sizing, caps, guards and exits."""

    user = peewee.ForeignKeyField(User, backref="copy_configs", on_delete="CASCADE")
    target_address = peewee.CharField(max_length=42, index=True)  # lowercase
    target_name = peewee.CharField(max_length=120, default="")
    size_multiplier = DecimalTextField()
    max_position_usdc = DecimalTextField()
    price_deviation_bps = peewee.IntegerField()
    blocked_categories = peewee.TextField(default="[]")  # JSON list of lowercase slugs
    take_profit_bps = peewee.IntegerField(null=True)
    stop_loss_bps = peewee.IntegerField(null=True)
    # Issue 27's rules (services/copying/mirror.py says what each does); money as exact text.
    sizing_mode = peewee.CharField(max_length=16, default="multiplier")
    fixed_usdc = DecimalTextField(null=True)
    min_trade_usdc = DecimalTextField(null=True)
    max_trade_usdc = DecimalTextField(null=True)
    round_up_to_min = peewee.BooleanField(default=False)
    min_target_trade_usdc = DecimalTextField(null=True)
    min_price = DecimalTextField(null=True)
    max_price = DecimalTextField(null=True)
    copy_buys = peewee.BooleanField(default=True)
    copy_sells = peewee.BooleanField(default=True)
    direction = peewee.CharField(max_length=8, default="mirror")
    daily_budget_usdc = DecimalTextField(null=True)
    total_budget_usdc = DecimalTextField(null=True)
    loss_stop_usdc = DecimalTextField(null=True)
    max_drawdown_bps = peewee.IntegerField(null=True)
    close_positions_on_stop = peewee.BooleanField(default=False)
    stopped_reason = peewee.CharField(max_length=40, null=True)  # loss_stop, drawdown_stop
    pnl_peak_usdc = DecimalTextField(null=True)  # the config's highest total PnL seen
    max_consecutive_failures = peewee.IntegerField(default=5)
    start_mode = peewee.CharField(max_length=24, default="new_trades_only")
    skip_if_ends_within_hours = DecimalTextField(null=True)
    exit_hours_before_end = DecimalTextField(null=True)
    include_keywords = peewee.TextField(default="[]")  # JSON list, lowercase
    exclude_keywords = peewee.TextField(default="[]")
    copy_pending_matches = peewee.BooleanField(default=False)  # act before the block
    # Issue 45's rules (schemas/rule_fields.py declares them; m0111 adds the columns).
    entry_policy = peewee.CharField(max_length=16, default="every_add")
    max_adds_count = peewee.IntegerField(null=True)
    sell_mode = peewee.CharField(max_length=16, default="mirror")
    max_open_positions = peewee.IntegerField(null=True)
    market_cooldown_seconds = peewee.IntegerField(null=True)
    # JSON list of {max_price, max_deviation_bps}. A config made through the surfaces gets
    # the declared default bands; a row left without ([], as before m0111) the single limit.
    price_deviation_bands = peewee.TextField(default="[]")
    # The failure breaker: closed, open (until retry_at) or half (one copy may try).
    breaker_state = peewee.CharField(max_length=8, default="closed")
    breaker_failures = peewee.IntegerField(default=0)
    breaker_trips = peewee.IntegerField(default=0)
    breaker_retry_at = UTCDateTimeField(null=True)
    breaker_last_error = peewee.TextField(null=True)
    breaker_last_reason = peewee.CharField(max_length=40, null=True)
    # Buying paused by the engine (a skip reason: ``stop_unverified``, a loss or drawdown
    # stop without a verdict), since when; cleared once the stop can judge again.
    buys_paused_reason = peewee.CharField(max_length=40, null=True)
    buys_paused_at = UTCDateTimeField(null=True)
    is_active = peewee.BooleanField(default=False, index=True)
    paper_trading = peewee.BooleanField(default=True)
    # Bumped on every edit and start/stop: the executor reloads a config whose version moved.
    version = peewee.IntegerField(default=1)
    # Set by a database trigger on every write from one deployment-wide counter (m0101):
    # the engine's sweep reads the configs whose revision passed its last look.
    revision = peewee.BigIntegerField(default=0, index=True)
    last_error = peewee.TextField(null=True)
    last_error_at = UTCDateTimeField(null=True)
    started_at = UTCDateTimeField(null=True)
    stopped_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)
    deleted_at = UTCDateTimeField(null=True, index=True)

    class Meta:
        table_name = "copy_configs"

    @property
    def blocked(self) -> list[str]:
        """The blocked category slugs."""
        return list(json.loads(self.blocked_categories or "[]"))

    @property
    def included(self) -> list[str]:
        """Keywords one of which the market question must contain (empty: any)."""
        return list(json.loads(self.include_keywords or "[]"))

    @property
    def excluded(self) -> list[str]:
        """Keywords that skip a market whose question contains one."""
        return list(json.loads(self.exclude_keywords or "[]"))


class ConfigPreview(BaseModel):
    """What a user saw before creating a config; creation needs one unexpired and unused."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    fields = peewee.TextField()  # the validated config fields, JSON with decimal strings
    summary = peewee.TextField()  # what the preview showed, JSON
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField()
    consumed_at = UTCDateTimeField(null=True)
    config_id = peewee.UUIDField(null=True)

    class Meta:
        table_name = "config_previews"


class SharedConfig(BaseModel):
    """A link sharing one config's rules (issue 45): the token's SHA-256 only, and whether
    the link also shows the config's results; one per config, deleted when revoked."""

    config = peewee.ForeignKeyField(CopyConfig, unique=True, on_delete="CASCADE")
    token_hash = peewee.CharField(max_length=64, unique=True)
    show_results = peewee.BooleanField(default=False)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "shared_configs"


class TargetCursor(BaseModel):
    """How far polling has read one target wallet's fills (unix seconds of the newest seen)."""

    target_address = peewee.CharField(max_length=42, unique=True)
    last_timestamp = peewee.BigIntegerField()
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "target_cursors"


class CopyIntent(BaseModel):
    """One decision about one target trade for one config, written before any order leaves."""

    config = peewee.ForeignKeyField(CopyConfig, backref="intents", on_delete="CASCADE")
    user_id = peewee.UUIDField(index=True)
    kind = peewee.CharField(max_length=16, default=KIND_MIRROR)
    # The target trade's identity (tx hash, asset, side, wallet); unique with the config.
    target_trade_key = peewee.CharField(max_length=255)
    target_address = peewee.CharField(max_length=42)
    target_side = peewee.CharField(max_length=4, null=True)
    target_size = DecimalTextField(null=True)
    target_price = DecimalTextField(null=True)
    target_timestamp = peewee.BigIntegerField(null=True)
    target_tx_hash = peewee.CharField(max_length=80, null=True)
    token_id = peewee.CharField(max_length=100)
    condition_id = peewee.CharField(max_length=80, default="")
    outcome = peewee.CharField(max_length=200, default="")
    outcome_index = peewee.IntegerField(null=True)
    market_slug = peewee.CharField(max_length=255, default="")
    paper = peewee.BooleanField(default=False)
    status = peewee.CharField(max_length=16, index=True)
    reason = peewee.CharField(max_length=40, null=True)  # skip/failure reason code
    detail = peewee.TextField(default="")
    side = peewee.CharField(max_length=4, null=True)
    size = DecimalTextField(null=True)  # shares we meant to trade
    price = DecimalTextField(null=True)  # worst acceptable price of the order
    usdc = DecimalTextField(null=True)  # pUSD to spend (buys) or expected (sells)
    # A buy's most possible cost (fee included), held against the user's exposure cap and
    # the config's budgets while the intent is open (services/copying/reservations.py).
    reserved_usdc = DecimalTextField(null=True)
    order_id = peewee.CharField(max_length=80, null=True, index=True)  # signed order hash
    trade_id = peewee.UUIDField(null=True)  # the Trade row the order service wrote
    filled_size = DecimalTextField(null=True)
    filled_price = DecimalTextField(null=True)
    fee = DecimalTextField(null=True)
    # A sale's cost basis taken out of the position (its realized PnL is value minus this).
    sold_cost = DecimalTextField(null=True)
    seen_at = UTCDateTimeField()  # when we saw the target trade
    sent_at = UTCDateTimeField(null=True)
    settled_at = UTCDateTimeField(null=True)
    latency_ms = peewee.IntegerField(null=True)  # order sent minus target trade seen
    detection_delay_ms = peewee.IntegerField(null=True)  # seen minus the target's trade time
    # Execution quality (services/copying/quality.py): how the fill was detected (feed,
    # poll, chain, pending), our price against the target's in signed bps (positive: worse
    # for us), and each stage's delay after detection, measured on the monotonic clock.
    detection_source = peewee.CharField(max_length=8, null=True)
    slippage_bps = DecimalTextField(null=True)
    decision_ms = peewee.IntegerField(null=True)     # seen -> decided (quotes, rules)
    placement_ms = peewee.IntegerField(null=True)    # decided -> sent (sign, record, send)
    ack_ms = peewee.IntegerField(null=True)          # sent -> the venue's answer
    settlement_ms = peewee.IntegerField(null=True)   # answer -> the outcome recorded
    taker_delay_ms = peewee.IntegerField(null=True)  # the market's taker delay waited out
    worker = peewee.CharField(max_length=120, default="")
    # The target lease's fencing token the intent was recorded under (``TargetFence``).
    fence = peewee.BigIntegerField(null=True)
    created_at = UTCDateTimeField(default=utcnow, index=True)

    class Meta:
        table_name = "copy_intents"
        indexes = (
            (("config", "target_trade_key"), True),
            (("config", "created_at"), False),
        )


class TargetFence(BaseModel):
    """The newest fencing token of a target's lease: a copy engine writes intents of the
    target's configs only under it (``services.copying.fences``)."""

    target_address = peewee.CharField(max_length=42, unique=True)  # lowercase
    token = peewee.BigIntegerField()
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "target_fences"


class CopyPosition(BaseModel):
    """A config's holding in one outcome token, from its own fills (live or paper)."""

    config = peewee.ForeignKeyField(CopyConfig, backref="positions", on_delete="CASCADE")
    paper = peewee.BooleanField(default=False)
    token_id = peewee.CharField(max_length=100)
    condition_id = peewee.CharField(max_length=80, default="")
    market_slug = peewee.CharField(max_length=255, default="")
    outcome = peewee.CharField(max_length=200, default="")
    shares = DecimalTextField(default=Decimal(0))
    cost_usdc = DecimalTextField(default=Decimal(0))  # cost basis of the shares held
    realized_pnl = DecimalTextField(default=Decimal(0))
    opened = peewee.IntegerField(default=0)  # times it went from flat to held (exit keys)
    entries = peewee.IntegerField(default=0)  # buys filled since it was last flat (entry policy)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "copy_positions"
        indexes = ((("config", "paper", "token_id"), True),)


# A copyability report's states: queued and running (a job has it), done, failed.
REPORT_QUEUED, REPORT_RUNNING, REPORT_DONE, REPORT_FAILED = "queued", "running", "done", "failed"


class CopyabilityReport(BaseModel):
    """One copyability report of a target wallet: its inputs, progress and result.

    Reports are cached per (address, window, inputs hash): the hash covers the rules and
    the delays, so a finished row serves anyone asking the same question until it expires.
    ``requested_by`` is the user whose request queued the replay: their reports in flight and
    of the last day are what the per-user limits count.
    """

    address = peewee.CharField(max_length=42)  # lowercase
    window = peewee.CharField(max_length=8)
    inputs_hash = peewee.CharField(max_length=64)
    inputs = peewee.TextField()  # rules and delays, JSON with decimal strings
    status = peewee.CharField(max_length=16, default=REPORT_QUEUED)
    progress_done = peewee.IntegerField(default=0)
    progress_total = peewee.IntegerField(default=0)
    stage = peewee.CharField(max_length=40, default="")
    report = peewee.TextField(null=True)  # the result, JSON with decimal strings
    error = peewee.TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    finished_at = UTCDateTimeField(null=True)
    expires_at = UTCDateTimeField()
    requested_by = peewee.UUIDField(null=True)

    class Meta:
        table_name = "copyability_reports"
        indexes = ((("address", "window", "inputs_hash"), False),
                   (("requested_by", "created_at"), False))


class TraderScreening(BaseModel):
    """One ranked trader replayed in the background (the screened leaderboard).

    Money is integer base units (millionths of pUSD), shares and rates basis points, so the
    database can sort by them. ``fills`` holds the window's fills the replay rests on (JSON),
    ``cursor`` the newest fill's second: the next replay reads only fills from there on.
    ``report`` is the replay's full numbers (as a copyability report's); ``flags`` each flag
    set with the numbers behind it.
    """

    address = peewee.CharField(max_length=42, unique=True)  # lowercase
    name = peewee.CharField(max_length=200, default="")
    ranks = peewee.TextField(default="{}")  # {"week:pnl": 3, ...}: where the venue ranks it
    ranked_at = UTCDateTimeField(default=utcnow)
    copier_pnl_p50 = peewee.BigIntegerField(null=True)
    copier_pnl_p95 = peewee.BigIntegerField(null=True)
    trader_pnl = peewee.BigIntegerField(null=True)
    kept_share_bps = peewee.IntegerField(null=True)
    win_rate_bps = peewee.IntegerField(null=True)
    trades = peewee.IntegerField(default=0)
    volume = peewee.BigIntegerField(default=0)
    avg_hold_seconds = peewee.IntegerField(null=True)
    drawdown = peewee.BigIntegerField(null=True)
    markets = peewee.IntegerField(default=0)
    categories = peewee.TextField(default="[]")
    last_active_at = UTCDateTimeField(null=True)
    fill_count = peewee.IntegerField(default=0)
    fills = peewee.TextField(default="[]")
    cursor = peewee.BigIntegerField(null=True)
    report = peewee.TextField(null=True)
    flags = peewee.TextField(default="{}")
    error = peewee.TextField(null=True)
    updated_at = UTCDateTimeField(null=True)  # the last replay
    checked_at = UTCDateTimeField(null=True)  # the last look (a replay, or no new fills)

    class Meta:
        table_name = "trader_screenings"
        indexes = ((("checked_at",), False),)


TABLES = [CopyConfig, ConfigPreview, TargetCursor, CopyIntent, CopyPosition, CopyabilityReport,
          TargetFence, SharedConfig, TraderScreening]
