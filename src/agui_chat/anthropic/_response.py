"""A Messages API reply, whole or streamed, turned into our ``ChatResponse`` and updates.

Text blocks become ``TextContent``; ``thinking`` blocks ``TextReasoningContent`` with their
signature as ``protected_data`` (and ``redacted_thinking`` ones with no text and their data),
so they can be sent back unchanged; ``tool_use`` blocks ``FunctionCallContent``. Blocks of
any other type (server tools' results and whatever a later API adds) are never taken as
calls or results: only a ``tool_use`` block is a call, and results only ever come from us.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .._contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from .._exceptions import ProtocolError
from .._messages import ChatMessage
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from .._update_assembler import UpdateAssembler
from .._usage import UsageDetails

__all__ = ["StreamAssembler", "finish_reason", "to_chat_response", "usage_details"]

_FINISH_REASONS = {
    "end_turn": ChatFinishReason.STOP,
    "stop_sequence": ChatFinishReason.STOP,
    "max_tokens": ChatFinishReason.LENGTH,
    "model_context_window_exceeded": ChatFinishReason.LENGTH,
    "tool_use": ChatFinishReason.TOOL_CALLS,
    "refusal": ChatFinishReason.CONTENT_FILTER,
}


def to_chat_response(message: Any) -> ChatResponse:
    """One assistant message with the reply's blocks, its id, model, stop reason and usage."""
    contents: list[AIContent] = []
    for block in message.content or ():
        kind = getattr(block, "type", None)
        if kind == "text":
            contents.append(TextContent(block.text))
        elif kind == "thinking":
            contents.append(TextReasoningContent(block.thinking, protected_data=block.signature))
        elif kind == "redacted_thinking":
            contents.append(TextReasoningContent("", protected_data=block.data))
        elif kind == "tool_use":
            contents.append(_call(block.id, block.name, block.input, len(contents)))
    if message.stop_reason == "refusal":
        contents.append(ErrorContent(_refusal_text(message), error_code="refusal"))
    return ChatResponse(
        ChatMessage(ChatRole.ASSISTANT, contents, message_id=message.id),
        response_id=message.id,
        model_id=message.model,
        finish_reason=finish_reason(message.stop_reason),
        usage=usage_details(message.usage),
        raw_representation=message,
    )


def finish_reason(value: str | None) -> ChatFinishReason | None:
    """Our finish reason for a stop reason; unknown ones (``pause_turn``...) are kept."""
    if not value:
        return None
    return _FINISH_REASONS.get(value) or ChatFinishReason(value)


def usage_details(usage: Any) -> UsageDetails | None:
    """Token counts: the input counts cached reads and cache writes too (the API counts them
    apart), the cached part as ``cached_input_token_count``, writes in ``additional_counts``."""
    if usage is None:
        return None
    fresh = _count(usage, "input_tokens")
    read = _count(usage, "cache_read_input_tokens")
    written = _count(usage, "cache_creation_input_tokens")
    output = _count(usage, "output_tokens")
    parts = [n for n in (fresh, read, written) if n is not None]
    total_input = sum(parts) if parts else None
    extra = {"cache_creation_input_token_count": written} if written is not None else {}
    return UsageDetails(
        input_token_count=total_input,
        output_token_count=output,
        total_token_count=(total_input or 0) + (output or 0)
        if total_input is not None or output is not None
        else None,
        cached_input_token_count=read,
        additional_counts=extra,
    )


