"""What a client keeps of each AG-UI run: a :class:`RunRecord` (how it ended, its outcome)
with the tool calls it started (:class:`ToolCallRecord`)."""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["RunRecord", "RunStatus", "ToolCallRecord"]

Event = dict[str, Any]
RunStatus = Literal["active", "finished", "error"]


class ToolCallRecord:
    """A tool call seen in the stream: its name, parent message and argument text."""

    __slots__ = ("_args", "ended", "id", "name", "owner", "parent_message_id", "result_message_id")

    def __init__(
        self, tool_call_id: str, name: str, parent_message_id: str | None, owner: str | None
    ) -> None:
        self.id = tool_call_id
        self.name = name
        self.parent_message_id = parent_message_id
        #: The subagent the call belongs to (``None``: the parent agent).
        self.owner = owner
        self._args: list[str] = []
        #: Whether ``TOOL_CALL_END`` arrived (the argument text is complete).
        self.ended = False
        #: The tool message a ``TOOL_CALL_RESULT`` in the same run minted, if any.
        self.result_message_id: str | None = None

    def append(self, delta: str) -> None:
        """Append one ``TOOL_CALL_ARGS`` fragment."""
        self._args.append(delta)

    @property
    def arguments_text(self) -> str:
        """The concatenated argument text, exactly as streamed (it may not be JSON)."""
        if len(self._args) > 1:
            self._args[:] = ["".join(self._args)]
        return self._args[0] if self._args else ""

    @property
    def arguments(self) -> Any:
        """The arguments parsed as JSON, or the raw text when it does not parse."""
        text = self.arguments_text
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text

    def __repr__(self) -> str:
        return f"ToolCallRecord(id={self.id!r}, name={self.name!r}, ended={self.ended})"


class RunRecord:
    """One run on the stream and how it ended (or that it has not)."""

    __slots__ = (
        "error_event",
        "finished_event",
        "parent_run_id",
        "protocol_version",
        "run_id",
        "status",
        "thread_id",
        "tool_calls",
    )

    def __init__(
        self,
        thread_id: str | None,
        run_id: str | None,
        *,
        parent_run_id: str | None = None,
        protocol_version: str | None = None,
        status: RunStatus = "active",
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        #: The producer's ``RUN_STARTED.protocolVersion`` (``None``: a 0.x producer).
        self.protocol_version = protocol_version
        #: ``"active"`` until ``RUN_FINISHED`` (``"finished"``) or ``RUN_ERROR``
        #: (``"error"``, also after a late ``RUN_ERROR`` that followed ``RUN_FINISHED``).
        self.status: RunStatus = status
        self.finished_event: Event | None = None
        self.error_event: Event | None = None
        #: Tool calls started in this run, in start order, by id.
        self.tool_calls: dict[str, ToolCallRecord] = {}

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The ``RUN_FINISHED`` outcome object; ``None`` if absent (success) or unfinished."""
        return None if self.finished_event is None else self.finished_event.get("outcome")

    @property
    def outcome_type(self) -> str | None:
        """``"success"``, ``"interrupt"`` or ``"cancelled"`` once finished, else ``None``."""
        if self.finished_event is None:
            return None
        outcome = self.outcome
        return "success" if outcome is None else str(outcome["type"])

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        """The interrupts of an interrupt outcome (empty otherwise)."""
        outcome = self.outcome
        if outcome is None or outcome.get("type") != "interrupt":
            return []
        interrupts: list[dict[str, Any]] = outcome["interrupts"]
        return interrupts

    @property
    def error_message(self) -> str | None:
        """The ``RUN_ERROR`` message, if the run reported its own failure."""
        return None if self.error_event is None else str(self.error_event["message"])

    @property
    def error_code(self) -> str | None:
        """The ``RUN_ERROR`` code (an open string), if one was given."""
        code = None if self.error_event is None else self.error_event.get("code")
        return None if code is None else str(code)

    @property
    def pending_tool_call_ids(self) -> list[str]:
        """Tool calls left for the application, in call order.

        The success outcome's ``pendingToolCallIds`` when it names any; otherwise derived
        from the stream: every call this run started that got no ``TOOL_CALL_RESULT``.
        """
        outcome = self.outcome
        if outcome is not None and outcome.get("pendingToolCallIds"):
            return list(outcome["pendingToolCallIds"])
        return [call.id for call in self.tool_calls.values() if call.result_message_id is None]

    def __repr__(self) -> str:
        return f"RunRecord(run_id={self.run_id!r}, status={self.status!r})"
