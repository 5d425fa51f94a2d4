"""The run lifecycle and streaming discipline of AG-UI 1.0, checked event by event: the run
state machine, ``threadId``/``runId`` agreement, everything closed before ``RUN_FINISHED``,
and the open/continue/close discipline and subagent ownership of every streamed item.
Memory is per run and per entity, never per event."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from agui_chat._exceptions import ProtocolError, TruncatedStreamError

Event = dict[str, Any]

_NONE: Final = 0  # no event yet
_ACTIVE: Final = 1
_FINISHED: Final = 2
_ERRORED: Final = 3
_AFTER: Final = {
    _NONE: (("RUN_STARTED", "RUN_ERROR"), "First event must be RUN_STARTED or RUN_ERROR, got {}"),
    _FINISHED: (
        ("RUN_STARTED", "RUN_ERROR"),
        "{} after RUN_FINISHED: the run has already finished; only RUN_STARTED (a new run) "
        "or one late RUN_ERROR may follow",
    ),
    _ERRORED: (
        ("RUN_STARTED",),
        "{} after RUN_ERROR: the run has already errored; only RUN_STARTED (a new run) may follow",
    ),
}


@dataclass(slots=True)
class _Entity:
    """What a run knows of an item it opened: its owner and what opened it."""

    owner: str | None
    role: str | None = None
    name: str | None = None
    parent: str | None = None


@dataclass(slots=True)
class _Items:
    """One kind of streamed item: the ids open now and every one opened in the run."""

    entity: str
    end_type: str
    default_role: str | None = None
    id_key: str = "messageId"
    name_key: str = "name"
    open: set[str] = field(default_factory=set)
    known: dict[str, _Entity] = field(default_factory=dict)


def _who(owner: str | None) -> str:
    return "the parent agent" if owner is None else f"subagent '{owner}'"


def _check_owner(event: Event, entity: str, entity_id: str, owner: str | None) -> None:
    tag = event.get("subagentRunId")
    if tag is not None and tag != owner:
        raise ProtocolError(
            f"{event['type']} subagentRunId '{tag}' does not match the owner of {entity} "
            f"'{entity_id}' ({_who(owner)}, which opened it)"
        )


class StreamVerifier:
    """Checks each delivered event (:meth:`verify`) and the end of the stream (:meth:`finish`).
    Every run must carry ``thread_id``, unless ``accept_foreign_thread_ids`` (then a warning)."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        accept_foreign_thread_ids: bool = False,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.accept_foreign_thread_ids = accept_foreign_thread_ids
        self._on_warning = on_warning
        self._foreign_warned = False
        self._phase = _NONE
        self._run = ("", "")  # the (runId, threadId) of the latest run
        # The pipeline's fast path reads the open ids of these three.
        self.text = _Items("text message", "TEXT_MESSAGE_END", "assistant")
        self.reasoning = _Items("reasoning message", "REASONING_MESSAGE_END")
        self.tool_calls = _Items("tool call", "TOOL_CALL_END", None, "toolCallId", "toolCallName")
        self._spans = _Items("reasoning span", "REASONING_END")
        self._open_steps: set[tuple[str | None, str]] = set()
        self._active_subagents: set[str] = set()
        self._closed_subagents: set[str] = set()
        self._activities: dict[str, str | None] = {}

    @property
    def run_ended(self) -> bool:
        """Whether the latest run has ended (``RUN_FINISHED`` or ``RUN_ERROR``)."""
        return self._phase in (_FINISHED, _ERRORED)

    def verify(self, event: Event) -> None:
        """Check one delivered event; raise ``ProtocolError`` if it breaks a rule."""
        event_type: str = event["type"]
        if self._phase != _ACTIVE:
            allowed, rule = _AFTER[self._phase]
            if event_type not in allowed:
                raise ProtocolError(rule.format(event_type))
        entry = _HANDLERS.get(event_type)
        if entry is not None:
            handle, lane = entry
            if lane is None:
                handle(self, event)
            else:
                handle(self, getattr(self, lane), event)

    def finish(self) -> None:
        """End of stream: raise ``TruncatedStreamError`` unless the last run ended."""
        if self._phase == _NONE:
            raise TruncatedStreamError("the stream ended before any AG-UI event arrived")
        if self._phase == _ACTIVE:
            raise TruncatedStreamError(
                f"the stream ended while run '{self._run[0]}' was still active (no RUN_FINISHED or "
                "RUN_ERROR); the run has no outcome"
            )

    def _reset_run_scope(self) -> None:
        for items in (self.text, self.reasoning, self._spans, self.tool_calls):
            items.open.clear()
            items.known.clear()
        self._open_steps.clear()
        self._active_subagents.clear()
        self._closed_subagents.clear()
        self._activities.clear()

    def _run_started(self, event: Event) -> None:
        if self._phase == _ACTIVE:
            raise ProtocolError(
                f"RUN_STARTED '{event['runId']}' while run '{self._run[0]}' is still active: runs "
                "do not nest; the previous run must end with RUN_FINISHED or RUN_ERROR first"
            )
        thread_id = event["threadId"]
        if self.thread_id is not None and thread_id != self.thread_id:
            self._foreign_thread(thread_id)
        self._reset_run_scope()
        self._phase = _ACTIVE
        self._run = (event["runId"], thread_id)

    def _foreign_thread(self, thread_id: str) -> None:
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
        for key, started in zip(("runId", "threadId"), self._run, strict=True):
            if event[key] != started:
                raise ProtocolError(
                    f"the server's RUN_FINISHED {key} '{event[key]}' does not match its "
                    f"RUN_STARTED {key} '{started}' (AG-UI 1.0: a run's boundary events "
                    "agree on it; agui-wire §5.1)"
                )
        for what, ids in (
            ("steps", [name for _, name in self._open_steps]),
            ("text messages", self.text.open),
            ("tool calls", self.tool_calls.open),
            ("reasoning messages", self.reasoning.open),
            ("reasoning spans", self._spans.open),
            ("subagents", self._active_subagents),
        ):
            if ids:
                raise ProtocolError(
                    f"RUN_FINISHED while {what} are still open: "
                    + ", ".join(f"'{name}'" for name in sorted(ids))
                    + "; everything a run opens must be closed before it finishes"
                )
        self._phase = _FINISHED

    def _run_error(self, event: Event) -> None:
        self._phase = _ERRORED
        self._reset_run_scope()  # RUN_ERROR abandons whatever the run still had open

    def _start(
        self, items: _Items, event: Event, owner: str | None = None, parent: str | None = None
    ) -> None:
        entity_id: str = event[items.id_key]
        entity = items.entity
        if entity_id in items.open:
            raise ProtocolError(
                f"{event['type']} for {entity} '{entity_id}', which is already open; "
                f"close it with {items.end_type} first"
            )
        role = event.get("role", items.default_role) if items.default_role else None
        name = event.get(items.name_key)
        previous = items.known.get(entity_id)
        if previous is None:
            owner = event.get("subagentRunId") if owner is None else owner
            items.known[entity_id] = _Entity(owner, role, name, parent)
        else:
            # Reopening a closed item is legal in 1.0, but must agree with what opened it.
            _check_owner(event, entity, entity_id, previous.owner)
            for what, new, old in (
                ("role", role, previous.role),
                ("name", name, previous.name),
                ("parent message", parent, previous.parent),
            ):
                if new is not None and old is not None and new != old:
                    raise ProtocolError(
                        f"{event['type']} reopens {entity} '{entity_id}' with {what} '{new}', "
                        f"but it was opened with {what} '{old}'"
                    )
        items.open.add(entity_id)

    def _continue(self, items: _Items, event: Event) -> None:
        entity_id: str = event[items.id_key]
        if entity_id not in items.open:
            raise ProtocolError(
                f"{event['type']}: no open {items.entity} with ID '{entity_id}' (it was never "
                "started, or has ended); it must be opened first"
            )
        if "subagentRunId" in event:
            _check_owner(event, items.entity, entity_id, items.known[entity_id].owner)

    def _end(self, items: _Items, event: Event) -> None:
        self._continue(items, event)
        items.open.discard(event[items.id_key])

    def _tool_start(self, event: Event) -> None:
        # A call belongs to the message that carries it, unless it says otherwise.
        tag = event.get("subagentRunId")
        parent_id = event.get("parentMessageId")
        parent = self.text.known.get(parent_id) if parent_id is not None else None
        if parent is not None and tag is not None and tag != parent.owner:
            raise ProtocolError(
                f"TOOL_CALL_START subagentRunId '{tag}' does not match the owner of its parent "
                f"message '{parent_id}' ({_who(parent.owner)}): a tool call belongs to the "
                "message that carries it"
            )
        owner = parent.owner if tag is None and parent is not None else None
        self._start(self.tool_calls, event, owner, parent_id)

    def _step(self, event: Event) -> None:
        key = (event.get("subagentRunId"), event["stepName"])
        starting = event["type"] == "STEP_STARTED"
        if (key in self._open_steps) == starting:
            what = "which is already open" if starting else "that was not started"
            raise ProtocolError(f"{event['type']} for step '{key[1]}' ({_who(key[0])}), {what}")
        self._open_steps ^= {key}  # opened, or closed

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
        if parent is not None and parent not in self._active_subagents | self._closed_subagents:
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

    def _activity_snapshot(self, event: Event) -> None:
        message_id: str = event["messageId"]
        if message_id not in self._activities or event.get("replace", True):
            self._activities[message_id] = event.get("subagentRunId")

    def _activity_delta(self, event: Event) -> None:
        message_id: str = event["messageId"]
        if message_id in self._activities:
            _check_owner(event, "activity", message_id, self._activities[message_id])

    def _messages_snapshot(self, event: Event) -> None:
        # A snapshot restates its messages' owners; it opens nothing (so no role or name).
        for message in event["messages"]:
            role = message["role"]
            owner = message.get("subagentRunId")
            if role == "reasoning":
                self.reasoning.known[message["id"]] = _Entity(owner)
            elif role == "activity":
                self._activities[message["id"]] = owner
            elif role != "tool":
                self.text.known[message["id"]] = _Entity(owner)


