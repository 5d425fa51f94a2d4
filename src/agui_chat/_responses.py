"""``ChatResponse`` and ``ChatResponseUpdate``, and the coalescing of updates into a response."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from datetime import datetime
from typing import Any, Generic

from typing_extensions import TypeVar

from ._contents import (
    AIContent,
    DataContent,
    FunctionCallUpdateContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from ._hitl_contents import InputRequestContent
from ._messages import ChatMessage
from ._role_and_finish_reason import ChatFinishReason, ChatRole
from ._streams import close_stream
from ._usage import UsageDetails

#: The type of ``ChatResponse.value`` (``Any`` for a response that has none).
OutputT = TypeVar("OutputT", default=Any)
_UNSET: Any = object()


class ChatResponseUpdate:
    """One piece of a streamed response; ``raw_representation`` is what the provider sent."""

    __slots__ = (
        "additional_properties",
        "author_name",
        "contents",
        "conversation_id",
        "created_at",
        "finish_reason",
        "message_id",
        "model_id",
        "raw_representation",
        "response_id",
        "role",
    )

    def __init__(
        self,
        role: ChatRole | str | None = None,
        contents: str | list[AIContent] | None = None,
        *,
        author_name: str | None = None,
        message_id: str | None = None,
        response_id: str | None = None,
        conversation_id: str | None = None,
        created_at: datetime | None = None,
        finish_reason: ChatFinishReason | str | None = None,
        model_id: str | None = None,
        raw_representation: Any = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        # Hot path: one update per streamed delta, so keep the common case cheap.
        self.role = role if role is None or role.__class__ is ChatRole else ChatRole.coerce(role)
        if contents is None:
            contents = []
        elif contents.__class__ is str:
            contents = [TextContent(contents)]
        self.contents: list[AIContent] = contents  # type: ignore[assignment]
        self.author_name = author_name
        self.message_id = message_id
        self.response_id = response_id
        self.conversation_id = conversation_id
        self.created_at = created_at
        self.finish_reason = (
            finish_reason
            if finish_reason is None or finish_reason.__class__ is ChatFinishReason
            else ChatFinishReason.coerce(finish_reason)
        )
        self.model_id = model_id
        self.raw_representation = raw_representation
        self.additional_properties = additional_properties

    @property
    def text(self) -> str:
        """The text of every ``TextContent`` in this update, joined."""
        return "".join(c.text for c in self.contents if isinstance(c, TextContent))

    def __repr__(self) -> str:
        role = self.role.value if self.role else None
        return f"ChatResponseUpdate(role={role!r}, contents={self.contents!r})"


class ChatResponse(Generic[OutputT]):
    """A whole response: every message the service (and any tool loop) produced, to append
    to the history. ``value`` is the structured output of ``response_format=Model``."""

    __slots__ = (
        "_value",
        "additional_properties",
        "conversation_id",
        "created_at",
        "finish_reason",
        "messages",
        "model_id",
        "raw_representation",
        "response_id",
        "usage",
    )

    def __init__(
        self,
        messages: ChatMessage | list[ChatMessage] | None = None,
        *,
        response_id: str | None = None,
        conversation_id: str | None = None,
        model_id: str | None = None,
        created_at: datetime | None = None,
        finish_reason: ChatFinishReason | str | None = None,
        usage: UsageDetails | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
    ) -> None:
        if isinstance(messages, ChatMessage):
            messages = [messages]
        self.messages = messages if messages is not None else []
        self.response_id = response_id
        self.conversation_id = conversation_id
        self.model_id = model_id
        self.created_at = created_at
        self.finish_reason = (
            ChatFinishReason.coerce(finish_reason) if finish_reason is not None else None
        )
        self.usage = usage
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation
        self._value: Any = _UNSET

    @property
    def text(self) -> str:
        """The text of every message, joined."""
        return "".join(m.text for m in self.messages)

    @property
    def value(self) -> OutputT:
        """The reply validated as the call's ``response_format`` type; ``ValueError`` if the
        call asked for none or the run paused on ``input_requests``."""
        if self._value is _UNSET:
            why = (
                "the run paused on input requests; answer them and call again with the same "
                "response_format"
                if self.input_requests
                else "ask for one with get_response(..., response_format=Model)"
            )
            raise ValueError(f"this response has no structured value: {why}")
        return self._value  # type: ignore[no-any-return]

    @property
    def has_value(self) -> bool:
        """Whether ``value`` is set."""
        return self._value is not _UNSET

    def set_value(self, value: OutputT) -> None:
        """Set ``value`` (``get_response`` does, once the reply validated)."""
        self._value = value

    @property
    def input_requests(self) -> list[InputRequestContent]:
        """Every approval request and question the run paused on, in order."""
        return [c for m in self.messages for c in m.contents if isinstance(c, InputRequestContent)]

    def __repr__(self) -> str:
        return f"ChatResponse(messages={self.messages!r}, finish_reason={self.finish_reason!r})"

    # -- updates <-> response ------------------------------------------------------------
    def to_updates(self) -> list[ChatResponseUpdate]:
        """One update per message, plus one with the usage (the inverse of :meth:`from_updates`)."""
        updates = [
            ChatResponseUpdate(
                m.role,
                list(m.contents),
                author_name=m.author_name,
                message_id=m.message_id,
                response_id=self.response_id,
                conversation_id=self.conversation_id,
                model_id=self.model_id,
                created_at=self.created_at,
                additional_properties=m.additional_properties,
                raw_representation=m.raw_representation,
            )
            for m in self.messages
        ]
        if self.usage is not None or self.finish_reason is not None or not updates:
            extra: list[AIContent] = [UsageContent(self.usage)] if self.usage else []
            updates.append(
                ChatResponseUpdate(
                    contents=extra,
                    response_id=self.response_id,
                    conversation_id=self.conversation_id,
                    finish_reason=self.finish_reason,
                    additional_properties=self.additional_properties,
                )
            )
        return updates

    @classmethod
    def from_updates(cls, updates: Iterable[ChatResponseUpdate]) -> ChatResponse:
        """Join streamed updates into one response, by MEAI's rules: a new message starts when
        the message id, author or role changes; text pieces in a row join; usage is summed;
        the last non-empty response id, conversation id, finish reason and model id win."""
        builder = _ResponseBuilder()
        for update in updates:
            builder.add(update)
        return builder.build()

    @classmethod
    async def from_update_stream(cls, updates: AsyncIterable[ChatResponseUpdate]) -> ChatResponse:
        """Like :meth:`from_updates`, for an async stream (closed at the end, or on error)."""
        builder = _ResponseBuilder()
        try:
            async for update in updates:
                builder.add(update)
        finally:
            await close_stream(updates)
        return builder.build()


class _ResponseBuilder:
    """Folds updates into messages; text deltas stay strings until something else arrives,
    so a long stream keeps no object per delta alive."""

    __slots__ = ("_text", "response", "usage")

    def __init__(self) -> None:
        self.response = ChatResponse()
        self.usage: UsageDetails | None = None
        self._text: list[str] = []

    def _flush_text(self) -> None:
        if self._text:
            self.response.messages[-1].contents.append(TextContent("".join(self._text)))
            self._text = []

    def add(self, update: ChatResponseUpdate) -> None:
        # Hot path (one call per streamed delta): identity checks before equality.
        response = self.response
        messages = response.messages
        last = messages[-1] if messages else None
        role = update.role
        message_id = update.message_id
        author = update.author_name
        if (
            last is None
            or (message_id and last.message_id and message_id != last.message_id)
            or (role is not None and role is not last.role and role != last.role)
            or (author and last.author_name and author != last.author_name)
        ):
            self._flush_text()
            last = ChatMessage(ChatRole.ASSISTANT)
            messages.append(last)
        if author:
            last.author_name = author
        if role is not None:
            last.role = role
        if message_id:
            last.message_id = message_id
        if update.additional_properties:
            owner = last if message_id else response  # a message's own, else the response's
            owner.additional_properties = {
                **(owner.additional_properties or {}),
                **update.additional_properties,
            }
        for content in update.contents:
            kind = content.__class__
            if kind is TextContent and not content.additional_properties:
                self._text.append(content.text)  # type: ignore[attr-defined]
            elif kind is UsageContent:
                details = content.details  # type: ignore[attr-defined]
                self.usage = details if self.usage is None else self.usage + details
            elif kind is not FunctionCallUpdateContent:
                self._flush_text()
                last.contents.append(content)
        if update.response_id:
            response.response_id = update.response_id
        if update.conversation_id is not None:
            response.conversation_id = update.conversation_id
        if update.finish_reason is not None:
            response.finish_reason = update.finish_reason
        if update.model_id:
            response.model_id = update.model_id
        if update.created_at is not None and response.created_at is None:
            response.created_at = update.created_at

    def build(self) -> ChatResponse:
        if self.response.messages:
            self._flush_text()
        response = self.response
        response.messages = [m for m in response.messages if m.contents]
        for message in response.messages:
            message.contents = _coalesce(message.contents)
        response.usage = self.usage
        return response


def _coalesce(contents: list[AIContent]) -> list[AIContent]:
    """Merge adjacent text, adjacent reasoning and adjacent same-type text data."""
    out: list[AIContent] = []
    text_run: list[str] = []
    for content in contents:
        prev = out[-1] if out else None
        if content.__class__ is TextContent and prev is not None and prev.__class__ is TextContent:
            if not text_run:
                text_run.append(prev.text)
            text_run.append(content.text)
            continue
        if text_run:
            prev.text = "".join(text_run)  # type: ignore[union-attr]
            text_run = []
        if (
            isinstance(content, TextReasoningContent)
            and isinstance(prev, TextReasoningContent)
            and prev.protected_data is None
        ):
            out[-1] = TextReasoningContent(
                prev.text + content.text,
                protected_data=content.protected_data,
                additional_properties=prev.additional_properties,
            )
            continue
        if (
            isinstance(content, DataContent)
            and isinstance(prev, DataContent)
            and content.media_type.startswith("text/")
            and content.media_type == prev.media_type
            and content.name == prev.name
        ):
            out[-1] = DataContent(prev.data + content.data, prev.media_type, name=prev.name)
            continue
        if content.__class__ is TextContent:
            # Copy, so that merging never changes an update the caller still holds.
            content = TextContent(
                content.text,
                additional_properties=content.additional_properties,
            )
        out.append(content)
    if text_run:
        out[-1].text = "".join(text_run)  # type: ignore[attr-defined]
    return out
