"""The AG-UI 1.0 event schema (a table written in a small language of kinds) and
:class:`EventEnforcer`, which holds incoming events (the parsed JSON dicts, checked and
stripped in place, never copied) to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from agui_chat._exceptions import ProtocolError

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The largest integer a JSON number holds exactly (the bound of ``timestamp``).
MAX_SAFE_INT: Final = 9007199254740991

# --------------------------------------------------------------------------- the kinds

_POINTER = re.compile(r"^(/([^/~]|~[01])*)*$")


class Unrecognised(Exception):
    """A union member or enum value this client does not know (not an error): the nearest
    optional field, list or event catches it, removes what it holds and warns."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


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

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        raise NotImplementedError


class Typed(Kind):
    """A value of one JSON type (a string, a boolean, an open object); ``described`` names
    it in errors (``"a string"``)."""

    def __init__(self, python_type: type, described: str) -> None:
        self.fast = python_type
        self.described = described

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if type(value) is not self.fast:
            raise ctx.malformed(path, f"must be {self.described}, got {_json_type(value)}")
        return value


class Int(Kind):
    """An integer within ``low``..``high`` (JSON Schema's integer, so ``3.0`` counts)."""

    def __init__(self, low: int, high: int) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if not (type(value) is int or (type(value) is float and value.is_integer())):
            raise ctx.malformed(path, f"must be an integer, got {_json_type(value)} {value!r}")
        if not self.low <= value <= self.high:
            raise ctx.malformed(path, f"must be between {self.low} and {self.high}, got {value}")
        return value


class Anything(Kind):
    """Any JSON value; null only if ``nullable``."""

    fast = object

    def __init__(self, nullable: bool) -> None:
        self.accepts_null = nullable

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if value is None and not self.accepts_null:
            raise ctx.malformed(path, "must not be null")
        return value


class Enum(Kind):
    """A string set. A value from ``known`` but not ``allowed`` is malformed, and so is any
    other value when ``closed``; else it is unrecognised (added after this client shipped)."""

    def __init__(
        self, allowed: Iterable[str], known: Iterable[str] = (), *, closed: bool = False
    ) -> None:
        self.allowed = frozenset(allowed)
        self.known = frozenset(known) | self.allowed
        self.closed = closed

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a string, got {_json_type(value)}")
        if value in self.allowed:
            return value
        if self.closed or value in self.known:
            allowed = " or ".join(f'"{member}"' for member in sorted(self.allowed))
            raise ctx.malformed(path, f"must be {allowed}, got {value!r}")
        raise Unrecognised(path, f"unrecognised value {value!r}")


class JsonPointer(Kind):
    """A JSON Pointer string (RFC 6901), as JSON Patch operations carry."""

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a JSON Pointer string, got {_json_type(value)}")
        if not _POINTER.match(value):
            raise ctx.malformed(path, f"is not a valid JSON Pointer (RFC 6901): {value!r}")
        return value


class ListOf(Kind):
    """An array of one kind; an unrecognised element is dropped from it with a warning.
    With ``unique_ids`` its elements are objects whose ``id`` must not repeat."""

    def __init__(self, item: Kind, *, min_items: int = 0, unique_ids: bool = False) -> None:
        self.item = item
        self.min_items = min_items
        self.unique_ids = unique_ids

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if type(value) is not list:
            raise ctx.malformed(path, f"must be an array, got {_json_type(value)}")
        if len(value) < self.min_items:
            raise ctx.malformed(path, f"must hold at least {self.min_items} item(s), got none")
        kept = []
        for index, element in enumerate(value):
            try:
                kept.append(self.item.check(element, f"{path}/{index}", ctx))
            except Unrecognised as exc:
                ctx.warn(f"{ctx.event_type}: dropped {path}/{index}: {exc.what} at {exc.path}")
        value[:] = kept  # in place, as every check
        if self.unique_ids:
            seen: set[str] = set()
            for index, element in enumerate(value):
                if element["id"] in seen:
                    raise ctx.malformed(f"{path}/{index}/id", f"repeats id {element['id']!r}")
                seen.add(element["id"])
        return value


class Object(Kind):
    """An object whose ``fields`` map each name to its kind and whether it is required.
    Closed objects strip other members (with a warning); open ones (JSON Patch operations)
    keep them untouched."""

    def __init__(self, fields: Mapping[str, tuple[Kind, bool]], *, open_: bool = False) -> None:
        self.fields = dict(fields)
        self.required = tuple(name for name, (_, required) in self.fields.items() if required)
        self.open = open_

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
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
            kind, required = field
            fast = kind.fast
            if member is not None and (fast is object or type(member) is fast):
                continue
            if member is None and not required and not kind.accepts_null:
                # "Absent means absent", but 0.x Python producers wrote optional fields as
                # null (`"outcome": null`, `"parentMessageId": null`): read null as absent.
                removed.append((name, None))
                continue
            try:
                kind.check(member, f"{path}/{name}", ctx)  # checks mutate in place
            except Unrecognised as exc:
                if required:
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

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
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

    def check(self, value: Any, path: str, ctx: EventEnforcer) -> Any:
        if type(value) is str:
            return value
        if type(value) is list:
            return self.items.check(value, path, ctx)
        raise ctx.malformed(
            path, f"must be a string or an array of content parts, got {_json_type(value)}"
        )