#: Each event type's check: a method of ``StreamVerifier`` and the item lane it takes (by
#: attribute name), or ``None``. One table for every verifier (no bound methods per stream).
_HANDLERS: Final[dict[str, tuple[Callable[..., None], str | None]]] = {
    "RUN_STARTED": (StreamVerifier._run_started, None),
    "RUN_FINISHED": (StreamVerifier._run_finished, None),
    "RUN_ERROR": (StreamVerifier._run_error, None),
    "TOOL_CALL_START": (StreamVerifier._tool_start, None),
    "TOOL_CALL_ARGS": (StreamVerifier._continue, "tool_calls"),
    "TOOL_CALL_END": (StreamVerifier._end, "tool_calls"),
    "STEP_STARTED": (StreamVerifier._step, None),
    "STEP_FINISHED": (StreamVerifier._step, None),
    "SUBAGENT_STARTED": (StreamVerifier._subagent_started, None),
    "SUBAGENT_FINISHED": (StreamVerifier._subagent_terminal, None),
    "SUBAGENT_ERROR": (StreamVerifier._subagent_terminal, None),
    "ACTIVITY_SNAPSHOT": (StreamVerifier._activity_snapshot, None),
    "ACTIVITY_DELTA": (StreamVerifier._activity_delta, None),
    "MESSAGES_SNAPSHOT": (StreamVerifier._messages_snapshot, None),
    "TEXT_MESSAGE_START": (StreamVerifier._start, "text"),
    "TEXT_MESSAGE_CONTENT": (StreamVerifier._continue, "text"),
    "TEXT_MESSAGE_END": (StreamVerifier._end, "text"),
    "REASONING_MESSAGE_START": (StreamVerifier._start, "reasoning"),
    "REASONING_MESSAGE_CONTENT": (StreamVerifier._continue, "reasoning"),
    "REASONING_MESSAGE_END": (StreamVerifier._end, "reasoning"),
    "REASONING_START": (StreamVerifier._start, "_spans"),
    "REASONING_END": (StreamVerifier._end, "_spans"),
}
