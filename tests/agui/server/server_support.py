"""Helpers for the AGUIServer tests: request bodies, reading and validating the SSE the
server writes, and tools that count how often they ran."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from agui_streams import (
    SideEffects,
    answer,
    approve,
    assert_valid_agui,
    assistant_calls,
    cancel,
    history_from,
    reject,
    run_input,
    scripted,
    sse_events,
    tool_result,
    user,
)

__all__ = [
    "SideEffects",
    "Tools",
    "answer",
    "approve",
    "assert_valid_agui",
    "assistant_calls",
    "cancel",
    "history_from",
    "reject",
    "run_input",
    "scripted",
    "sse_events",
    "tool_result",
    "user",
]

#: The tools the tests use, each recording the arguments of every run.
Tools = SideEffects

SIGNING_KEY = "test-signing-key-0123456789abcdef"
BASE_URL = "http://agui.test"


# -- request bodies ------------------------------------------------------------------------------


# -- reading the stream ------------------------------------------------------------------------


def refused_before_the_run(events: Sequence[dict[str, Any]], code: str) -> dict[str, Any]:
    """The stream opened with ``RUN_ERROR`` carrying ``code`` and held nothing else: the
    resume was refused before a run existed (no ``RUN_STARTED``, nothing ran)."""
    assert types(events) == ["RUN_ERROR"], types(events)
    assert events[0]["code"] == code, events[0]
    return events[0]


def of_type(events: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def types(events: Sequence[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def outcome(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    result: dict[str, Any] = events[-1]["outcome"]
    return result


def interrupts(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    finished = outcome(events)
    assert finished["type"] == "interrupt", finished
    found: list[dict[str, Any]] = finished["interrupts"]
    return found


def run_error(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "RUN_ERROR", events[-1]
    return events[-1]


def text_of(events: Sequence[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in of_type(events, "TEXT_MESSAGE_CONTENT"))


# -- calling the server ------------------------------------------------------------------------


def client_for(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)


async def run_agui(app: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST one run through ASGITransport; check the response is a valid AG-UI stream and
    return its events."""
    async with client_for(app) as client:
        response = await client.post("/", json=body, headers={"accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.content)
    assert_valid_agui(events, resumed=bool(body.get("resume")))
    return events