# --------------------------------------------------------------------------- the 1.0 table

TEXT_ROLES: Final = ("developer", "system", "assistant", "user")
ROLES: Final = (*TEXT_ROLES, "tool", "activity", "reasoning")

#: The kinds a field spec names; each composite kind below is added to it once defined.
_KIND: dict[str, Kind] = {
    "str": Typed(str, "a string"),
    "any": Anything(nullable=True),
    "json": Anything(nullable=False),
    "obj": Typed(dict, "an object"),  # open by key: metadata, activity content, a JSON Schema
    "bool": Typed(bool, "a boolean"),
    "ts": Int(-MAX_SAFE_INT, MAX_SAFE_INT),
    "count": Int(0, MAX_SAFE_INT),
    "function": Enum(("function",), closed=True),
    "tool": Enum(("tool",), closed=True),
    "reasoning": Enum(("reasoning",), closed=True),
    "text_role": Enum(TEXT_ROLES, ROLES),
    "resume_status": Enum(("resolved", "cancelled")),
    "subtype": Enum(("tool-call", "message")),
}


def _obj(spec: str, *, open_: bool = False) -> Object:
    """An object from a spec of ``name``, ``name?`` (optional) and ``name:kind`` tokens; a
    field is a string unless it names a kind of ``_KIND``."""
    fields = {}
    for token in spec.split():
        name, _, kind = token.partition(":")
        fields[name.rstrip("?")] = (_KIND[kind or "str"], not name.endswith("?"))
    return Object(fields, open_=open_)


def _union(key: str, what: str, *, open_: bool = False, **members: str) -> TaggedUnion:
    objects = {tag: _obj(spec, open_=open_) for tag, spec in members.items()}
    return TaggedUnion(key, what, objects)


_KIND["strs"] = ListOf(_KIND["str"])
_KIND["source"] = _union(
    "type",
    "source",
    data="type value mimeType",
    url="type value mimeType?",
    file="type value provider? mimeType?",
)
_MEDIA = "type id? source:source metadata?:json"
_KIND["content"] = StrOrList(
    _union(
        "type",
        "content part",
        text="type id? text metadata?:json",
        image=_MEDIA,
        audio=_MEDIA,
        video=_MEDIA,
        document=_MEDIA,
    )
)
_KIND["call"] = _obj("name arguments")
_KIND["calls"] = ListOf(
    _obj("id type:function function:call encryptedValue? encryptedValueType? metadata?:obj")
)
_MESSAGE = "id role encryptedValue? encryptedValueType? metadata?:obj subagentRunId?"
_KIND["messages"] = ListOf(
    _union(
        "role",
        "message",
        developer=f"{_MESSAGE} name? content",
        system=f"{_MESSAGE} name? content",
        assistant=f"{_MESSAGE} name? content? toolCalls?:calls",
        user=f"{_MESSAGE} name? content:content",
        tool=f"{_MESSAGE} content:content toolCallId error?",
        activity="id role activityType content:obj metadata?:obj subagentRunId?",
        reasoning=f"{_MESSAGE} content",
    )
)
# Patch operations are open objects: RFC 6902 ignores members an operation does not define.
_KIND["ptr"] = JsonPointer()
_KIND["patch"] = ListOf(
    _union(
        "op",
        "patch operation",
        open_=True,
        add="op path:ptr value:any",
        remove="op path:ptr",
        replace="op path:ptr value:any",
        move="op from:ptr path:ptr",
        copy="op from:ptr path:ptr",
        test="op path:ptr value:any",
    )
)
_KIND["interrupts"] = ListOf(
    _obj(
        "id reason message? toolCallId? responseSchema?:obj expiresAt? metadata?:obj subagentRunId?"
    ),
    min_items=1,
    unique_ids=True,
)
_KIND["run_outcome"] = _union(
    "type",
    "outcome",
    success="type pendingToolCallIds?:strs",
    interrupt="type interrupts:interrupts",
    cancelled="type",
)
_KIND["subagent_outcome"] = _union(
    "type", "outcome", success="type", suspended="type interruptIds?:strs"
)
_KIND["usage"] = ListOf(
    _obj(
        "provider? model? inputTokens?:count outputTokens?:count totalTokens?:count"
        " reasoningTokens?:count cachedInputTokens?:count cacheWriteInputTokens?:count"
    )
)
_KIND["tools"] = ListOf(_obj("name description parameters?:json metadata?:obj"))
_KIND["context"] = ListOf(_obj("description value"))
_KIND["resume"] = ListOf(_obj("interruptId status:resume_status payload?:json metadata?:obj"))
_KIND["run_input"] = _obj(
    "threadId runId protocolVersion? parentRunId? state?:json messages:messages tools?:tools"
    " context?:context forwardedProps?:json resume?:resume"
)
#: The ``RunAgentInput`` shape (``RUN_STARTED.input``; a server holds its request body to it).
RUN_INPUT: Final = _KIND["run_input"]

