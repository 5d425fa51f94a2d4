"""Helpers for the AGUIServer tests: reading the SSE the server writes and tools that count
how often they ran (the server and its in-process client come from ``agui_server``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from agui_chat import ApprovalStoreUnavailableError
from agui_chat.stores import ClaimRecord, InMemoryApprovalStore
from agui_server import BASE_URL, SIGNING_KEY, client_for, run_agui
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
    "BASE_URL",
    "SIGNING_KEY",
    "SideEffects",
    "Tools",
    "answer",
    "approve",
    "assert_valid_agui",
    "assistant_calls",
    "cancel",
    "client_for",
    "history_from",
    "reject",
    "run_agui",
    "run_input",
    "scripted",
    "sse_events",
    "tool_result",
    "user",
]

#: The tools the tests use, each recording the arguments of every run.
Tools = SideEffects

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


async def post_and_leave(app: Any, body: dict[str, Any], leave: asyncio.Event) -> None:
    """POST ``body`` to the ASGI ``app`` as a client that goes away once ``leave`` is set
    (what the server then sees is an ``http.disconnect``); returns when the app does."""
    raw = json.dumps(body).encode()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        return None

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", b"application/json")],
        "query_string": b"",
    }
    await asyncio.wait_for(app(scope, receive, send), 10)


async def start_up(app: Any) -> list[dict[str, Any]]:
    """One ASGI lifespan of ``app`` (startup, then shutdown unless the startup failed); the
    messages it sent."""
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[dict[str, Any]] = []

    async def receive() -> Any:
        return next(incoming)

    async def send(message: Any) -> None:
        sent.append(message)

    await app({"type": "lifespan"}, receive, send)
    return sent


class Unreachable(InMemoryApprovalStore):
    """A store whose reads fail while ``down``."""

    down = False

    async def record(self, key: str) -> ClaimRecord | None:
        if self.down:
            raise ApprovalStoreUnavailableError("the store is down")
        return await super().record(key)
