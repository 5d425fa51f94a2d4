"""Delivered AG-UI events as ``ChatResponseUpdate``s, one per event (the event as its
``raw_representation``), stamped so that a joined response can continue the thread. Text
deltas are the hot path: one small update and one ``TextContent`` per event."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from ..._hitl_contents import InterruptRequestContent, ToolApprovalRequestContent
from ..._responses import ChatResponseUpdate
from ..._role_and_finish_reason import ChatFinishReason, ChatRole
from ..._usage import UsageDetails
from ...consent._rules import offers_edits, offers_remember
from ..wire._messages import (
    CONTENT_PARTS_KEY,
    ENCRYPTED_FOR_KEY,
    QUESTION_METADATA_KEY,
    RUN_ID_KEY,
    STATE_KEY,
    SUBAGENT_KEY,
    THREAD_ID_KEY,
)
from ._reducer import AGUIStateTracker, AGUIThreadReducer

#: On a request content: the AG-UI ``Interrupt`` it was made from.
INTERRUPT_KEY = "agui_interrupt"
#: On a ``MESSAGES_SNAPSHOT`` update (and so on the response): the reconciled thread.
MESSAGES_KEY = "agui_messages"

Event = dict[str, Any]

_ASSISTANT = ChatRole.ASSISTANT
_ROLES = {r.value: r for r in (_ASSISTANT, ChatRole.USER, ChatRole.SYSTEM, ChatRole("developer"))}
_TOOL = ChatRole.TOOL
_USAGE_FIELDS = (
    ("inputTokens", "input_token_count"),
    ("outputTokens", "output_token_count"),
    ("totalTokens", "total_token_count"),
    ("cachedInputTokens", "cached_input_token_count"),
    ("reasoningTokens", "reasoning_token_count"),
)


@dataclass(slots=True)
class _Call:
    """A tool call being streamed: where it lives and its argument text so far."""

    name: str
    message_id: str
    parts: list[str] = field(default_factory=list)
    content: FunctionCallContent | None = None


class UpdateMapper:
    """Turns the events of one response stream into updates.

    Only calls to ``client_tools`` (the caller's own) that a run leaves pending stay
    runnable; the others are marked ``informational_only``, in place once the run ends, so
    the tool loop does not run them. ``history_calls`` serve approvals of earlier calls;
    ``peer_capabilities`` (the peer's AG-UI capabilities) may offer edits to approvals whose
    interrupt carries no schema.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        requested_run_id: str,
        client_tools: frozenset[str] = frozenset(),
        history_calls: Mapping[str, FunctionCallContent] | None = None,
        state: Any = None,
        sent_messages: Sequence[Mapping[str, Any]] = (),
        on_warning: Callable[[str], None] | None = None,
        peer_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self._peer_capabilities = peer_capabilities
        self._sent_messages = sent_messages
        self._on_warning = on_warning
        self.client_tools = client_tools
        self._history_calls = dict(history_calls or {})
        self._requested_run_id = requested_run_id
        self._state = AGUIStateTracker(state, on_warning=on_warning)
        self._run_id: str | None = None
        self._roles: dict[str, ChatRole] = {}  # the role of each message opened so far
        self._calls: dict[str, _Call] = {}
        self._run_calls: dict[str, FunctionCallContent] = {}
        self._run_results: set[str] = set()
        self._last_message_id: str | None = None
        self._errors = 0
        self.last_error: Event | None = None

    @property
    def state(self) -> Any:
        """The thread's state: the run input's, then as events change it."""
        return self._state.state

    def update(self, event: Event) -> ChatResponseUpdate:
        # The two content deltas most streams are made of, inline; the rest by table.
        event_type = event["type"]
        if event_type == "TEXT_MESSAGE_CONTENT":
            message_id = event["messageId"]
            return ChatResponseUpdate(
                self._roles.get(message_id, _ASSISTANT),
                [TextContent(event["delta"])],
                message_id=message_id,
                response_id=self._run_id,
                raw_representation=event,
            )
        if event_type == "TOOL_CALL_ARGS":
            call_id = event["toolCallId"]
            call = self._calls[call_id]
            delta: str = event["delta"]
            call.parts.append(delta)
            return ChatResponseUpdate(
                _ASSISTANT,
                [FunctionCallUpdateContent(call_id, call.name, delta)],
                message_id=call.message_id,
                response_id=self._run_id,
                raw_representation=event,
            )
        handler = _HANDLERS.get(event_type)
        if handler is None:
            # END events, steps, activity, snapshots, custom, raw, subagents: the event only.
            return self._bare(event)
        return handler(self, event)

    def _bare(self, event: Event, props: dict[str, Any] | None = None) -> ChatResponseUpdate:
        """An update with no contents: the event (and ``props``) only."""
        return ChatResponseUpdate(
            response_id=self._run_id, raw_representation=event, additional_properties=props
        )

    def _messages_snapshot(self, event: Event) -> ChatResponseUpdate:
        # Reconciled with the messages sent only here, so the stream keeps nothing per event.
        reducer = AGUIThreadReducer(self._sent_messages, on_warning=self._on_warning)
        reducer.apply(event)
        return self._bare(event, {MESSAGES_KEY: reducer.messages})

    def _stamp(self, **extra: Any) -> dict[str, Any]:
        run_id = self._run_id or self._requested_run_id
        return {THREAD_ID_KEY: self.thread_id, RUN_ID_KEY: run_id, **extra}

    def _opens(
        self, event: Event, message_id: str, role: ChatRole, contents: list[AIContent]
    ) -> ChatResponseUpdate:
        self._last_message_id = message_id
        self._roles[message_id] = role
        props = self._stamp()
        owner = event.get("subagentRunId")
        if owner is not None:
            props[SUBAGENT_KEY] = owner
        return ChatResponseUpdate(
            role,
            contents,
            message_id=message_id,
            response_id=self._run_id,
            raw_representation=event,
            additional_properties=props,
        )

    def _run_started(self, event: Event) -> ChatResponseUpdate:
        self._run_id = event["runId"]
        self._run_calls = {}
        self._run_results = set()
        self.last_error = None
        return self._bare(event, self._stamp())

    def _run_finished(self, event: Event) -> ChatResponseUpdate:
        outcome = event.get("outcome")
        kind = "success" if outcome is None else outcome["type"]
        self.last_error = None
        # A cancelled run leaves nothing to run; a paused one may have called the caller's
        # tools alongside its requests, and those are answered with the resume.
        self._settle_calls(set() if kind == "cancelled" else self._pending(event))
        if kind != "interrupt":
            finish = ChatFinishReason.CANCELLED if kind == "cancelled" else ChatFinishReason.STOP
            return self._ends(event, [], self._last_message_id, finish, None)
        requests = [self._request_for(i) for i in outcome["interrupts"]]  # type: ignore[index]
        message_id = self._last_message_id
        if message_id is None or self._roles.get(message_id) is not _ASSISTANT:
            message_id = f"{self._run_id}-interrupts"
        return self._ends(event, requests, message_id, ChatFinishReason.INPUT_REQUIRED)

    def _run_error(self, event: Event) -> ChatResponseUpdate:
        self.last_error = event
        self._settle_calls(set())  # nothing of a failed run runs locally
        self._errors += 1
        run_id = self._run_id or self._requested_run_id
        message_id = f"{run_id}-error" if self._errors == 1 else f"{run_id}-error-{self._errors}"
        error = ErrorContent(event["message"], error_code=event.get("code"))
        return self._ends(event, [error], message_id, ChatFinishReason.ERROR)

    def _ends(
        self,
        event: Event,
        contents: Sequence[AIContent],
        message_id: str | None,
        finish_reason: ChatFinishReason,
        role: ChatRole | None = _ASSISTANT,
    ) -> ChatResponseUpdate:
        """The update that ends a run: its requests or error, usage, finish reason, state."""
        if role is not None and message_id is not None:
            self._last_message_id = message_id
            self._roles[message_id] = role
        usage, model_id = _usage(event)
        return ChatResponseUpdate(
            role,
            [*contents, *usage],
            message_id=message_id,
            response_id=self._run_id,
            finish_reason=finish_reason,
            model_id=model_id,
            raw_representation=event,
            additional_properties=self._stamp(**{STATE_KEY: self.state}),
        )

    def _message_start(self, event: Event) -> ChatResponseUpdate:
        # A reasoning message's role ("reasoning") is not ours: it is the assistant's.
        role = _ROLES.get(event.get("role", "assistant"), _ASSISTANT)
        update = self._opens(event, event["messageId"], role, [])
        update.author_name = event.get("name")
        return update

    def _part(self, event: Event, message_id: str, contents: list[AIContent]) -> ChatResponseUpdate:
        """An update that continues an assistant message."""
        return ChatResponseUpdate(
            _ASSISTANT,
            contents,
            message_id=message_id,
            response_id=self._run_id,
            raw_representation=event,
        )

    def _reasoning_content(self, event: Event) -> ChatResponseUpdate:
        return self._part(event, event["messageId"], [TextReasoningContent(event["delta"])])

    def _encrypted_value(self, event: Event) -> ChatResponseUpdate:
        entity_id = event["entityId"]
        known = (
            entity_id in self._roles
            or entity_id in self._calls
            or entity_id in self._history_calls
            or any(
                m.get("id") == entity_id
                or any(c.get("id") == entity_id for c in m.get("toolCalls") or ())
                for m in self._sent_messages
            )
        )
        if not known:  # agui-wire §3.5: an unknown entityId gets a warning and may be dropped
            if self._on_warning is not None:
                self._on_warning(
                    f"REASONING_ENCRYPTED_VALUE names {event['subtype']} {entity_id!r}, which "
                    "neither this stream nor the history shows; dropped"
                )
            return self._bare(event)
        # A message of its own, so joining never folds it into neighbouring reasoning text;
        # the wire builder attaches it to the message or tool call it names.
        target = {"subtype": event["subtype"], "entityId": entity_id}
        content = TextReasoningContent(
            "",
            protected_data=event["encryptedValue"],
            additional_properties={ENCRYPTED_FOR_KEY: target},
        )
        return self._opens(event, f"{entity_id}-encrypted", _ASSISTANT, [content])

    def _tool_start(self, event: Event) -> ChatResponseUpdate:
        call_id = event["toolCallId"]
        message_id = event.get("parentMessageId") or call_id
        call = self._calls.setdefault(call_id, _Call(event["toolCallName"], message_id))
        delta = FunctionCallUpdateContent(call_id, call.name, "")
        return self._opens(event, call.message_id, _ASSISTANT, [delta])

    def _tool_end(self, event: Event) -> ChatResponseUpdate:
        call_id = event["toolCallId"]
        call = self._calls[call_id]
        text = "".join(call.parts)
        call.parts = [text]
        parsed = FunctionCallContent.from_json_arguments(
            call_id, call.name, text, informational_only=call.name not in self.client_tools
        )
        contents: list[AIContent] = []
        if call.content is None:
            call.content = parsed
            contents.append(parsed)
        else:
            # A reopened call: the call already surfaced gets its completed arguments.
            call.content.arguments = parsed.arguments
            call.content.raw_arguments = parsed.raw_arguments
            call.content.exception = parsed.exception
        self._run_calls[call_id] = call.content
        return self._part(event, call.message_id, contents)

    def _tool_result(self, event: Event) -> ChatResponseUpdate:
        self._run_results.add(event["toolCallId"])
        content = event["content"]
        result = FunctionResultContent(
            event["toolCallId"],
            content,
            additional_properties={CONTENT_PARTS_KEY: True} if isinstance(content, list) else None,
        )
        return self._opens(event, event["messageId"], _TOOL, [result])

    def _pending(self, event: Event) -> set[str]:
        # The outcome's pendingToolCallIds when it names any, else client calls with no result.
        listed = (event.get("outcome") or {}).get("pendingToolCallIds")
        if listed:
            return {
                i for i in listed if i in self._calls and self._calls[i].name in self.client_tools
            }
        return {
            c.call_id
            for c in self._run_calls.values()
            if c.name in self.client_tools and c.call_id not in self._run_results
        }

    def unanswered_calls(self, name: str) -> list[FunctionCallContent]:
        """This run's calls to ``name`` that no ``TOOL_CALL_RESULT`` of the run answered (none
        when ``name`` is one of the caller's own tools: those calls are the caller's to run)."""
        if name in self.client_tools:
            return []
        return [
            c
            for c in self._run_calls.values()
            if c.name == name and c.call_id not in self._run_results
        ]

    def _settle_calls(self, pending: set[str]) -> None:
        for content in self._run_calls.values():
            content.informational_only = content.call_id not in pending

    def _state_event(self, event: Event) -> ChatResponseUpdate:
        self._state.apply(event)
        return self._bare(event, {STATE_KEY: self._state.state})

    def find_call(self, call_id: str | None, name: str, value: Any) -> FunctionCallContent | None:
        """A call the stream or the history showed, by id, else this run's first call to
        ``name`` with arguments ``value["args"]`` (for pauses that name a call without id)."""
        if call_id is not None:
            call = self._calls.get(call_id)
            if call is not None and call.content is not None:
                return call.content
            return self._history_calls.get(call_id)
        args = value.get("args") if isinstance(value, Mapping) else None
        for content in self._run_calls.values():
            if content.name == name and content.arguments == args:
                return content
        return None

    def _request_for(
        self, interrupt: Mapping[str, Any]
    ) -> ToolApprovalRequestContent | InterruptRequestContent:
        """An approval when the interrupt names a known tool call (whatever its ``reason``),
        otherwise a question."""
        props = {INTERRUPT_KEY: dict(interrupt), RUN_ID_KEY: self._run_id}
        schema = interrupt.get("responseSchema")
        expires_at = interrupt.get("expiresAt")
        call_id = interrupt.get("toolCallId")
        call = self.find_call(call_id, "", None) if isinstance(call_id, str) else None
        if call is not None:
            return ToolApprovalRequestContent(
                interrupt["id"],
                call,
                message=interrupt.get("message"),
                # Only an edit the peer offers is sent: one it never offered would be ignored
                # and the unedited call run.
                allow_edits=offers_edits(schema, self._peer_capabilities),
                # Likewise a remember: only where the interrupt's schema offers it.
                allow_remember=offers_remember(schema),
                expires_at=expires_at,
                additional_properties=props,
            )
        # An agui_chat server names the asking call (and the question's key) in its own entry
        # of the metadata, since a top-level ``toolCallId`` would make it an approval.
        metadata = interrupt.get("metadata")
        ours: Mapping[str, Any] = {}
        if isinstance(metadata, Mapping) and isinstance(
            metadata.get(QUESTION_METADATA_KEY), Mapping
        ):
            ours = metadata[QUESTION_METADATA_KEY]
            metadata = {k: v for k, v in metadata.items() if k != QUESTION_METADATA_KEY} or None
        call_id = interrupt.get("toolCallId", ours.get("toolCallId"))
        key = ours.get("key")
        return InterruptRequestContent(
            interrupt["id"],
            reason=interrupt.get("reason"),
            message=interrupt.get("message"),
            tool_call_id=call_id if isinstance(call_id, str) else None,
            response_schema=schema,
            expires_at=expires_at,
            metadata=metadata,
            key=key if isinstance(key, str) else None,
            additional_properties=props,
        )


def _usage(event: Event) -> tuple[list[AIContent], str | None]:
    """One ``UsageContent`` per ``usage`` entry, and the model the last entry names."""
    contents: list[AIContent] = []
    model_id = None
    for entry in event.get("usage") or ():
        counts = {ours: entry[wire] for wire, ours in _USAGE_FIELDS if wire in entry}
        extra = {}
        if "cacheWriteInputTokens" in entry:
            extra["cache_write_input_tokens"] = entry["cacheWriteInputTokens"]
        contents.append(UsageContent(UsageDetails(**counts, additional_counts=extra)))
        model_id = entry.get("model", model_id)
    return contents, model_id


#: Each event type's mapping, a method of ``UpdateMapper`` (one table for every mapper, no
#: bound methods per stream); the text and argument deltas have their fast path in ``update``.
_HANDLERS: dict[str, Callable[[UpdateMapper, Event], ChatResponseUpdate]] = {
    "RUN_STARTED": UpdateMapper._run_started,
    "RUN_FINISHED": UpdateMapper._run_finished,
    "RUN_ERROR": UpdateMapper._run_error,
    "TEXT_MESSAGE_START": UpdateMapper._message_start,
    "TOOL_CALL_START": UpdateMapper._tool_start,
    "TOOL_CALL_END": UpdateMapper._tool_end,
    "TOOL_CALL_RESULT": UpdateMapper._tool_result,
    "REASONING_MESSAGE_START": UpdateMapper._message_start,
    "REASONING_MESSAGE_CONTENT": UpdateMapper._reasoning_content,
    "REASONING_ENCRYPTED_VALUE": UpdateMapper._encrypted_value,
    "STATE_SNAPSHOT": UpdateMapper._state_event,
    "STATE_DELTA": UpdateMapper._state_event,
    "MESSAGES_SNAPSHOT": UpdateMapper._messages_snapshot,
}
