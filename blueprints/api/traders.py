"""Traders: the venue's leaderboard and one trader's profile (JWT or ``read:markets``)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt
from schemas import discovery_examples as examples
from schemas import request_examples
from schemas.copyability import EXAMPLE, CopyabilityOperationSchema, CopyabilityRequestSchema
from schemas.markets import TraderProfileSchema, TradersArgsSchema, TraderSchema
from schemas.screening import CompareArgsSchema, ComparedTraderSchema
from services.copying import copyability_reports, leaderboard, traders

blp = Blueprint("traders", __name__, url_prefix="/api/traders", description="Traders")

# The REST words for the venue's leaderboard options (MCP takes the venue's own).
ORDER_BY = {"pnl": "PNL", "volume": "VOL"}


@blp.route("")
class Traders(MethodView):
    @access.requires("read:markets")
    @blp.arguments(TradersArgsSchema, location="query")
    @blp.response(200, TraderSchema(many=True), example=examples.TRADERS)
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """The venue's leaderboard for a `period` (day, week, month, all), ranked by `pnl` or
        `volume`: candidates to copy (MCP `list_top_traders`), screened.

        Each row carries `screening`: the trader's last 30 days of fills replayed in the
        background through the default rules (a multiplier of 1, positions up to 100 pUSD)
        at this deployment's measured p50 and p95 detection delay, after fees, the same
        replay as `POST /api/traders/{address}/copyability`; null until it has been
        replayed. It says when it was replayed (`updated_at`), how many fills it rests on
        (`fills`) and what a replay cannot know (`cannot_know`), and carries the trader's
        flags with the numbers behind each (`flag_numbers`).

        `sort` (with `direction`) orders by the venue's rank or PnL or any replay column;
        `min_<column>`/`max_<column>`, `flag`, `without_flag`, `traded_category` and
        `active_within_days` filter (a trader not replayed yet passes no such filter); `q`
        searches addresses and names. The venue's top 50 are screened this way. 400
        `validation_failed` names the field (`period`, `order_by`, `sort`, `flag`, ...)."""
        return leaderboard.top_traders(args.pop("period").upper(),
                                       ORDER_BY[args.pop("order_by")], args.pop("limit"),
                                       args.pop("category"), **args)


@blp.route("/compare")
class TradersCompared(MethodView):
    @access.requires("read:markets")
    @blp.arguments(CompareArgsSchema, location="query")
    @blp.response(200, ComparedTraderSchema(many=True))
    @blp.errors(400, 401, 403, 429)
    def get(self, args):
        """Up to five traders' replays side by side, in the order asked: each one's
        screening row, its numbers at the p50 and p95 delays (copies, skips by the rule that
        skipped them, fees, drawdown, the capital it needs), the rules replayed and its
        equity curve at p50 (cumulative PnL of the copies at the mark). A trader not
        replayed yet answers nulls. 400 `validation_failed` (`addresses`) for more than five
        or anything but wallet addresses."""
        return leaderboard.compare(args["addresses"])


@blp.route("/<string:address>", parameters=[examples.ADDRESS_PARAMETER])
class TraderItem(MethodView):
    @access.requires("read:markets")
    @blp.response(200, TraderProfileSchema, example=examples.TRADER_PROFILE)
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, address: str):
        """One trader's profile: PnL over time, volume, markets traded, recent trades and
        open positions, as the venue shows them. 400 `validation_failed` (`address`) for
        anything but a wallet address (a mixed-case one must pass its EIP-55 checksum)."""
        return traders.trader_profile(traders.wallet_address(address))


@blp.route("/<string:address>/copyability")
class Copyability(MethodView):
    @access.requires("read:markets")
    @idempotency_exempt("a report is cached per question: asking again answers the same "
                        "report, or the same job building it.")
    @blp.arguments(CopyabilityRequestSchema, example=request_examples.COPYABILITY)
    @blp.response(202, CopyabilityOperationSchema,
                  description="Not cached: a job builds the report. Follow `location` "
                              "(also the `Location` header) until `status` is `done`.")
    @blp.alt_response(200, schema=CopyabilityOperationSchema, example=EXAMPLE,
                      description="Cached: the finished report, in `report`.")
    @blp.errors(400, 401, 403, 429, 503)
    def post(self, body, address: str):
        """Would copying this trader have worked? Replays the target's fills over `window`
        (7d, 30d, 90d) through your rules (`rules`, a config's fields, or `config_id`),
        each decided and priced at our detection delay (the deployment's measured p50 and
        p95, a stated default, or `delay_p50_ms`/`delay_p95_ms`), on the price history and
        the market's book, less the venue's fees (MCP `get_copyability_report`).

        Reports copies, skips by reason, the expected PnL at both delays against the
        target's own, max drawdown, capital needed, the share of the target's PnL we could
        not have copied (too fast, too small, too illiquid), and how reliable the estimate
        is (sample size, markets' shares, a seeded bootstrap interval). The slippage model:
        docs/user/copyability.md. Cached per (address, window, rules and delays) for 15
        minutes. 400 `validation_failed` names the field (`address`, `window`,
        `rules.<field>`, `config_id`, `delay_p50_ms`).

        Bounded per user: at most `COPYABILITY_MAX_IN_FLIGHT` (2 by default) of your reports
        queued or running at once, and `COPYABILITY_REPORTS_PER_DAY` (20) asked for in any
        24 hours. One more answers 429 `rate_limited` with `Retry-After` and `limit`
        (`reports_in_flight`, with `in_flight`: the locations to follow, or
        `reports_per_day`) and `allowed`. A cached answer, or a report of the same question
        already being built, counts for neither and is never refused."""
        done, operation = copyability_reports.request(access.current_principal().user,
                                                      address, body)
        if done:
            return operation, 200
        return operation, 202, {"Location": operation["location"]}


@blp.route("/<string:address>/copyability/<uuid:report_id>")
class CopyabilityItem(MethodView):
    @access.requires("read:markets")
    @blp.response(200, CopyabilityOperationSchema, example=EXAMPLE)
    @blp.errors(401, 403, 404, 429)
    def get(self, address: str, report_id):
        """A copyability report being built (`status` queued or running, with `progress`)
        or built (`done`, with `report`; `failed`, with `error`)."""
        return copyability_reports.describe(copyability_reports.get(report_id, address))
