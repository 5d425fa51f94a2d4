"""The run lifecycle and streaming discipline of AG-UI 1.0, checked event by event.

:class:`StreamVerifier` sees the delivered events (after enforcement and chunk expansion)
and rejects a stream that breaks the rules (``ProtocolError`` naming the rule and the id):
the run state machine (first event, no nesting, what may follow ``RUN_FINISHED`` and
``RUN_ERROR``, ``threadId``/``runId`` agreement, everything closed before
``RUN_FINISHED``) and the open/continue/close discipline of messages, tool calls,
reasoning spans and messages, steps and subagents, including subagent ownership.

It also keeps what a client needs to report a run: a :class:`RunRecord` per run (how it
ended) with the tool calls it started (:class:`ToolCallRecord`), from which the pending
frontend tool calls are derived. Memory is per run and per entity, never per event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from agui_chat._exceptions import ProtocolError, TruncatedStreamError

from ._records import RunRecord, RunStatus, ToolCallRecord

__all__ = ["RunRecord", "RunStatus", "StreamVerifier", "ToolCallRecord"]

Event = dict[str, Any]

_NONE: Final = 0  # no event yet
_ACTIVE: Final = 1
_FINISHED: Final = 2
_ERRORED: Final = 3


class _Entity:
    """What a run knows about a message-like item: whether open, who owns it, its opener."""

    __slots__ = ("name", "owner", "role")

    def __init__(self, owner: str | None, role: str | None = None, name: str | None = None):
        self.owner = owner
        self.role = role
        self.name = name


def _who(owner: str | None) -> str:
    return "the parent agent" if owner is None else f"subagent '{owner}'"


class StreamVerifier:
    """Checks lifecycle and streaming discipline; keeps per-run outcome information.

    Call :meth:`verify` with each delivered event in order and :meth:`finish` at the end
    of the stream. ``thread_id`` is the request's thread: every run must carry it.
    """

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        accept_foreign_thread_ids: bool = False,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.requested_run_id = run_id
        self.accept_foreign_thread_ids = accept_foreign_thread_ids
        self._on_warning = on_warning
        self._foreign_warned = False
        self._phase = _NONE
        self.runs: list[RunRecord] = []
        self._run: RunRecord | None = None
        # Open items (run-scoped). The pipeline reads the first three on its fast path.
        self.open_text: set[str] = set()
        self.open_tool_calls: dict[str, ToolCallRecord] = {}
        self.open_reasoning: set[str] = set()
        self._open_spans: set[str] = set()
        self._open_steps: set[tuple[str | None, str]] = set()
        self._active_subagents: set[str] = set()
        self._closed_subagents: set[str] = set()
        # Everything opened in this run (open or closed), for reopen and ownership checks.
        self._texts: dict[str, _Entity] = {}
        self._reasonings: dict[str, _Entity] = {}
        self._spans: dict[str, _Entity] = {}
        self._activities: dict[str, str | None] = {}
        self._handlers: dict[str, Callable[[Event], None]] = {
            "RUN_STARTED": self._run_started,
            "RUN_FINISHED": self._run_finished,
            "RUN_ERROR": self._run_error,
            "TEXT_MESSAGE_START": self._text_start,
            "TEXT_MESSAGE_CONTENT": self._text_continue,
            "TEXT_MESSAGE_END": self._text_end,
            "TOOL_CALL_START": self._tool_start,
            "TOOL_CALL_ARGS": self._tool_args,
            "TOOL_CALL_END": self._tool_end,
            "TOOL_CALL_RESULT": self._tool_result,
            "REASONING_START": self._span_start,
            "REASONING_END": self._span_end,
            "REASONING_MESSAGE_START": self._reasoning_start,
            "REASONING_MESSAGE_CONTENT": self._reasoning_continue,
            "REASONING_MESSAGE_END": self._reasoning_end,
            "STEP_STARTED": self._step_started,
            "STEP_FINISHED": self._step_finished,
            "SUBAGENT_STARTED": self._subagent_started,
            "SUBAGENT_FINISHED": self._subagent_terminal,
            "SUBAGENT_ERROR": self._subagent_terminal,
            "ACTIVITY_SNAPSHOT": self._activity_snapshot,
            "ACTIVITY_DELTA": self._activity_delta,
            "MESSAGES_SNAPSHOT": self._messages_snapshot,
        }

    # ----------------------------------------------------------------- public surface

    @property
    def current_run(self) -> RunRecord | None:
        """The latest run on the stream (active or ended), or ``None`` before any."""
        return self._run

    @property
    def run_active(self) -> bool:
        """Whether a run has started and not yet ended."""
        return self._phase == _ACTIVE

    @property
    def started(self) -> bool:
        """Whether any event has been verified."""
        return self._phase != _NONE

    def verify(self, event: Event) -> None:
        """Check one delivered event; raise ``ProtocolError`` if it breaks a rule."""
        event_type: str = event["type"]
        if self._phase != _ACTIVE:
            self._check_closed_phase(event_type)
        handler = self._handlers.get(event_type)
        if handler is not None:
            handler(event)

    def finish(self) -> None:
        """End of stream: raise ``TruncatedStreamError`` unless the last run ended."""
        if self._phase == _NONE:
            raise TruncatedStreamError("the stream ended before any AG-UI event arrived")
        if self._phase == _ACTIVE:
            run_id = self._run.run_id if self._run is not None else None
            raise TruncatedStreamError(
                f"the stream ended while run '{run_id}' was still active (no RUN_FINISHED or "
                "RUN_ERROR); the run has no outcome"
            )

    # ----------------------------------------------------------------- run lifecycle

    def _check_closed_phase(self, event_type: str) -> None:
        phase = self._phase
        if phase == _NONE:
            if event_type not in ("RUN_STARTED", "RUN_ERROR"):
                raise ProtocolError(
                    f"First event must be RUN_STARTED or RUN_ERROR, got {event_type}"
                )
        elif phase == _FINISHED:
            if event_type not in ("RUN_STARTED", "RUN_ERROR"):
                raise ProtocolError(
                    f"{event_type} after RUN_FINISHED: the run has already finished; only "
                    "RUN_STARTED (a new run) or one late RUN_ERROR may follow"
                )
        elif event_type != "RUN_STARTED":
            raise ProtocolError(
                f"{event_type} after RUN_ERROR: the run has already errored; only RUN_STARTED "
                "(a new run) may follow"
            )

    def _reset_run_scope(self) -> None:
        self.open_text.clear()
        self.open_tool_calls.clear()
        self.open_reasoning.clear()
        self._open_spans.clear()
        self._open_steps.clear()
        self._active_subagents.clear()
        self._closed_subagents.clear()
        self._texts.clear()
        self._reasonings.clear()
        self._spans.clear()
        self._activities.clear()

    def _run_started(self, event: Event) -> None:
        if self._phase == _ACTIVE:
            run_id = self._run.run_id if self._run is not None else None
            raise ProtocolError(
                f"RUN_STARTED '{event['runId']}' while run '{run_id}' is still active: runs "
                "do not nest; the previous run must end with RUN_FINISHED or RUN_ERROR first"
            )
        thread_id = event["threadId"]
        if self.thread_id is not None and thread_id != self.thread_id:
            self._foreign_thread(thread_id)
        self._reset_run_scope()
        self._phase = _ACTIVE
        self._run = RunRecord(
            thread_id,
            event["runId"],
            parent_run_id=event.get("parentRunId"),
            protocol_version=event.get("protocolVersion"),
        )
        self.runs.append(self._run)

    def _foreign_thread(self, thread_id: str) -> None:
        """A run on another thread than the request's: the server's fault. Refused, unless
        the caller opted into tolerating it (then said once, as a warning)."""
        broken = (
            f"the server's RUN_STARTED names thread '{thread_id}', the request's is "
            f"'{self.thread_id}': the server does not echo threadId (AG-UI 1.0: every run's "
            "RUN_STARTED and RUN_FINISHED carry the input's threadId; agui-wire §5.1)"
        )
        if not self.accept_foreign_thread_ids:
            raise ProtocolError(
                f"{broken}. The server is at fault; if it cannot be fixed, "
                "AGUIChatClient(..., accept_foreign_thread_ids=True) keeps the conversation "
                "on the request's thread and reads the server's runs as runs of it"
            )
        if not self._foreign_warned and self._on_warning is not None:
            self._foreign_warned = True
            self._on_warning(
                f"{broken}; tolerated (accept_foreign_thread_ids=True): the conversation stays "
                f"on thread '{self.thread_id}'"
            )

    def _run_finished(self, event: Event) -> None:
        run = self._run
        assert run is not None  # the phase check admits RUN_FINISHED only in a run
        if event["runId"] != run.run_id:
            raise ProtocolError(
                f"the server's RUN_FINISHED runId '{event['runId']}' does not match its "
                f"RUN_STARTED runId '{run.run_id}' (AG-UI 1.0: a run's boundary events agree "
                "on runId; agui-wire §5.1)"
            )
        if event["threadId"] != run.thread_id:
            raise ProtocolError(
                f"the server's RUN_FINISHED threadId '{event['threadId']}' does not match its "
                f"RUN_STARTED threadId '{run.thread_id}' (AG-UI 1.0: a run's boundary events "
                "carry the same threadId; agui-wire §5.1)"
            )
        still_open: Iterable[tuple[str, Iterable[str]]] = (
            ("steps", (name for _, name in self._open_steps)),
            ("text messages", self.open_text),
            ("tool calls", self.open_tool_calls),
            ("reasoning messages", self.open_reasoning),
            ("reasoning spans", self._open_spans),
            ("subagents", self._active_subagents),
        )
        for what, ids in still_open:
            names = sorted(ids)
            if names:
                raise ProtocolError(
                    f"RUN_FINISHED while {what} are still open: "
                    + ", ".join(f"'{name}'" for name in names)
                    + "; everything a run opens must be closed before it finishes"
                )
        run.status = "finished"
        run.finished_event = event
        self._phase = _FINISHED

    def _run_error(self, event: Event) -> None:
        if self._phase == _NONE or self._run is None:
            # A failure before any run exists is the requested run failing to start.
            self._run = RunRecord(self.thread_id, self.requested_run_id, status="error")
            self.runs.append(self._run)
        self._run.status = "error"
        self._run.error_event = event
        self._phase = _ERRORED
        # RUN_ERROR abandons whatever the run still had open.
        self._reset_run_scope()

    # ----------------------------------------------------------------- ownership

    @staticmethod
    def _check_owner(event: Event, entity: str, entity_id: str, owner: str | None) -> None:
        tag = event.get("subagentRunId")
        if tag is not None and tag != owner:
            raise ProtocolError(
                f"{event['type']} subagentRunId '{tag}' does not match the owner of {entity} "
                f"'{entity_id}' ({_who(owner)}, which opened it)"
            )

    # ----------------------------------------------------------------- text and reasoning

    def _start(
        self,
        event: Event,
        open_ids: set[str],
        known: dict[str, _Entity],
        entity: str,
        end_type: str,
        role: str | None = None,
    ) -> None:
        entity_id: str = event["messageId"]
        if entity_id in open_ids:
            raise ProtocolError(
                f"{event['type']} for {entity} '{entity_id}', which is already open; "
                f"close it with {end_type} first"
            )
        tag = event.get("subagentRunId")
        name = event.get("name")
        previous = known.get(entity_id)
        if previous is None:
            known[entity_id] = _Entity(tag, role, name)
        else:
            # Reopening a closed item is legal in 1.0, but must agree with what opened it.
            self._check_owner(event, entity, entity_id, previous.owner)
            if role is not None and previous.role is not None and role != previous.role:
                raise ProtocolError(
                    f"{event['type']} reopens {entity} '{entity_id}' with role '{role}', but "
                    f"it was opened with role '{previous.role}'"
                )
            if name is not None and previous.name is not None and name != previous.name:
                raise ProtocolError(
                    f"{event['type']} reopens {entity} '{entity_id}' with name '{name}', but "
                    f"it was opened with name '{previous.name}'"
                )
        open_ids.add(entity_id)

    def _continue(
        self, event: Event, open_ids: set[str], known: dict[str, _Entity], entity: str
    ) -> None:
        entity_id: str = event["messageId"]
        if entity_id not in open_ids:
            raise ProtocolError(
                f"{event['type']}: no open {entity} with ID '{entity_id}' (it was never "
                "started, or has ended); it must be opened first"
            )
        if "subagentRunId" in event:
            self._check_owner(event, entity, entity_id, known[entity_id].owner)

    def _text_start(self, event: Event) -> None:
        role = event.get("role", "assistant")
        self._start(event, self.open_text, self._texts, "text message", "TEXT_MESSAGE_END", role)

    def _text_continue(self, event: Event) -> None:
        self._continue(event, self.open_text, self._texts, "text message")

    def _text_end(self, event: Event) -> None:
        self._continue(event, self.open_text, self._texts, "text message")
        self.open_text.discard(event["messageId"])

    def _reasoning_start(self, event: Event) -> None:
        self._start(
            event,
            self.open_reasoning,
            self._reasonings,
            "reasoning message",
            "REASONING_MESSAGE_END",
        )

    def _reasoning_continue(self, event: Event) -> None:
        self._continue(event, self.open_reasoning, self._reasonings, "reasoning message")

    def _reasoning_end(self, event: Event) -> None:
        self._continue(event, self.open_reasoning, self._reasonings, "reasoning message")
        self.open_reasoning.discard(event["messageId"])

    def _span_start(self, event: Event) -> None:
        self._start(event, self._open_spans, self._spans, "reasoning span", "REASONING_END")

    def _span_end(self, event: Event) -> None:
        self._continue(event, self._open_spans, self._spans, "reasoning span")
        self._open_spans.discard(event["messageId"])

    # ----------------------------------------------------------------- tool calls

    def _tool_start(self, event: Event) -> None:
        run = self._run
        assert run is not None
        call_id: str = event["toolCallId"]
        if call_id in self.open_tool_calls:
            raise ProtocolError(
                f"TOOL_CALL_START for tool call '{call_id}', which is already open; close it "
                "with TOOL_CALL_END first"
            )
        tag = event.get("subagentRunId")
        parent_id = event.get("parentMessageId")
        parent = self._texts.get(parent_id) if parent_id is not None else None
        if parent is not None and tag is not None and tag != parent.owner:
            raise ProtocolError(
                f"TOOL_CALL_START subagentRunId '{tag}' does not match the owner of its parent "
                f"message '{parent_id}' ({_who(parent.owner)}): a tool call belongs to the "
                "message that carries it"
            )
        owner = tag if tag is not None else (parent.owner if parent is not None else None)
        record = run.tool_calls.get(call_id)
        if record is None:
            record = ToolCallRecord(call_id, event["toolCallName"], parent_id, owner)
            run.tool_calls[call_id] = record
        else:
            self._check_owner(event, "tool call", call_id, record.owner)
            if event["toolCallName"] != record.name:
                raise ProtocolError(
                    f"TOOL_CALL_START reopens tool call '{call_id}' as "
                    f"'{event['toolCallName']}', but it was opened as '{record.name}'"
                )
            if parent_id is not None and record.parent_message_id not in (None, parent_id):
                raise ProtocolError(
                    f"TOOL_CALL_START reopens tool call '{call_id}' under parent message "
                    f"'{parent_id}', but it was opened under '{record.parent_message_id}'"
                )
            record.ended = False
        self.open_tool_calls[call_id] = record

    def _open_call(self, event: Event) -> ToolCallRecord:
        call_id: str = event["toolCallId"]
        record = self.open_tool_calls.get(call_id)
        if record is None:
            raise ProtocolError(
                f"{event['type']}: no open tool call with ID '{call_id}' (it was never "
                "started, or has ended); TOOL_CALL_START must open it first"
            )
        if "subagentRunId" in event:
            self._check_owner(event, "tool call", call_id, record.owner)
        return record

    def _tool_args(self, event: Event) -> None:
        self._open_call(event).append(event["delta"])

    def _tool_end(self, event: Event) -> None:
        record = self._open_call(event)
        record.ended = True
        del self.open_tool_calls[record.id]

    def _tool_result(self, event: Event) -> None:
        # A result may answer a call from an earlier run (a resumed tool approval).
        run = self._run
        record = run.tool_calls.get(event["toolCallId"]) if run is not None else None
        if record is not None:
            record.result_message_id = event["messageId"]

    # ----------------------------------------------------------------- steps

    def _step_started(self, event: Event) -> None:
        key = (event.get("subagentRunId"), event["stepName"])
        if key in self._open_steps:
            raise ProtocolError(
                f"STEP_STARTED for step '{key[1]}' ({_who(key[0])}), which is already open"
            )
        self._open_steps.add(key)

    def _step_finished(self, event: Event) -> None:
        key = (event.get("subagentRunId"), event["stepName"])
        if key not in self._open_steps:
            raise ProtocolError(
                f"STEP_FINISHED for step '{key[1]}' ({_who(key[0])}) that was not started"
            )
        self._open_steps.discard(key)

    # ----------------------------------------------------------------- subagents

    def _subagent_started(self, event: Event) -> None:
        subagent: str = event["subagentRunId"]
        if subagent in self._active_subagents:
            raise ProtocolError(f"SUBAGENT_STARTED for subagent '{subagent}', which is active")
        if subagent in self._closed_subagents:
            raise ProtocolError(
                f"SUBAGENT_STARTED reuses subagentRunId '{subagent}', which already ended in "
                "this run; each invocation needs its own id"
            )
        parent = event.get("parentSubagentRunId")
        if parent is not None and not (
            parent in self._active_subagents or parent in self._closed_subagents
        ):
            raise ProtocolError(
                f"SUBAGENT_STARTED '{subagent}' names parentSubagentRunId '{parent}', which "
                "was never announced in this run"
            )
        self._active_subagents.add(subagent)

    def _subagent_terminal(self, event: Event) -> None:
        subagent: str = event["subagentRunId"]
        if subagent not in self._active_subagents:
            raise ProtocolError(
                f"{event['type']} for subagent '{subagent}', which is not active (never "
                "started with SUBAGENT_STARTED, or already ended)"
            )
        self._active_subagents.discard(subagent)
        self._closed_subagents.add(subagent)

    # ----------------------------------------------------------------- activity, snapshots

    def _activity_snapshot(self, event: Event) -> None:
        message_id: str = event["messageId"]
        if message_id not in self._activities or event.get("replace", True):
            self._activities[message_id] = event.get("subagentRunId")

    def _activity_delta(self, event: Event) -> None:
        message_id: str = event["messageId"]
        if message_id in self._activities:
            self._check_owner(event, "activity", message_id, self._activities[message_id])

    def _messages_snapshot(self, event: Event) -> None:
        # The snapshot restates each message, so its owners replace the recorded ones. Only
        # ownership is taken from it: a later START for one of its ids is checked for the
        # owner, not for role or name, which a snapshot does not open.
        for message in event["messages"]:
            role = message["role"]
            owner = message.get("subagentRunId")
            if role == "reasoning":
                self._reasonings[message["id"]] = _Entity(owner)
            elif role == "activity":
                self._activities[message["id"]] = owner
            elif role != "tool":
                self._texts[message["id"]] = _Entity(owner)
