"""``ScriptedChatClient``: a chat client whose answers come from a function you write."""

from __future__ import annotations

import inspect
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from .._client import BaseChatClient, ChatMessages
from .._contents import AIContent, TextContent
from .._messages import ChatMessage, as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason, ChatRole

__all__ = ["ScriptedChatClient"]

Reply = str | Sequence[AIContent] | ChatMessage | ChatResponse
Handler = Callable[[list[ChatMessage], ChatOptions | None], Reply | Awaitable[Reply]]

_WORDS = re.compile(r"\S+\s*|\s+")


class ScriptedChatClient(BaseChatClient):
    """A chat client that answers with whatever ``handler(messages, options)`` returns.

    The handler (sync or async) returns a ``str``, a list of contents, a ``ChatMessage`` or a
    ``ChatResponse``. Streaming splits text into several updates (one per word, as a model
    would) and sends other contents whole. ``calls`` records what each call received, so a
    test can assert exactly what the model saw.
    """

    def __init__(self, handler: Handler, *, model_id: str = "scripted") -> None:
        if not callable(handler):
            raise TypeError("handler must be a callable (messages, options) -> reply")
        if not isinstance(model_id, str):
            raise TypeError(f"model_id must be a str, got {type(model_id).__name__}")
        self.handler = handler
        self.model_id = model_id
        self.calls: list[tuple[list[ChatMessage], ChatOptions | None]] = []

    async def _reply(self, messages: ChatMessages, options: ChatOptions | None) -> ChatResponse:
        history = as_messages(messages)
        self.calls.append((list(history), options))
        reply = self.handler(history, options)
        if inspect.isawaitable(reply):
            reply = await reply
        return self._as_response(reply)

    def _as_response(self, reply: Any) -> ChatResponse:
        if isinstance(reply, ChatResponse):
            response = reply
        elif isinstance(reply, ChatMessage):
            response = ChatResponse(reply)
        elif isinstance(reply, str):
            response = ChatResponse(ChatMessage(ChatRole.ASSISTANT, reply))
        elif isinstance(reply, Sequence) and all(isinstance(c, AIContent) for c in reply):
            response = ChatResponse(ChatMessage(ChatRole.ASSISTANT, list(reply)))
        else:
            raise TypeError(
                "the handler must return a str, a list of contents, a ChatMessage or a "
                f"ChatResponse, got {type(reply).__name__}"
            )
        for message in response.messages:
            message.message_id = message.message_id or uuid.uuid4().hex
        response.response_id = response.response_id or uuid.uuid4().hex
        response.model_id = response.model_id or self.model_id
        if response.finish_reason is None:
            response.finish_reason = ChatFinishReason.STOP
        return response

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        return await self._reply(messages, options)

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        response = await self._reply(messages, options)
        for message in response.messages:
            for content in message.contents:
                pieces: list[AIContent] = (
                    [TextContent(w) for w in _WORDS.findall(content.text)]
                    if isinstance(content, TextContent) and content.text
                    else [content]
                )
                for piece in pieces:
                    yield ChatResponseUpdate(
                        message.role,
                        [piece],
                        message_id=message.message_id,
                        author_name=message.author_name,
                        response_id=response.response_id,
                        model_id=response.model_id,
                    )
        # The closing update: finish reason and usage.
        for update in response.to_updates()[len(response.messages) :]:
            yield update