def _count(source: Any, name: str) -> int | None:
    value = getattr(source, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _refusal_text(message: Any) -> str:
    details = getattr(message, "stop_details", None)
    explained = getattr(details, "explanation", None) if details is not None else None
    return explained if isinstance(explained, str) and explained else "(no reason given)"


def _call(call_id: str | None, name: str | None, arguments: Any, index: int) -> FunctionCallContent:
    if not call_id or not name:
        raise ProtocolError(f"the model's tool_use block #{index} has no id or no name")
    if isinstance(arguments, dict):
        return FunctionCallContent(call_id, name, arguments)
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return FunctionCallContent.from_json_arguments(call_id, name, text)


@dataclass(slots=True)
class _Block:
    """A content block whose deltas are still arriving."""

    kind: str
    call_id: str | None = None
    name: str | None = None
    pieces: list[str] = field(default_factory=list)


class StreamAssembler(UpdateAssembler):
    """Turns the stream's raw events into updates: feed it events with :meth:`add`, then
    call :meth:`finish` once the stream ends.

    Text and thinking deltas become updates at once; a ``tool_use`` block's argument pieces
    show as ``FunctionCallUpdateContent`` and the whole call follows when its block stops.
    Usage and the stop reason go on the last update.
    """

    __slots__ = ("_blocks", "_reason", "_refusal", "_usage")

    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, _Block] = {}
        self._reason: str | None = None
        self._usage: dict[str, int] = {}
        self._refusal: str | None = None

    def add(self, event: Any) -> ChatResponseUpdate | None:
        """The update for this event, or ``None`` if it carries nothing to show yet."""
        kind = getattr(event, "type", None)
        contents: list[AIContent] = []
        if kind == "message_start":
            self._seen(event.message.id, event.message.model)
            self._keep_usage(event.message.usage)
        elif kind == "content_block_start":
            contents = self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            contents = self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            contents = self._stop(event.index)
        elif kind == "message_delta":
            self._reason = event.delta.stop_reason or self._reason
            self._keep_usage(event.usage)
        if not contents:
            return None
        return self._update(contents, event)

    def finish(self) -> ChatResponseUpdate:
        """The last update: the usage and the stop reason; a stream that ended inside a
        tool call is an error (its arguments are incomplete)."""
        open_calls = [b.name for b in self._blocks.values() if b.kind == "tool_use"]
        if open_calls:
            raise ProtocolError(
                f"the Messages API stream ended inside the tool call {open_calls[0]!r}"
            )
        contents: list[AIContent] = []
        if self._reason == "refusal":
            contents.append(ErrorContent("(no reason given)", error_code="refusal"))
        usage = usage_details(_Usage(self._usage)) if self._usage else None
        if usage is not None:
            contents.append(UsageContent(usage))
        update = self._update(contents, None)
        update.finish_reason = finish_reason(self._reason)
        return update

    # -- helpers -------------------------------------------------------------------------
    def _start(self, index: int, block: Any) -> list[AIContent]:
        kind = getattr(block, "type", None) or ""
        if kind == "tool_use":
            self._blocks[index] = _Block(kind, block.id, block.name)
            return [FunctionCallUpdateContent(block.id, block.name, "")]
        self._blocks[index] = _Block(kind)
        if kind == "text" and block.text:
            return [TextContent(block.text)]
        if kind == "redacted_thinking":
            return [TextReasoningContent("", protected_data=block.data)]
        if kind == "thinking" and getattr(block, "thinking", ""):
            return [TextReasoningContent(block.thinking)]
        return []

    def _delta(self, index: int, delta: Any) -> list[AIContent]:
        block = self._blocks.get(index)
        kind = getattr(delta, "type", None)
        if block is None:
            raise ProtocolError(f"the Messages API stream sent a delta for unknown block {index}")
        if kind == "text_delta" and block.kind == "text":
            return [TextContent(delta.text)] if delta.text else []
        if kind == "thinking_delta" and block.kind == "thinking":
            return [TextReasoningContent(delta.thinking)] if delta.thinking else []
        if kind == "signature_delta" and block.kind == "thinking":
            block.pieces.append(delta.signature)
        elif kind == "input_json_delta" and block.kind == "tool_use":
            block.pieces.append(delta.partial_json)
            return [FunctionCallUpdateContent(block.call_id or "", block.name, delta.partial_json)]
        return []

    def _stop(self, index: int) -> list[AIContent]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.kind == "tool_use":
            text = "".join(block.pieces)
            return [_call(block.call_id, block.name, text or "{}", index)]
        if block.kind == "thinking" and block.pieces:
            # The signature closes the thinking it signs (the joined stream merges them).
            return [TextReasoningContent("", protected_data="".join(block.pieces))]
        return []

    def _keep_usage(self, usage: Any) -> None:
        # The stream repeats counts as running totals: keep the latest of each, never sum.
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = _count(usage, name) if usage is not None else None
            if value is not None:
                self._usage[name] = value


class _Usage:
    """The streamed counts, read like the SDK's usage object."""

    def __init__(self, counts: dict[str, int]) -> None:
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            setattr(self, name, counts.get(name))
