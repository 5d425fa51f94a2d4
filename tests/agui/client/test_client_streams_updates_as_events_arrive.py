"""Issue 4 item 4 (ag-ui issue 2577, meai-notes §7): updates reach a streaming caller as
their events arrive, never held back until the run or its tool results are over — with and
without the caller's own tools (the tool loop inside the client).

The server below sends the rest of its stream only after the caller has seen a given update;
a client that buffered would wait for it forever, which the bound turns into a failure."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from agui_client_support import ENDPOINT, finished, frame, started

from agui_chat import (
    ChatOptions,
    ChatResponseUpdate,
    FunctionCallContent,
    FunctionCallUpdateContent,
    ai_function,
)
from agui_chat.agui import AGUIChatClient

#: A client that held updates back never gets here; a working one needs milliseconds.
BOUND = 5.0


@ai_function
def now(zone: str) -> str:
    """The time in a zone (a client-side tool, so the tool loop sits inside the client)."""
    return "12:00"


class GatedStream(httpx.AsyncByteStream):
    """RUN_STARTED and the first part of a tool call; the rest only once ``gate`` is set."""

    def __init__(self, body: dict[str, Any], gate: asyncio.Event, split: int) -> None:
        self.body, self.gate, self.split = body, gate, split

    async def __aiter__(self) -> AsyncIterator[bytes]:
        events = [
            started(self.body),
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "search"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q":'},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '"cats"}'},
            {"type": "TOOL_CALL_END", "toolCallId": "c1"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "searching"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "3"},
            finished(self.body),
        ]
        for event in events[: self.split]:
            yield frame(event)
        await self.gate.wait()
        for event in events[self.split :]:
            yield frame(event)


async def consume_until(
    split: int, seen_enough: Callable[[ChatResponseUpdate], bool], options: ChatOptions | None
) -> list[str]:
    """Stream a gated run; open the gate once ``seen_enough`` holds for an update."""
    gate = asyncio.Event()

    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        stream = GatedStream(body, gate, split)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    seen: list[str] = []
    http = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    async with http, AGUIChatClient(ENDPOINT, http_client=http) as client:

        async def consume() -> None:
            async for update in client.get_streaming_response("hi", options):
                seen.append(update.raw_representation["type"])
                if seen_enough(update):
                    gate.set()

        await asyncio.wait_for(consume(), BOUND)
    return seen


OPTIONS = {"without the caller's tools": None, "with the caller's tools": ChatOptions(tools=[now])}


def first_argument_delta(update: ChatResponseUpdate) -> bool:
    return any(
        isinstance(c, FunctionCallUpdateContent) and c.arguments_delta for c in update.contents
    )


def finished_call(update: ChatResponseUpdate) -> bool:
    return any(isinstance(c, FunctionCallContent) for c in update.contents)


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
async def test_an_argument_delta_reaches_the_caller_while_the_call_is_still_streaming(
    options: ChatOptions | None,
) -> None:
    seen = await consume_until(3, first_argument_delta, options)

    assert seen[:3] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS"]
    assert seen[-1] == "RUN_FINISHED"


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
async def test_a_finished_call_reaches_the_caller_before_its_result_and_the_run_end(
    options: ChatOptions | None,
) -> None:
    seen = await consume_until(5, finished_call, options)

    assert seen[4] == "TOOL_CALL_END"
    assert seen[-2:] == ["TOOL_CALL_RESULT", "RUN_FINISHED"]
