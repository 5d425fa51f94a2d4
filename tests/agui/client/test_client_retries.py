"""Retries: transient failures before the first event are retried, nothing after it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from agui_client_support import Agent, BrokenStream, frame, run, started, text

from agui_chat import ConnectError, HTTPStatusError, ServiceTimeoutError


def ok(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("m1", "ok"))


async def test_a_503_then_success_is_retried_and_succeeds() -> None:
    agent = Agent(httpx.Response(503, text="warming up"), ok)

    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.text == "ok"
    assert len(agent.requests) == 2
    # The server may have started the run that stalled: the retry is a new run (agui-wire
    # §1.2), on the same thread, and the response is the new run's.
    first, second = agent.bodies
    assert first["runId"] != second["runId"]
    assert without_run_id(first) == without_run_id(second)
    assert response.response_id == second["runId"]


def without_run_id(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "runId"}


async def test_a_retry_sends_the_same_run_input_as_a_new_run() -> None:
    agent = Agent(httpx.Response(502), ok)

    async with agent.client() as client:
        await client.get_response("hi")

    # A gateway's 502 does not say whether the run started: the retry is a new run.
    assert without_run_id(agent.bodies[0]) == without_run_id(agent.bodies[1])
    assert agent.bodies[0]["runId"] != agent.bodies[1]["runId"]


async def test_a_429_waits_as_long_as_retry_after_says() -> None:
    agent = Agent(httpx.Response(429, headers={"Retry-After": "7"}), ok)

    async with agent.client() as client:
        await client.get_response("hi")
        delays = client.retry_delays  # type: ignore[attr-defined]

    assert delays == [7.0]
    assert len(agent.requests) == 2


async def test_a_retry_after_beyond_the_cap_is_capped() -> None:
    agent = Agent(httpx.Response(429, headers={"Retry-After": "3600"}), ok)

    async with agent.client() as client:
        await client.get_response("hi")
        delays = client.retry_delays  # type: ignore[attr-defined]

    assert delays == [client._transport.retry_max_delay]


async def test_backoff_grows_between_attempts() -> None:
    agent = Agent(*[httpx.Response(503)] * 3, ok)

    async with agent.client() as client:
        await client.get_response("hi")
        delays = client.retry_delays  # type: ignore[attr-defined]

    assert len(delays) == 3
    assert 0.5 <= delays[0] < 1.0 and 1.0 <= delays[1] < 1.5 and 2.0 <= delays[2] < 2.5


async def test_a_refused_connection_is_retried_and_then_succeeds() -> None:
    agent = Agent(httpx.ConnectError("connection refused"), ok)

    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.text == "ok"
    assert len(agent.requests) == 2


async def test_attempts_are_bounded_by_max_retries() -> None:
    agent = Agent(*[httpx.ConnectError("refused")] * 3)

    async with agent.client(max_retries=2) as client:
        with pytest.raises(ConnectError, match="could not connect"):
            await client.get_response("hi")

    assert len(agent.requests) == 3


async def test_an_http_error_that_is_not_transient_is_not_retried() -> None:
    agent = Agent(httpx.Response(400, text="bad input"))

    async with agent.client() as client:
        with pytest.raises(HTTPStatusError, match="400"):
            await client.get_response("hi")

    assert len(agent.requests) == 1


async def test_nothing_is_retried_once_an_event_has_arrived() -> None:
    def breaks_after_first_event(body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=BrokenStream([frame(started(body))], httpx.ReadTimeout("stalled")),
        )

    agent = Agent(breaks_after_first_event, ok)
    seen: list[str] = []

    async with agent.client() as client:
        with pytest.raises(ServiceTimeoutError, match="while reading"):
            async for update in client.get_streaming_response("hi"):
                seen.append(update.raw_representation["type"])

    assert seen == ["RUN_STARTED"]
    assert len(agent.requests) == 1


async def test_a_timeout_before_the_first_event_is_retried() -> None:
    def stalls(body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=BrokenStream([b": keep-alive\n\n"], httpx.ReadTimeout("stalled")),
        )

    agent = Agent(stalls, ok)

    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.text == "ok"
    assert len(agent.requests) == 2
