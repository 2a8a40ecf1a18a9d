"""The screened leaderboard's shapes: the arguments every surface sorts and filters by, a
row's replay, and traders side by side."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import DecimalString

TRADER_FLAGS: tuple[str, ...] = ("market_maker", "high_frequency", "toxic_for_copying",
                                 "thin_history", "wash_like", "inactive")
"""The flags a screened trader may carry (docs/user/traders.md: what each means)."""

# Sortable and filterable columns: the argument's name -> the key in a row's ``screening``.
COLUMNS: dict[str, str] = {
    "copier_pnl_p50": "copier_pnl_p50_usdc", "copier_pnl_p95": "copier_pnl_p95_usdc",
    "kept_share": "kept_share", "win_rate": "win_rate", "trades": "trades",
    "volume": "volume_usdc", "avg_hold": "avg_hold_seconds", "drawdown": "max_drawdown_usdc",
    "markets": "markets", "fills": "fills", "last_active": "last_active_at",
    "updated": "updated_at",
}
SORTS: tuple[str, ...] = ("rank", "pnl", *COLUMNS)
RANGED: tuple[str, ...] = tuple(name for name in COLUMNS
                                if name not in ("last_active", "updated"))
_HELP = {
    "copier_pnl_p50": "a copier's PnL at our typical (p50) delay, after fees, pUSD",
    "copier_pnl_p95": "a copier's PnL at our slow (p95) delay, after fees, pUSD",
    "kept_share": "the share of the trader's own PnL a copier keeps at p50 (0.8 = 80 %)",
    "win_rate": "the share of the outcomes traded whose fills made money (0 to 1)",
    "trades": "fills in the window", "volume": "pUSD traded in the window",
    "avg_hold": "average hold of the shares sold, seconds",
    "drawdown": "a copier's largest fall from a peak at p50, pUSD",
    "markets": "markets traded in the window", "fills": "fills the replay rests on",
}


def _bound(name: str, edge: str) -> fields.Field:
    text = f"Only traders whose {_HELP[name]} is at {'least' if edge == 'min' else 'most'} this."
    if name in ("copier_pnl_p50", "copier_pnl_p95", "volume", "drawdown", "kept_share",
                "win_rate"):
        example = "0.5" if name in ("kept_share", "win_rate") else "10"
        return DecimalString(load_default=None, allow_none=True,
                             metadata={"description": text, "example": example})
    return fields.Integer(load_default=None, allow_none=True,
                          metadata={"description": text, "example": 20})


class _ScreenedArgs(Schema):
    """What the screened leaderboard sorts, filters and searches by (beside the venue's
    period and ranking)."""

    sort = fields.String(load_default="rank", validate=validate.OneOf(SORTS), metadata={
        "description": "`rank` (the venue's), `pnl` (the venue's), or a replay's column: "
                       + ", ".join(f"`{name}`" for name in COLUMNS) + ". Traders not "
                       "replayed yet come last.", "example": "copier_pnl_p50"})
    direction = fields.String(load_default=None, validate=validate.OneOf(["asc", "desc"]),
                              metadata={"description": "`asc` or `desc` (the default, but "
                                                       "for `rank`).", "example": "desc"})
    q = fields.String(load_default=None, validate=validate.Length(min=1, max=100), metadata={
        "description": "Search: part of a wallet address or of a trader's name.",
        "example": "orca"})
    flag = fields.List(fields.String(validate=validate.OneOf(TRADER_FLAGS)), load_default=list,
                       metadata={"description": "Only traders with every one of these flags: "
                                                + ", ".join(TRADER_FLAGS) + ".",
                                 "example": ["high_frequency"]})
    without_flag = fields.List(fields.String(validate=validate.OneOf(TRADER_FLAGS)),
                               load_default=list, metadata={
        "description": "Only traders with none of these flags.",
        "example": ["thin_history", "inactive"]})
    traded_category = fields.String(load_default=None, validate=validate.Length(max=100),
                                    metadata={"description": "Only traders whose replayed "
                                                             "fills include this category.",
                                              "example": "Politics"})
    active_within_days = fields.Integer(load_default=None, allow_none=True,
                                        validate=validate.Range(min=1, max=3650), metadata={
        "description": "Only traders with a fill in this many days.", "example": 7})


# min_<column> and max_<column> for every numeric column.
ScreenedArgs = _ScreenedArgs.from_dict(
    {f"{edge}_{name}": _bound(name, edge) for name in RANGED for edge in ("min", "max")},
    name="ScreenedArgs")


class ScreeningSchema(Schema):
    """A trader's replay through the default rules at our measured delay (null until the
    first one is done). It is a replay: `fills` says what it rests on, `cannot_know` what it
    cannot know."""

    kind = fields.String(required=True, metadata={"description": "Always `replay`."})
    window = fields.String(required=True, metadata={"description": "The fills replayed: "
                                                                   "the last 30 days."})
    delays = fields.Dict(required=True, metadata={
        "description": "The delays replayed at: `p50_ms`, `p95_ms`, and `source` "
                       "(`measured` on this deployment, or `default`)."})
    copier_pnl_p50_usdc = DecimalString(required=True)
    copier_pnl_p95_usdc = DecimalString(required=True)
    trader_pnl_usdc = DecimalString(required=True, metadata={
        "description": "The trader's own PnL over the same fills, marked the same way."})
    kept_share = DecimalString(required=True, allow_none=True, metadata={
        "description": "copier_pnl_p50 / trader_pnl (null when the trader made nothing)."})
    win_rate = DecimalString(required=True, allow_none=True)
    trades = fields.Integer(required=True)
    volume_usdc = DecimalString(required=True)
    avg_hold_seconds = fields.Integer(required=True, allow_none=True)
    max_drawdown_usdc = DecimalString(required=True)
    markets = fields.Integer(required=True)
    categories = fields.List(fields.String(), required=True)
    last_active_at = fields.DateTime(required=True, allow_none=True)
    fills = fields.Integer(required=True, metadata={"description": "Fills the replay rests on."})
    updated_at = fields.DateTime(required=True, metadata={"description": "The last replay."})
    flags = fields.List(fields.String(), required=True, metadata={
        "description": "Of " + ", ".join(TRADER_FLAGS) + "."})
    flag_numbers = fields.Dict(required=True, metadata={
        "description": "Each flag's numbers and the threshold it crossed."})
    cannot_know = fields.List(fields.String(), required=True)


class CompareArgsSchema(Schema):
    """Traders to put side by side."""

    addresses = fields.String(required=True, validate=validate.Length(min=1, max=500),
                              metadata={"description": "One to five wallet addresses, "
                                                       "comma-separated.",
                                        "example": "0x1111111111111111111111111111111111111111"})


class ComparedTraderSchema(Schema):
    """One trader's replay beside the others."""

    address = fields.String(required=True)
    name = fields.String(required=True)
    screening = fields.Nested(ScreeningSchema, allow_none=True, required=True)
    p50 = fields.Dict(required=True, allow_none=True, metadata={
        "description": "At the p50 delay: copies, exits, skips, skips_by_reason (the rule "
                       "that skipped each fill), expected_pnl_usdc, versus_target_usdc, "
                       "fees_usdc, volume_usdc, max_drawdown_usdc, capital_needed_usdc."})
    p95 = fields.Dict(required=True, allow_none=True, metadata={"description": "The same "
                                                                               "at p95."})
    rules = fields.Dict(required=True, allow_none=True, metadata={
        "description": "The rules replayed (a copy config's fields)."})
    equity = fields.List(fields.Dict(), required=True, metadata={
        "description": "The equity curve at p50: [{at, pnl_usdc}], the copies' PnL at the "
                       "mark added up in time order."})


__all__ = ["COLUMNS", "RANGED", "SORTS", "TRADER_FLAGS", "CompareArgsSchema",
           "ComparedTraderSchema", "ScreenedArgs", "ScreeningSchema"]
