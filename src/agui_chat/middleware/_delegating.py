"""``DelegatingChatClient``: the base of every middleware."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

from .._client import BaseChatClient, ChatClient, ChatMessages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate

_T = TypeVar("_T")


class DelegatingChatClient(BaseChatClient):
    """A chat client that passes every call to ``inner_client``. Subclasses override what
    they change: ``_get_response`` (under ``get_response``, which adds structured output)
    and ``get_streaming_response``. ``get_service`` answers for this client, then asks the
    inner one (a wrapper never hides what it wraps); ``aclose`` closes the inner client."""

    def __init__(self, inner_client: ChatClient) -> None:
        self.inner_client = inner_client

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        return await self.inner_client.get_response(messages, options)

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner_client.get_streaming_response(messages, options)

    def get_service(self, kind: type[_T]) -> _T | None:
        if isinstance(self, kind):
            return self
        return self.inner_client.get_service(kind)

    async def aclose(self) -> None:
        close = getattr(self.inner_client, "aclose", None)
        if close is not None:
            await close()
