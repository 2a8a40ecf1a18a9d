"""Markets: search and browse, one market with its books, price history (JWT or
``read:markets``, as the MCP tools are); translations and their search (public)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.api.pagination import PAGINATION_HEADERS, paged
from schemas import discovery_examples as examples
from schemas.markets import (
    MarketBrowseArgsSchema,
    MarketHistoryArgsSchema,
    MarketPageSchema,
    MarketSummarySchema,
    PriceHistorySchema,
    TranslationsArgs,
    TranslationSearchArgs,
    TranslationSearchResponse,
    TranslationsResponse,
)
from services.markets import markets, translations

blp = Blueprint("markets", __name__, url_prefix="/api/markets", description="Markets")


@blp.route("/translations")
class Translations(MethodView):
    @blp.arguments(TranslationsArgs, location="query")
    @blp.response(200, TranslationsResponse)
    @blp.errors(400, 429, 503)
    @access.public
    def get(self, args):
        """Titles and descriptions of markets in a locale; English where untranslated."""
        return translations.translations(args["slugs"].split(","), args["locale"])


@blp.route("/translations/search")
class TranslationSearch(MethodView):
    @blp.arguments(TranslationSearchArgs, location="query")
    @blp.response(200, TranslationSearchResponse)
    @blp.errors(400, 429, 503)
    @access.public
    def get(self, args):
        """Search market titles and descriptions in a locale, title matches first."""
        return translations.search(args["q"], args["locale"], args["limit"])


@blp.route("")
class Markets(MethodView):
    @access.requires("read:markets")
    @blp.arguments(MarketBrowseArgsSchema, location="query")
    @blp.response(200, MarketSummarySchema(many=True), headers=PAGINATION_HEADERS,
                  example=examples.MARKETS)
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """Search markets by `q`, or browse them by 24-hour volume (bare array,
        X-Pagination-* headers).

        The same service as the MCP tool `search_markets`. Each market has its slug, title,
        category, status (open, paused, closed, resolved), outcomes with their `token_id`
        and price (0-1, the implied probability), volume, liquidity and end date.
        """
        return paged(markets.browse_markets(**args))


@blp.route("/<string:slug>", parameters=[examples.SLUG_PARAMETER])
class MarketItem(MethodView):
    @access.requires("read:markets")
    @blp.response(200, MarketPageSchema, example=examples.MARKET_PAGE)
    @blp.errors(401, 403, 404, 429, 503)
    def get(self, slug: str):
        """One market: details, outcomes and prices, its tick and minimum order size, end
        date, and each outcome's order book depth (null once it no longer trades).

        The MCP tools `get_market_details` and `get_market_depth` serve the same.
        """
        return markets.market_page(slug)


@blp.route("/<string:slug>/price-history", parameters=[examples.SLUG_PARAMETER])
class MarketHistory(MethodView):
    @access.requires("read:markets")
    @blp.arguments(MarketHistoryArgsSchema, location="query")
    @blp.response(200, PriceHistorySchema, example=examples.PRICE_HISTORY)
    @blp.errors(400, 401, 403, 404, 429, 503)
    def get(self, args, slug: str):
        """Price points of one outcome (its label as `outcome`; the first when omitted) over
        `interval`, with open, latest, high, low and change (MCP `get_market_price_history`).
        """
        token = markets.outcome_token(slug, args["outcome"])
        return markets.price_history(token, args["interval"], args["fidelity"])
