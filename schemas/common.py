"""Schemas every surface shares: the error body and pagination."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.vocabulary import ERROR_CODES

# The plan limits a tier_limit_exceeded error can name (services/platform/tiers.py).
TIER_LIMIT_NAMES = ("max_active_configs", "max_api_keys")
# The per-user limits of copyability reports a rate_limited error can name
# (services/copying/copyability_reports.py).
REPORT_LIMIT_NAMES = ("reports_in_flight", "reports_per_day")
MAX_OFFSET = 2**31 - 1


class ErrorSchema(Schema):
    """The body of every error: a message for people, a stable code for programs."""

    error = fields.String(required=True, metadata={
        "description": "Human-readable; clients must not branch on it."})
    code = fields.String(required=True, validate=validate.OneOf(ERROR_CODES),
                         metadata={"description": "Stable machine-readable code."})
    # Members some codes add. The schema stays closed, so each one the API sends is here.
    field_messages = fields.Dict(keys=fields.String(), values=fields.Raw(), data_key="fields",
                                 metadata={"description": "`validation_failed`: each invalid "
                                                          "field (by name) with its messages.",
                                           "examples": [{"size": ["Must be greater than 0."]}]})
    required_scope = fields.String(metadata={
        "description": "`scope_required`: the scope the credential lacks."})
    limit = fields.String(validate=validate.OneOf(TIER_LIMIT_NAMES + REPORT_LIMIT_NAMES),
                          metadata={"description": "`tier_limit_exceeded`: which plan limit "
                                                   "was reached; `rate_limited` from a "
                                                   "copyability report: which per-user limit."})
    allowed = fields.Integer(metadata={
        "description": "`tier_limit_exceeded`: how many the plan allows; `rate_limited` "
                       "(copyability reports): how many the limit allows."})
    in_flight = fields.List(fields.String(), metadata={
        "description": "`rate_limited` for `reports_in_flight`: the locations of the "
                       "caller's copyability reports still being built."})
    blockers = fields.List(fields.Dict(keys=fields.String(), values=fields.String()), metadata={
        "description": "`wallet_error` with status 409: what keeps the trading account "
                       "from live trading, each a `code` and a `message`.",
        "examples": [[{"code": "onboarding_incomplete",
                       "message": "The account is not set up for the venue yet."}]]})


class PaginationSchema(Schema):
    """Pagination metadata in object form (list endpoints send it as headers)."""

    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)
    has_next = fields.Boolean(required=True)


class PageArgsSchema(Schema):
    """The ``limit`` and ``offset`` query parameters."""

    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=1000))
    # Bounded so the database never sees an integer it cannot hold (SQLite: 64 bits).
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET))
