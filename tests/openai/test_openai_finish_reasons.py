"""Every Chat Completions finish reason maps to ours, whole and streamed; one we do not
know is kept as it is rather than dropped."""

from __future__ import annotations

import json

import httpx
import pytest
from openai_wire import FIXTURES, Wire

from agui_chat import ChatFinishReason, ChatResponse
from agui_chat.openai import OpenAIChatClient

MAPPED = [
    ("stop", ChatFinishReason.STOP),
    ("length", ChatFinishReason.LENGTH),
    ("tool_calls", ChatFinishReason.TOOL_CALLS),
    ("function_call", ChatFinishReason.TOOL_CALLS),
    ("content_filter", ChatFinishReason.CONTENT_FILTER),
    ("something_new", ChatFinishReason("something_new")),
]


def _completion_ending(reason: str) -> httpx.Response:
    body = json.loads((FIXTURES / "completion_text.json").read_text())
    body["choices"][0]["finish_reason"] = reason
    return httpx.Response(200, json=body)


def _stream_ending(reason: str) -> httpx.Response:
    text = (FIXTURES / "stream_text.sse").read_text()
    assert text.count('"finish_reason":"stop"') == 1
    return httpx.Response(
        200,
        content=text.replace('"finish_reason":"stop"', f'"finish_reason":"{reason}"').encode(),
        headers={"content-type": "text/event-stream"},
    )


@pytest.mark.parametrize(("wire_reason", "ours"), MAPPED, ids=[m[0] for m in MAPPED])
async def test_a_finish_reason_is_mapped(
    chat: OpenAIChatClient, wire: Wire, wire_reason: str, ours: ChatFinishReason
) -> None:
    wire.serve(_completion_ending(wire_reason))
    response = await chat.get_response("Hi")
    assert response.finish_reason == ours


@pytest.mark.parametrize(("wire_reason", "ours"), MAPPED, ids=[m[0] for m in MAPPED])
async def test_a_streamed_finish_reason_is_mapped(
    chat: OpenAIChatClient, wire: Wire, wire_reason: str, ours: ChatFinishReason
) -> None:
    wire.serve(_stream_ending(wire_reason))
    updates = [u async for u in chat.get_streaming_response("Hi")]
    assert ChatResponse.from_updates(updates).finish_reason == ours
