"""``HandoffStream``: a stream that needs its middleware only for the first update (a retry
matters only before anything streamed). A consumer that knows it (the tool loop) reads
``handed_over`` after the first update and iterates the inner stream directly."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from .._responses import ChatResponseUpdate
from .._streams import close_stream

#: ``start()`` returns the inner stream, already advanced, and its first update (``None``
#: when the stream was empty).
Start = Callable[[], Awaitable[tuple[AsyncIterator[ChatResponseUpdate], ChatResponseUpdate | None]]]


class HandoffStream:
    """Yields what ``start()`` fetched, then the rest of the inner stream."""

    __slots__ = ("_start", "_stream", "handed_over")

    def __init__(self, start: Start) -> None:
        self._start = start
        self._stream: AsyncIterator[ChatResponseUpdate] | None = None
        #: After the first update: the inner stream, to iterate directly.
        self.handed_over: AsyncIterator[ChatResponseUpdate] | None = None

    def __aiter__(self) -> HandoffStream:
        return self

    def __anext__(self) -> Awaitable[ChatResponseUpdate]:
        if self.handed_over is not None:
            return anext(self.handed_over)
        return self._first()

    async def _first(self) -> ChatResponseUpdate:
        if self._stream is not None:  # started, and the first fetch found nothing
            raise StopAsyncIteration
        stream, first = await self._start()
        self._stream = stream
        if first is None:
            raise StopAsyncIteration
        inner = getattr(stream, "handed_over", None)  # stacked hand-offs collapse
        self.handed_over = inner if inner is not None else stream
        return first

    async def aclose(self) -> None:
        """Close the inner stream (what a caller that stops early leaves open)."""
        await close_stream(self._stream)
