"""A ``generate_content`` reply, whole or streamed, turned into our ``ChatResponse`` and
updates.

Text parts become ``TextContent``; thought parts ``TextReasoningContent`` (their signature,
base64, as ``protected_data``); ``function_call`` parts ``FunctionCallContent``. Gemini
sends most calls without an id: each gets one made here (``gcall_<per response>_<n>``),
stable within the response and never reused by another one, so a later call is never
taken for one already answered.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from .._contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
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
from ._request import MADE_ID_PREFIX

__all__ = ["StreamAssembler", "finish_reason", "to_chat_response", "usage_details"]

_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)


class _CallIds:
    """Ids for one response's calls: Gemini's own when it sent one, else made up."""

    __slots__ = ("_count", "_prefix")

    def __init__(self) -> None:
        self._prefix = f"{MADE_ID_PREFIX}{uuid.uuid4().hex[:16]}_"
        self._count = 0

    def next(self, given: str | None) -> str:
        self._count += 1
        return given or f"{self._prefix}{self._count}"


def to_chat_response(reply: Any) -> ChatResponse:
    """One assistant message from the first candidate, with finish reason and usage."""
    contents, reason = _candidate(reply, _CallIds())
    return ChatResponse(
        ChatMessage(ChatRole.ASSISTANT, contents, message_id=reply.response_id),
        response_id=reply.response_id,
        model_id=reply.model_version,
        created_at=reply.create_time,
        finish_reason=reason,
        usage=usage_details(reply.usage_metadata),
        raw_representation=reply,
    )


def _candidate(reply: Any, ids: _CallIds) -> tuple[list[AIContent], ChatFinishReason | None]:
    """The contents and finish reason of the reply's first candidate (we ask for one)."""
    contents: list[AIContent] = []
    candidates = reply.candidates or []
    if not candidates:
        feedback = reply.prompt_feedback
        blocked = getattr(feedback, "block_reason", None) if feedback is not None else None
        if blocked is not None:
            why = getattr(blocked, "value", blocked)
            contents.append(ErrorContent(f"the prompt was blocked: {why}", error_code="refusal"))
            return contents, ChatFinishReason.CONTENT_FILTER
        return contents, None
    candidate = candidates[0]
    parts = candidate.content.parts if candidate.content is not None else None
    for part in parts or ():
        signature = _b64(part.thought_signature)
        if part.function_call is not None:
            call = part.function_call
            if not call.name:
                raise ProtocolError("Gemini sent a function call with no name")
            extra = {"thought_signature": signature} if signature else None
            contents.append(
                FunctionCallContent(
                    ids.next(call.id), call.name, dict(call.args or {}), additional_properties=extra
                )
            )
        elif part.text is not None and part.thought:
            contents.append(TextReasoningContent(part.text, protected_data=signature))
        elif part.text:
            extra = {"thought_signature": signature} if signature else None
            contents.append(TextContent(part.text, additional_properties=extra))
    has_calls = any(isinstance(c, FunctionCallContent) for c in contents)
    return contents, finish_reason(candidate.finish_reason, has_calls=has_calls)


def finish_reason(value: Any, *, has_calls: bool) -> ChatFinishReason | None:
    """Our finish reason: Gemini says ``STOP`` after calls too, which we call TOOL_CALLS;
    unknown reasons are kept, lower-cased."""
    name = getattr(value, "value", value)
    if not name or name == "FINISH_REASON_UNSPECIFIED":
        return None
    if name == "FUNCTION_CALL" or (has_calls and name == "STOP"):
        return ChatFinishReason.TOOL_CALLS
    if name == "STOP":
        return ChatFinishReason.STOP
    if name == "MAX_TOKENS":
        return ChatFinishReason.LENGTH
    if name in _FILTERED:
        return ChatFinishReason.CONTENT_FILTER
    return ChatFinishReason(str(name).lower())


def usage_details(usage: Any) -> UsageDetails | None:
    """Token counts: the output counts the thoughts too (Gemini counts them apart), the
    thoughts as ``reasoning_token_count``; cached prompt tokens as cached input."""
    if usage is None:
        return None
    candidates = _count(usage, "candidates_token_count")
    thoughts = _count(usage, "thoughts_token_count")
    output = (candidates or 0) + (thoughts or 0) if (candidates, thoughts) != (None, None) else None
    tool_prompt = _count(usage, "tool_use_prompt_token_count")
    return UsageDetails(
        input_token_count=_count(usage, "prompt_token_count"),
        output_token_count=output,
        total_token_count=_count(usage, "total_token_count"),
        cached_input_token_count=_count(usage, "cached_content_token_count"),
        reasoning_token_count=thoughts,
        additional_counts={"tool_use_prompt_token_count": tool_prompt} if tool_prompt else {},
    )


def _count(source: Any, name: str) -> int | None:
    value = getattr(source, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _b64(data: Any) -> str | None:
    return base64.b64encode(data).decode("ascii") if isinstance(data, bytes) and data else None


class StreamAssembler(UpdateAssembler):
    """Turns the stream's chunks (each a partial reply) into updates: feed it chunks with
    :meth:`add`, then call :meth:`finish` once the stream ends. Calls arrive whole in a
    chunk; usage (running totals: the latest is kept) and the finish reason go on the last
    update."""

    __slots__ = ("_calls", "_ids", "_reason", "_usage")

    def __init__(self) -> None:
        super().__init__()
        self._ids = _CallIds()
        self._reason: Any = None
        self._calls = False
        self._usage: Any = None

    def add(self, chunk: Any) -> ChatResponseUpdate | None:
        """The update for this chunk, or ``None`` if it carries nothing to show yet."""
        self._seen(chunk.response_id, chunk.model_version)
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        contents, _ = _candidate(chunk, self._ids)
        self._calls = self._calls or any(isinstance(c, FunctionCallContent) for c in contents)
        if chunk.candidates and chunk.candidates[0].finish_reason is not None:
            self._reason = chunk.candidates[0].finish_reason
        elif not chunk.candidates and contents:  # a blocked prompt
            self._reason = "SAFETY"
        if not contents:
            return None
        return self._update(contents, chunk)

    def finish(self) -> ChatResponseUpdate:
        """The last update: the usage and the finish reason."""
        usage = usage_details(self._usage)
        update = self._update([UsageContent(usage)] if usage is not None else [], None)
        update.finish_reason = finish_reason(self._reason, has_calls=self._calls)
        return update
