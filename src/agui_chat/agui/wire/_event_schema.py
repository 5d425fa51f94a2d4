"""The AG-UI 1.0 event schema, as a table, and the stage that holds incoming events to it.

:class:`EventEnforcer` checks every event against the table (written in the kinds of
:mod:`._schema_kinds`). Unrecognised material (an unknown event type, an unknown property,
a union member or enum value this client does not know) is dropped or stripped with a
warning; a known field holding a malformed value is fatal
(:class:`~agui_chat._exceptions.ProtocolError` naming the event type and the field path).

Every event is a plain ``dict`` with the wire's camelCase keys, exactly the JSON object
after enforcement. Enforcement mutates the freshly parsed dict in place (it owns it) and
never copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from agui_chat.agui.wire._schema_kinds import (
    AnyJson,
    CheckContext,
    Const,
    Enum,
    Field,
    Int,
    JsonPointer,
    Kind,
    ListOf,
    NonNull,
    Object,
    StrOrList,
    TaggedUnion,
    Typed,
    Unrecognised,
    opt,
    req,
)

__all__ = ["EVENT_TYPES", "MAX_SAFE_INT", "ROLES", "TEXT_ROLES", "EventEnforcer"]

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The largest integer a JSON number holds exactly (the bound of ``timestamp``).
MAX_SAFE_INT: Final = 9007199254740991

# --------------------------------------------------------------------------- the 1.0 table

_STR = Typed(str, "a string")
_ANY = AnyJson()
_NONNULL = NonNull()
_OBJ = Typed(dict, "an object")  # open by key: metadata, activity content, a JSON Schema
_BOOL = Typed(bool, "a boolean")
_POINTER = JsonPointer()
_STR_LIST = ListOf(_STR)
_TIMESTAMP = Int(-MAX_SAFE_INT, MAX_SAFE_INT)
_COUNT = Int(0, MAX_SAFE_INT)

TEXT_ROLES: Final = ("developer", "system", "assistant", "user")
ROLES: Final = (*TEXT_ROLES, "tool", "activity", "reasoning")

_BASE = {"timestamp": opt(_TIMESTAMP), "rawEvent": opt(_NONNULL), "metadata": opt(_OBJ)}
_ATTRIBUTABLE = {**_BASE, "subagentRunId": opt(_STR)}

_SOURCE = TaggedUnion(
    "type",
    "source",
    {
        "data": Object({"type": req(_STR), "value": req(_STR), "mimeType": req(_STR)}),
        "url": Object({"type": req(_STR), "value": req(_STR), "mimeType": opt(_STR)}),
        "file": Object(
            {
                "type": req(_STR),
                "value": req(_STR),
                "provider": opt(_STR),
                "mimeType": opt(_STR),
            }
        ),
    },
)
_MEDIA_PART = Object(
    {"type": req(_STR), "id": opt(_STR), "source": req(_SOURCE), "metadata": opt(_NONNULL)}
)
_PART = TaggedUnion(
    "type",
    "content part",
    {
        "text": Object(
            {"type": req(_STR), "id": opt(_STR), "text": req(_STR), "metadata": opt(_NONNULL)}
        ),
        "image": _MEDIA_PART,
        "audio": _MEDIA_PART,
        "video": _MEDIA_PART,
        "document": _MEDIA_PART,
    },
)
_CONTENT = StrOrList(ListOf(_PART))

_TOOL_CALL = Object(
    {
        "id": req(_STR),
        "type": req(Const("function")),
        "function": req(Object({"name": req(_STR), "arguments": req(_STR)})),
        "encryptedValue": opt(_STR),
        "encryptedValueType": opt(_STR),
        "metadata": opt(_OBJ),
    }
)
_MESSAGE_BASE = {
    "id": req(_STR),
    "role": req(_STR),
    "encryptedValue": opt(_STR),
    "encryptedValueType": opt(_STR),
    "metadata": opt(_OBJ),
    "subagentRunId": opt(_STR),
}
_NAMED = {**_MESSAGE_BASE, "name": opt(_STR)}
_MESSAGE = TaggedUnion(
    "role",
    "message",
    {
        "developer": Object({**_NAMED, "content": req(_STR)}),
        "system": Object({**_NAMED, "content": req(_STR)}),
        "assistant": Object({**_NAMED, "content": opt(_STR), "toolCalls": opt(ListOf(_TOOL_CALL))}),
        "user": Object({**_NAMED, "content": req(_CONTENT)}),
        "tool": Object(
            {
                **_MESSAGE_BASE,
                "content": req(_CONTENT),
                "toolCallId": req(_STR),
                "error": opt(_STR),
            }
        ),
        "activity": Object(
            {
                "id": req(_STR),
                "role": req(_STR),
                "activityType": req(_STR),
                "content": req(_OBJ),
                "metadata": opt(_OBJ),
                "subagentRunId": opt(_STR),
            }
        ),
        "reasoning": Object({**_MESSAGE_BASE, "content": req(_STR)}),
    },
)

_PATCH_OPERANDS: dict[str, dict[str, Kind]] = {
    "add": {"path": _POINTER, "value": _ANY},
    "remove": {"path": _POINTER},
    "replace": {"path": _POINTER, "value": _ANY},
    "move": {"from": _POINTER, "path": _POINTER},
    "copy": {"from": _POINTER, "path": _POINTER},
    "test": {"path": _POINTER, "value": _ANY},
}
# Patch operations are open objects: RFC 6902 ignores members an operation does not define.
_PATCH = ListOf(
    TaggedUnion(
        "op",
        "patch operation",
        {
            op: Object(
                {"op": req(_STR), **{name: req(kind) for name, kind in operands.items()}},
                open_=True,
            )
            for op, operands in _PATCH_OPERANDS.items()
        },
    )
)

_INTERRUPT = Object(
    {
        "id": req(_STR),
        "reason": req(_STR),
        "message": opt(_STR),
        "toolCallId": opt(_STR),
        "responseSchema": opt(_OBJ),
        "expiresAt": opt(_STR),
        "metadata": opt(_OBJ),
        "subagentRunId": opt(_STR),
    }
)
_RUN_OUTCOME = TaggedUnion(
    "type",
    "outcome",
    {
        "success": Object({"type": req(_STR), "pendingToolCallIds": opt(_STR_LIST)}),
        "interrupt": Object(
            {"type": req(_STR), "interrupts": req(ListOf(_INTERRUPT, min_items=1))}
        ),
        "cancelled": Object({"type": req(_STR)}),
    },
)
_SUBAGENT_OUTCOME = TaggedUnion(
    "type",
    "outcome",
    {
        "success": Object({"type": req(_STR)}),
        "suspended": Object({"type": req(_STR), "interruptIds": opt(_STR_LIST)}),
    },
)
_USAGE = ListOf(
    Object(
        {
            "provider": opt(_STR),
            "model": opt(_STR),
            "inputTokens": opt(_COUNT),
            "outputTokens": opt(_COUNT),
            "totalTokens": opt(_COUNT),
            "reasoningTokens": opt(_COUNT),
            "cachedInputTokens": opt(_COUNT),
            "cacheWriteInputTokens": opt(_COUNT),
        }
    )
)
_RUN_INPUT = Object(
    {
        "threadId": req(_STR),
        "runId": req(_STR),
        "protocolVersion": opt(_STR),
        "parentRunId": opt(_STR),
        "state": opt(_NONNULL),
        "messages": req(ListOf(_MESSAGE)),
        "tools": opt(
            ListOf(
                Object(
                    {
                        "name": req(_STR),
                        "description": req(_STR),
                        "parameters": opt(_NONNULL),
                        "metadata": opt(_OBJ),
                    }
                )
            )
        ),
        "context": opt(ListOf(Object({"description": req(_STR), "value": req(_STR)}))),
        "forwardedProps": opt(_NONNULL),
        "resume": opt(
            ListOf(
                Object(
                    {
                        "interruptId": req(_STR),
                        "status": req(Enum(("resolved", "cancelled"))),
                        "payload": opt(_NONNULL),
                        "metadata": opt(_OBJ),
                    }
                )
            )
        ),
    }
)

_TEXT_ROLE = Enum(TEXT_ROLES, ROLES)
_FIELDS: dict[str, tuple[dict[str, Field], dict[str, Field]]] = {
    "TEXT_MESSAGE_START": (
        _ATTRIBUTABLE,
        {"messageId": req(_STR), "role": opt(_TEXT_ROLE), "name": opt(_STR)},
    ),
    "TEXT_MESSAGE_CONTENT": (_ATTRIBUTABLE, {"messageId": req(_STR), "delta": req(_STR)}),
    "TEXT_MESSAGE_END": (_ATTRIBUTABLE, {"messageId": req(_STR)}),
    "TEXT_MESSAGE_CHUNK": (
        _ATTRIBUTABLE,
        {
            "messageId": opt(_STR),
            "role": opt(_TEXT_ROLE),
            "delta": opt(_STR),
            "name": opt(_STR),
        },
    ),
    "TOOL_CALL_START": (
        _ATTRIBUTABLE,
        {"toolCallId": req(_STR), "toolCallName": req(_STR), "parentMessageId": opt(_STR)},
    ),
    "TOOL_CALL_ARGS": (_ATTRIBUTABLE, {"toolCallId": req(_STR), "delta": req(_STR)}),
    "TOOL_CALL_END": (_ATTRIBUTABLE, {"toolCallId": req(_STR)}),
    "TOOL_CALL_CHUNK": (
        _ATTRIBUTABLE,
        {
            "toolCallId": opt(_STR),
            "toolCallName": opt(_STR),
            "parentMessageId": opt(_STR),
            "delta": opt(_STR),
        },
    ),
    "TOOL_CALL_RESULT": (
        _ATTRIBUTABLE,
        {
            "messageId": req(_STR),
            "toolCallId": req(_STR),
            "content": req(_CONTENT),
            "role": opt(Const("tool")),
        },
    ),
    "STATE_SNAPSHOT": (_ATTRIBUTABLE, {"snapshot": req(_ANY)}),
    "STATE_DELTA": (_ATTRIBUTABLE, {"delta": req(_PATCH)}),
    "MESSAGES_SNAPSHOT": (_BASE, {"messages": req(ListOf(_MESSAGE))}),
    "ACTIVITY_SNAPSHOT": (
        _ATTRIBUTABLE,
        {
            "messageId": req(_STR),
            "activityType": req(_STR),
            "content": req(_OBJ),
            "replace": opt(_BOOL),
        },
    ),
    "ACTIVITY_DELTA": (
        _ATTRIBUTABLE,
        {"messageId": req(_STR), "activityType": req(_STR), "patch": req(_PATCH)},
    ),
    "RAW": (_ATTRIBUTABLE, {"event": req(_ANY), "source": opt(_STR)}),
    "CUSTOM": (_ATTRIBUTABLE, {"name": req(_STR), "value": req(_ANY)}),
    "RUN_STARTED": (
        _BASE,
        {
            "threadId": req(_STR),
            "runId": req(_STR),
            "protocolVersion": opt(_STR),
            "parentRunId": opt(_STR),
            "input": opt(_RUN_INPUT),
        },
    ),
    "RUN_FINISHED": (
        _BASE,
        {
            "threadId": req(_STR),
            "runId": req(_STR),
            "result": opt(_NONNULL),
            "outcome": opt(_RUN_OUTCOME),
            "usage": opt(_USAGE),
        },
    ),
    "RUN_ERROR": (_BASE, {"message": req(_STR), "code": opt(_STR), "usage": opt(_USAGE)}),
    "STEP_STARTED": (_ATTRIBUTABLE, {"stepName": req(_STR)}),
    "STEP_FINISHED": (_ATTRIBUTABLE, {"stepName": req(_STR)}),
    "REASONING_START": (_ATTRIBUTABLE, {"messageId": req(_STR)}),
    "REASONING_MESSAGE_START": (
        _ATTRIBUTABLE,
        {"messageId": req(_STR), "role": req(Const("reasoning"))},
    ),
    "REASONING_MESSAGE_CONTENT": (_ATTRIBUTABLE, {"messageId": req(_STR), "delta": req(_STR)}),
    "REASONING_MESSAGE_END": (_ATTRIBUTABLE, {"messageId": req(_STR)}),
    "REASONING_MESSAGE_CHUNK": (_ATTRIBUTABLE, {"messageId": opt(_STR), "delta": opt(_STR)}),
    "REASONING_END": (_ATTRIBUTABLE, {"messageId": req(_STR)}),
    "REASONING_ENCRYPTED_VALUE": (
        _ATTRIBUTABLE,
        {
            "subtype": req(Enum(("tool-call", "message"))),
            "entityId": req(_STR),
            "encryptedValue": req(_STR),
            "encryptedValueType": opt(_STR),
        },
    ),
    "SUBAGENT_STARTED": (
        _BASE,
        {
            "subagentRunId": req(_STR),
            "name": req(_STR),
            "description": opt(_STR),
            "parentSubagentRunId": opt(_STR),
            "parentToolCallId": opt(_STR),
            "parentMessageId": opt(_STR),
        },
    ),
    "SUBAGENT_FINISHED": (
        _BASE,
        {
            "subagentRunId": req(_STR),
            "result": opt(_NONNULL),
            "outcome": opt(_SUBAGENT_OUTCOME),
        },
    ),
    "SUBAGENT_ERROR": (
        _BASE,
        {"subagentRunId": req(_STR), "message": req(_STR), "code": opt(_STR)},
    ),
}

_SCHEMAS: dict[str, Object] = {
    name: Object({"type": req(_STR), **base, **own}) for name, (base, own) in _FIELDS.items()
}

#: Every event type of AG-UI 1.0 (and 1.1, which adds none).
EVENT_TYPES: Final = frozenset(_SCHEMAS)


# --------------------------------------------------------------------------- enforcement


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
        ctx = CheckContext(event_type, self._warn)
        try:
            schema.check(event, "", ctx)
        except Unrecognised as exc:
            self._warn(
                f"dropped {event_type} event: {exc.what} at {exc.path} (a required position)"
            )
            return None
        if event_type == "RUN_FINISHED":
            _check_unique_interrupt_ids(event, ctx)
        return event


def _check_unique_interrupt_ids(event: Event, ctx: CheckContext) -> None:
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
