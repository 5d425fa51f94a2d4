"""Chunk expansion: ``*_CHUNK`` events, which carry an id only on an item's first chunk,
become their explicit ``START``/``CONTENT``/``END`` events (on enforced events)."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from agui_chat._exceptions import ProtocolError

Event = dict[str, Any]

# What ends open chunk streams besides another chunk: every lane's, or (any other event the
# enforcer lets through, a subagent's end included) the event's own lane's.
_CLOSES_ALL_LANES: Final = frozenset(
    {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"}
)
_STANDS_ASIDE: Final = frozenset(
    {"RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED"}
)


class _ChunkKind(NamedTuple):
    """A chunk type: its id field, its explicit events' prefix and content suffix, and the
    fields its first chunk opens the item with."""

    id_key: str
    prefix: str
    content: str
    opener_fields: tuple[str, ...]


_CHUNK_KINDS: Final = {
    "TEXT_MESSAGE_CHUNK": _ChunkKind("messageId", "TEXT_MESSAGE", "CONTENT", ("role", "name")),
    "TOOL_CALL_CHUNK": _ChunkKind(
        "toolCallId", "TOOL_CALL", "ARGS", ("toolCallName", "parentMessageId")
    ),
    "REASONING_MESSAGE_CHUNK": _ChunkKind("messageId", "REASONING_MESSAGE", "CONTENT", ()),
}


class _Pending(NamedTuple):
    """The item one lane is assembling from chunks."""

    chunk_type: str
    entity_id: str
    fields: dict[str, Any]


class ChunkExpander:
    """Expands ``*_CHUNK`` events, one open chunk stream per lane (the subagent a chunk is
    attributed to; ``None`` is the parent agent), synthesizing its ``*_END`` once the lane's
    next event, a run-level event or the lane's subagent ending means it cannot continue."""

    __slots__ = ("lanes",)

    def __init__(self) -> None:
        # Open chunk streams by lane: empty in the common case, which callers test first.
        self.lanes: dict[str | None, _Pending] = {}

    def expand(self, event: Event) -> list[Event]:
        """Return the events ``event`` stands for, preceded by any synthesized ``*_END``."""
        event_type = event["type"]
        kind = _CHUNK_KINDS.get(event_type)
        if kind is not None:
            return self._expand_chunk(event, kind)
        if not self.lanes:
            return [event]
        if event_type in _STANDS_ASIDE:
            out = []
        elif event_type in _CLOSES_ALL_LANES:
            out = [end for owner in list(self.lanes) for end in self._close(owner)]
        else:
            out = self._close(event.get("subagentRunId"))
        out.append(event)
        return out

    def _close(self, owner: str | None) -> list[Event]:
        pending = self.lanes.pop(owner, None)
        if pending is None:
            return []
        kind = _CHUNK_KINDS[pending.chunk_type]
        end: Event = {"type": f"{kind.prefix}_END", kind.id_key: pending.entity_id}
        if owner is not None:
            end["subagentRunId"] = owner
        return [end]

    def _resolve_lane(
        self, chunk_type: str, entity_id: str | None, tag: str | None, entity: str
    ) -> str | None:
        if entity_id is not None:
            for owner, pending in self.lanes.items():
                if pending.chunk_type == chunk_type and pending.entity_id == entity_id:
                    if tag is not None and tag != owner:
                        who = "(the parent agent)" if owner is None else f"'{owner}'"
                        raise ProtocolError(
                            f"Cannot continue {entity} '{entity_id}': chunk subagentRunId "
                            f"'{tag}' does not match the open stream's subagent {who}"
                        )
                    return owner
            return tag
        if tag is not None:
            return tag
        parent = self.lanes.get(None)
        if parent is not None and parent.chunk_type == chunk_type:
            return None
        candidates = [o for o, p in self.lanes.items() if p.chunk_type == chunk_type]
        if len(candidates) > 1:
            raise ProtocolError(
                f"ambiguous {chunk_type}: it carries neither an id nor a subagentRunId, but "
                f"{len(candidates)} lanes have an open {entity}; attribute the chunk"
            )
        return candidates[0] if candidates else None

    def _expand_chunk(self, chunk: Event, kind: _ChunkKind) -> list[Event]:
        id_key, opener_fields = kind.id_key, kind.opener_fields
        entity = kind.prefix.lower().replace("_", " ")
        chunk_type: str = chunk["type"]
        entity_id: str | None = chunk.get(id_key)
        tag: str | None = chunk.get("subagentRunId")
        lane = self._resolve_lane(chunk_type, entity_id, tag, entity)
        out: list[Event] = []
        pending = self.lanes.get(lane)
        if (
            pending is not None
            and pending.chunk_type == chunk_type
            and (entity_id is None or entity_id == pending.entity_id)
        ):
            for name in opener_fields:
                incoming = chunk.get(name)
                established = pending.fields.get(name)
                if incoming is not None and incoming != established:
                    raise ProtocolError(
                        f"Cannot continue {entity} '{pending.entity_id}': chunk {name} "
                        f"'{incoming}' does not match the open stream's {name} "
                        + ("(absent)" if established is None else f"'{established}'")
                    )
        else:
            out.extend(self._close(lane))
            if entity_id is None:
                raise ProtocolError(f"First {chunk_type} must carry {id_key} (none is open)")
            if chunk_type == "TOOL_CALL_CHUNK" and chunk.get("toolCallName") is None:
                raise ProtocolError(
                    f"First TOOL_CALL_CHUNK must carry toolCallName (tool call '{entity_id}')"
                )
            fields = {name: chunk[name] for name in opener_fields if name in chunk}
            if chunk_type == "TEXT_MESSAGE_CHUNK":
                fields.setdefault("role", "assistant")
            elif chunk_type == "REASONING_MESSAGE_CHUNK":
                fields["role"] = "reasoning"
            pending = _Pending(chunk_type, entity_id, fields)
            self.lanes[lane] = pending
            start = {"type": f"{kind.prefix}_START", id_key: entity_id, **fields}
            out.append(_synthesize(chunk, start, tag))
        delta = chunk.get("delta")
        if delta is not None or (not out and "metadata" in chunk):
            # A metadata-only continuation still reaches its item, as an empty delta.
            content_type = f"{kind.prefix}_{kind.content}"
            body = {"type": content_type, id_key: pending.entity_id, "delta": delta or ""}
            out.append(_synthesize(chunk, body, lane))
        return out


def _synthesize(chunk: Event, body: Event, owner: str | None) -> Event:
    if owner is not None:
        body["subagentRunId"] = owner
    for key in ("metadata", "rawEvent"):
        if key in chunk:
            body[key] = chunk[key]
    return body
