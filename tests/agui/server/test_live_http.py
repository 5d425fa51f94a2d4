"""AGUIServer over real HTTP (uvicorn on 127.0.0.1): the stream as a live client sees it,
and a client that leaves mid-run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from ag_ui_validate import ValidatorOptions
from ag_ui_validate.transport import TransportOptions, validate_endpoint
from server_support import Tools, run_input, scripted, sse_events, user

from agui_chat import FunctionCallContent, ai_function
from agui_server import agui_server

Start = Callable[[Any], Awaitable[str]]


async def test_a_live_run_passes_ag_ui_validate_over_http(live_server: Start, tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "lookup", {"city": "Rome"})], "Sunny in Rome.")
    url = await live_server(agui_server(model, tools=[tools.lookup()]).app)
    result = await validate_endpoint(
        url,
        TransportOptions(
            validator=ValidatorOptions(), input=run_input(user("weather?")), timeout_ms=10_000
        ),
    )
    assert result.status == 200
    assert result.content_type is not None and result.content_type.startswith("text/event-stream")
    problems = [d for d in result.report.diagnostics if d.severity in ("error", "warning")]
    assert problems == [], problems
    assert result.event_count == 11
    assert tools.count("lookup") == 1


async def test_a_client_that_disconnects_mid_run_cancels_it_and_later_tools_never_run(
    live_server: Start, tools: Tools
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @ai_function
    async def long_export() -> str:
        """Export everything (slow)."""
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "exported"

    batch = [
        FunctionCallContent("c1", "long_export", {}),
        FunctionCallContent("c2", "lookup", {"city": "Rome"}),
    ]
    agent = agui_server(scripted(batch, "never said"), tools=[long_export, tools.lookup()])
    url = await live_server(agent.app)
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url, json=run_input(user("export"))) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if '"TOOL_CALL_END","toolCallId":"c2"' in line:
                break  # both calls are announced; the first one is about to run
        await asyncio.wait_for(started.wait(), timeout=10)
    # The connection is closed mid-run.
    await asyncio.wait_for(cancelled.wait(), timeout=10)
    for _ in range(5):
        await asyncio.sleep(0)  # anything that would run after the cancel gets its chance
    assert tools.count("lookup") == 0


async def test_keepalive_comments_reach_a_live_client(live_server: Start) -> None:
    release = asyncio.Event()

    @ai_function
    async def wait_for_it() -> str:
        """Wait."""
        await release.wait()
        return "done"

    model = scripted([FunctionCallContent("c1", "wait_for_it", {})], "Finished.")
    agent = agui_server(model, tools=[wait_for_it], keepalive_seconds=0.01)
    url = await live_server(agent.app)
    body = b""
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url, json=run_input(user("go"))) as response,
    ):
        async for chunk in response.aiter_raw():
            body += chunk
            if b": keepalive" in body:
                release.set()
    assert b": keepalive\n\n" in body
    assert sse_events(body)[-1]["type"] == "RUN_FINISHED"
