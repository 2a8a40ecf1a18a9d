"""Markets: translations and their search (public)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.markets import (
    TranslationsArgs,
    TranslationSearchArgs,
    TranslationSearchResponse,
    TranslationsResponse,
)
from services.markets import translations

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
