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
)

__all__ = ["EVENT_TYPES", "MAX_SAFE_INT", "ROLES", "TEXT_ROLES", "EventEnforcer"]

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The largest integer a JSON number holds exactly (the bound of ``timestamp``).
MAX_SAFE_INT: Final = 9007199254740991

# --------------------------------------------------------------------------- the 1.0 table

TEXT_ROLES: Final = ("developer", "system", "assistant", "user")
ROLES: Final = (*TEXT_ROLES, "tool", "activity", "reasoning")

#: The kinds a field spec names; each composite kind below is added to it once defined.
_KIND: dict[str, Kind] = {
    "str": Typed(str, "a string"),
    "any": AnyJson(),
    "json": NonNull(),
    "obj": Typed(dict, "an object"),  # open by key: metadata, activity content, a JSON Schema
    "bool": Typed(bool, "a boolean"),
    "ts": Int(-MAX_SAFE_INT, MAX_SAFE_INT),
    "count": Int(0, MAX_SAFE_INT),
    "function": Const("function"),
    "tool": Const("tool"),
    "reasoning": Const("reasoning"),
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
        fields[name.rstrip("?")] = Field(_KIND[kind or "str"], not name.endswith("?"))
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
