"""Our messages, tools and options as an AG-UI ``RunAgentInput`` (wire camelCase dicts),
and the ``additional_properties`` keys that carry AG-UI data on our types.

Each ``ChatMessage`` becomes zero or more wire messages: a function result its own ``tool``
message, reasoning its own ``reasoning`` message, tool calls (and those held by approval
requests) the assistant's ``toolCalls``; human-in-the-loop requests and answers are not
messages on the wire (answers travel in ``resume``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..._contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from ..._hitl_contents import ToolApprovalRequestContent
from ..._messages import ChatMessage
from ..._options import ChatOptions
from ..._response_format import ChatResponseFormat
from ..._schema import dump_json, to_jsonable
from ..._structured import format_from_wire, format_to_wire, response_format_of
from ..._tools import AIFunctionDeclaration

__all__ = [
    "CONTENT_PARTS_KEY",
    "CONTEXT_KEY",
    "ENCRYPTED_FOR_KEY",
    "FORWARDED_PROPS_KEY",
    "PARENT_RUN_ID_KEY",
    "RUN_ID_KEY",
    "STATE_KEY",
    "SUBAGENT_KEY",
    "THREAD_ID_KEY",
    "build_run_input",
    "client_tool_names",
    "forwarded_response_format",
    "media_part_kind",
    "messages_to_wire",
    "state_of",
    "thread_id_of",
    "tools_to_wire",
]

#: ``additional_properties`` keys this adapter reads and writes.
THREAD_ID_KEY = "agui_thread_id"  # on messages (stamped) and on ChatOptions (explicit thread)
RUN_ID_KEY = "agui_run_id"  # on messages: the run that produced them
STATE_KEY = "agui_state"  # on messages/updates (the state after them) and ChatOptions (explicit)
CONTEXT_KEY = "agui_context"  # on ChatOptions: RunAgentInput.context
FORWARDED_PROPS_KEY = "agui_forwarded_props"  # on ChatOptions: RunAgentInput.forwardedProps
PARENT_RUN_ID_KEY = "agui_parent_run_id"  # on ChatOptions: RunAgentInput.parentRunId
#: On a TextReasoningContent: the message or tool call an encrypted value belongs to.
ENCRYPTED_FOR_KEY = "agui_encrypted_for"
#: On a FunctionResultContent: the result is a list of AG-UI content parts.
CONTENT_PARTS_KEY = "agui_content_parts"
#: On messages: the subagent invocation that produced them (AG-UI ``subagentRunId``).
SUBAGENT_KEY = "agui_subagent_run_id"
#: In a question interrupt's ``metadata``: what an agui_chat server says of the question
#: (``toolCallId``, ``key``) where the spec has no field for it.
QUESTION_METADATA_KEY = "agui_chat"

Wire = dict[str, Any]

_PLAIN_ROLES = ("system", "developer")


def build_run_input(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    thread_id: str,
    run_id: str,
    state: Any,
    resume: list[Wire] | None = None,
    protocol_version: str | None = "1.0",
    prepare_messages: Callable[[Iterable[Mapping[str, Any]]], list[Wire]] | None = None,
) -> Wire:
    """The ``RunAgentInput`` for one run.

    ``state``, ``tools``, ``context`` and ``forwardedProps`` are always present (0.x servers
    require them); ``protocolVersion`` is omitted when ``None``; ``resume`` only when given.
    ``prepare_messages`` is the pipeline's outgoing shim (activity removal, peer eras).
    """
    extra = options.additional_properties if options is not None else {}
    wire_messages = messages_to_wire(messages)
    if options is not None and options.instructions:
        instructions_id = _stable_id("instructions", options.instructions)
        wire_messages.insert(
            0, {"id": instructions_id, "role": "system", "content": options.instructions}
        )
    if prepare_messages is not None:
        wire_messages = prepare_messages(wire_messages)
    forwarded = extra.get(FORWARDED_PROPS_KEY)
    body: Wire = {"threadId": thread_id, "runId": run_id}
    if extra.get(PARENT_RUN_ID_KEY) is not None:
        body["parentRunId"] = extra[PARENT_RUN_ID_KEY]
    body["state"] = to_jsonable(state)
    body["messages"] = wire_messages
    body["tools"] = tools_to_wire(options.tools if options is not None else None)
    body["context"] = [
        {"description": str(item["description"]), "value": dump_json(item["value"])}
        for item in extra.get(CONTEXT_KEY) or ()
    ]
    body["forwardedProps"] = {} if forwarded is None else to_jsonable(forwarded)
    response_format = response_format_of(options)
    if response_format is not None and isinstance(body["forwardedProps"], dict):
        # Structured output: the server passes it to its model (docs/structured.md).
        body["forwardedProps"].setdefault("response_format", format_to_wire(response_format))
    if protocol_version is not None:
        body["protocolVersion"] = protocol_version
    if resume:
        body["resume"] = resume
    return body


# -------------------------------------------------------------------- history lookups


def forwarded_response_format(forwarded_props: Any) -> ChatResponseFormat | None:
    """The ``response_format`` a client forwarded in ``forwardedProps`` (a Chat Completions
    ``response_format`` object), or ``None``."""
    if not isinstance(forwarded_props, Mapping):
        return None
    return format_from_wire(forwarded_props.get("response_format"))


def thread_id_of(history: Sequence[ChatMessage]) -> str | None:
    """The AG-UI thread of a conversation: the last message stamped with one."""
    for message in reversed(history):
        props = message.additional_properties
        if props:
            thread_id = props.get(THREAD_ID_KEY)
            if isinstance(thread_id, str) and thread_id:
                return thread_id
    return None


def state_of(history: Sequence[ChatMessage]) -> tuple[bool, Any]:
    """``(found, state)``: the state stamped on the last message that carries one."""
    for message in reversed(history):
        props = message.additional_properties
        if props and STATE_KEY in props:
            return True, props[STATE_KEY]
    return False, None


def client_tool_names(options: ChatOptions | None) -> frozenset[str]:
    """Names of the tools the caller runs itself (every function declaration it passes)."""
    if options is None or not options.tools:
        return frozenset()
    return frozenset(t.name for t in options.tools if isinstance(t, AIFunctionDeclaration))


def tools_to_wire(tools: Iterable[Any] | None) -> list[Wire]:
    """AG-UI ``Tool``s for the caller's function declarations; other tools are not sent."""
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "parameters": to_jsonable(tool.parameters),
        }
        for tool in tools or ()
        if isinstance(tool, AIFunctionDeclaration)
    ]


