"""One façade over the incoming AG-UI event pipeline, for the chat client.

``AGUIEventPipeline.feed`` takes one SSE ``data`` payload and returns the events it
delivers to application code, in order, after every stage of the AG-UI processing model:
parse → compatibility boundary (retired ``THINKING_*``) → peer-era shims → enforcement →
chunk expansion → verification. ``finish`` ends the stream and refuses to call a
truncated one a success.

The common events (``TEXT_MESSAGE_CONTENT``, ``TOOL_CALL_ARGS`` and
``REASONING_MESSAGE_CONTENT`` for an open id, carrying nothing beyond their own fields and
the base ``timestamp``/``metadata``/``rawEvent``) take a fast path of a few dict lookups;
everything else takes the full path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from agui_chat._exceptions import ProtocolError
from agui_chat.agui.wire._compat import (
    RETIRED_TYPES,
    RetiredShapeTranslator,
    check_protocol_version,
    downgrade_input_messages,
    input_protocol_version,
    peer_predates_subagents,
)
from agui_chat.agui.wire._event_schema import MAX_SAFE_INT, EventEnforcer

from ._chunks import CHUNK_TYPES, ChunkExpander
from ._verify import RunRecord, StreamVerifier

__all__ = ["AGUIEventPipeline"]

logger = logging.getLogger("agui_chat.agui")

Event = dict[str, Any]

_SUBAGENT_TYPES: Final = frozenset({"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"})
_json_loads = json.loads
_ABSENT: Final = object()


class AGUIEventPipeline:
    """Turns SSE ``data`` payloads into verified AG-UI events (wire-shaped dicts).

        ``thread_id`` and ``run_id`` are the ones the request was sent with (every run must
        carry ``thread_id``). ``peer_max_version`` pins the producer's era (for example
        ``"0.0.57"``) and enables the matching shims. ``accept_foreign_thread_ids`` tolerates runs
    that name another thread than the request's (a warning instead of a ``ProtocolError``).
    Warnings go to the
        ``agui_chat.agui`` logger and to ``on_warning``.
    """

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        peer_max_version: str | None = None,
        on_warning: Callable[[str], None] | None = None,
        accept_foreign_thread_ids: bool = False,
    ) -> None:
        self._on_warning = on_warning
        self._peer_max_version = peer_max_version
        self._translator = RetiredShapeTranslator(self._warn)
        self._enforcer = EventEnforcer(self._warn)
        self._expander = ChunkExpander()
        self._verifier = StreamVerifier(
            thread_id=thread_id,
            run_id=run_id,
            accept_foreign_thread_ids=accept_foreign_thread_ids,
            on_warning=self._warn,
        )
        self._drop_subagent_events = peer_predates_subagents(peer_max_version)
        self._versions_warned: set[str] = set()
        # Shared with the stages, for the fast path; these objects are never replaced.
        self._lanes = self._expander.lanes
        self._open_text = self._verifier.open_text
        self._open_tool_calls = self._verifier.open_tool_calls
        self._open_reasoning = self._verifier.open_reasoning

    # ----------------------------------------------------------------- the stream

    def feed(self, data: str) -> list[Event]:
        """Process one SSE ``data`` payload; return the 0..n events it delivers, in order.

        Raises ``ProtocolError`` when the payload is not a JSON object or the stream breaks
        the protocol; the stream must then be abandoned.
        """
        try:
            event = _json_loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise ProtocolError(f"SSE data is not valid JSON ({exc}): {data[:200]!r}") from None
        if type(event) is dict and not self._lanes:
            event_type = event.get("type")
            # Fast path: the bare content events (three keys, or four with a timestamp) for
            # an id that is open; anything unusual falls through to the full path below.
            if event_type == "TEXT_MESSAGE_CONTENT":
                message_id = event.get("messageId")
                if (
                    type(message_id) is str
                    and message_id in self._open_text
                    and type(event.get("delta")) is str
                    and (len(event) == 3 or _plain_extras(event))
                ):
                    return [event]
            elif event_type == "REASONING_MESSAGE_CONTENT":
                message_id = event.get("messageId")
                if (
                    type(message_id) is str
                    and message_id in self._open_reasoning
                    and type(event.get("delta")) is str
                    and (len(event) == 3 or _plain_extras(event))
                ):
                    return [event]
            elif event_type == "TOOL_CALL_ARGS":
                call_id = event.get("toolCallId")
                delta = event.get("delta")
                if (
                    type(call_id) is str
                    and type(delta) is str
                    and (len(event) == 3 or _plain_extras(event))
                ):
                    record = self._open_tool_calls.get(call_id)
                    if record is not None:
                        record.append(delta)
                        return [event]
        return self._process(event)

    def finish(self) -> None:
        """End of stream: raise ``TruncatedStreamError`` unless the last run ended.

        A stream that delivered no event at all, or stopped while a run was active, has
        no outcome and must never be reported as a success.
        """
        self._verifier.finish()

    def _process(self, event: Any) -> list[Event]:
        if type(event) is not dict:
            raise ProtocolError(
                f"SSE data must be one JSON object (an AG-UI event), got {type(event).__name__}"
            )
        event_type = event.get("type")
        if type(event_type) is not str:
            raise ProtocolError(f"malformed event: /type must be a string, got {event_type!r}")
        if event_type in RETIRED_TYPES:
            event = self._translator.translate(event)
            event_type = event["type"]
        if self._drop_subagent_events and event_type in _SUBAGENT_TYPES:
            self._warn(
                f"dropping {event_type}: the peer is pinned to AG-UI {self._peer_max_version}, "
                "which predates subagents (upgrade the peer to keep subagent lifecycle events)"
            )
            return []
        enforced = self._enforcer.enforce(event)
        if enforced is None:
            return []
        if event_type == "RUN_STARTED":
            self._check_version(enforced.get("protocolVersion"))
        if self._lanes or event_type in CHUNK_TYPES:
            delivered = self._expander.expand(enforced)
        else:
            delivered = [enforced]
        verify = self._verifier.verify
        for item in delivered:
            verify(item)
        return delivered

    def _check_version(self, declared: object) -> None:
        warning = check_protocol_version(declared)
        if warning is not None and str(declared) not in self._versions_warned:
            self._versions_warned.add(str(declared))
            self._warn(warning)

    def _warn(self, message: str) -> None:
        logger.warning("%s", message)
        if self._on_warning is not None:
            self._on_warning(message)

    # ----------------------------------------------------------------- run information

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        """Every run seen on the stream, in order (a replayed thread may carry several)."""
        return tuple(self._verifier.runs)

    @property
    def current_run(self) -> RunRecord | None:
        """The latest run (active or ended), or ``None`` before the first event."""
        return self._verifier.current_run

    @property
    def run_active(self) -> bool:
        """Whether a run has started and has not ended yet."""
        return self._verifier.run_active

    @property
    def requested_run_id(self) -> str | None:
        """The ``runId`` the request was sent with (set again when a retry sent a new one)."""
        return self._verifier.requested_run_id

    @requested_run_id.setter
    def requested_run_id(self, run_id: str | None) -> None:
        self._verifier.requested_run_id = run_id

    @property
    def requested_run(self) -> RunRecord | None:
        """The run whose ``runId`` is the request's ``run_id`` (the last such), if seen."""
        wanted = self._verifier.requested_run_id
        for run in reversed(self._verifier.runs):
            if run.run_id == wanted:
                return run
        return None

    # ----------------------------------------------------------------- the request side

    @property
    def input_protocol_version(self) -> str | None:
        """The ``protocolVersion`` to send on the run input (``None``: omit it)."""
        return input_protocol_version(self._peer_max_version)

    def prepare_input_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[Event]:
        """Outgoing ``messages`` for this peer: activity removed, era shims applied."""
        return downgrade_input_messages(messages, self._peer_max_version, self._warn)


def _plain_extras(event: Event) -> bool:
    """Whether a content event's fields beyond its three are valid base fields only.

    ``timestamp``, ``metadata`` and ``rawEvent`` are checked here; anything else (an
    attribution tag, an unknown property, a null) sends the event down the full path.
    """
    count = 3
    timestamp = event.get("timestamp", _ABSENT)
    if timestamp is not _ABSENT:
        if type(timestamp) is not int or not -MAX_SAFE_INT <= timestamp <= MAX_SAFE_INT:
            return False
        count += 1
    metadata = event.get("metadata", _ABSENT)
    if metadata is not _ABSENT:
        if type(metadata) is not dict:
            return False
        count += 1
    raw_event = event.get("rawEvent", _ABSENT)
    if raw_event is not _ABSENT:
        if raw_event is None:
            return False
        count += 1
    return count == len(event)
