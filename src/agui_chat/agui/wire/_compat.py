"""Other eras of AG-UI: retired ``THINKING_*`` events coming in, protocol versions, and
the shims for an older peer (0.x ``binary`` parts, peers pinned to an older version)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ._messages import media_part

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The newest version whose events this client knows (1.1 only adds ``encryptedValueType``).
_KNOWN_VERSION: Final = (1, 1)


# --------------------------------------------------------------------------- retired shapes

_THINKING_TO_REASONING: Final = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}

#: The 0.x ``THINKING_*`` events, retired in 1.0 and translated by the compatibility boundary.
RETIRED_TYPES: Final = frozenset(_THINKING_TO_REASONING)


class RetiredShapeTranslator:
    """Translates 0.x ``THINKING_*`` events into the reasoning family, with synthesized span
    and message ids. Each retired type is warned about once per stream;
    ``THINKING_START.title`` has no 1.0 home and is dropped with a warning."""

    __slots__ = ("_open", "_warn", "_warned")

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self._warned: set[str] = set()
        self._open: dict[str, str] = {}  # id prefix ("thinking": the span) -> the open id

    def translate(self, event: Event) -> Event:
        """The 1.0 equivalent of a retired event; other events pass unchanged."""
        retired: str = event["type"]
        target = _THINKING_TO_REASONING.get(retired)
        if target is None:
            return event
        if retired not in self._warned:
            self._warned.add(retired)
            self._warn(
                f"translated retired {retired} into {target} (THINKING_* was retired in "
                "AG-UI 1.0; the producer should emit REASONING_* events)"
            )
        if "title" in event and "title" not in self._warned:
            self._warned.add("title")
            self._warn(
                f"dropped THINKING_START title {event['title']!r}: REASONING_START has no title"
            )
        lane = "thinking" if retired in ("THINKING_START", "THINKING_END") else "thinking-message"
        if retired.endswith("_START"):
            self._open[lane] = f"{lane}-{uuid.uuid4().hex}"
        message_id = self._open.get(lane) or f"{lane}-{uuid.uuid4().hex}"
        out: Event = {"type": target, "messageId": message_id}
        if retired.endswith("_END"):
            self._open.pop(lane, None)
        if retired == "THINKING_TEXT_MESSAGE_START":
            out["role"] = "reasoning"
        # delta, base fields, and unknowns for enforcement to judge
        out.update(
            (k, v) for k, v in event.items() if k not in ("type", "title", "messageId", "role")
        )
        return out


# --------------------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, ...] | None:
    """Parse a dotted numeric version (``"1.0"``, ``"0.0.57"``); ``None`` if it is not one."""
    parts = text.split(".")
    if not all(part.isdigit() and part.isascii() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def check_protocol_version(declared: object) -> str | None:
    """The warning for a producer's ``RUN_STARTED.protocolVersion``, or ``None``: absent
    (a 0.x producer) or up to 1.1 is quiet; a newer one, or one not ``MAJOR.MINOR``, is
    served anyway with a warning."""
    if declared is None:
        return None
    version = parse_version(declared) if isinstance(declared, str) else None
    known = ".".join(map(str, _KNOWN_VERSION))
    if version is None or len(version) != 2:
        return (
            f"cannot interpret the producer's protocolVersion {declared!r} (expected "
            f"MAJOR.MINOR); proceeding as if it were newer than {known}"
        )
    if version > _KNOWN_VERSION:
        return (
            f"producer speaks AG-UI {declared}, newer than the {known} this client knows; "
            "proceeding, and unrecognised material will be stripped"
        )
    return None


def _predates(peer_max_version: str | None, version: tuple[int, ...]) -> bool:
    parsed = parse_version(peer_max_version) if peer_max_version is not None else None
    return parsed is not None and parsed <= version


def peer_predates_subagents(peer_max_version: str | None) -> bool:
    """Whether a peer pinned to ``peer_max_version`` predates subagents (0.0.57 or older)."""
    return _predates(peer_max_version, (0, 0, 57))


def input_protocol_version(peer_max_version: str | None) -> str | None:
    """The ``protocolVersion`` to declare on the run input, or ``None`` (omit it) for a peer
    that predates the field (any 0.x pin)."""
    return None if _predates(peer_max_version, (0, 99, 99)) else "1.0"


# --------------------------------------------------------------------------- older peers


def upgrade_binary_part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """The 1.0 part for a 0.x ``binary`` part (``None`` if it names no source)."""
    key = next((k for k in ("url", "data", "id") if part.get(k) is not None), None)
    if key is None:
        return None
    mime = part.get("mimeType")
    source: dict[str, Any] = {"type": "file" if key == "id" else key, "value": part[key]}
    if mime is not None:
        source["mimeType"] = mime
    return media_part(mime if isinstance(mime, str) else None, source, part.get("filename"))


def downgrade_input_messages(
    messages: Iterable[Mapping[str, Any]], peer_max_version: str | None, warn: Warn
) -> list[dict[str, Any]]:
    """Outgoing ``RunAgentInput.messages`` for the peer, as new dicts: activity messages
    removed, legacy ``binary`` parts upgraded to media parts; for a peer pinned to 0.0.39 or
    older, part lists flattened to their text (with a warning when that drops parts); for
    one pinned to 0.0.57 or older, ``subagentRunId`` removed."""
    flatten = _predates(peer_max_version, (0, 0, 39))
    strip_attribution = _predates(peer_max_version, (0, 0, 57))
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "activity":
            continue
        copy = dict(message)
        content = copy.get("content")
        if isinstance(content, list):
            parts: list[Any] = []
            for part in content:
                if not (isinstance(part, Mapping) and part.get("type") == "binary"):
                    parts.append(part)
                elif (upgraded := upgrade_binary_part(part)) is not None:
                    parts.append(upgraded)
                else:
                    warn(
                        f"dropped a legacy binary content part of message "
                        f"{copy.get('id')!r}: it has no url, data or id to upgrade"
                    )
            copy["content"] = parts
            if flatten:
                texts = [
                    p["text"]
                    for p in parts
                    if isinstance(p, Mapping) and p.get("type") == "text" and "text" in p
                ]
                if len(texts) != len(parts):
                    kinds = sorted(
                        {str(p.get("type")) for p in parts if isinstance(p, Mapping)} - {"text"}
                    )
                    warn(
                        f"peer speaks AG-UI {peer_max_version}, which predates content parts: "
                        f"message {copy.get('id')!r} is flattened to text, which DROPS "
                        f"non-text parts ({', '.join(kinds)}); upgrade the peer to keep them"
                    )
                copy["content"] = "".join(texts)
        if strip_attribution:
            copy.pop("subagentRunId", None)
        out.append(copy)
    return out
