"""The AG-UI run a tool or middleware is part of (:func:`current_run`): its input, and a way
to emit events to the client as the run goes."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import jsonpatch
from ag_ui.core import BaseEvent, RunAgentInput

from ._encode import event_to_wire

EventSink = Callable[[dict[str, Any]], None]


class AGUIRunContext:
    """One AG-UI run as its tools and middleware see it.

    ``state`` starts as the state the client sent and follows every snapshot and delta
    emitted through this context, so a tool always reads the state the client will have.
    """

    def __init__(self, run_input: RunAgentInput, sink: EventSink) -> None:
        self.input = run_input
        self.thread_id: str = run_input.thread_id
        self.run_id: str = run_input.run_id
        self.state: Any = {} if run_input.state is None else run_input.state
        self.context: list[dict[str, str]] = [
            {"description": c.description, "value": c.value} for c in run_input.context or []
        ]
        self.forwarded_props: Any = run_input.forwarded_props
        self._sink = sink

    def emit(self, event: Mapping[str, Any] | BaseEvent) -> None:
        """Send an AG-UI event (an ``ag_ui.core`` event or a dict with wire keys) now;
        ``ValueError`` without a ``type`` string."""
        data = event_to_wire(event) if isinstance(event, BaseEvent) else dict(event)
        if not isinstance(data.get("type"), str):
            raise ValueError("an AG-UI event needs a 'type' string")
        self._sink(data)

    def emit_state_snapshot(self, state: Any) -> None:
        """Replace the client's state with ``state`` (``STATE_SNAPSHOT``)."""
        self.state = copy.deepcopy(state)
        self._sink({"type": "STATE_SNAPSHOT", "snapshot": state})

    def emit_state_delta(self, patch: Sequence[Mapping[str, Any]]) -> None:
        """Change the client's state with an RFC 6902 JSON Patch (``STATE_DELTA``), applied
        to ``state`` first: one that does not apply raises ``ValueError``, nothing sent."""
        operations = [dict(op) for op in patch]
        try:
            self.state = jsonpatch.apply_patch(self.state, operations)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise ValueError(f"the state patch does not apply: {exc}") from exc
        self._sink({"type": "STATE_DELTA", "delta": operations})


_current: ContextVar[AGUIRunContext | None] = ContextVar("agui_chat_current_run", default=None)


def current_run() -> AGUIRunContext | None:
    """The AG-UI run being served now, or ``None`` outside a run hosted by ``AGUIServer``."""
    return _current.get()


def activate(context: AGUIRunContext) -> None:
    """Make ``context`` the current run for the rest of the calling task (and the tasks it
    starts)."""
    _current.set(context)
