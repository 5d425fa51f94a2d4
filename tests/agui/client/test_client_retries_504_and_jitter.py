"""Issue 4 item 8, the parts the other retry tests leave out: a 504 before the first event is
retried like 502/503, and the backoff is jittered (clients that failed together do not come
back together)."""

from __future__ import annotations

from typing import Any

import httpx
from agui_client_support import Agent, run, text


def ok(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("m1", "ok"))


async def test_a_504_then_success_is_retried_and_succeeds() -> None:
    agent = Agent(httpx.Response(504, text="gateway timeout"), ok)

    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.text == "ok"
    assert len(agent.requests) == 2
    first, second = agent.bodies
    assert first["runId"] != second["runId"]  # the upstream may have started the first run
    assert {**first, "runId": None} == {**second, "runId": None}


async def test_clients_that_fail_together_wait_different_jittered_delays() -> None:
    first_delays: list[float] = []
    for _ in range(8):
        agent = Agent(httpx.Response(503), ok)
        async with agent.client() as client:
            await client.get_response("hi")
            first_delays += client.retry_delays  # type: ignore[attr-defined]

    assert len(first_delays) == 8
    # Exponential base 0.5 s for a first retry, plus up to one base delay of jitter.
    assert all(0.5 <= d <= 1.0 for d in first_delays), first_delays
    assert len(set(first_delays)) > 1, "every client waited exactly as long: no jitter"
