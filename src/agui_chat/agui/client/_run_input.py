"""Our messages, tools and options as an AG-UI ``RunAgentInput``: a function result or
reasoning becomes its own wire message, tool calls the assistant's ``toolCalls``; requests
and answers are not messages on the wire (answers travel in ``resume``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
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
from ..._schema import dump_json, to_jsonable
from ..._structured import format_to_wire, response_format_of
from ..._tools import AIFunctionDeclaration
from ..wire._compat import downgrade_input_messages, input_protocol_version
from ..wire._messages import (
    CONTENT_PARTS_KEY,
    ENCRYPTED_FOR_KEY,
    SUBAGENT_KEY,
    Wire,
    media_part,
)

_CONTEXT_KEY = "agui_context"  # ChatOptions: RunAgentInput.context
_FORWARDED_PROPS_KEY = "agui_forwarded_props"  # ChatOptions: RunAgentInput.forwardedProps
_PARENT_RUN_ID_KEY = "agui_parent_run_id"  # ChatOptions: RunAgentInput.parentRunId

_TEXT_ROLES = ("assistant", "system", "developer")
#: The contents sent as an assistant message, beside its reasoning.
_SENT = (TextContent, FunctionCallContent, ToolApprovalRequestContent)


def build_run_input(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    thread_id: str,
    run_id: str,
    state: Any,
    resume: list[Wire] | None,
    peer_max_version: str | None,
    warn: Callable[[str], None],
) -> Wire:
    """The ``RunAgentInput`` for one run: ``state``, ``tools`` (the function declarations),
    ``context`` and ``forwardedProps`` always (0.x servers require them), ``resume`` if
    given; ``messages`` and ``protocolVersion`` as a peer pinned to ``peer_max_version``
    reads them (``warn`` hears what that drops)."""
    options = options or ChatOptions()
    extra = options.additional_properties
    wire_messages = _WireBuilder().build(messages)
    if options.instructions:
        instructions_id = _stable_id("instructions", options.instructions)
        wire_messages.insert(
            0, {"id": instructions_id, "role": "system", "content": options.instructions}
        )
    forwarded = extra.get(_FORWARDED_PROPS_KEY)
    body: Wire = {"threadId": thread_id, "runId": run_id}
    if extra.get(_PARENT_RUN_ID_KEY) is not None:
        body["parentRunId"] = extra[_PARENT_RUN_ID_KEY]
    body["state"] = to_jsonable(state)
    body["messages"] = downgrade_input_messages(wire_messages, peer_max_version, warn)
    body["tools"] = [
        {"name": t.name, "description": t.description, "parameters": to_jsonable(t.parameters)}
        for t in options.tools or ()
        if isinstance(t, AIFunctionDeclaration)
    ]
    body["context"] = [
        {"description": str(item["description"]), "value": dump_json(item["value"])}
        for item in extra.get(_CONTEXT_KEY) or ()
    ]
    body["forwardedProps"] = {} if forwarded is None else to_jsonable(forwarded)
    response_format = response_format_of(options)
    if response_format is not None and isinstance(body["forwardedProps"], dict):
        # Structured output: the server passes it to its model (docs/structured.md).
        body["forwardedProps"].setdefault("response_format", format_to_wire(response_format))
    protocol_version = input_protocol_version(peer_max_version)
    if protocol_version is not None:
        body["protocolVersion"] = protocol_version
    if resume:
        body["resume"] = resume
    return body


def client_tool_names(options: ChatOptions | None) -> frozenset[str]:
    """Names of the tools the caller runs itself (every function declaration it passes)."""
    tools = options.tools if options is not None else None
    return frozenset(t.name for t in tools or () if isinstance(t, AIFunctionDeclaration))


# -------------------------------------------------------------------- messages


class _WireBuilder:
    """The conversation as AG-UI messages, in order. A tool call is sent once; messages
    with the same id are joined (AG-UI keys messages by id); encrypted reasoning values are
    attached to the message or tool call they name."""

    def __init__(self) -> None:
        self.out: list[Wire] = []
        self.by_id: dict[str, Wire] = {}
        self.calls: dict[str, Wire] = {}  # every tool call sent, by id
        self.encrypted: list[tuple[str, str, str]] = []
        self.owner: str | None = None

    def add(self, index: int, message: ChatMessage) -> None:
        role = message.role.value.lower()
        if role == "activity":
            return
        owner = (message.additional_properties or {}).get(SUBAGENT_KEY)
        self.owner = owner if isinstance(owner, str) and owner else None
        message_id = message.message_id or _stable_id(
            str(index), json.dumps(message.to_dict(), sort_keys=True, default=str)
        )
        results = [c for c in message.contents if isinstance(c, FunctionResultContent)]
        self._collect_encrypted(message.contents)
        if role == "assistant" or role == "reasoning":
            self._reasoning(message, message_id, only=role == "reasoning")
        if role == "user":
            self._user(message, message_id)
        elif role not in ("tool", "reasoning"):
            # A role AG-UI does not know goes as user text: it is still part of the talk.
            self._text(message, message_id, role if role in _TEXT_ROLES else "user")
        for result in results:
            result_id = message_id if len(results) == 1 else f"{message_id}-{result.call_id}"
            self._emit(_tool_message(result, result_id))

    def build(self, messages: Sequence[ChatMessage]) -> list[Wire]:
        for index, message in enumerate(messages):
            self.add(index, message)
        for subtype, entity_id, value in self.encrypted:
            targets = {"tool-call": self.calls, "message": self.by_id}.get(subtype, {})
            if entity_id in targets:
                targets[entity_id]["encryptedValue"] = value
        return self.out

    # ---------------------------------------------------------------- per role

    def _user(self, message: ChatMessage, message_id: str) -> None:
        parts = [p for p in (_user_part(c) for c in message.contents) if p is not None]
        if not parts:
            return
        wire: Wire = {"id": message_id, "role": "user", "content": parts}
        if all(p["type"] == "text" for p in parts):
            wire["content"] = "".join(p["text"] for p in parts)
        self._emit(_named(wire, message))

    def _text(self, message: ChatMessage, message_id: str, role: str) -> None:
        """Text, and for an assistant the tool calls (approval requests' too) not sent yet."""
        calls: list[Wire] = []
        for content in message.contents if role == "assistant" else ():
            call = content.tool_call if isinstance(content, ToolApprovalRequestContent) else content
            if isinstance(call, FunctionCallContent) and call.call_id not in self.calls:
                self.calls[call.call_id] = _tool_call(call)
                calls.append(self.calls[call.call_id])
        has_text = any(isinstance(c, TextContent) for c in message.contents)
        if not calls and not has_text:
            return
        wire: Wire = {"id": message_id, "role": role}
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
        if not only and any(isinstance(c, _SENT) for c in message.contents):
            message_id = f"{message_id}-reasoning"
        content = "".join(p.text for p in pieces)
        wire: Wire = {"id": message_id, "role": "reasoning", "content": content}
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


def _tool_call(call: FunctionCallContent) -> Wire:
    function = {"name": call.name, "arguments": call.arguments_json()}
    return {"id": call.call_id, "type": "function", "function": function}


def _tool_message(result: FunctionResultContent, message_id: str) -> Wire:
    value = result.result
    if (result.additional_properties or {}).get(CONTENT_PARTS_KEY) and isinstance(value, list):
        content: Any = to_jsonable(value)
    else:
        content = "" if value is None else dump_json(value)
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
        source = {"type": "data", "value": content.base64_data, "mimeType": content.media_type}
        return media_part(content.media_type, source, content.name)
    if isinstance(content, UriContent):
        source = {"type": "url", "value": content.uri, "mimeType": content.media_type}
        return media_part(content.media_type, source, None)
    return None


def _stable_id(*parts: str) -> str:
    """An id that is the same every time the same message is sent at the same place."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"msg_{digest[:24]}"
