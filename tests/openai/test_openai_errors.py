"""OpenAIChatClient errors: SDK failures arrive as our exception types, the SDK's chained."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import openai
import pytest
from openai_wire import FIXTURES, Wire

from agui_chat import (
    AuthenticationError,
    ConnectError,
    HTTPStatusError,
    RateLimitError,
    RunError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    TransientError,
)
from agui_chat.openai import OpenAIChatClient


async def test_429_raises_rate_limit_error_with_retry_after(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("error_rate_limit.json", 429, {"retry-after": "20"}))
    with pytest.raises(RateLimitError) as caught:
        await chat.get_response("Hi")
    error = caught.value
    assert error.status_code == 429
    assert error.retry_after == 20.0
    assert isinstance(error, TransientError)
    assert isinstance(error.__cause__, openai.RateLimitError)
    assert "Rate limit reached for gpt-4o-mini" in str(error)


async def test_the_error_body_is_kept_as_text(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("error_bad_request.json", 400))
    with pytest.raises(HTTPStatusError) as caught:
        await chat.get_response("Hi")
    assert caught.value.body == (FIXTURES / "error_bad_request.json").read_text()


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_credentials_raise_authentication_error(
    chat: OpenAIChatClient, wire: Wire, status: int
) -> None:
    wire.serve(wire.json("error_invalid_api_key.json", status))
    with pytest.raises(AuthenticationError) as caught:
        await chat.get_response("Hi")
    assert caught.value.status_code == status
    assert isinstance(caught.value.__cause__, openai.APIStatusError)


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_gateway_and_unavailable_statuses_raise_service_unavailable(
    chat: OpenAIChatClient, wire: Wire, status: int
) -> None:
    wire.serve(wire.json("error_overloaded.json", status, {"retry-after": "2"}))
    with pytest.raises(ServiceUnavailableError) as caught:
        await chat.get_response("Hi")
    assert caught.value.status_code == status
    assert caught.value.retry_after == 2.0
    assert isinstance(caught.value, TransientError)


@pytest.mark.parametrize("status", [400, 404, 500])
async def test_other_statuses_raise_http_status_error_that_is_not_transient(
    chat: OpenAIChatClient, wire: Wire, status: int
) -> None:
    wire.serve(wire.json("error_bad_request.json", status))
    with pytest.raises(HTTPStatusError) as caught:
        await chat.get_response("Hi")
    assert type(caught.value) is HTTPStatusError
    assert caught.value.status_code == status


async def test_an_error_status_when_a_stream_opens_raises_the_mapped_error(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("error_rate_limit.json", 429, {"retry-after": "1"}))
    with pytest.raises(RateLimitError) as caught:
        async for _ in chat.get_streaming_response("Hi"):
            pass
    assert caught.value.retry_after == 1.0
    assert "rate_limit_exceeded" in caught.value.body


async def test_a_refused_connection_raises_connect_error(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.router.post("/chat/completions").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ConnectError) as caught:
        await chat.get_response("Hi")
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)
    assert "refused" in str(caught.value)


async def test_a_timeout_raises_timeout_error(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.router.post("/chat/completions").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ServiceTimeoutError) as caught:
        await chat.get_response("Hi")
    assert isinstance(caught.value.__cause__, openai.APITimeoutError)


async def test_an_error_event_mid_stream_raises_run_error_after_the_first_update(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_error_midway.sse"))
    seen: list[str] = []
    with pytest.raises(RunError) as caught:
        async for update in chat.get_streaming_response("Hi"):
            seen.append(update.text)
    assert seen == ["Let me"]
    assert caught.value.code == "model_error"
    assert "The model produced invalid content." in str(caught.value)
    assert isinstance(caught.value.__cause__, openai.APIError)


async def test_a_connection_lost_mid_stream_raises_connect_error(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    first = (FIXTURES / "stream_text.sse").read_bytes().split(b"\n\n")[1] + b"\n\n"

    async def body() -> AsyncIterator[bytes]:
        yield first
        raise httpx.ReadError("connection reset")

    wire.serve(httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body()))
    seen: list[str] = []
    with pytest.raises(ConnectError):
        async for update in chat.get_streaming_response("Hi"):
            seen.append(update.text)
    assert seen == ["It is"]


#: A header value that stands for the HTTP date 30 seconds after the request.
IN_30_SECONDS = "<in 30 seconds>"


@pytest.mark.parametrize(
    ("headers", "low", "high"),
    [
        ({"Retry-After": "7"}, 7.0, 7.0),
        ({"Retry-After": IN_30_SECONDS}, 28.0, 30.0),  # an HTTP date, to the second
        ({"retry-after-ms": "1500", "retry-after": "2"}, 1.5, 1.5),  # OpenAI's own wins
        ({"retry-after-ms": "soon", "retry-after": "2"}, 2.0, 2.0),
    ],
)
async def test_retry_after_reads_seconds_a_date_or_openais_milliseconds(
    chat: OpenAIChatClient, wire: Wire, headers: dict[str, str], low: float, high: float
) -> None:
    if headers.get("Retry-After") == IN_30_SECONDS:
        then = datetime.now(timezone.utc) + timedelta(seconds=30)
        headers = {"Retry-After": format_datetime(then, usegmt=True)}
    wire.serve(wire.json("error_rate_limit.json", 429, headers))
    with pytest.raises(RateLimitError) as caught:
        await chat.get_response("Hi")
    assert caught.value.retry_after is not None
    assert low <= caught.value.retry_after <= high


@pytest.mark.parametrize("headers", [{"Retry-After": "soon"}, {}])
async def test_retry_after_is_none_when_unreadable(
    chat: OpenAIChatClient, wire: Wire, headers: dict[str, str]
) -> None:
    wire.serve(wire.json("error_rate_limit.json", 429, headers))
    with pytest.raises(RateLimitError) as caught:
        await chat.get_response("Hi")
    assert caught.value.retry_after is None
