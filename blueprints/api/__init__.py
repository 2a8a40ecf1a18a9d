"""The REST surface under /api: the flask-smorest Api, its OpenAPI document, its blueprints."""

from __future__ import annotations

import importlib
import pkgutil

from flask import Flask
from flask_smorest import Api

from blueprints import errors as error_handler
from blueprints.access import openapi_notes as access_notes
from blueprints.api.base import (
    RATE_LIMIT_HEADERS,
    SECURITY_SCHEMES,
    Blueprint,
    DecimalStringComponent,
)
from config import TierSettings
from schemas.common import ErrorSchema, PaginationSchema
from schemas.fields import decimal_string_property
from services.platform.runtime import runtime

OPENAPI_DESCRIPTION = """\
Copy-trading platform for Polymarket.

Money and quantities are `DecimalString`s: parse them as decimals, never floats.
Every error body is `{error, code}`; branch on `code`. Some codes add members (the Error
schema lists them): `fields` on `validation_failed`, `required_scope` on `scope_required`,
`limit` and `allowed` on `tier_limit_exceeded`, `blockers` on a 409 `wallet_error`.
Status per code:
`validation_failed`/`bad_request` 400 (409 for an idempotency conflict),
`unauthorized`/`invalid_token` 401, `insufficient_balance`/`subscription_error`/
`payment_failed` 402, `scope_required`/`tier_limit_exceeded` 403, `not_found` 404,
`wallet_error` 409 (live trading, copying, a wrap or a withdrawal before the trading
account is set up: `blockers` lists what is missing. `wallet_error` rather than
`feature_not_enabled` because nothing is switched off: the user's own wallet is not ready
yet, and the user can fix it), `rate_limited` 429,
`internal_error`/`crypto_error`/`wallet_error` 500,
`feature_not_enabled` 501, `polymarket_unavailable`/`database_error`/`cache_error` 503,
`wallet_error` 503 when the chain RPC is unreachable (500 when a chain operation fails).
429 and 503 carry `Retry-After` (seconds).
"""


class CopytradeApi(Api):
    """flask-smorest's Api with our error body and our single error handler."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error):  # type: ignore[override]
        """Delegate to the one handler so smorest's own errors share the shape."""
        return error_handler.handle(error)


def api_config(base_url: str, plans: TierSettings) -> dict[str, object]:
    """flask-smorest settings: OpenAPI 3.1.0 at /openapi.json, the explorer at /api/docs."""
    return {
        "API_TITLE": "copytrade",
        "API_VERSION": "1.1.0",
        "OPENAPI_VERSION": "3.1.0",
        "OPENAPI_URL_PREFIX": "/",
        "OPENAPI_JSON_PATH": "openapi.json",
        "OPENAPI_SWAGGER_UI_PATH": "api/docs",
        "OPENAPI_SWAGGER_UI_URL": "/api/docs/assets/",
        "API_SPEC_OPTIONS": {
            "info": {"description": OPENAPI_DESCRIPTION + access_notes(plans)},
            "servers": [{"url": base_url}],
            "components": {"securitySchemes": SECURITY_SCHEMES, "headers": RATE_LIMIT_HEADERS},
        },
    }


def register(app: Flask) -> CopytradeApi:
    """Create the Api for ``app`` and register every REST blueprint on it: each module of
    this package that holds a ``blp`` (a new area's module needs no entry anywhere else)."""
    settings = runtime().settings
    for key, value in api_config(settings.base_url, settings.tiers).items():
        app.config.setdefault(key, value)
    api = CopytradeApi(app)
    api.ma_plugin.converter.add_attribute_function(decimal_string_property)
    api.spec.components.schema("DecimalString", DecimalStringComponent)
    api.spec.components.schema("Pagination", schema=PaginationSchema)
    for blueprint in blueprints():
        api.register_blueprint(blueprint)
    app.extensions["copytrade_api"] = api
    return api


def blueprints() -> list[Blueprint]:
    """The REST areas' blueprints: the ``blp`` of each module here, by module name."""
    found = []
    for module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
        blueprint = getattr(importlib.import_module(f"{__name__}.{module}"), "blp", None)
        if isinstance(blueprint, Blueprint):
            found.append(blueprint)
    return found
