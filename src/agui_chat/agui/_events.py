"""The AG-UI 1.0 event schema and the stages that hold incoming events to it.

Every event is a plain ``dict`` with the wire's camelCase keys, exactly the JSON object
after enforcement. This module holds, in pipeline order (AG-UI processing model):

- :class:`RetiredShapeTranslator` — the compatibility boundary: retired ``THINKING_*``
  events become the ``REASONING_*`` family, with synthesized ids and a warning.
- :class:`EventEnforcer` — a table-driven check of every 1.0 event against the schema.
  Unrecognised material (an unknown event type, an unknown property, a union member or
  enum value this client does not know) is dropped or stripped with a warning; a known
  field holding a malformed value is fatal (:class:`~agui_chat._exceptions.ProtocolError`
  naming the event type and the field path).
- :class:`ChunkExpander` — ``*_CHUNK`` events become ``START``/``CONTENT``/``END``.
- :func:`check_protocol_version` and the outgoing peer-era shims
  (:func:`downgrade_input_messages`, :func:`input_protocol_version`).

Enforcement mutates the freshly parsed dict in place (it owns it) and never copies.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple

from agui_chat._exceptions import ProtocolError

__all__ = [
    "CHUNK_TYPES",
    "CLIENT_PROTOCOL_VERSION",
    "EVENT_TYPES",
    "KNOWN_PROTOCOL_VERSION",
    "MAX_SAFE_INT",
    "RETIRED_TYPES",
    "ROLES",
    "TEXT_ROLES",
    "ChunkExpander",
    "EventEnforcer",
    "RetiredShapeTranslator",
    "check_protocol_version",
    "downgrade_input_messages",
    "input_protocol_version",
    "parse_version",
    "peer_predates_subagents",
]

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The protocol version this client declares on ``RunAgentInput.protocolVersion``.
CLIENT_PROTOCOL_VERSION: Final = "1.0"
#: The newest version whose events this client knows (1.1 only adds ``encryptedValueType``).
KNOWN_PROTOCOL_VERSION: Final = (1, 1)

MAX_SAFE_INT: Final = 9007199254740991
_POINTER = re.compile(r"^(/([^/~]|~[01])*)*$")


# --------------------------------------------------------------------------- schema kinds


class _Unrecognised(Exception):
    """A value is a union member or enum value this client does not know (not an error).

    Raised by a kind and caught by the nearest optional field, list or event, which then
    removes what it holds and warns.
    """

    def __init__(self, path: str, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


class _Ctx:
    """What a check needs besides the value: the event type (for messages) and a warner."""

    __slots__ = ("event_type", "warn")

    def __init__(self, event_type: str, warn: Warn) -> None:
        self.event_type = event_type
        self.warn = warn

    def malformed(self, path: str, problem: str) -> ProtocolError:
        return ProtocolError(f"malformed {self.event_type} event: {path or '/'} {problem}")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class _Kind:
    """One schema shape; ``check`` returns the (possibly stripped) value or raises.

    ``fast`` names a Python type whose non-null values need no further check (``object``:
    any non-null value), so that :class:`_Object` can skip the call on the common path.
    """

    accepts_null = False
    fast: type | None = None

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        raise NotImplementedError


class _Str(_Kind):
    fast = str

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a string, got {_json_type(value)}")
        return value


class _Int(_Kind):
    def __init__(self, low: int, high: int) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        # JSON Schema's "integer" admits 3.0; it does not admit 1.5 or a boolean.
        is_int = type(value) is int or (type(value) is float and value.is_integer())
        if not is_int:
            raise ctx.malformed(path, f"must be an integer, got {_json_type(value)} {value!r}")
        if not self.low <= value <= self.high:
            raise ctx.malformed(path, f"must be between {self.low} and {self.high}, got {value}")
        return value


class _Bool(_Kind):
    fast = bool

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is not bool:
            raise ctx.malformed(path, f"must be a boolean, got {_json_type(value)}")
        return value


class _AnyJson(_Kind):
    accepts_null = True
    fast = object

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        return value


class _NonNull(_Kind):
    fast = object

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if value is None:
            raise ctx.malformed(path, "must not be null")
        return value


class _OpenObject(_Kind):
    """An object open by key (metadata, activity content, a carried JSON Schema)."""

    fast = dict

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is not dict:
            raise ctx.malformed(path, f"must be an object, got {_json_type(value)}")
        return value


class _Const(_Kind):
    def __init__(self, value: str) -> None:
        self.value = value

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if value != self.value or type(value) is not str:
            raise ctx.malformed(path, f'must be "{self.value}", got {value!r}')
        return value


class _Enum(_Kind):
    """A closed string set. A value from ``known`` but not ``allowed`` is malformed; a
    value from neither is unrecognised (a member added after this client shipped)."""

    def __init__(self, allowed: Iterable[str], known: Iterable[str] = ()) -> None:
        self.allowed = frozenset(allowed)
        self.known = frozenset(known) | self.allowed

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a string, got {_json_type(value)}")
        if value in self.allowed:
            return value
        if value in self.known:
            raise ctx.malformed(path, f"must be one of {sorted(self.allowed)}, got {value!r}")
        raise _Unrecognised(path, f"unrecognised value {value!r}")


class _Pointer(_Kind):
    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is not str:
            raise ctx.malformed(path, f"must be a JSON Pointer string, got {_json_type(value)}")
        if not _POINTER.match(value):
            raise ctx.malformed(path, f"is not a valid JSON Pointer (RFC 6901): {value!r}")
        return value


class _ListOf(_Kind):
    def __init__(self, item: _Kind, *, min_items: int = 0) -> None:
        self.item = item
        self.min_items = min_items

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
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
            except _Unrecognised as exc:
                ctx.warn(f"{ctx.event_type}: dropped {element_path}: {exc.what} at {exc.path}")
                dropped.append(index)
        for index in reversed(dropped):
            del value[index]
        return value


class _Field:
    __slots__ = ("kind", "required")

    def __init__(self, kind: _Kind, required: bool) -> None:
        self.kind = kind
        self.required = required


def _req(kind: _Kind) -> _Field:
    return _Field(kind, True)


def _opt(kind: _Kind) -> _Field:
    return _Field(kind, False)


class _Object(_Kind):
    """An object with described fields. Closed objects strip undescribed members (with a
    warning); open ones (JSON Patch operations) keep them untouched."""

    def __init__(self, fields: Mapping[str, _Field], *, open_: bool = False) -> None:
        self.fields = dict(fields)
        self.required = tuple(name for name, field in self.fields.items() if field.required)
        self.open = open_

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
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
            except _Unrecognised as exc:
                if field.required:
                    raise
                removed.append((name, f"stripped {path}/{name}: {exc.what} at {exc.path}"))
        for name, warning in removed:
            del value[name]
            if warning is not None:
                ctx.warn(f"{ctx.event_type}: {warning}")
        return value


class _Union(_Kind):
    """Objects discriminated by one key; an unknown discriminator value is unrecognised."""

    def __init__(self, key: str, what: str, members: Mapping[str, _Object]) -> None:
        self.key = key
        self.what = what
        self.members = dict(members)

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
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
            raise _Unrecognised(path, f"unrecognised {self.what} {self.key} {discriminator!r}")
        return member.check(value, path, ctx)


class _StrOrList(_Kind):
    def __init__(self, items: _ListOf) -> None:
        self.items = items

    def check(self, value: Any, path: str, ctx: _Ctx) -> Any:
        if type(value) is str:
            return value
        if type(value) is list:
            return self.items.check(value, path, ctx)
        raise ctx.malformed(
            path, f"must be a string or an array of content parts, got {_json_type(value)}"
        )


# --------------------------------------------------------------------------- the 1.0 table

_STR = _Str()
_ANY = _AnyJson()
_NONNULL = _NonNull()
_OBJ = _OpenObject()
_BOOL = _Bool()
_POINTER_KIND = _Pointer()
_STR_LIST = _ListOf(_STR)
_TIMESTAMP = _Int(-MAX_SAFE_INT, MAX_SAFE_INT)
_COUNT = _Int(0, MAX_SAFE_INT)

TEXT_ROLES: Final = ("developer", "system", "assistant", "user")
ROLES: Final = (*TEXT_ROLES, "tool", "activity", "reasoning")

_BASE = {"timestamp": _opt(_TIMESTAMP), "rawEvent": _opt(_NONNULL), "metadata": _opt(_OBJ)}
_ATTRIBUTABLE = {**_BASE, "subagentRunId": _opt(_STR)}

_SOURCE = _Union(
    "type",
    "source",
    {
        "data": _Object({"type": _req(_STR), "value": _req(_STR), "mimeType": _req(_STR)}),
        "url": _Object({"type": _req(_STR), "value": _req(_STR), "mimeType": _opt(_STR)}),
        "file": _Object(
            {
                "type": _req(_STR),
                "value": _req(_STR),
                "provider": _opt(_STR),
                "mimeType": _opt(_STR),
            }
        ),
    },
)
_MEDIA_PART = _Object(
    {"type": _req(_STR), "id": _opt(_STR), "source": _req(_SOURCE), "metadata": _opt(_NONNULL)}
)
_PART = _Union(
    "type",
    "content part",
    {
        "text": _Object(
            {"type": _req(_STR), "id": _opt(_STR), "text": _req(_STR), "metadata": _opt(_NONNULL)}
        ),
        "image": _MEDIA_PART,
        "audio": _MEDIA_PART,
        "video": _MEDIA_PART,
        "document": _MEDIA_PART,
    },
)
_CONTENT = _StrOrList(_ListOf(_PART))

_TOOL_CALL = _Object(
    {
        "id": _req(_STR),
        "type": _req(_Const("function")),
        "function": _req(_Object({"name": _req(_STR), "arguments": _req(_STR)})),
        "encryptedValue": _opt(_STR),
        "encryptedValueType": _opt(_STR),
        "metadata": _opt(_OBJ),
    }
)
_MESSAGE_BASE = {
    "id": _req(_STR),
    "role": _req(_STR),
    "encryptedValue": _opt(_STR),
    "encryptedValueType": _opt(_STR),
    "metadata": _opt(_OBJ),
    "subagentRunId": _opt(_STR),
}
_NAMED = {**_MESSAGE_BASE, "name": _opt(_STR)}
_MESSAGE = _Union(
    "role",
    "message",
    {
        "developer": _Object({**_NAMED, "content": _req(_STR)}),
        "system": _Object({**_NAMED, "content": _req(_STR)}),
        "assistant": _Object(
            {**_NAMED, "content": _opt(_STR), "toolCalls": _opt(_ListOf(_TOOL_CALL))}
        ),
        "user": _Object({**_NAMED, "content": _req(_CONTENT)}),
        "tool": _Object(
            {
                **_MESSAGE_BASE,
                "content": _req(_CONTENT),
                "toolCallId": _req(_STR),
                "error": _opt(_STR),
            }
        ),
        "activity": _Object(
            {
                "id": _req(_STR),
                "role": _req(_STR),
                "activityType": _req(_STR),
                "content": _req(_OBJ),
                "metadata": _opt(_OBJ),
                "subagentRunId": _opt(_STR),
            }
        ),
        "reasoning": _Object({**_MESSAGE_BASE, "content": _req(_STR)}),
    },
)

_PATCH_OPERANDS: dict[str, dict[str, _Kind]] = {
    "add": {"path": _POINTER_KIND, "value": _ANY},
    "remove": {"path": _POINTER_KIND},
    "replace": {"path": _POINTER_KIND, "value": _ANY},
    "move": {"from": _POINTER_KIND, "path": _POINTER_KIND},
    "copy": {"from": _POINTER_KIND, "path": _POINTER_KIND},
    "test": {"path": _POINTER_KIND, "value": _ANY},
}
# Patch operations are open objects: RFC 6902 ignores members an operation does not define.
_PATCH = _ListOf(
    _Union(
        "op",
        "patch operation",
        {
            op: _Object(
                {"op": _req(_STR), **{name: _req(kind) for name, kind in operands.items()}},
                open_=True,
            )
            for op, operands in _PATCH_OPERANDS.items()
        },
    )
)

_INTERRUPT = _Object(
    {
        "id": _req(_STR),
        "reason": _req(_STR),
        "message": _opt(_STR),
        "toolCallId": _opt(_STR),
        "responseSchema": _opt(_OBJ),
        "expiresAt": _opt(_STR),
        "metadata": _opt(_OBJ),
        "subagentRunId": _opt(_STR),
    }
)
_RUN_OUTCOME = _Union(
    "type",
    "outcome",
    {
        "success": _Object({"type": _req(_STR), "pendingToolCallIds": _opt(_STR_LIST)}),
        "interrupt": _Object(
            {"type": _req(_STR), "interrupts": _req(_ListOf(_INTERRUPT, min_items=1))}
        ),
        "cancelled": _Object({"type": _req(_STR)}),
    },
)
_SUBAGENT_OUTCOME = _Union(
    "type",
    "outcome",
    {
        "success": _Object({"type": _req(_STR)}),
        "suspended": _Object({"type": _req(_STR), "interruptIds": _opt(_STR_LIST)}),
    },
)
_USAGE = _ListOf(
    _Object(
        {
            "provider": _opt(_STR),
            "model": _opt(_STR),
            "inputTokens": _opt(_COUNT),
            "outputTokens": _opt(_COUNT),
            "totalTokens": _opt(_COUNT),
            "reasoningTokens": _opt(_COUNT),
            "cachedInputTokens": _opt(_COUNT),
            "cacheWriteInputTokens": _opt(_COUNT),
        }
    )
)
_RUN_INPUT = _Object(
    {
        "threadId": _req(_STR),
        "runId": _req(_STR),
        "protocolVersion": _opt(_STR),
        "parentRunId": _opt(_STR),
        "state": _opt(_NONNULL),
        "messages": _req(_ListOf(_MESSAGE)),
        "tools": _opt(
            _ListOf(
                _Object(
                    {
                        "name": _req(_STR),
                        "description": _req(_STR),
                        "parameters": _opt(_NONNULL),
                        "metadata": _opt(_OBJ),
                    }
                )
            )
        ),
        "context": _opt(_ListOf(_Object({"description": _req(_STR), "value": _req(_STR)}))),
        "forwardedProps": _opt(_NONNULL),
        "resume": _opt(
            _ListOf(
                _Object(
                    {
                        "interruptId": _req(_STR),
                        "status": _req(_Enum(("resolved", "cancelled"))),
                        "payload": _opt(_NONNULL),
                        "metadata": _opt(_OBJ),
                    }
                )
            )
        ),
    }
)

_TEXT_ROLE = _Enum(TEXT_ROLES, ROLES)
_FIELDS: dict[str, tuple[dict[str, _Field], dict[str, _Field]]] = {
    "TEXT_MESSAGE_START": (
        _ATTRIBUTABLE,
        {"messageId": _req(_STR), "role": _opt(_TEXT_ROLE), "name": _opt(_STR)},
    ),
    "TEXT_MESSAGE_CONTENT": (_ATTRIBUTABLE, {"messageId": _req(_STR), "delta": _req(_STR)}),
    "TEXT_MESSAGE_END": (_ATTRIBUTABLE, {"messageId": _req(_STR)}),
    "TEXT_MESSAGE_CHUNK": (
        _ATTRIBUTABLE,
        {
            "messageId": _opt(_STR),
            "role": _opt(_TEXT_ROLE),
            "delta": _opt(_STR),
            "name": _opt(_STR),
        },
    ),
    "TOOL_CALL_START": (
        _ATTRIBUTABLE,
        {"toolCallId": _req(_STR), "toolCallName": _req(_STR), "parentMessageId": _opt(_STR)},
    ),
    "TOOL_CALL_ARGS": (_ATTRIBUTABLE, {"toolCallId": _req(_STR), "delta": _req(_STR)}),
    "TOOL_CALL_END": (_ATTRIBUTABLE, {"toolCallId": _req(_STR)}),
    "TOOL_CALL_CHUNK": (
        _ATTRIBUTABLE,
        {
            "toolCallId": _opt(_STR),
            "toolCallName": _opt(_STR),
            "parentMessageId": _opt(_STR),
            "delta": _opt(_STR),
        },
    ),
    "TOOL_CALL_RESULT": (
        _ATTRIBUTABLE,
        {
            "messageId": _req(_STR),
            "toolCallId": _req(_STR),
            "content": _req(_CONTENT),
            "role": _opt(_Const("tool")),
        },
    ),
    "STATE_SNAPSHOT": (_ATTRIBUTABLE, {"snapshot": _req(_ANY)}),
    "STATE_DELTA": (_ATTRIBUTABLE, {"delta": _req(_PATCH)}),
    "MESSAGES_SNAPSHOT": (_BASE, {"messages": _req(_ListOf(_MESSAGE))}),
    "ACTIVITY_SNAPSHOT": (
        _ATTRIBUTABLE,
        {
            "messageId": _req(_STR),
            "activityType": _req(_STR),
            "content": _req(_OBJ),
            "replace": _opt(_BOOL),
        },
    ),
    "ACTIVITY_DELTA": (
        _ATTRIBUTABLE,
        {"messageId": _req(_STR), "activityType": _req(_STR), "patch": _req(_PATCH)},
    ),
    "RAW": (_ATTRIBUTABLE, {"event": _req(_ANY), "source": _opt(_STR)}),
    "CUSTOM": (_ATTRIBUTABLE, {"name": _req(_STR), "value": _req(_ANY)}),
    "RUN_STARTED": (
        _BASE,
        {
            "threadId": _req(_STR),
            "runId": _req(_STR),
            "protocolVersion": _opt(_STR),
            "parentRunId": _opt(_STR),
            "input": _opt(_RUN_INPUT),
        },
    ),
    "RUN_FINISHED": (
        _BASE,
        {
            "threadId": _req(_STR),
            "runId": _req(_STR),
            "result": _opt(_NONNULL),
            "outcome": _opt(_RUN_OUTCOME),
            "usage": _opt(_USAGE),
        },
    ),
    "RUN_ERROR": (_BASE, {"message": _req(_STR), "code": _opt(_STR), "usage": _opt(_USAGE)}),
    "STEP_STARTED": (_ATTRIBUTABLE, {"stepName": _req(_STR)}),
    "STEP_FINISHED": (_ATTRIBUTABLE, {"stepName": _req(_STR)}),
    "REASONING_START": (_ATTRIBUTABLE, {"messageId": _req(_STR)}),
    "REASONING_MESSAGE_START": (
        _ATTRIBUTABLE,
        {"messageId": _req(_STR), "role": _req(_Const("reasoning"))},
    ),
    "REASONING_MESSAGE_CONTENT": (_ATTRIBUTABLE, {"messageId": _req(_STR), "delta": _req(_STR)}),
    "REASONING_MESSAGE_END": (_ATTRIBUTABLE, {"messageId": _req(_STR)}),
    "REASONING_MESSAGE_CHUNK": (_ATTRIBUTABLE, {"messageId": _opt(_STR), "delta": _opt(_STR)}),
    "REASONING_END": (_ATTRIBUTABLE, {"messageId": _req(_STR)}),
    "REASONING_ENCRYPTED_VALUE": (
        _ATTRIBUTABLE,
        {
            "subtype": _req(_Enum(("tool-call", "message"))),
            "entityId": _req(_STR),
            "encryptedValue": _req(_STR),
            "encryptedValueType": _opt(_STR),
        },
    ),
    "SUBAGENT_STARTED": (
        _BASE,
        {
            "subagentRunId": _req(_STR),
            "name": _req(_STR),
            "description": _opt(_STR),
            "parentSubagentRunId": _opt(_STR),
            "parentToolCallId": _opt(_STR),
            "parentMessageId": _opt(_STR),
        },
    ),
    "SUBAGENT_FINISHED": (
        _BASE,
        {
            "subagentRunId": _req(_STR),
            "result": _opt(_NONNULL),
            "outcome": _opt(_SUBAGENT_OUTCOME),
        },
    ),
    "SUBAGENT_ERROR": (
        _BASE,
        {"subagentRunId": _req(_STR), "message": _req(_STR), "code": _opt(_STR)},
    ),
}

_SCHEMAS: dict[str, _Object] = {
    name: _Object({"type": _req(_STR), **base, **own}) for name, (base, own) in _FIELDS.items()
}

#: Every event type of AG-UI 1.0 (and 1.1, which adds none).
EVENT_TYPES: Final = frozenset(_SCHEMAS)
#: The compact spellings that :class:`ChunkExpander` turns into triads.
CHUNK_TYPES: Final = frozenset({"TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK"})
#: The 0.x ``THINKING_*`` events, retired in 1.0 and translated by the compatibility boundary.
RETIRED_TYPES: Final = frozenset(
    {
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    }
)


class EventEnforcer:
    """Holds each incoming event to the 1.0 schema (the "enforcement" stage).

    :meth:`enforce` returns the event (stripped of unrecognised material, in place) or
    ``None`` when the whole event must be dropped; it raises ``ProtocolError`` for a
    malformed known value.
    """

    __slots__ = ("_warn",)

    def __init__(self, warn: Warn) -> None:
        self._warn = warn

    def enforce(self, event: Event) -> Event | None:
        """Check ``event`` (a parsed JSON object with a string ``type``) against its schema."""
        event_type: str = event["type"]
        schema = _SCHEMAS.get(event_type)
        if schema is None:
            self._warn(f"dropped event of unrecognised type {event_type!r}")
            return None
        ctx = _Ctx(event_type, self._warn)
        try:
            schema.check(event, "", ctx)
        except _Unrecognised as exc:
            self._warn(
                f"dropped {event_type} event: {exc.what} at {exc.path} (a required position)"
            )
            return None
        if event_type == "RUN_FINISHED":
            _check_unique_interrupt_ids(event, ctx)
        return event


def _check_unique_interrupt_ids(event: Event, ctx: _Ctx) -> None:
    outcome = event.get("outcome")
    if outcome is None or outcome.get("type") != "interrupt":
        return
    seen: set[str] = set()
    for index, interrupt in enumerate(outcome["interrupts"]):
        if interrupt["id"] in seen:
            raise ctx.malformed(
                f"/outcome/interrupts/{index}/id",
                f"repeats interrupt id {interrupt['id']!r}; interrupt ids must be unique",
            )
        seen.add(interrupt["id"])


# --------------------------------------------------------------------------- retired shapes

_THINKING_TO_REASONING: Final = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}


class RetiredShapeTranslator:
    """The compatibility boundary: translates 0.x ``THINKING_*`` events into reasoning.

    The retired events carry no ids, so the span and the message get synthesized ones.
    Each retired type is warned about once per stream (a warning per delta would drown
    the log); ``THINKING_START.title`` has no 1.0 home and is dropped with a warning.
    """

    __slots__ = ("_message_id", "_span_id", "_warn", "_warned")

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self._warned: set[str] = set()
        self._span_id: str | None = None
        self._message_id: str | None = None

    def translate(self, event: Event) -> Event:
        """Return the 1.0 equivalent of a retired event (other events pass unchanged)."""
        retired = event.get("type")
        if type(retired) is not str or retired not in _THINKING_TO_REASONING:
            return event
        target = _THINKING_TO_REASONING[retired]
        if retired not in self._warned:
            self._warned.add(retired)
            self._warn(
                f"translated retired {retired} into {target} (THINKING_* was retired in "
                "AG-UI 1.0; the producer should emit REASONING_* events)"
            )
        if "title" in event and "title" not in self._warned:
            self._warned.add("title")
            self._warn(
                f"dropped THINKING_START title {event['title']!r}: REASONING_START has no title"
            )
        out: Event = {"type": target}
        if retired == "THINKING_START":
            self._span_id = f"thinking-{uuid.uuid4().hex}"
            out["messageId"] = self._span_id
        elif retired == "THINKING_END":
            out["messageId"] = self._span_id or f"thinking-{uuid.uuid4().hex}"
            self._span_id = None
        elif retired == "THINKING_TEXT_MESSAGE_START":
            self._message_id = f"thinking-message-{uuid.uuid4().hex}"
            out["messageId"] = self._message_id
            out["role"] = "reasoning"
        else:
            out["messageId"] = self._message_id or f"thinking-message-{uuid.uuid4().hex}"
            if retired == "THINKING_TEXT_MESSAGE_END":
                self._message_id = None
        for key, value in event.items():
            if key not in ("type", "title", "messageId", "role"):
                out[key] = value  # delta, base fields, and unknowns for enforcement to judge
        return out


# --------------------------------------------------------------------------- chunk expansion

_CLOSES_OWN_LANE: Final = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "CUSTOM",
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    }
)
_CLOSES_ALL_LANES: Final = frozenset(
    {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"}
)
_CLOSES_SUBAGENT_LANE: Final = frozenset({"SUBAGENT_FINISHED", "SUBAGENT_ERROR"})


class _ChunkKind(NamedTuple):
    id_key: str
    entity: str
    start: str
    content: str
    end: str
    opener_fields: tuple[str, ...]


_CHUNK_KINDS: Final = {
    "TEXT_MESSAGE_CHUNK": _ChunkKind(
        "messageId",
        "text message",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        ("role", "name"),
    ),
    "TOOL_CALL_CHUNK": _ChunkKind(
        "toolCallId",
        "tool call",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        ("toolCallName", "parentMessageId"),
    ),
    "REASONING_MESSAGE_CHUNK": _ChunkKind(
        "messageId",
        "reasoning message",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        (),
    ),
}


class _Pending:
    """The item one lane is assembling from chunks."""

    __slots__ = ("chunk_type", "entity_id", "fields", "owner")

    def __init__(
        self, chunk_type: str, entity_id: str, fields: dict[str, Any], owner: str | None
    ) -> None:
        self.chunk_type = chunk_type
        self.entity_id = entity_id
        self.fields = fields
        self.owner = owner


class ChunkExpander:
    """Expands ``*_CHUNK`` events into their start/content/end triads.

    One chunk stream may be open per lane, a lane being the subagent a chunk is attributed
    to (``None`` is the parent agent). The synthesized ``*_END`` is emitted when the stream
    can no longer continue: another item's chunk in the same lane, an explicit message,
    tool-call, step, state, custom or reasoning event in the lane, a run-level event
    (every lane), or the owning subagent's terminal event. ``RAW``, ``ACTIVITY_*``,
    ``REASONING_ENCRYPTED_VALUE`` and ``SUBAGENT_STARTED`` stand aside.
    """

    __slots__ = ("lanes",)

    def __init__(self) -> None:
        #: Open chunk streams by lane. Empty in the common case, which callers test first.
        self.lanes: dict[str | None, _Pending] = {}

    def expand(self, event: Event) -> list[Event]:
        """Return the events ``event`` stands for, preceded by any synthesized ``*_END``."""
        event_type = event["type"]
        kind = _CHUNK_KINDS.get(event_type)
        if kind is not None:
            return self._expand_chunk(event, kind)
        if not self.lanes:
            return [event]
        if event_type in _CLOSES_OWN_LANE:
            out = self._close(event.get("subagentRunId"))
        elif event_type in _CLOSES_ALL_LANES:
            out = []
            for owner in list(self.lanes):
                out.extend(self._close(owner))
        elif event_type in _CLOSES_SUBAGENT_LANE:
            out = self._close(event["subagentRunId"])
        else:
            out = []
        out.append(event)
        return out

    def _close(self, owner: str | None) -> list[Event]:
        pending = self.lanes.pop(owner, None)
        if pending is None:
            return []
        kind = _CHUNK_KINDS[pending.chunk_type]
        end: Event = {"type": kind.end, kind.id_key: pending.entity_id}
        if pending.owner is not None:
            end["subagentRunId"] = pending.owner
        return [end]

    def _resolve_lane(
        self, chunk_type: str, entity_id: str | None, tag: str | None, entity: str
    ) -> str | None:
        if entity_id is not None:
            for owner, pending in self.lanes.items():
                if pending.chunk_type == chunk_type and pending.entity_id == entity_id:
                    if tag is not None and tag != owner:
                        raise ProtocolError(
                            f"Cannot continue {entity} '{entity_id}': chunk subagentRunId "
                            f"'{tag}' does not match the open stream's subagent "
                            f"{_owner_name(owner)}"
                        )
                    return owner
            return tag
        if tag is not None:
            return tag
        parent = self.lanes.get(None)
        if parent is not None and parent.chunk_type == chunk_type:
            return None
        candidates = [o for o, p in self.lanes.items() if p.chunk_type == chunk_type]
        if len(candidates) > 1:
            raise ProtocolError(
                f"ambiguous {chunk_type}: it carries neither an id nor a subagentRunId, but "
                f"{len(candidates)} lanes have an open {entity}; attribute the chunk"
            )
        return candidates[0] if candidates else None

    def _expand_chunk(self, chunk: Event, kind: _ChunkKind) -> list[Event]:
        id_key, entity, opener_fields = kind.id_key, kind.entity, kind.opener_fields
        chunk_type: str = chunk["type"]
        entity_id: str | None = chunk.get(id_key)
        tag: str | None = chunk.get("subagentRunId")
        lane = self._resolve_lane(chunk_type, entity_id, tag, entity)
        out: list[Event] = []
        pending = self.lanes.get(lane)
        if (
            pending is not None
            and pending.chunk_type == chunk_type
            and (entity_id is None or entity_id == pending.entity_id)
        ):
            for name in opener_fields:
                incoming = chunk.get(name)
                established = pending.fields.get(name)
                if incoming is not None and incoming != established:
                    raise ProtocolError(
                        f"Cannot continue {entity} '{pending.entity_id}': chunk {name} "
                        f"'{incoming}' does not match the open stream's {name} "
                        + ("(absent)" if established is None else f"'{established}'")
                    )
        else:
            out.extend(self._close(lane))
            if entity_id is None:
                raise ProtocolError(f"First {chunk_type} must carry {id_key} (none is open)")
            if chunk_type == "TOOL_CALL_CHUNK" and chunk.get("toolCallName") is None:
                raise ProtocolError(
                    f"First TOOL_CALL_CHUNK must carry toolCallName (tool call '{entity_id}')"
                )
            fields = {name: chunk[name] for name in opener_fields if name in chunk}
            if chunk_type == "TEXT_MESSAGE_CHUNK":
                fields.setdefault("role", "assistant")
            elif chunk_type == "REASONING_MESSAGE_CHUNK":
                fields["role"] = "reasoning"
            pending = _Pending(chunk_type, entity_id, fields, tag)
            self.lanes[lane] = pending
            out.append(_synthesize(chunk, {"type": kind.start, id_key: entity_id, **fields}, tag))
        delta = chunk.get("delta")
        if delta is not None or (not out and "metadata" in chunk):
            # A metadata-only continuation still reaches its item, as an empty delta.
            owner = tag if tag is not None else pending.owner
            body = {"type": kind.content, id_key: pending.entity_id, "delta": delta or ""}
            out.append(_synthesize(chunk, body, owner))
        return out


def _synthesize(chunk: Event, body: Event, owner: str | None) -> Event:
    if owner is not None:
        body["subagentRunId"] = owner
    for key in ("metadata", "rawEvent"):
        if key in chunk:
            body[key] = chunk[key]
    return body


def _owner_name(owner: str | None) -> str:
    return "(the parent agent)" if owner is None else f"'{owner}'"


# --------------------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, ...] | None:
    """Parse a dotted numeric version (``"1.0"``, ``"0.0.57"``); ``None`` if it is not one."""
    parts = text.split(".")
    if not all(part.isdigit() and part.isascii() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def check_protocol_version(declared: object) -> str | None:
    """Judge a producer's ``RUN_STARTED.protocolVersion``; return a warning or ``None``.

    Absent means a pre-versioning (0.x) producer and is quiet; so is any version up to
    1.1. A newer version, or one that is not ``MAJOR.MINOR``, is served anyway with a
    warning (AG-UI versioning rules).
    """
    if declared is None:
        return None
    version = parse_version(declared) if isinstance(declared, str) else None
    known = ".".join(map(str, KNOWN_PROTOCOL_VERSION))
    if version is None or len(version) != 2:
        return (
            f"cannot interpret the producer's protocolVersion {declared!r} (expected "
            f"MAJOR.MINOR); proceeding as if it were newer than {known}"
        )
    if version > KNOWN_PROTOCOL_VERSION:
        return (
            f"producer speaks AG-UI {declared}, newer than the {known} this client knows; "
            "proceeding, and unrecognised material will be stripped"
        )
    return None


def _predates(peer_max_version: str | None, version: tuple[int, ...]) -> bool:
    if peer_max_version is None:
        return False
    parsed = parse_version(peer_max_version)
    return parsed is not None and parsed <= version


def peer_predates_subagents(peer_max_version: str | None) -> bool:
    """Whether a peer pinned to ``peer_max_version`` predates subagents (0.0.57 or older)."""
    return _predates(peer_max_version, (0, 0, 57))


def input_protocol_version(peer_max_version: str | None) -> str | None:
    """The ``protocolVersion`` to declare on the run input, or ``None`` to omit it.

    A peer known to predate the field (any 0.x pin) is not sent it.
    """
    return None if _predates(peer_max_version, (0, 99, 99)) else CLIENT_PROTOCOL_VERSION


_BINARY_KIND: Final = (("image/", "image"), ("audio/", "audio"), ("video/", "video"))


def _upgrade_binary_part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    mime = part.get("mimeType")
    kind = next((k for prefix, k in _BINARY_KIND if str(mime).startswith(prefix)), "document")
    if part.get("url") is not None:
        source: dict[str, Any] = {"type": "url", "value": part["url"]}
    elif part.get("data") is not None:
        source = {"type": "data", "value": part["data"]}
    elif part.get("id") is not None:
        source = {"type": "file", "value": part["id"]}
    else:
        return None
    if mime is not None:
        source["mimeType"] = mime
    upgraded: dict[str, Any] = {"type": kind, "source": source}
    if part.get("filename") is not None:
        upgraded["metadata"] = {"filename": part["filename"]}
    return upgraded


def downgrade_input_messages(
    messages: Iterable[Mapping[str, Any]], peer_max_version: str | None, warn: Warn
) -> list[dict[str, Any]]:
    """Prepare outgoing ``RunAgentInput.messages`` for the peer (returns new dicts).

    Always: activity messages are removed (they never travel to the producer) and legacy
    ``binary`` content parts are upgraded to typed media parts, losslessly. For a peer
    pinned to 0.0.39 or older, part lists are flattened to their text, with a warning when
    that drops parts. For a peer pinned to 0.0.57 or older, ``subagentRunId`` is removed
    (lossless: the messages flatten into one thread).
    """
    flatten = _predates(peer_max_version, (0, 0, 39))
    strip_attribution = _predates(peer_max_version, (0, 0, 57))
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "activity":
            continue
        copy = dict(message)
        content = copy.get("content")
        if isinstance(content, list):
            parts: list[Any] = []
            for part in content:
                if isinstance(part, Mapping) and part.get("type") == "binary":
                    upgraded = _upgrade_binary_part(part)
                    if upgraded is None:
                        warn(
                            f"dropped a legacy binary content part of message "
                            f"{copy.get('id')!r}: it has no url, data or id to upgrade"
                        )
                        continue
                    parts.append(upgraded)
                else:
                    parts.append(part)
            if flatten:
                texts = [
                    p["text"]
                    for p in parts
                    if isinstance(p, Mapping) and p.get("type") == "text" and "text" in p
                ]
                if len(texts) != len(parts):
                    kinds = sorted(
                        {str(p.get("type")) for p in parts if isinstance(p, Mapping)} - {"text"}
                    )
                    warn(
                        f"peer speaks AG-UI {peer_max_version}, which predates content parts: "
                        f"message {copy.get('id')!r} is flattened to text, which DROPS "
                        f"non-text parts ({', '.join(kinds)}); upgrade the peer to keep them"
                    )
                copy["content"] = "".join(texts)
            else:
                copy["content"] = parts
        if strip_attribution:
            copy.pop("subagentRunId", None)
        out.append(copy)
    return out
