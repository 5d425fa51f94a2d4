"""The ``ChatClient`` protocol, and ``BaseChatClient`` to build one with little code."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from ._messages import ChatMessage
from ._options import ChatOptions
from ._responses import ChatResponse, ChatResponseUpdate, OutputT
from ._structured import respond

_T = TypeVar("_T")
_Self = TypeVar("_Self", bound="BaseChatClient")

#: What a chat client accepts as ``messages``: one user message as text, or messages.
ChatMessages = str | ChatMessage | Sequence[ChatMessage]


@runtime_checkable
class ChatClient(Protocol):
    """Anything that turns messages into a response, whole or streamed; safe for concurrent
    calls. ``get_structured_response(client, ...)`` adds structured output to any client."""

    async def get_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> ChatResponse[Any]:
        """Send the messages and return the whole response."""
        ...

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """Send the messages and yield the response as it arrives."""
        ...

    def get_service(self, kind: type[_T]) -> _T | None:
        """Return ``self`` (or something this client wraps or owns) if it is a ``kind``."""
        ...


class BaseChatClient:
    """A base for chat clients: implement ``get_streaming_response`` (``_get_response`` for a
    non-streaming path of its own, ``aclose`` if the client owns resources)."""

    async def get_response(
        self,
        messages: ChatMessages,
        options: ChatOptions | None = None,
        *,
        response_format: type[OutputT] | None = None,
        retries: int = 0,
    ) -> ChatResponse[OutputT]:
        """Send the messages and return the whole response; with ``response_format=Model``
        the reply is validated into ``.value`` (``retries=N`` repairs, as
        ``get_structured_response``)."""
        return await respond(self, messages, options, response_format, retries, self._get_response)

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        """The whole response to a plain call (by default, the joined stream)."""
        return await ChatResponse.from_update_stream(self.get_streaming_response(messages, options))

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        raise NotImplementedError

    def get_service(self, kind: type[_T]) -> _T | None:
        return self if isinstance(self, kind) else None

    async def aclose(self) -> None:
        """Release what the client owns (nothing, by default)."""

    async def __aenter__(self: _Self) -> _Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
