"""``RetryingChatClient``: retry transient failures with tenacity, before anything streamed.
tenacity is imported on the first request (``import agui_chat`` does not pay for it). Its
stream is a :class:`HandoffStream`: needed only for the first update, so a consumer that knows
it (the tool loop) reads ``handed_over`` after the first update and iterates the inner stream
directly."""

from __future__ import annotations

import email.utils
import logging
import math
import random
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .._client import ChatClient, ChatMessages
from .._exceptions import TransientError
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._streams import close_stream
from ._delegating import DelegatingChatClient

if TYPE_CHECKING:
    from tenacity import AsyncRetrying, RetryCallState

_log = logging.getLogger("agui_chat")


def check_retry_settings(**settings: float) -> None:
    """Raise ``ValueError`` naming the first retry setting out of range."""
    for name, value in settings.items():
        if name == "max_attempts" and value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")


def _wraps_a_tool_loop(client: ChatClient, loop_type: type) -> bool:
    """Whether the delegation chain below ``client`` holds a tool loop (a client's private
    one, like ``AGUIChatClient``'s, does not count)."""
    while isinstance(client, DelegatingChatClient):
        if isinstance(client, loop_type):
            return True
        client = client.inner_client
    return False


def backoff_delay(
    attempt_number: int,
    failure: BaseException | None,
    *,
    initial_delay: float,
    max_delay: float,
    max_retry_after: float,
) -> float:
    """The wait after attempt ``attempt_number`` failed with ``failure``: exponential
    backoff capped at ``max_delay`` plus up to one ``initial_delay`` of jitter, or the
    failure's longer ``retry_after`` (capped at ``max_retry_after``)."""
    exponent = min(max(attempt_number - 1, 0), 32)
    backoff = min(max_delay, initial_delay * 2**exponent) + random.uniform(0, initial_delay)
    retry_after = getattr(failure, "retry_after", None)
    if isinstance(retry_after, (int, float)) and retry_after > backoff:
        return float(min(retry_after, max_retry_after))
    return float(backoff)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    return max(seconds, 0.0) if math.isfinite(seconds) else None


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


class RetryingChatClient(DelegatingChatClient):
    """Retries a call that failed with a ``TransientError`` (connection failures, 429,
    502/503/504, timeouts), with jittered exponential backoff that honours ``retry_after``.
    Put it inside the tool loop (``.use_function_invocation().use_retry()``) so a retry never
    runs a tool again; wrapping a ``FunctionInvokingChatClient`` warns. A stream is retried
    only if it failed before its first update."""

    def __init__(
        self,
        inner_client: ChatClient,
        *,
        max_attempts: int = 3,
        initial_delay: float = 0.5,
        max_delay: float = 20.0,
        max_retry_after: float = 120.0,
    ) -> None:
        super().__init__(inner_client)
        from ._function_invocation import FunctionInvokingChatClient

        if _wraps_a_tool_loop(inner_client, FunctionInvokingChatClient):
            warnings.warn(
                "RetryingChatClient wraps a FunctionInvokingChatClient: a retried request would "
                "run the tool loop, and its tools, again. Put the retry inside the loop "
                "(ChatClientBuilder(...).use_function_invocation().use_retry()).",
                UserWarning,
                stacklevel=2,
            )
        check_retry_settings(
            max_attempts=max_attempts,
            initial_delay=initial_delay,
            max_delay=max_delay,
            max_retry_after=max_retry_after,
        )
        self.max_attempts = max_attempts
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after

    def _wait(self, state: RetryCallState) -> float:
        return backoff_delay(
            state.attempt_number,
            state.outcome.exception() if state.outcome else None,
            initial_delay=self.initial_delay,
            max_delay=self.max_delay,
            max_retry_after=self.max_retry_after,
        )

    def _retrying(self) -> AsyncRetrying:
        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

        return AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            reraise=True,
            before_sleep=lambda s: _log.info(
                "retrying after %s (attempt %d of %d)",
                type(s.outcome.exception()).__name__ if s.outcome else "?",
                s.attempt_number + 1,
                self.max_attempts,
            ),
        )

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        async for attempt in self._retrying():
            with attempt:
                return await self.inner_client.get_response(messages, options)
        raise AssertionError("unreachable")  # pragma: no cover

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        async def start() -> tuple[AsyncIterator[ChatResponseUpdate], ChatResponseUpdate | None]:
            async for attempt in self._retrying():
                with attempt:
                    stream = aiter(self.inner_client.get_streaming_response(messages, options))
                    return stream, await anext(stream, None)
            raise AssertionError("unreachable")  # pragma: no cover

        return HandoffStream(start)  # after the first update, the inner stream is handed over
