"""``ConfigureOptionsChatClient``: adjust the options of every request in one place."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from .._client import ChatClient, ChatMessages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from ._delegating import DelegatingChatClient


class ConfigureOptionsChatClient(DelegatingChatClient):
    """Calls ``configure(options)`` on a copy of each request's options (a new
    ``ChatOptions`` when the caller passed none), so defaults such as tools or temperature
    are set once for the whole pipeline. The caller's object is never changed."""

    def __init__(self, inner_client: ChatClient, configure: Callable[[ChatOptions], None]) -> None:
        super().__init__(inner_client)
        self.configure = configure

    def _options(self, options: ChatOptions | None) -> ChatOptions:
        configured = options.clone() if options is not None else ChatOptions()
        self.configure(configured)
        return configured

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        return await self.inner_client.get_response(messages, self._options(options))

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner_client.get_streaming_response(messages, self._options(options))
