"""The small schema language the AG-UI 1.0 event table is written in.

A :class:`Kind` checks one JSON value in place and returns it (stripped of unrecognised
members) or raises: ``ProtocolError`` (naming the event type and field path) for a known
field holding a malformed value, :class:`Unrecognised` for material this client does not
know (a union member or enum value added after it shipped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agui_chat._exceptions import ProtocolError

__all__ = [
    "AnyJson",
    "CheckContext",
    "Const",
    "Enum",
    "Field",
    "Int",
    "JsonPointer",
    "Kind",
    "ListOf",
    "NonNull",
    "Object",
    "StrOrList",
    "TaggedUnion",
    "Typed",
    "Unrecognised",
]

Warn = Callable[[str], None]

_POINTER = re.compile(r"^(/([^/~]|~[01])*)*$")


class Unrecognised(Exception):
    """A union member or enum value this client does not know (not an error): the nearest
    optional field, list or event catches it, removes what it holds and warns."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


class CheckContext:
    """What a check needs besides the value: the event type (for messages) and a warner."""

    __slots__ = ("event_type", "warn")

    def __init__(self, event_type: str, warn: Warn) -> None:
        self.event_type = event_type
        self.warn = warn

    def malformed(self, path: str, problem: str) -> ProtocolError:
        """The fatal error for a known field at ``path`` holding a malformed value."""
        return ProtocolError(f"malformed {self.event_type} event: {path or '/'} {problem}")


_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def _json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


class Kind:
    """One schema shape. ``fast`` is a Python type whose non-null values need no further
    check (``object``: any non-null value), so :class:`Object` skips the call for them."""

    accepts_null = False
    fast: type | None = None

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        raise NotImplementedError


class Typed(Kind):
    """A value of one JSON type (a string, a boolean, an open object); ``described`` names
    it in errors (``"a string"``)."""

    def __init__(self, python_type: type, described: str) -> None:
        self.fast = python_type
        self.described = described

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not self.fast:
            raise ctx.malformed(path, f"must be {self.described}, got {_json_type(value)}")
        return value


class Int(Kind):
    """An integer within ``low``..``high`` (JSON Schema's integer, so ``3.0`` counts)."""

    def __init__(self, low: int, high: int) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        is_int = type(value) is int or (type(value) is float and value.is_integer())
        if not is_int:
            raise ctx.malformed(path, f"must be an integer, got {_json_type(value)} {value!r}")
        if not self.low <= value <= self.high:
            raise ctx.malformed(path, f"must be between {self.low} and {self.high}, got {value}")
        return value


class AnyJson(Kind):
    """Any JSON value, null included."""

    accepts_null = True
    fast = object

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        return value


class NonNull(Kind):
    """Any JSON value but null."""

    fast = object

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if value is None:
            raise ctx.malformed(path, "must not be null")
        return value