# -------------------------------------------------------------------- messages


def messages_to_wire(messages: Sequence[ChatMessage]) -> list[Wire]:
    """The conversation as AG-UI messages, in order.

    A tool call is sent once (the first time it appears); messages with the same id are
    joined, as AG-UI keys messages by id; encrypted reasoning values are attached to the
    message or tool call they name.
    """
    builder = _WireBuilder()
    for index, message in enumerate(messages):
        builder.add(index, message)
    return builder.finish()


class _WireBuilder:
    """Accumulates wire messages; see :func:`messages_to_wire`."""

    def __init__(self) -> None:
        self.out: list[Wire] = []
        self.by_id: dict[str, Wire] = {}
        self.sent_calls: set[str] = set()
        self.calls: dict[str, Wire] = {}
        self.encrypted: list[tuple[str, str, str]] = []
        self.owner: str | None = None

    def add(self, index: int, message: ChatMessage) -> None:
        role = message.role.value.lower()
        if role == "activity":
            return
        owner = (message.additional_properties or {}).get(SUBAGENT_KEY)
        self.owner = owner if isinstance(owner, str) and owner else None
        message_id = message.message_id or _stable_id(str(index), _fingerprint(message))
        results = [c for c in message.contents if isinstance(c, FunctionResultContent)]
        self._collect_encrypted(message.contents)
        if role == "assistant" or role == "reasoning":
            self._reasoning(message, message_id, only=role == "reasoning")
        if role == "assistant":
            self._assistant(message, message_id)
        elif role == "user":
            self._user(message, message_id)
        elif role in _PLAIN_ROLES:
            self._plain(message, message_id, role)
        elif role not in ("tool", "reasoning"):
            # A role AG-UI does not know: its text is still part of the conversation.
            self._plain(message, message_id, "user")
        for result in results:
            result_id = message_id if len(results) == 1 else f"{message_id}-{result.call_id}"
            self._emit(_tool_message(result, result_id))

    def finish(self) -> list[Wire]:
        for subtype, entity_id, value in self.encrypted:
            target = self.calls.get(entity_id) if subtype == "tool-call" else None
            if subtype == "message":
                target = self.by_id.get(entity_id)
            if target is not None:
                target["encryptedValue"] = value
        return self.out

    # ---------------------------------------------------------------- per role

    def _user(self, message: ChatMessage, message_id: str) -> None:
        parts = [p for p in (_user_part(c) for c in message.contents) if p is not None]
        if not parts:
            return
        wire: Wire = {"id": message_id, "role": "user"}
        if all(p["type"] == "text" for p in parts):
            wire["content"] = "".join(p["text"] for p in parts)
        else:
            wire["content"] = parts
        self._emit(_named(wire, message))

    def _plain(self, message: ChatMessage, message_id: str, role: str) -> None:
        if not any(isinstance(c, TextContent) for c in message.contents):
            return
        self._emit(_named({"id": message_id, "role": role, "content": message.text}, message))

    def _assistant(self, message: ChatMessage, message_id: str) -> None:
        calls: list[Wire] = []
        for content in message.contents:
            call = content.tool_call if isinstance(content, ToolApprovalRequestContent) else content
            if isinstance(call, FunctionCallContent) and call.call_id not in self.sent_calls:
                self.sent_calls.add(call.call_id)
                wire_call = _tool_call(call)
                self.calls[call.call_id] = wire_call
                calls.append(wire_call)
        has_text = any(isinstance(c, TextContent) for c in message.contents)
        if not calls and not has_text:
            return
        wire: Wire = {"id": message_id, "role": "assistant"}
        if has_text:
            wire["content"] = message.text
        if calls:
            wire["toolCalls"] = calls
        self._emit(_named(wire, message))

    def _reasoning(self, message: ChatMessage, message_id: str, *, only: bool) -> None:
        pieces = [
            c
            for c in message.contents
            if isinstance(c, TextReasoningContent)
            and not (c.additional_properties and ENCRYPTED_FOR_KEY in c.additional_properties)
        ]
        if not pieces:
            return
        wire_id = message_id if only or _only_reasoning(message) else f"{message_id}-reasoning"
        wire: Wire = {
            "id": wire_id,
            "role": "reasoning",
            "content": "".join(p.text for p in pieces),
        }
        encrypted = [p.protected_data for p in pieces if p.protected_data is not None]
        if encrypted:
            wire["encryptedValue"] = encrypted[-1]
        self._emit(wire)

    def _collect_encrypted(self, contents: Sequence[AIContent]) -> None:
        for c in contents:
            if not isinstance(c, TextReasoningContent) or c.protected_data is None:
                continue
            target = (c.additional_properties or {}).get(ENCRYPTED_FOR_KEY)
            if isinstance(target, Mapping):
                subtype, entity_id = target.get("subtype"), target.get("entityId")
                if isinstance(subtype, str) and isinstance(entity_id, str):
                    self.encrypted.append((subtype, entity_id, c.protected_data))

    # ---------------------------------------------------------------- joining by id

    def _emit(self, wire: Wire) -> None:
        if self.owner is not None:
            wire["subagentRunId"] = self.owner
        held = self.by_id.get(wire["id"])
        if held is None:
            self.by_id[wire["id"]] = wire
            self.out.append(wire)
        elif held["role"] == wire["role"]:
            _join(held, wire)
        else:
            # The same id for a different role (a hand-built history): keep both, told apart.
            wire["id"] = f"{wire['id']}-{wire['role']}"
            self._emit(wire)


