"""Helpers for the robustness tests over real HTTP: free ports, run inputs, reading the SSE a
server wrote, tools that count their side effects, and small ASGI building blocks."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from typing import Any

import httpx

from agui_chat import FunctionCallContent
from agui_server import SIGNING_KEY as SIGNING_KEY  # the one test key, also for child servers
from agui_streams import SideEffects as SideEffects  # re-exported for the tests
from agui_streams import approve as approve
from agui_streams import assistant_calls as assistant_calls
from agui_streams import history_from as history_from
from agui_streams import run_input as run_input
from agui_streams import scripted as scripted
from agui_streams import user as user

SSE_HEADERS = [(b"content-type", b"text/event-stream")]

Event = dict[str, Any]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- reading what the server wrote ---------------------------------------------------------------


def sse_events(body: bytes) -> list[Event]:
    """The events of an SSE body as our server frames it (LF, one ``data:`` line each)."""
    events = []
    for block in body.decode("utf-8").split("\n\n"):
        data = [line[len("data: ") :] for line in block.split("\n") if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def types(events: Sequence[Event]) -> list[str]:
    return [e["type"] for e in events]


def interrupts_of(events: Sequence[Event]) -> list[Event]:
    last = events[-1]
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "interrupt", last
    found: list[Event] = last["outcome"]["interrupts"]
    return found


async def post_run(url: str, body: Any) -> httpx.Response:
    """POST one run input as JSON with plain httpx (no AG-UI client in the way)."""
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(url, json=body, headers={"accept": "text/event-stream"})


async def post_raw(url: str, content: Any, headers: dict[str, str]) -> httpx.Response:
    """POST ``content`` (bytes, or an async iterator of chunks) exactly as given."""
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(url, content=content, headers=headers)


async def run_events(url: str, body: Event) -> list[Event]:
    """POST a run input; the response must be a 200 event stream; return its events."""
    response = await post_run(url, body)
    assert response.status_code == 200, response.text
    return sse_events(response.content)


def refused_with(events: Sequence[Event]) -> str:
    """The stream opened with RUN_ERROR and held nothing else (the resume was refused before
    any run existed, agui-wire §5.4; nothing ran, nothing was emitted): return its code."""
    assert types(events) == ["RUN_ERROR"], types(events)
    code: str = events[0]["code"]
    return code


# -- models and tools ---------------------------------------------------------------------------


def delete_call(call_id: str = "c1", path: str = "a.txt") -> list[FunctionCallContent]:
    return [FunctionCallContent(call_id, "delete_file", {"path": path})]
