"""A Chat Completions response, turned into our ``ChatResponse``; the pieces that streaming
shares with it (text and refusal, usage, finish reasons, timestamps)."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion

from .._contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from .._exceptions import ProtocolError
from .._messages import ChatMessage
from .._responses import ChatResponse
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from .._usage import UsageDetails

__all__ = [
    "finish_reason",
    "function_call",
    "new_call_id",
    "text_and_refusal",
    "timestamp",
    "to_chat_response",
    "token_count",
    "usage_details",
]

_FINISH_REASONS = {
    "stop": ChatFinishReason.STOP,
    "length": ChatFinishReason.LENGTH,
    "tool_calls": ChatFinishReason.TOOL_CALLS,
    "function_call": ChatFinishReason.TOOL_CALLS,
    "content_filter": ChatFinishReason.CONTENT_FILTER,
}

# Compatible servers send reasoning under one of these names (DeepSeek, vLLM and llama.cpp
# use the first; Ollama, OpenRouter and newer vLLM the second); OpenAI sends none.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def to_chat_response(completion: ChatCompletion) -> ChatResponse:
    """One assistant message (reasoning, text, refusal, tool calls) with ids, finish reason
    and usage. Only the first choice is read: we never ask for more than one."""
    contents: list[AIContent] = []
    reason: ChatFinishReason | None = None
    if completion.choices:
        choice = completion.choices[0]
        message = choice.message
        contents, refusal = text_and_refusal(message)
        if refusal:
            contents.append(ErrorContent(refusal, error_code="refusal"))
        for index, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)
            if function is None:  # a custom (non-function) tool call: not ours to run
                continue
            contents.append(function_call(call.id, function.name, function.arguments, index))
        reason = finish_reason(choice.finish_reason)
    fingerprint = getattr(completion, "system_fingerprint", None)
    return ChatResponse(
        ChatMessage(ChatRole.ASSISTANT, contents, message_id=completion.id),
        response_id=completion.id,
        model_id=completion.model,
        created_at=timestamp(completion.created),
        finish_reason=reason,
        usage=usage_details(completion.usage),
        additional_properties={"system_fingerprint": fingerprint} if fingerprint else None,
        raw_representation=completion,
    )


def text_and_refusal(message_or_delta: Any) -> tuple[list[AIContent], str | None]:
    """What a message or a streamed delta says: its reasoning (which compatible servers put
    beside the content) and text, in that order; and its refusal, if any."""
    contents: list[AIContent] = []
    reasoning = _reasoning_text(message_or_delta)
    if reasoning:
        contents.append(TextReasoningContent(reasoning))
    if message_or_delta.content:
        contents.append(TextContent(message_or_delta.content))
    return contents, getattr(message_or_delta, "refusal", None)


def function_call(
    call_id: str | None, name: str | None, arguments: str | None, index: int
) -> FunctionCallContent:
    """A call from the model's argument text; bad JSON is kept on the call, not raised.

    Some compatible servers send no call id; one is made up so the result can be paired.
    """
    if not name:
        raise ProtocolError(f"the model's tool call #{index} has no function name")
    return FunctionCallContent.from_json_arguments(call_id or new_call_id(), name, arguments)


def new_call_id() -> str:
    """A call id for a server that sent none."""
    return f"call_{uuid.uuid4().hex[:24]}"


def finish_reason(value: str | None) -> ChatFinishReason | None:
    """Our finish reason for a Chat Completions one; unknown values are kept as they are."""
    if not value:
        return None
    return _FINISH_REASONS.get(value) or ChatFinishReason(value)


def _reasoning_text(message_or_delta: Any) -> str | None:
    """The reasoning a compatible server put beside the content, if any."""
    for name in _REASONING_FIELDS:
        value = getattr(message_or_delta, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def timestamp(created: int | float | None) -> datetime | None:
    """An aware UTC datetime for a Unix ``created`` time."""
    if not created:
        return None
    return datetime.fromtimestamp(created, tz=timezone.utc)


def usage_details(usage: CompletionUsage | None) -> UsageDetails | None:
    """Token counts, with cached input and reasoning output where the server reports them."""
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens_details", None)
    completion = getattr(usage, "completion_tokens_details", None)
    extra: dict[str, int] = {}
    for source, field, key in (
        (prompt, "audio_tokens", "input_audio_token_count"),
        (completion, "audio_tokens", "output_audio_token_count"),
        (completion, "accepted_prediction_tokens", "accepted_prediction_token_count"),
        (completion, "rejected_prediction_tokens", "rejected_prediction_token_count"),
    ):
        value = token_count(source, field)
        if value is not None:
            extra[key] = value
    return UsageDetails(
        input_token_count=token_count(usage, "prompt_tokens"),
        output_token_count=token_count(usage, "completion_tokens"),
        total_token_count=token_count(usage, "total_tokens"),
        cached_input_token_count=token_count(prompt, "cached_tokens"),
        reasoning_token_count=token_count(completion, "reasoning_tokens"),
        additional_counts=extra,
    )


def token_count(source: Any, field: str) -> int | None:
    """``source.field`` if it is a count of tokens (a non-negative int), else ``None``."""
    value = getattr(source, field, None) if source is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
