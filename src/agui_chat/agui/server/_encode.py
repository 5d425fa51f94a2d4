"""Streamed updates → AG-UI 1.0 events → SSE bytes, for one run: :class:`RunEncoder` keeps
the wire well formed (which text, reasoning and tool calls are open); each event is one
``data:`` line of compact JSON, text deltas (the hot path) written from a prepared prefix."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any

from ag_ui.core import RunAgentInput

from ..._contents import (
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from ..._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
    call_id_of,
)
from ..._messages import ChatMessage
from ..._responses import ChatResponseUpdate
from ..._role_and_finish_reason import ChatFinishReason
from ..._schema import dump_json, to_jsonable
from ..wire._event_schema import TEXT_ROLES
from ._interrupts import InterruptIssuer

#: The protocol version this server speaks, announced on ``RUN_STARTED``.
PROTOCOL_VERSION = "1.0"

#: Event types an update's ``raw_representation`` may carry to have them sent as they are.
PASS_THROUGH_TYPES = frozenset(
    {
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "CUSTOM",
        "RAW",
        "STEP_STARTED",
        "STEP_FINISHED",
        "ACTIVITY_SNAPSHOT",
        "ACTIVITY_DELTA",
    }
)

_USAGE_FIELDS = (
    ("input_token_count", "inputTokens"),
    ("output_token_count", "outputTokens"),
    ("total_token_count", "totalTokens"),
    ("reasoning_token_count", "reasoningTokens"),
    ("cached_input_token_count", "cachedInputTokens"),
)


def frame(event: Mapping[str, Any]) -> str:
    """One SSE frame for an event."""
    body = json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=to_jsonable)
    return f"data: {body}\n\n"


def event_to_wire(event: Any) -> dict[str, Any]:
    """An ``ag_ui.core`` event as its wire dict: unset optional fields left out, a null
    that was given (``CUSTOM.value``, a patch ``value``) kept."""
    dump = event.model_dump
    return {
        **dump(mode="json", by_alias=True, exclude_none=True),
        **dump(mode="json", by_alias=True, include=event.model_fields_set),
    }


def _new_id() -> str:
    return uuid.uuid4().hex


def _delta_prefix(event_type: str, message_id: str) -> str:
    """A content event up to its ``delta`` value (``"}\n\n"`` closes it after)."""
    return f'data: {{"type":"{event_type}","messageId":{encode_basestring(message_id)},"delta":'


class RunEncoder:
    """Encodes one run: ``start()``, then ``update()`` per streamed update (``event()`` for
    events a tool emits), then ``finish()`` or ``error()``; each returns the bytes to write.

    The calls of ``client_tools`` are listed in ``pendingToolCallIds`` (left out, and a
    cancelled outcome with it, under ``pre_1_0``: rule ``strict-pre-1.0-client``); ``results`` keeps
    each ``TOOL_CALL_RESULT`` content and ``calls`` every call seen, by call id;
    ``known_calls`` are calls the client holds (on a resume), not emitted again.
    """

    def __init__(
        self,
        run_input: RunAgentInput,
        issuer: InterruptIssuer,
        *,
        client_tools: frozenset[str],
        pre_1_0: bool,
    ) -> None:
        self.ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
        self.parent_run_id = run_input.parent_run_id
        self.issuer = issuer  # also seals each result (its messageId)
        self.pre_1_0 = pre_1_0  # rule strict-pre-1.0-client
        self.known_calls: frozenset[str] = frozenset()
        self.client_tools = client_tools
        self.calls: dict[str, FunctionCallContent] = {}
        self.answers: dict[str, list[list[Any]]] = {}  # a resume's, by call id (for the issuer)
        self.results: dict[str, str] = {}
        self._out: list[str] = []  # frames not yet returned
        self._text_id: str | None = None
        self._text_prefix = ""
        self._reasoning_id: str | None = None
        self._reasoning_prefix = ""
        self._last_message_id: str | None = None
        self._started: dict[str, None] = {}  # the calls whose TOOL_CALL_START is out, in order
        self._args_sent: set[str] = set()
        self._ended: set[str] = set()
        self._held: dict[str, list[str]] = {}
        self._pending_client_calls: list[str] = []
        self._requests: list[InputRequestContent] = []
        self._usage: dict[str | None, dict[str, int]] = {}
        self._model_id: str | None = None
        self._cancelled = False
        #: How the run ended and its ``RUN_ERROR`` code (for its trace span).
        self.outcome: str | None = None
        self.error_code: str | None = None

    def start(self) -> bytes:
        event = {"type": "RUN_STARTED", **self.ids, "protocolVersion": PROTOCOL_VERSION}
        if self.parent_run_id is not None:
            event["parentRunId"] = self.parent_run_id
        return self.event(event)

    def finish(self) -> bytes:
        """Close what is open and end the run: interrupted on the open requests (not those
        whose call got a result), cancelled, or a success listing the client's calls."""
        self._close_all()
        requests = [r for r in self._requests if call_id_of(r) not in self.results]
        outcome: dict[str, Any]
        if requests:
            interrupts = self.issuer.issue(requests, self.calls, self.answers)
            outcome = {"type": "interrupt", "interrupts": interrupts}
        elif self._cancelled:
            outcome = {"type": "cancelled"}
        else:
            outcome = {"type": "success"}
            pending = [c for c in self._pending_client_calls if c not in self.results]
            if pending and not self.pre_1_0:
                outcome["pendingToolCallIds"] = pending
        self.outcome = outcome["type"]
        event: dict[str, Any] = {"type": "RUN_FINISHED", **self.ids, "outcome": outcome}
        if self.pre_1_0 and outcome["type"] == "cancelled":
            del event["outcome"]  # a strict pre-1.0 schema knows success and interrupt only
        if self._usage:
            event["usage"] = [
                {**({"model": model} if model else {}), **counts}
                for model, counts in self._usage.items()
            ]
        return self.event(event)

    def error(self, message: str, code: str, retry_after: int | None = None) -> bytes:
        """``RUN_ERROR`` (it abandons whatever is open, and the frames of a failed update),
        with ``retryAfter`` (seconds) when the same input may be sent again after a wait."""
        self.outcome, self.error_code = "error", code
        self._out.clear()
        event: dict[str, Any] = {"type": "RUN_ERROR", "message": message, "code": code}
        if retry_after is not None:
            event["retryAfter"] = retry_after
        return self.event(event)

    def event(self, event: Mapping[str, Any]) -> bytes:
        """An event a tool or middleware emits, sent as it is."""
        self._emit(event)
        return self._flush()

    def replayed_result(self, call_id: str, content: str) -> bytes:
        """The ``TOOL_CALL_RESULT`` kept from an earlier run of the same approved call."""
        self._result(call_id, content)
        return self._flush()

    def update(self, update: ChatResponseUpdate) -> bytes:
        for content in update.contents:
            kind = content.__class__
            if kind is TextContent:
                self._text(update, content.text)  # type: ignore[attr-defined]
            elif kind is FunctionCallUpdateContent:
                self._call_update(update, content)  # type: ignore[arg-type]
            elif isinstance(content, FunctionCallContent):
                if content.call_id not in self.known_calls:
                    self._call(update, content)
            elif isinstance(content, FunctionResultContent):
                result = content.result  # text as is, anything else as JSON
                self._result(
                    content.call_id, result if isinstance(result, str) else dump_json(result)
                )
            elif isinstance(content, TextReasoningContent):
                self._reasoning(content)
            elif isinstance(content, ToolApprovalRequestContent) and isinstance(
                content.tool_call, FunctionCallContent
            ):  # not a call the service runs itself
                self._call(update, content.tool_call)
                self._requests.append(content)
            elif isinstance(content, InterruptRequestContent):
                self._requests.append(content)
            elif isinstance(content, UsageContent):
                self._add_usage(update.model_id or self._model_id, content)
        if update.model_id is not None:
            self._model_id = update.model_id
        raw = update.raw_representation
        if isinstance(raw, Mapping) or (hasattr(raw, "model_dump") and hasattr(raw, "type")):
            event = raw if isinstance(raw, Mapping) else event_to_wire(raw)
            if event.get("type") in PASS_THROUGH_TYPES:
                self._emit(event)
        if update.finish_reason is not None:
            self._cancelled = update.finish_reason == ChatFinishReason.CANCELLED
        return self._flush()

    def _emit(self, event: Mapping[str, Any]) -> None:
        self._out.append(frame(event))

    def _flush(self) -> bytes:
        # A lone surrogate (invalid text from a model) must not break the whole stream.
        data = "".join(self._out).encode("utf-8", "replace")
        self._out.clear()
        return data

    def _text(self, update: ChatResponseUpdate, text: str) -> None:
        if not text:
            return
        message_id = update.message_id
        if self._text_id is None or (message_id is not None and message_id != self._text_id):
            self._close_all(calls=False)  # calls still streaming arguments stay open
            self._text_id = self._last_message_id = message_id = message_id or _new_id()
            role = update.role.value.lower() if update.role is not None else "assistant"
            event: dict[str, Any] = {
                "type": "TEXT_MESSAGE_START",
                "messageId": message_id,
                "role": role if role in TEXT_ROLES else "assistant",
            }
            if update.author_name:
                event["name"] = update.author_name
            self._emit(event)
            self._text_prefix = _delta_prefix("TEXT_MESSAGE_CONTENT", message_id)
        self._out.append(self._text_prefix + encode_basestring(text) + "}\n\n")

    def _reasoning(self, content: TextReasoningContent) -> None:
        if self._reasoning_id is None:
            self._close_all(calls=False)
            self._reasoning_id = rid = _new_id()
            self._emit({"type": "REASONING_START", "messageId": rid})
            self._emit({"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"})
            self._reasoning_prefix = _delta_prefix("REASONING_MESSAGE_CONTENT", rid)
        if content.text:
            self._out.append(self._reasoning_prefix + encode_basestring(content.text) + "}\n\n")
        if content.protected_data is not None:
            event = {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": self._reasoning_id,
                "encryptedValue": content.protected_data,
            }
            self._emit(event)

    def _start_call(self, update: ChatResponseUpdate, call_id: str, name: str) -> None:
        self._close_all(calls=False)
        event: dict[str, Any] = {
            "type": "TOOL_CALL_START",
            "toolCallId": call_id,
            "toolCallName": name,
        }
        parent = update.message_id or self._last_message_id
        if parent is not None:
            event["parentMessageId"] = parent
        self._emit(event)
        self._started[call_id] = None
        if name in self.client_tools:
            self._pending_client_calls.append(call_id)

    def _args(self, call_id: str, delta: str) -> None:
        if delta and call_id not in self._ended:
            self._emit({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": delta})
            self._args_sent.add(call_id)

    def _call_update(self, update: ChatResponseUpdate, content: FunctionCallUpdateContent) -> None:
        call_id = content.call_id
        if call_id not in self._started:
            if not content.name:  # hold the pieces until a name arrives (START needs it)
                self._held.setdefault(call_id, []).append(content.arguments_delta)
                return
            self._start_call(update, call_id, content.name)
            for held in self._held.pop(call_id, []):
                self._args(call_id, held)
        self._args(call_id, content.arguments_delta)

    def _call(self, update: ChatResponseUpdate, call: FunctionCallContent) -> None:
        self.calls[call.call_id] = call
        if call.call_id not in self._started:
            self._start_call(update, call.call_id, call.name)
        if call.call_id not in self._args_sent:
            text = call.raw_arguments if call.arguments is None else dump_json(call.arguments)
            self._args(call.call_id, text or "{}")
        self._end(call.call_id)

    def _end(self, call_id: str) -> None:
        if call_id not in self._ended:
            self._emit({"type": "TOOL_CALL_END", "toolCallId": call_id})
            self._ended.add(call_id)

    def _result(self, call_id: str, content: str) -> None:
        self._close_all(calls=False)
        if call_id in self._started:  # a result means the call was complete
            self._end(call_id)
        event = {
            "type": "TOOL_CALL_RESULT",
            "messageId": self.issuer.signer.result_id(self.ids["threadId"], call_id, content),
            "toolCallId": call_id,
            "content": content,
            "role": "tool",
        }
        self._emit(event)
        self.results[call_id] = content

    def _close_all(self, *, calls: bool = True) -> None:
        if self._text_id is not None:
            self._emit({"type": "TEXT_MESSAGE_END", "messageId": self._text_id})
            self._text_id = None
        if self._reasoning_id is not None:
            self._emit({"type": "REASONING_MESSAGE_END", "messageId": self._reasoning_id})
            self._emit({"type": "REASONING_END", "messageId": self._reasoning_id})
            self._reasoning_id = None
        if calls:
            for call_id in self._started:
                self._end(call_id)

    def _add_usage(self, model_id: str | None, content: UsageContent) -> None:
        counts = self._usage.setdefault(model_id, {})
        for attribute, wire in _USAGE_FIELDS:
            value = getattr(content.details, attribute)
            if value is not None:
                counts[wire] = counts.get(wire, 0) + value


def known_call_ids(messages: Iterable[ChatMessage]) -> frozenset[str]:
    """The ids of the tool calls (and approval requests' calls) in ``messages``."""
    return frozenset(
        (c.tool_call if isinstance(c, ToolApprovalRequestContent) else c).call_id
        for m in messages
        for c in m.contents
        if isinstance(c, (FunctionCallContent, ToolApprovalRequestContent))
    )
