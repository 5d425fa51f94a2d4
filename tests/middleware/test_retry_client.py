"""RetryingChatClient: transient errors only, and only before the first streamed update."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agui_chat import (
    AuthenticationError,
    BaseChatClient,
    ChatClientBuilder,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ConnectError,
    RateLimitError,
    RetryingChatClient,
    ServiceUnavailableError,
    TruncatedStreamError,
)
from agui_chat._client import ChatMessages


class Flaky(BaseChatClient):
    """Fails its first ``failures`` calls with ``error``; streams "a", then maybe fails."""

    def __init__(self, error: Exception, failures: int, *, fail_after_first: bool = False) -> None:
        self.error = error
        self.failures = failures
        self.fail_after_first = fail_after_first
        self.calls = 0

    async def get_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await ChatResponse.from_update_stream(self.get_streaming_response(messages, options))

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.calls += 1
        failing = self.calls <= self.failures
        if failing and not self.fail_after_first:
            raise self.error
        yield ChatResponseUpdate("assistant", "a", message_id="m")
        if failing:
            raise self.error
        yield ChatResponseUpdate("assistant", "b", message_id="m", finish_reason="stop")


def _rate_limited() -> RateLimitError:
    return RateLimitError("429", status_code=429, retry_after=0.001)


def _retrying(inner: Flaky, attempts: int = 3) -> RetryingChatClient:
    return RetryingChatClient(inner, max_attempts=attempts, initial_delay=0, max_delay=0.01)


async def test_a_transient_error_is_retried_until_it_succeeds() -> None:
    model = Flaky(_rate_limited(), failures=2)
    response = await _retrying(model).get_response("hi")
    assert response.text == "ab"
    assert model.calls == 3


async def test_retries_stop_after_max_attempts_and_raise_the_last_error() -> None:
    model = Flaky(ServiceUnavailableError("503", status_code=503), failures=10)
    with pytest.raises(ServiceUnavailableError):
        await _retrying(model, attempts=3).get_response("hi")
    assert model.calls == 3


async def test_a_non_transient_error_is_never_retried() -> None:
    model = Flaky(AuthenticationError("401", status_code=401), failures=1)
    with pytest.raises(AuthenticationError):
        await _retrying(model).get_response("hi")
    assert model.calls == 1


async def test_a_plain_exception_is_never_retried() -> None:
    model = Flaky(RuntimeError("bug"), failures=1)
    with pytest.raises(RuntimeError):
        await _retrying(model).get_response("hi")
    assert model.calls == 1


async def test_a_stream_failing_before_its_first_update_is_retried() -> None:
    model = Flaky(ConnectError("refused"), failures=2)
    updates = [u async for u in _retrying(model).get_streaming_response("hi")]
    assert "".join(u.text for u in updates) == "ab"
    assert model.calls == 3


async def test_a_stream_failing_after_its_first_update_is_not_retried() -> None:
    model = Flaky(_rate_limited(), failures=1, fail_after_first=True)
    received: list[str] = []
    with pytest.raises(RateLimitError):
        async for update in _retrying(model).get_streaming_response("hi"):
            received.append(update.text)
    assert received == ["a"]
    assert model.calls == 1


async def test_a_non_transient_stream_error_is_not_retried() -> None:
    model = Flaky(TruncatedStreamError("cut"), failures=1)
    with pytest.raises(TruncatedStreamError):
        _ = [u async for u in _retrying(model).get_streaming_response("hi")]
    assert model.calls == 1


async def test_use_retry_builds_a_retrying_client() -> None:
    model = Flaky(_rate_limited(), failures=1)
    client = ChatClientBuilder(model).use_retry(initial_delay=0, max_delay=0.01).build()
    assert (await client.get_response("hi")).text == "ab"
    assert model.calls == 2


def test_max_attempts_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="max_attempts must be an int >= 1"):
        RetryingChatClient(Flaky(_rate_limited(), 0), max_attempts=0)


async def test_the_wait_before_a_retry_honours_retry_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    model = Flaky(RateLimitError("429", status_code=429, retry_after=7.0), failures=1)
    await _retrying(model).get_response("hi")
    assert waits == [7.0]
    assert model.calls == 2
