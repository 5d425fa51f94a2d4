"""How AGUIChatClient fails: HTTP errors, protocol violations, truncation and RUN_ERROR."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from agui_client_support import (
    Agent,
    BrokenStream,
    finished,
    frame,
    run,
    sse,
    started,
    text,
    tool_call,
)

from agui_chat import (
    AuthenticationError,
    ChatFinishReason,
    ChatOptions,
    ErrorContent,
    HTTPStatusError,
    ProtocolError,
    RateLimitError,
    RunError,
    ServiceUnavailableError,
    TransportError,
    TruncatedStreamError,
    ai_function,
)


def run_error(message: str, code: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "RUN_ERROR", "message": message}
    if code is not None:
        event["code"] = code
    return event


async def test_an_http_error_status_keeps_its_status_and_body() -> None:
    agent = Agent(httpx.Response(422, json={"detail": "threadId missing"}))

    async with agent.client() as client:
        with pytest.raises(HTTPStatusError) as caught:
            await client.get_response("hi")

    assert caught.value.status_code == 422
    assert caught.value.body == '{"detail":"threadId missing"}'
    assert "422" in str(caught.value) and "threadId missing" in str(caught.value)


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_credentials_are_an_authentication_error(status: int) -> None:
    agent = Agent(httpx.Response(status, text="no"))

    async with agent.client() as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.get_response("hi")

    assert caught.value.status_code == status


async def test_a_rate_limit_that_outlasts_the_retries_is_a_rate_limit_error() -> None:
    agent = Agent(*[httpx.Response(429, headers={"Retry-After": "2"}, text="slow down")] * 2)

    async with agent.client(max_retries=1) as client:
        with pytest.raises(RateLimitError) as caught:
            await client.get_response("hi")

    assert caught.value.retry_after == 2.0
    assert caught.value.body == "slow down"


async def test_an_unavailable_service_is_a_service_unavailable_error() -> None:
    agent = Agent(httpx.Response(503, text="down"))

    async with agent.client(max_retries=0) as client:
        with pytest.raises(ServiceUnavailableError) as caught:
            await client.get_response("hi")

    assert caught.value.status_code == 503


async def test_a_body_that_is_not_server_sent_events_is_a_protocol_error() -> None:
    agent = Agent(httpx.Response(200, json={"type": "RUN_STARTED"}))

    async with agent.client() as client:
        with pytest.raises(ProtocolError, match="application/json"):
            await client.get_response("hi")


async def test_a_stream_that_breaks_the_protocol_is_a_protocol_error() -> None:
    agent = Agent(lambda b: [{"type": "TEXT_MESSAGE_START", "messageId": "m1"}])

    async with agent.client() as client:
        with pytest.raises(ProtocolError, match="First event must be RUN_STARTED"):
            await client.get_response("hi")


async def test_a_thread_other_than_the_requested_one_is_a_protocol_error() -> None:
    agent = Agent(lambda b: [{"type": "RUN_STARTED", "threadId": "other", "runId": "r"}])

    async with agent.client() as client:
        with pytest.raises(ProtocolError, match="threadId"):
            await client.get_response("hi")


async def test_a_stream_that_ends_inside_its_run_is_truncated_never_a_success() -> None:
    agent = Agent(lambda b: [started(b), *text("m1", "partial")])
    seen: list[str] = []

    async with agent.client() as client:
        with pytest.raises(TruncatedStreamError):
            async for update in client.get_streaming_response("hi"):
                seen.append(update.text)

    assert "partial" in seen  # what arrived was delivered; the run still has no outcome


async def test_an_empty_body_is_truncated() -> None:
    agent = Agent(b"")

    async with agent.client() as client:
        with pytest.raises(TruncatedStreamError):
            await client.get_response("hi")


async def test_a_connection_that_breaks_mid_run_is_a_transport_error() -> None:
    def broken(body: dict[str, Any]) -> httpx.Response:
        chunks = [frame(started(body)), *[frame(e) for e in text("m1", "par")][:2]]
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=BrokenStream(chunks, httpx.ReadError("reset")),
        )

    agent = Agent(broken)
    async with agent.client() as client:
        with pytest.raises(TransportError, match="while reading the event stream"):
            await client.get_response("hi")


async def test_a_connection_that_breaks_after_the_run_ended_still_gives_the_response() -> None:
    warnings: list[str] = []

    def broken(body: dict[str, Any]) -> httpx.Response:
        chunks = [sse(run(body, text("m1", "done")))]
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=BrokenStream(chunks, httpx.ReadError("reset")),
        )

    agent = Agent(broken)
    async with agent.client(on_warning=warnings.append) as client:
        response = await client.get_response("hi")

    assert response.text == "done"
    assert any("after the last run ended" in w for w in warnings)


async def test_run_error_yields_error_content_then_raises_run_error() -> None:
    agent = Agent(lambda b: [started(b), run_error("model overloaded", "OVERLOADED")])
    updates = []

    async with agent.client() as client:
        with pytest.raises(RunError) as caught:
            async for update in client.get_streaming_response("hi"):
                updates.append(update)

    assert (caught.value.message, caught.value.code) == ("model overloaded", "OVERLOADED")
    (error,) = updates[-1].contents
    assert isinstance(error, ErrorContent)
    assert (error.message, error.error_code) == ("model overloaded", "OVERLOADED")
    assert updates[-1].finish_reason == ChatFinishReason.ERROR


async def test_run_error_arrives_as_error_content_when_raising_is_off() -> None:
    agent = Agent(lambda b: [started(b), run_error("boom")])

    async with agent.client(raise_on_run_error=False) as client:
        response = await client.get_response("hi")

    assert response.finish_reason == ChatFinishReason.ERROR
    errors = [c for m in response.messages for c in m.contents if isinstance(c, ErrorContent)]
    assert [e.message for e in errors] == ["boom"]


async def test_a_stream_may_open_with_run_error() -> None:
    agent = Agent(lambda b: [run_error("rejected input", "BAD_INPUT")])

    async with agent.client() as client:
        with pytest.raises(RunError, match="rejected input"):
            await client.get_response("hi")


async def test_a_late_run_error_after_run_finished_fails_the_run() -> None:
    agent = Agent(lambda b: [*run(b, text("m1", "ok")), run_error("late failure")])

    async with agent.client() as client:
        with pytest.raises(RunError, match="late failure"):
            await client.get_response("hi")


async def test_a_run_error_followed_by_a_new_run_that_succeeds_is_a_success() -> None:
    agent = Agent(
        lambda b: [
            {"type": "RUN_STARTED", "threadId": b["threadId"], "runId": "first"},
            run_error("transient"),
            *run(b, text("m1", "recovered")),
        ]
    )

    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.finish_reason == ChatFinishReason.STOP
    assert response.text == "recovered"
    assert [
        e.message for m in response.messages for e in m.contents if isinstance(e, ErrorContent)
    ] == ["transient"]


async def test_a_failed_run_does_not_run_its_calls_locally() -> None:
    ran: list[str] = []

    @ai_function
    def remember(note: str) -> str:
        """Remember a note."""
        ran.append(note)
        return "ok"

    agent = Agent(
        lambda b: [
            started(b),
            *tool_call("c1", "remember", '{"note":"x"}'),
            run_error("boom"),
        ]
    )

    async with agent.client(raise_on_run_error=False) as client:
        response = await client.get_response("hi", ChatOptions(tools=[remember]))

    assert ran == []
    assert len(agent.requests) == 1
    assert response.finish_reason == ChatFinishReason.ERROR


async def test_finished_without_a_matching_run_id_is_a_protocol_error() -> None:
    agent = Agent(lambda b: [started(b), {**finished(b), "runId": "elsewhere"}])

    async with agent.client() as client:
        with pytest.raises(ProtocolError, match="runId"):
            await client.get_response("hi")


async def test_a_last_event_without_its_blank_line_is_discarded_and_truncates() -> None:
    warnings: list[str] = []
    agent = Agent(lambda b: sse([started(b)]) + frame(finished(b)).rstrip(b"\n") + b"\n")

    async with agent.client(on_warning=warnings.append) as client:
        with pytest.raises(TruncatedStreamError):
            await client.get_response("hi")

    assert any("unfinished SSE event" in w for w in warnings)
