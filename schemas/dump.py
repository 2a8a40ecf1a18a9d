"""A response schema's ``dump`` compiled once: the dict marshmallow's ``Schema.dump`` gives one
object, built without its per-field machinery (hooks checked, accessor looked up, default
tested, key derived on every field of every dump).

Only what is plain compiles: a schema without dump hooks or its own ``get_attribute``, whose
fields read their value as ``Field.serialize`` does (``Nested`` ones compiled in turn). Each
field's own ``_serialize`` still writes its value, so formats (dates, UUIDs, decimals) are
marshmallow's. An object lacking any field's value is dumped by marshmallow itself, so
defaults and omissions stay its own. ``tests/schemas/test_dump.py`` compares the two on every
response schema the API compiles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields
from marshmallow.decorators import POST_DUMP, PRE_DUMP
from marshmallow.utils import get_value, missing

Dump = Callable[[Any], Any]


class _Missing(Exception):
    """A field's value is absent: marshmallow dumps this object."""


def _nested(field: fields.Nested) -> Dump | None:
    if type(field)._serialize is not fields.Nested._serialize:
        return None
    schema = field.schema
    inner = compile_dump(schema, many=False)
    if inner is None:
        return None
    if schema.many or field.many:
        return lambda value, attr, obj: None if value is None else [inner(v) for v in value]
    return lambda value, attr, obj: None if value is None else inner(value)


def _writer(field: fields.Field) -> Callable[..., Any] | None:
    kind = type(field)
    if (kind.serialize is not fields.Field.serialize or kind.get_value is not fields.Field.get_value
            or not field._CHECK_ATTRIBUTE):
        return None
    if isinstance(field, fields.Nested):
        return _nested(field)
    return field._serialize


def compile_dump(schema: Any, *, many: bool | None = None) -> Dump | None:
    """``schema.dump`` of one object, compiled; None when ``schema`` is not plain."""
    if not isinstance(schema, Schema) or (schema.many if many is None else many):
        return None
    if (type(schema).get_attribute is not Schema.get_attribute or schema._hooks[PRE_DUMP]
            or schema._hooks[POST_DUMP] or schema.dict_class is not dict):
        return None
    plan = []
    for name, field in schema.dump_fields.items():
        source = name if field.attribute is None else field.attribute
        writer = _writer(field)
        if writer is None or "." in source:
            return None
        plan.append((field.data_key if field.data_key is not None else name, source, name, writer))
    steps = tuple(plan)
    # The class's own dump: ``compiled`` replaces the instance's with this function.
    slow = type(schema).dump

    def read(obj: Any, source: str) -> Any:
        value = get_value(obj, source, missing)
        if value is missing:
            raise _Missing
        return value

    def dump(obj: Any) -> dict[str, Any]:
        try:
            if type(obj) is dict:
                return {key: write(obj[source] if source in obj else read(obj, source), name, obj)
                        for key, source, name, write in steps}
            return {key: write(read(obj, source), name, obj) for key, source, name, write in steps}
        except _Missing:
            return slow(schema, obj)

    return dump


# Every schema instance whose dump was compiled for a response (the test walks them all).
COMPILED: list[Schema] = []


def compiled(schema: Any) -> Any:
    """``schema`` with its single-object ``dump`` compiled when it is plain; itself otherwise."""
    if isinstance(schema, Schema) and "dump" in vars(schema):
        return schema  # compiled already (an instance shared by two responses)
    fast = compile_dump(schema)
    if fast is None:
        return schema
    slow = type(schema).dump

    def dump(obj: Any, *, many: bool | None = None) -> Any:
        return slow(schema, obj, many=many) if many else fast(obj)

    schema.dump = dump
    COMPILED.append(schema)
    return schema
