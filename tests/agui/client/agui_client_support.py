"""Helpers for driving ``AGUIChatClient`` against a scripted AG-UI endpoint (no network).

``Agent`` is an ``httpx.MockTransport`` handler: each request gets the next script, and
every request is recorded (headers and parsed ``RunAgentInput``). A script is a list of
events, bytes, an ``httpx.Response``, or a callable taking the request body and returning
one of those (so it can echo the request's ``threadId``/``runId``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx

from agui_chat.agui import AGUIChatClient

ENDPOINT = "http://agent.test/run"

Event = dict[str, Any]
Script = Any


def frame(event: Event, *, space: bool = True, newline: str = "\n") -> bytes:
    """One SSE frame holding ``event``."""
    prefix = "data: " if space else "data:"
    text = prefix + json.dumps(event, separators=(",", ":")) + newline + newline
    return text.encode("utf-8")


def sse(events: Iterable[Event]) -> bytes:
    """The SSE body for ``events``, framed as the Python encoder frames them."""
    return b"".join(frame(e) for e in events)


def started(body: dict[str, Any]) -> Event:
    return {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]}


def finished(body: dict[str, Any], outcome: dict[str, Any] | None = None, **extra: Any) -> Event:
    event: Event = {"type": "RUN_FINISHED", "threadId": body["threadId"], "runId": body["runId"]}
    if outcome is not None:
        event["outcome"] = outcome
    event.update(extra)
    return event


def run(
    body: dict[str, Any], *events: Event | list[Event], outcome: dict[str, Any] | None = None
) -> list[Event]:
    """A whole run echoing the request's ids: RUN_STARTED, ``events``, RUN_FINISHED."""
    flat: list[Event] = []
    for item in events:
        flat.extend(item if isinstance(item, list) else [item])
    return [started(body), *flat, finished(body, outcome)]


def text(message_id: str, *deltas: str, role: str | None = None) -> list[Event]:
    start: Event = {"type": "TEXT_MESSAGE_START", "messageId": message_id}
    if role is not None:
        start["role"] = role
    return [
        start,
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def tool_call(call_id: str, name: str, *deltas: str, parent: str | None = None) -> list[Event]:
    start: Event = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    if parent is not None:
        start["parentMessageId"] = parent
    return [
        start,
        *({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": d} for d in deltas),
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def tool_result(message_id: str, call_id: str, content: Any) -> Event:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": message_id,
        "toolCallId": call_id,
        "content": content,
    }


def sse_response(content: bytes, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, headers={"content-type": "text/event-stream", **headers}, content=content
    )


class BrokenStream(httpx.AsyncByteStream):
    """A body that sends ``chunks`` and then fails with ``error``."""

    def __init__(self, chunks: list[bytes], error: Exception) -> None:
        self.chunks = chunks
        self.error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise self.error


class Agent:
    """A scripted AG-UI endpoint that records every request it gets."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def add(self, *scripts: Script) -> None:
        self.scripts.extend(scripts)

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content) if request.content else {}
        self.bodies.append(body)
        if not self.scripts:
            raise AssertionError(f"unexpected request #{len(self.requests)}: {body}")
        script = self.scripts.pop(0)
        if callable(script) and not isinstance(script, httpx.Response):
            script = script(body)
        if isinstance(script, Exception):
            raise script
        if isinstance(script, httpx.Response):
            return script
        if isinstance(script, bytes):
            return sse_response(script)
        return sse_response(sse(script))

    @property
    def last(self) -> dict[str, Any]:
        return self.bodies[-1]

    def http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))

    def client(self, **kwargs: Any) -> AGUIChatClient:
        """An ``AGUIChatClient`` for this agent that records the delays it would wait."""
        client = AGUIChatClient(ENDPOINT, http_client=self.http_client(), **kwargs)
        delays: list[float] = []

        async def record(delay: float) -> None:
            delays.append(delay)

        client._transport._sleep = record
        client.retry_delays = delays  # type: ignore[attr-defined]
        return client
