"""The incoming AG-UI event pipeline: SSE ``data`` in, verified events out, through parse,
retired-shape translation, peer-era shims, enforcement, chunk expansion and verification.
The bare content events of an open id take a fast path of a few dict lookups."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any, Final

from agui_chat._exceptions import ProtocolError
from agui_chat.agui.wire._compat import (
    RETIRED_TYPES,
    RetiredShapeTranslator,
    check_protocol_version,
    peer_predates_subagents,
)
from agui_chat.agui.wire._event_schema import MAX_SAFE_INT, EventEnforcer

from ._chunks import ChunkExpander
from ._verify import StreamVerifier
from ._warnings import warn

Event = dict[str, Any]

_SUBAGENT_TYPES: Final = frozenset({"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"})
_json_loads = json.loads
_ABSENT: Final = object()


class AGUIEventPipeline:
    """Turns SSE ``data`` payloads into verified AG-UI events (wire-shaped dicts).
    ``peer_max_version`` (say ``"0.0.57"``) enables that era's shims; warnings go to the
    ``agui_chat.agui`` logger and to ``on_warning``."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        peer_max_version: str | None = None,
        on_warning: Callable[[str], None] | None = None,
        accept_foreign_thread_ids: bool = False,
    ) -> None:
        self.warn: Callable[[str], None] = partial(warn, on_warning)
        self._peer_max_version = peer_max_version
        self._translator = RetiredShapeTranslator(self.warn)
        self._enforcer = EventEnforcer(self.warn)
        self._expander = ChunkExpander()
        self._verifier = StreamVerifier(
            thread_id=thread_id,
            accept_foreign_thread_ids=accept_foreign_thread_ids,
            on_warning=self.warn,
        )
        self._drop_subagent_events = peer_predates_subagents(peer_max_version)
        self._versions_warned: set[str] = set()
        # The fast path reads the stages' own collections, which are never replaced.
        self._lanes = self._expander.lanes
        self._fast: dict[str, tuple[str, Any]] = {
            "TEXT_MESSAGE_CONTENT": ("messageId", self._verifier.text.open),
            "REASONING_MESSAGE_CONTENT": ("messageId", self._verifier.reasoning.open),
            "TOOL_CALL_ARGS": ("toolCallId", self._verifier.tool_calls.open),
        }

    def feed(self, data: str) -> list[Event]:
        """The 0..n events one SSE ``data`` payload delivers, in order; ``ProtocolError``
        when it is not a JSON object or breaks the protocol (abandon the stream then)."""
        try:
            event = _json_loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise ProtocolError(f"SSE data is not valid JSON ({exc}): {data[:200]!r}") from None
        if type(event) is dict and not self._lanes:
            try:
                fast = self._fast.get(event.get("type"))  # type: ignore[arg-type]
            except TypeError:  # an unhashable type: the full path says what is wrong
                fast = None
            # A bare content event (three keys, or a few valid base fields more) for an open
            # id; anything unusual takes the full path.
            if fast is not None:
                entity_id = event.get(fast[0])
                if (
                    type(entity_id) is str
                    and entity_id in fast[1]
                    and type(event.get("delta")) is str
                    and (len(event) == 3 or _plain_extras(event))
                ):
                    return [event]
        return self._process(event)

    def finish(self) -> None:
        """End of stream: ``TruncatedStreamError`` unless the last run ended."""
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
            self.warn(
                f"dropping {event_type}: the peer is pinned to AG-UI {self._peer_max_version}, "
                "which predates subagents (upgrade the peer to keep subagent lifecycle events)"
            )
            return []
        enforced = self._enforcer.enforce(event)
        if enforced is None:
            return []
        if event_type == "RUN_STARTED":
            declared = enforced.get("protocolVersion")
            warning = check_protocol_version(declared)
            if warning is not None and str(declared) not in self._versions_warned:
                self._versions_warned.add(str(declared))
                self.warn(warning)
        delivered = self._expander.expand(enforced)
        for item in delivered:
            self._verifier.verify(item)
        return delivered

    @property
    def run_ended(self) -> bool:
        """Whether the latest run has ended (``False`` before any run and inside one)."""
        return self._verifier.run_ended


def _plain_extras(event: Event) -> bool:
    """Whether a content event's fields beyond its three are valid ``timestamp``,
    ``metadata`` and ``rawEvent`` only."""
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
