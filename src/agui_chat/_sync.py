"""Using any chat client from synchronous code (existing sync chat loops)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Coroutine, Iterator
from concurrent.futures import Future
from types import TracebackType
from typing import Any, TypeVar

from ._client import ChatClient, ChatMessages
from ._options import ChatOptions
from ._responses import ChatResponse, ChatResponseUpdate, OutputT
from ._streams import close_stream
from ._structured import respond

_T = TypeVar("_T")
_END: Any = object()  # what step() gives once the stream is done


class SyncChatClient:
    """A blocking façade over any ``ChatClient`` (``with SyncChatClient(client) as chat:``),
    running it on a private event loop in a background thread, so it works even where
    another event loop is running."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="agui-chat-sync", daemon=True
        )
        self._thread.start()
        self._closed = False

    def _run(self, coro: Awaitable[_T]) -> _T:
        if self._closed:
            if isinstance(coro, Coroutine):
                coro.close()  # never started: close it so it is not reported as never awaited
            raise RuntimeError("this SyncChatClient is closed")
        future: Future[_T] = asyncio.run_coroutine_threadsafe(coro, self._loop)  # type: ignore[arg-type]
        return future.result()

    def get_response(
        self,
        messages: ChatMessages,
        options: ChatOptions | None = None,
        *,
        response_format: type[OutputT] | None = None,
        retries: int = 0,
    ) -> ChatResponse[OutputT]:
        """Like ``ChatClient.get_response``, blocking until the response is complete."""
        return self._run(respond(self.client, messages, options, response_format, retries))

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> Iterator[ChatResponseUpdate]:
        """Like ``ChatClient.get_streaming_response``, as a blocking iterator (leaving it early
        closes the stream)."""
        stream = self.client.get_streaming_response(messages, options)

        async def step() -> Any:
            return await anext(stream, _END)

        try:
            while (update := self._run(step())) is not _END:
                yield update
        finally:
            if not self._closed:
                self._run(close_stream(stream))

    def close(self) -> None:
        """Close the wrapped client and stop the background loop."""
        if self._closed:
            return
        close = getattr(self.client, "aclose", None)
        try:
            if close is not None:
                self._run(close())
        finally:
            self._closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()

    def __enter__(self) -> SyncChatClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