class Const(Kind):
    """Exactly one string (``"function"`` on a tool call)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if value != self.value or type(value) is not str:
            raise ctx.malformed(path, f'must be "{self.value}", got {value!r}')
        return value


class Enum(Kind):
    """A closed string set. A value from ``known`` but not ``allowed`` is malformed; a
    value from neither is unrecognised (a member added after this client shipped)."""

    def __init__(self, allowed: Iterable[str], known: Iterable[str] = ()) -> None:
        self.allowed = frozenset(allowed)
        self.known = frozenset(known) | self.allowed

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a string, got {_json_type(value)}")
        if value in self.allowed:
            return value
        if value in self.known:
            raise ctx.malformed(path, f"must be one of {sorted(self.allowed)}, got {value!r}")
        raise Unrecognised(path, f"unrecognised value {value!r}")


class JsonPointer(Kind):
    """A JSON Pointer string (RFC 6901), as JSON Patch operations carry."""

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a JSON Pointer string, got {_json_type(value)}")
        if not _POINTER.match(value):
            raise ctx.malformed(path, f"is not a valid JSON Pointer (RFC 6901): {value!r}")
        return value


class ListOf(Kind):
    """An array of one kind; an unrecognised element is dropped from it with a warning."""

    def __init__(self, item: Kind, *, min_items: int = 0) -> None:
        self.item = item
        self.min_items = min_items

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not list:
            raise ctx.malformed(path, f"must be an array, got {_json_type(value)}")
        if len(value) < self.min_items:
            raise ctx.malformed(path, f"must hold at least {self.min_items} item(s), got none")
        dropped: list[int] = []
        item = self.item
        for index, element in enumerate(value):
            element_path = f"{path}/{index}"
            try:
                value[index] = item.check(element, element_path, ctx)
            except Unrecognised as exc:
                ctx.warn(f"{ctx.event_type}: dropped {element_path}: {exc.what} at {exc.path}")
                dropped.append(index)
        for index in reversed(dropped):
            del value[index]
        return value


class Field:
    """A member of an :class:`Object`: its kind and whether it is required."""

    __slots__ = ("kind", "required")

    def __init__(self, kind: Kind, required: bool) -> None:
        self.kind = kind
        self.required = required


class Object(Kind):
    """An object with described fields. Closed objects strip undescribed members (with a
    warning); open ones (JSON Patch operations) keep them untouched."""

    def __init__(self, fields: Mapping[str, Field], *, open_: bool = False) -> None:
        self.fields = dict(fields)
        self.required = tuple(name for name, field in self.fields.items() if field.required)
        self.open = open_

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not dict:
            raise ctx.malformed(path, f"must be an object, got {_json_type(value)}")
        for name in self.required:
            if name not in value:
                raise ctx.malformed(f"{path}/{name}", "is required but missing")
        fields = self.fields
        removed: list[tuple[str, str | None]] = []  # (name, warning)
        for name, member in value.items():
            field = fields.get(name)
            if field is None:
                if not self.open:
                    removed.append((name, f"stripped unknown property {path}/{name}"))
                continue
            fast = field.kind.fast
            if member is not None and (fast is object or type(member) is fast):
                continue
            if member is None and not field.required and not field.kind.accepts_null:
                # "Absent means absent", but 0.x Python producers wrote optional fields as
                # null (`"outcome": null`, `"parentMessageId": null`): read null as absent.
                removed.append((name, None))
                continue
            try:
                field.kind.check(member, f"{path}/{name}", ctx)  # checks mutate in place
            except Unrecognised as exc:
                if field.required:
                    raise
                removed.append((name, f"stripped {path}/{name}: {exc.what} at {exc.path}"))
        for name, warning in removed:
            del value[name]
            if warning is not None:
                ctx.warn(f"{ctx.event_type}: {warning}")
        return value


class TaggedUnion(Kind):
    """Objects discriminated by one key; an unknown discriminator value is unrecognised."""

    def __init__(self, key: str, what: str, members: Mapping[str, Object]) -> None:
        self.key = key
        self.what = what
        self.members = dict(members)

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is not dict:
            raise ctx.malformed(path, f"must be an object, got {_json_type(value)}")
        discriminator = value.get(self.key)
        if discriminator is None:
            raise ctx.malformed(f"{path}/{self.key}", "is required but missing")
        if type(discriminator) is not str:
            raise ctx.malformed(
                f"{path}/{self.key}", f"must be a string, got {_json_type(discriminator)}"
            )
        member = self.members.get(discriminator)
        if member is None:
            raise Unrecognised(path, f"unrecognised {self.what} {self.key} {discriminator!r}")
        return member.check(value, path, ctx)


class StrOrList(Kind):
    """A message's ``content``: a string, or an array of content parts."""

    def __init__(self, part: Kind) -> None:
        self.items = ListOf(part)

    def check(self, value: Any, path: str, ctx: CheckContext) -> Any:
        if type(value) is str:
            return value
        if type(value) is list:
            return self.items.check(value, path, ctx)
        raise ctx.malformed(
            path, f"must be a string or an array of content parts, got {_json_type(value)}"
        )
