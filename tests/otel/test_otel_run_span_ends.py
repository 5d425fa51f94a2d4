"""How an AG-UI run span ends when the run does not finish: the caller stopping is
``cancelled``, a failure is ``error`` naming its type; either way the span ends once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import Recorded

from agui_chat.agui import AGUIChatClient
from agui_chat.agui.wire._tracing import start_run_span


def _frame(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


class _Endless(httpx.AsyncByteStream):
    """A run that streams text deltas and never finishes."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        ids = {"threadId": self.body["threadId"], "runId": self.body["runId"]}
        yield _frame({"type": "RUN_STARTED", **ids})
        yield _frame({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
        for i in range(1000):
            yield _frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i}"})


async def test_a_caller_that_stops_reading_ends_the_client_span_as_cancelled(
    global_otel: Recorded,
) -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        stream = _Endless(json.loads(request.content))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http:
        client = AGUIChatClient("http://agent.test/run", http_client=http)
        stream: Any = client.get_streaming_response("hi")
        for _ in range(3):
            await anext(stream)
        await stream.aclose()
    [run] = [s for s in global_otel.spans("agui.run") if s.kind is SpanKind.CLIENT]
    assert (run.attributes or {})["agui.run.outcome"] == "cancelled"
    assert run.status.status_code is not StatusCode.ERROR


@pytest.mark.parametrize("cancelled", [asyncio.CancelledError, GeneratorExit])
def test_the_stop_a_side_names_is_cancelled_and_any_other_failure_an_error(
    global_otel: Recorded, cancelled: type[BaseException]
) -> None:
    stopped = start_run_span("server", "t", "r1")
    failed = start_run_span("server", "t", "r2")
    assert stopped is not None and failed is not None
    with pytest.raises(cancelled), stopped.ended_if_it_fails(cancelled=cancelled):
        raise cancelled()
    with pytest.raises(KeyError), failed.ended_if_it_fails(cancelled=cancelled):
        raise KeyError("x")
    outcome = {
        (s.attributes or {})["agui.run.id"]: (
            (s.attributes or {})["agui.run.outcome"],
            (s.attributes or {}).get("error.type"),
        )
        for s in global_otel.spans("agui.run")
    }
    assert outcome == {"r1": ("cancelled", None), "r2": ("error", "KeyError")}


def test_a_block_that_succeeds_leaves_the_span_open(global_otel: Recorded) -> None:
    span = start_run_span("server", "t", "r")
    assert span is not None
    with span.ended_if_it_fails(cancelled=asyncio.CancelledError):
        pass
    assert global_otel.spans("agui.run") == []
    span.end("success")
    assert len(global_otel.spans("agui.run")) == 1
