"""OpenAI Responses output, turned into our responses: a whole ``Response`` into a
``ChatResponse``, and a stream of events into ``ChatResponseUpdate``s as they arrive.

Every update of one response shares its id as ``message_id``, so streamed and whole
responses fold into the same single assistant message. Output text, refusals, reasoning
(summaries and raw reasoning text) and function calls are mapped; a response that ends
``incomplete`` says why in the finish reason (``length`` for ``max_output_tokens``,
``content_filter``) and in ``additional_properties["incomplete_reason"]``; a ``failed``
response or an ``error`` event is a ``RunError`` with the service's code.
"""

from __future__ import annotations

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
from .._exceptions import RunError, TruncatedStreamError
from .._messages import ChatMessage
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole
from .._update_assembler import UpdateAssembler
from .._usage import UsageDetails
from ._response import function_call, timestamp, token_count
from ._responses_request import ITEM_ID_KEY

__all__ = ["ResponsesStreamAssembler", "responses_usage", "to_chat_response"]

_INCOMPLETE = {
    "max_output_tokens": ChatFinishReason.LENGTH,
    "content_filter": ChatFinishReason.CONTENT_FILTER,
}


def to_chat_response(response: Any, *, store: bool, service: str) -> ChatResponse:
    """One assistant message (reasoning, text, refusals, function calls), with the finish
    reason, usage, and the response id as ``conversation_id`` when the service stores it."""
    _raise_if_failed(response, service)
    contents: list[AIContent] = []
    for index, item in enumerate(response.output or ()):
        kind = getattr(item, "type", None)
        if kind == "message":
            for part in item.content or ():
                if part.type == "output_text":
                    contents.append(TextContent(part.text))
                elif part.type == "refusal":
                    contents.append(ErrorContent(part.refusal, error_code="refusal"))
        elif kind == "reasoning":
            contents.append(_reasoning(item))
        elif kind == "function_call":
            contents.append(function_call(item.call_id, item.name, item.arguments, index))
    reason, extra = _finish(
        response, has_calls=any(isinstance(c, FunctionCallContent) for c in contents)
    )
    return ChatResponse(
        ChatMessage(ChatRole.ASSISTANT, contents, message_id=response.id),
        response_id=response.id,
        conversation_id=response.id if store else None,
        model_id=response.model,
        created_at=timestamp(response.created_at),
        finish_reason=reason,
        usage=responses_usage(getattr(response, "usage", None)),
        additional_properties=extra,
        raw_representation=response,
    )


