"""Schemas every surface shares: the error body and pagination."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.vocabulary import ERROR_CODES


class ErrorSchema(Schema):
    """The body of every error: a message for people, a stable code for programs."""

    error = fields.String(required=True, metadata={
        "description": "Human-readable; clients must not branch on it."})
    code = fields.String(required=True, validate=validate.OneOf(ERROR_CODES),
                         metadata={"description": "Stable machine-readable code."})


class PaginationSchema(Schema):
    """Pagination metadata in object form (list endpoints send it as headers)."""

    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)
    has_next = fields.Boolean(required=True)


class PageArgsSchema(Schema):
    """The ``limit`` and ``offset`` query parameters."""

    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=1000))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0))