#: Each event's own fields. Every event has ``type`` and the base fields; all but the run
#: events, ``MESSAGES_SNAPSHOT`` and the subagent events also take ``subagentRunId?``.
_EVENTS = {
    "TEXT_MESSAGE_START": "messageId role?:text_role name?",
    "TEXT_MESSAGE_CONTENT": "messageId delta",
    "TEXT_MESSAGE_END": "messageId",
    "TEXT_MESSAGE_CHUNK": "messageId? role?:text_role delta? name?",
    "TOOL_CALL_START": "toolCallId toolCallName parentMessageId?",
    "TOOL_CALL_ARGS": "toolCallId delta",
    "TOOL_CALL_END": "toolCallId",
    "TOOL_CALL_CHUNK": "toolCallId? toolCallName? parentMessageId? delta?",
    "TOOL_CALL_RESULT": "messageId toolCallId content:content role?:tool",
    "STATE_SNAPSHOT": "snapshot:any",
    "STATE_DELTA": "delta:patch",
    "MESSAGES_SNAPSHOT": "messages:messages",
    "ACTIVITY_SNAPSHOT": "messageId activityType content:obj replace?:bool",
    "ACTIVITY_DELTA": "messageId activityType patch:patch",
    "RAW": "event:any source?",
    "CUSTOM": "name value:any",
    "RUN_STARTED": "threadId runId protocolVersion? parentRunId? input?:run_input",
    "RUN_FINISHED": "threadId runId result?:json outcome?:run_outcome usage?:usage",
    "RUN_ERROR": "message code? usage?:usage",
    "STEP_STARTED": "stepName",
    "STEP_FINISHED": "stepName",
    "REASONING_START": "messageId",
    "REASONING_MESSAGE_START": "messageId role:reasoning",
    "REASONING_MESSAGE_CONTENT": "messageId delta",
    "REASONING_MESSAGE_END": "messageId",
    "REASONING_MESSAGE_CHUNK": "messageId? delta?",
    "REASONING_END": "messageId",
    "REASONING_ENCRYPTED_VALUE": "subtype:subtype entityId encryptedValue encryptedValueType?",
    "SUBAGENT_STARTED": (
        "subagentRunId name description? parentSubagentRunId? parentToolCallId? parentMessageId?"
    ),
    "SUBAGENT_FINISHED": "subagentRunId result?:json outcome?:subagent_outcome",
    "SUBAGENT_ERROR": "subagentRunId message code?",
}
_UNATTRIBUTED = ("RUN_", "MESSAGES_SNAPSHOT", "SUBAGENT_")
_SCHEMAS: dict[str, Object] = {
    name: _obj(
        "type timestamp?:ts rawEvent?:json metadata?:obj"
        + ("" if name.startswith(_UNATTRIBUTED) else " subagentRunId?")
        + f" {own}"
    )
    for name, own in _EVENTS.items()
}

#: Every event type of AG-UI 1.0 (and 1.1, which adds none).
EVENT_TYPES: Final = frozenset(_SCHEMAS)


# --------------------------------------------------------------------------- enforcement


class EventEnforcer:
    """Holds each incoming event to the 1.0 schema (the "enforcement" stage). The kinds
    report through it: its ``warn``, and ``malformed`` errors naming the event type."""

    __slots__ = ("event_type", "warn")

    def __init__(self, warn: Warn) -> None:
        self.warn = warn
        self.event_type = ""  # the event being checked

    def malformed(self, path: str, problem: str) -> ProtocolError:
        """The fatal error for a known field at ``path`` holding a malformed value."""
        return ProtocolError(f"malformed {self.event_type} event: {path or '/'} {problem}")

    def enforce(self, event: Event) -> Event | None:
        """``event`` (a JSON object with a string ``type``) stripped of unrecognised material
        (an unknown property, union member or enum value, with a warning), or ``None`` when
        the whole event is dropped (an unknown type). Raises ``ProtocolError``, naming the
        event type and field path, for a known field holding a malformed value."""
        event_type: str = event["type"]
        schema = _SCHEMAS.get(event_type)
        if schema is None:
            self.warn(f"dropped event of unrecognised type {event_type!r}")
            return None
        self.event_type = event_type
        try:
            schema.check(event, "", self)
        except Unrecognised as exc:
            self.warn(f"dropped {event_type} event: {exc.what} at {exc.path} (a required position)")
            return None
        return event