class ResponsesStreamAssembler(UpdateAssembler):
    """Feed it stream events with :meth:`add`; call :meth:`finish` when the stream ends."""

    __slots__ = (
        "_calls",
        "_done",
        "_handlers",
        "_reasoning_props",
        "_refusal",
        "_service",
        "_store",
    )

    def __init__(self, *, store: bool, service: str) -> None:
        super().__init__()
        self._store = store
        self._service = service
        self._calls: dict[str, tuple[str, str]] = {}  # item id -> (call id, name)
        self._reasoning_props: dict[str, dict[str, Any]] = {}
        self._refusal: list[str] = []
        self._done: ChatResponseUpdate | None = None
        self._handlers = {
            "response.output_text.delta": self._text,
            "response.reasoning_summary_text.delta": self._reasoning_delta,
            "response.reasoning_text.delta": self._reasoning_delta,
            "response.function_call_arguments.delta": self._arguments,
            "response.refusal.delta": self._refusal_delta,
            "response.refusal.done": self._refusal_done,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.created": self._started,
            "response.in_progress": self._started,
            "response.queued": self._started,
            "response.completed": self._finished,
            "response.incomplete": self._finished,
            "response.failed": self._failed,
            "error": self._error,
        }

    def add(self, event: Any) -> ChatResponseUpdate | None:
        """The update for this event, or ``None`` if it carries nothing to show."""
        handler = self._handlers.get(event.type)
        return handler(event) if handler is not None else None

    def finish(self) -> None:
        """Check the stream ended with the response's end (completed, incomplete, failed)."""
        if self._done is None:
            raise TruncatedStreamError(
                f"{self._service} ended the stream before the response finished "
                "(no response.completed, response.incomplete or response.failed event)"
            )

    # -- events --------------------------------------------------------------------------
    def _text(self, event: Any) -> ChatResponseUpdate | None:
        delta = event.delta
        return self._update([TextContent(delta)], event) if delta else None

    def _reasoning_delta(self, event: Any) -> ChatResponseUpdate | None:
        if not event.delta:
            return None
        props = self._reasoning_props.setdefault(event.item_id, {ITEM_ID_KEY: event.item_id})
        content = TextReasoningContent(event.delta, additional_properties=props)
        return self._update([content], event)

    def _arguments(self, event: Any) -> ChatResponseUpdate | None:
        call_id, name = self._calls.get(event.item_id, (event.item_id, ""))
        return self._update([FunctionCallUpdateContent(call_id, name or None, event.delta)], event)

    def _refusal_delta(self, event: Any) -> None:
        self._refusal.append(event.delta)

    def _refusal_done(self, event: Any) -> ChatResponseUpdate:
        text = getattr(event, "refusal", None) or "".join(self._refusal)
        self._refusal = []
        return self._update([ErrorContent(text, error_code="refusal")], event)

    def _item_added(self, event: Any) -> ChatResponseUpdate | None:
        item = event.item
        if item.type == "function_call":
            self._calls[item.id or item.call_id] = (item.call_id, item.name)
            return self._update([FunctionCallUpdateContent(item.call_id, item.name, "")], event)
        return None

    def _item_done(self, event: Any) -> ChatResponseUpdate | None:
        item = event.item
        if item.type == "function_call":
            call = function_call(item.call_id, item.name, item.arguments, event.output_index)
            return self._update([call], event)
        if item.type == "reasoning" and getattr(item, "encrypted_content", None):
            # The part a stateless request must hand back; its text came as deltas.
            props = self._reasoning_props.setdefault(item.id, {ITEM_ID_KEY: item.id})
            content = TextReasoningContent(
                "", protected_data=item.encrypted_content, additional_properties=props
            )
            return self._update([content], event)
        return None

    def _started(self, event: Any) -> None:
        response = event.response
        self._seen(response.id, response.model, timestamp(response.created_at))

    def _finished(self, event: Any) -> ChatResponseUpdate:
        response = event.response
        self._started(event)
        reason, extra = _finish(response, has_calls=bool(self._calls))
        contents: list[AIContent] = []
        usage = responses_usage(getattr(response, "usage", None))
        if usage is not None:
            contents.append(UsageContent(usage))
        update = self._update(contents, event)
        update.message_id = None
        update.finish_reason = reason
        update.additional_properties = extra
        update.conversation_id = self._response_id if self._store else None
        self._done = update
        return update

    def _failed(self, event: Any) -> None:
        _raise_if_failed(event.response, self._service)
        raise RunError(f"{self._service} reported that the response failed")

    def _error(self, event: Any) -> None:
        raise RunError(f"{self._service} reported an error: {event.message}", code=event.code)


# -- shared -----------------------------------------------------------------------------------


def _reasoning(item: Any) -> TextReasoningContent:
    texts = [s.text for s in item.summary or () if getattr(s, "text", None)]
    texts += [c.text for c in getattr(item, "content", None) or () if getattr(c, "text", None)]
    return TextReasoningContent(
        "\n\n".join(texts),
        protected_data=getattr(item, "encrypted_content", None),
        additional_properties={ITEM_ID_KEY: item.id} if item.id else None,
    )


def _finish(response: Any, *, has_calls: bool) -> tuple[ChatFinishReason, dict[str, Any] | None]:
    if response.status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        why = getattr(details, "reason", None) or "unknown"
        return _INCOMPLETE.get(why) or ChatFinishReason(why), {"incomplete_reason": why}
    if has_calls:
        return ChatFinishReason.TOOL_CALLS, None
    return ChatFinishReason.STOP, None


def _raise_if_failed(response: Any, service: str) -> None:
    if response.status != "failed":
        return
    error = getattr(response, "error", None)
    message = getattr(error, "message", None) or "no reason given"
    raise RunError(
        f"{service} reported that the response failed: {message}",
        code=getattr(error, "code", None),
    )


def responses_usage(usage: Any) -> UsageDetails | None:
    """Token counts, with cached input and reasoning output where the service reports them."""
    if usage is None:
        return None
    return UsageDetails(
        input_token_count=token_count(usage, "input_tokens"),
        output_token_count=token_count(usage, "output_tokens"),
        total_token_count=token_count(usage, "total_tokens"),
        cached_input_token_count=token_count(
            getattr(usage, "input_tokens_details", None), "cached_tokens"
        ),
        reasoning_token_count=token_count(
            getattr(usage, "output_tokens_details", None), "reasoning_tokens"
        ),
    )
