"""A caller that stops reading an AGUIChatClient stream early releases the HTTP response at
once — with and without the caller's own tools (the tool loop inside the client)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from agui_client_support import ENDPOINT, finished, frame, started

from agui_chat import ChatOptions, ai_function
from agui_chat.agui import AGUIChatClient


@ai_function
def now(zone: str) -> str:
    """The time in a zone (a client-side tool, so the tool loop sits inside the client)."""
    return "12:00"


class LongStream(httpx.AsyncByteStream):
    """A run of many text deltas; notes when the client closes the response."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield frame(started(self.body))
        yield frame({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
        for i in range(1000):
            yield frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"w{i} "})
        yield frame({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
        yield frame(finished(self.body))

    async def aclose(self) -> None:
        self.closed = True


OPTIONS = {"without the caller's tools": None, "with the caller's tools": ChatOptions(tools=[now])}


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
async def test_closing_the_stream_early_closes_the_http_response_at_once(
    options: ChatOptions | None,
) -> None:
    streams: list[LongStream] = []

    def respond(request: httpx.Request) -> httpx.Response:
        streams.append(LongStream(json.loads(request.content)))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=streams[-1]
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http:
        client = AGUIChatClient(ENDPOINT, http_client=http)
        stream: Any = client.get_streaming_response("hi", options)
        seen = [await anext(stream) for _ in range(3)]
        assert [u.raw_representation["type"] for u in seen][:2] == [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
        ]
        assert not streams[0].closed

        await stream.aclose()

        assert streams[0].closed
