"""The LangGraph dialect: ag-ui-langgraph's default way of pausing, and of being resumed.

By default ag-ui-langgraph (0.0.x) ends a paused run with one ``CUSTOM`` ``on_interrupt`` per
pending ``interrupt()`` (``value``: the value as a JSON string; ``rawEvent``, when raw events
are on: the LangGraph ``Interrupt`` with its id) and a ``RUN_FINISHED`` without an outcome,
and expects the answers in ``forwardedProps.command.resume``: one as the value itself,
several keyed by LangGraph interrupt id. :class:`LangGraphLegacyReader` gives that finish the
``interrupt`` outcome ag-ui-langgraph's own 1.0 mode would send; a finish with an outcome of
its own is left as it is (1.0 wins).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CANCELLED_SENTINEL", "LangGraphLegacyReader", "is_langgraph_interrupt", "langgraph_id"]

Event = dict[str, Any]

#: What ag-ui-langgraph itself turns a cancelled AG-UI resume entry into (its graphs know it).
CANCELLED_SENTINEL = "__agui_cancelled__"
#: The id given to an ``on_interrupt`` whose LangGraph interrupt id was not sent.
LEGACY_INTERRUPT_ID_PREFIX = "langgraph-interrupt:"

_FIELDS = (
    ("toolCallId", "tool_call_id"),
    ("responseSchema", "response_schema"),
    ("expiresAt", "expires_at"),
)


class LangGraphLegacyReader:
    """Reads one stream's ``on_interrupt`` events and the outcome-less finish after them."""

    def __init__(self) -> None:
        self._values: list[tuple[Any, str | None]] = []

    def read(self, event: Event) -> Event | None:
        """The event to deliver instead of ``event`` (``None``: deliver it as is): only an
        outcome-less ``RUN_FINISHED`` after ``on_interrupt`` events is rewritten."""
        kind = event["type"]
        if kind == "CUSTOM":
            if event.get("name") == "on_interrupt":
                self._keep(event)
            return None
        values, self._values = self._values, []  # a run started, failed or finished
        if kind != "RUN_FINISHED" or not values or event.get("outcome") is not None:
            return None
        interrupts = [
            _interrupt(value, interrupt_id, f"{event['runId']}:{index}")
            for index, (value, interrupt_id) in enumerate(values)
        ]
        return {**event, "outcome": {"type": "interrupt", "interrupts": interrupts}}

    def _keep(self, event: Event) -> None:
        value = event.get("value")
        if isinstance(value, str):
            with contextlib.suppress(ValueError):  # else a plain string: the value itself
                value = json.loads(value)
        raw = event.get("rawEvent")
        interrupt_id = raw.get("id") if isinstance(raw, Mapping) else None
        self._values.append((value, interrupt_id if isinstance(interrupt_id, str) else None))


def _interrupt(value: Any, interrupt_id: str | None, fallback: str) -> dict[str, Any]:
    """An AG-UI interrupt for one LangGraph interrupt value, as ag-ui-langgraph maps it."""
    fields = value if isinstance(value, Mapping) else {}
    reason = fields.get("reason")
    out: dict[str, Any] = {
        "id": interrupt_id or LEGACY_INTERRUPT_ID_PREFIX + fallback,
        "reason": reason if isinstance(reason, str) else "langgraph:interrupt",
    }
    message = value if isinstance(value, str) else fields.get("message")
    if isinstance(message, str):
        out["message"] = message
    if isinstance(fields.get("description"), str) and "message" not in out:
        out["message"] = fields["description"]
    for camel, snake in _FIELDS:
        found = fields.get(camel, fields.get(snake))
        if found is not None:
            out[camel] = found
    langgraph: dict[str, Any] = {"raw": value}
    if interrupt_id is not None:
        langgraph["interruptId"] = interrupt_id
    out["metadata"] = {"langgraph": langgraph}
    return out


def is_langgraph_interrupt(interrupt: Mapping[str, Any]) -> bool:
    """Whether an AG-UI interrupt came from ag-ui-langgraph (it keeps the value in
    ``metadata.langgraph``)."""
    metadata = interrupt.get("metadata")
    return isinstance(metadata, Mapping) and isinstance(metadata.get("langgraph"), Mapping)


def langgraph_id(interrupt: Mapping[str, Any]) -> str | None:
    """The LangGraph interrupt id of an AG-UI interrupt, when the peer sent it."""
    interrupt_id = interrupt.get("id")
    if not isinstance(interrupt_id, str) or interrupt_id.startswith(LEGACY_INTERRUPT_ID_PREFIX):
        return None
    return interrupt_id
