"""A caller that stops reading a stream early releases the model's stream at once.

``async for`` leaves the iterator it breaks out of open; every middleware that wraps a
stream closes the inner one when its own stream is closed, so the model's stream (and its
HTTP connection) ends right away, not whenever the garbage collector gets to it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agui_chat import (
    BaseChatClient,
    ChatClient,
    ChatClientBuilder,
    ChatOptions,
    ChatResponseUpdate,
    ai_function,
)
from agui_chat._client import ChatMessages


class Model(BaseChatClient):
    """Streams ten words; notes when its stream is closed."""

    def __init__(self) -> None:
        self.closed = 0

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        try:
            for i in range(10):
                yield ChatResponseUpdate("assistant", f"w{i} ", message_id="m1")
        finally:
            self.closed += 1


@ai_function
def lookup(q: str) -> str:
    """Look up."""
    return q


PIPELINES: dict[str, Callable[[ChatClient], ChatClient]] = {
    "function invocation": lambda m: ChatClientBuilder(m).use_function_invocation().build(),
    "function invocation + retry": lambda m: (
        ChatClientBuilder(m).use_function_invocation().use_retry().build()
    ),
    "logging": lambda m: ChatClientBuilder(m).use_logging().build(),
    "logging + function invocation + retry": lambda m: (
        ChatClientBuilder(m).use_logging().use_function_invocation().use_retry().build()
    ),
    "retry": lambda m: ChatClientBuilder(m).use_retry().build(),
}


@pytest.mark.parametrize("build", list(PIPELINES.values()), ids=list(PIPELINES))
async def test_closing_the_stream_after_one_update_closes_the_models_stream_at_once(
    build: Callable[[ChatClient], ChatClient], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agui_chat")  # so that logging wraps the stream
    model = Model()
    stream: Any = build(model).get_streaming_response("hi", ChatOptions(tools=[lookup]))
    first = await anext(stream)
    assert first.text == "w0 "
    assert model.closed == 0

    await stream.aclose()

    assert model.closed == 1


async def test_a_stream_read_to_its_end_is_closed_once() -> None:
    model = Model()
    client = ChatClientBuilder(model).use_function_invocation().use_retry().build()
    updates = [u async for u in client.get_streaming_response("hi", ChatOptions(tools=[lookup]))]
    assert len(updates) == 10
    assert model.closed == 1


async def test_a_caller_stopping_early_is_logged_as_such_not_as_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="agui_chat")
    stream: Any = ChatClientBuilder(Model()).use_logging().build().get_streaming_response("hi")
    await anext(stream)
    await stream.aclose()
    stopped = [r for r in caplog.records if "stopped by the caller" in r.getMessage()]
    assert [r.levelno for r in stopped] == [logging.INFO]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
