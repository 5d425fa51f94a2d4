"""Helpers for the AGUIServer tests: reading the SSE the server writes and tools that count
how often they ran (the server and its in-process client come from ``agui_server``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