def _join(held: Wire, wire: Wire) -> None:
    """Fold a later piece of a message into the piece already sent with that id."""
    if wire["role"] == "tool":
        held.clear()
        held.update(wire)  # a result minted again: the newest wins
        return
    content = wire.get("content")
    if isinstance(content, str) and isinstance(held.get("content"), str):
        held["content"] += content
    elif content is not None and "content" not in held:
        held["content"] = content
    if wire.get("toolCalls"):
        held.setdefault("toolCalls", []).extend(wire["toolCalls"])
    if "encryptedValue" in wire:
        held["encryptedValue"] = wire["encryptedValue"]


def _named(wire: Wire, message: ChatMessage) -> Wire:
    if message.author_name:
        wire["name"] = message.author_name
    return wire


def _only_reasoning(message: ChatMessage) -> bool:
    return all(isinstance(c, TextReasoningContent) or not _is_sent(c) for c in message.contents)


def _is_sent(content: AIContent) -> bool:
    return isinstance(content, (TextContent, FunctionCallContent, ToolApprovalRequestContent))


def _tool_call(call: FunctionCallContent) -> Wire:
    if call.arguments is None and call.raw_arguments is not None:
        arguments = call.raw_arguments
    else:
        arguments = dump_json(call.arguments or {})
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def _tool_message(result: FunctionResultContent, message_id: str) -> Wire:
    value = result.result
    props = result.additional_properties or {}
    if props.get(CONTENT_PARTS_KEY) and isinstance(value, list):
        content: Any = to_jsonable(value)
    elif value is None:
        content = ""
    else:
        content = dump_json(value)
    wire: Wire = {
        "id": message_id,
        "role": "tool",
        "toolCallId": result.call_id,
        "content": content,
    }
    if result.exception is not None:
        wire["error"] = str(result.exception) or type(result.exception).__name__
    return wire


def _user_part(content: AIContent) -> Wire | None:
    if isinstance(content, TextContent):
        return {"type": "text", "text": content.text}
    if isinstance(content, DataContent):
        source: Wire = {
            "type": "data",
            "value": content.base64_data,
            "mimeType": content.media_type,
        }
        return _media_part(content.media_type, source, content.name)
    if isinstance(content, UriContent):
        source = {"type": "url", "value": content.uri, "mimeType": content.media_type}
        return _media_part(content.media_type, source, None)
    return None


def media_part_kind(media_type: str | None) -> str:
    """The AG-UI content part for a media type: image, audio, video, else document."""
    lowered = (media_type or "").lower()
    for prefix in ("image/", "audio/", "video/"):
        if lowered.startswith(prefix):
            return prefix[:-1]
    return "document"


def _media_part(media_type: str, source: Wire, name: str | None) -> Wire:
    part: Wire = {"type": media_part_kind(media_type), "source": source}
    if name:
        part["metadata"] = {"filename": name}
    return part


# -------------------------------------------------------------------- ids


def _fingerprint(message: ChatMessage) -> str:
    return json.dumps(message.to_dict(), sort_keys=True, default=str)


def _stable_id(*parts: str) -> str:
    """An id that is the same every time the same message is sent at the same place."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"msg_{digest[:24]}"
