"""Every response schema the API dumps with a compiled dump (schemas/dump.py) gives what
marshmallow's own ``Schema.dump`` gives: full objects, nulls, objects lacking a field, model-like
objects read by attribute; and a schema that is not plain is not compiled."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from marshmallow import Schema, fields, post_dump

from schemas.dump import COMPILED, compile_dump
from schemas.fields import DecimalString


def _sample(field: fields.Field, depth: int = 0) -> Any:
    """A value of the kind ``field`` writes (None where nothing better fits)."""
    if isinstance(field, fields.Nested):
        inner = _object(field.schema, depth + 1) if depth < 4 else None
        return [inner, inner] if (field.many or field.schema.many) and inner is not None else inner
    if isinstance(field, fields.List):
        return [_sample(field.inner, depth + 1), _sample(field.inner, depth + 1)]
    if isinstance(field, fields.UUID):
        return uuid.UUID("5b1c6a9e-4d4f-4a55-9f3e-0f1d2c3b4a59")
    if isinstance(field, fields.DateTime):
        return datetime(2026, 12, 7, 22, 30, 1, 123456, tzinfo=UTC)
    if isinstance(field, fields.Date):
        return date(2026, 12, 7)
    if isinstance(field, fields.Boolean):
        return True
    if isinstance(field, fields.Integer):
        return 42
    if isinstance(field, fields.Float):
        return 0.25
    if isinstance(field, DecimalString):
        return Decimal("12.50")
    if isinstance(field, fields.Dict):
        return {"a": 1, "b": "two"}
    if isinstance(field, fields.String):
        return "0xAbC" if "address" in (field.name or "") else "text"
    return "value"


def _object(schema: Schema, depth: int = 0) -> dict[str, Any]:
    return {field.attribute or name: _sample(field, depth)
            for name, field in schema.dump_fields.items()}


def _variants(schema: Schema) -> list[Any]:
    full = _object(schema)
    nulls = {key: None if field.allow_none else full[key]
             for key, field in ((f.attribute or n, f) for n, f in schema.dump_fields.items())}
    variants: list[Any] = [full, nulls, SimpleNamespace(**full)]
    for key in list(full)[:3]:  # one field absent: marshmallow's omission or default
        variants.append({k: v for k, v in full.items() if k != key})
    return variants


def _outcome(dump: Any, obj: Any) -> Any:
    try:
        return dump(obj)
    except Exception as exc:  # a sample a field refuses must be refused alike
        return type(exc)


def test_the_api_compiles_its_plain_response_schemas(app):
    names = {type(schema).__name__ for schema in COMPILED}
    assert "UserProfileSchema" in names
    assert len(COMPILED) >= 20


@pytest.mark.usefixtures("app")
def test_every_compiled_schema_dumps_as_marshmallow_does():
    for schema in COMPILED:
        for obj in _variants(schema):
            expected = _outcome(lambda o, s=schema: Schema.dump(s, o), obj)
            got = _outcome(schema.dump, obj)
            assert got == expected, (type(schema).__name__, obj)
            if isinstance(expected, dict):
                assert list(got) == list(expected), type(schema).__name__  # the same order


def test_the_profile_dumps_as_marshmallow_does():
    from schemas.users import UserProfileSchema

    profile = {"id": uuid.uuid4(), "email": "a@example.com", "tier": "free",
               "limits": {"max_active_configs": 3, "max_api_keys": None},
               "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
               "trading_wallet_address": None}
    fast = compile_dump(UserProfileSchema())
    assert fast is not None
    assert fast(profile) == UserProfileSchema().dump(profile)
    assert fast(profile)["id"] == str(profile["id"])


def test_a_schema_that_is_not_plain_is_not_compiled():
    class Hooked(Schema):
        name = fields.String()

        @post_dump
        def upper(self, data, **kwargs):
            return {k: v.upper() for k, v in data.items()}

    class Computed(Schema):
        name = fields.Method("shout")

        def shout(self, obj):
            return "hi"

    class Dotted(Schema):
        name = fields.String(attribute="a.b")

    assert compile_dump(Hooked()) is None
    assert compile_dump(Dotted()) is None
    assert compile_dump(Hooked(), many=True) is None
    computed = compile_dump(Computed())  # Method writes from its own _serialize
    assert computed is None or computed({}) == Computed().dump({})
