"""Other eras of AG-UI: retired event shapes coming in, older peers going out, versions.

- :class:`RetiredShapeTranslator` — the compatibility boundary: retired 0.x ``THINKING_*``
  events become the ``REASONING_*`` family, with synthesized ids and a warning.
- :func:`check_protocol_version` judges a producer's declared ``protocolVersion``.
- The outgoing peer-era shims: :func:`downgrade_input_messages`,
  :func:`input_protocol_version` and :func:`peer_predates_subagents`, for a peer pinned to
  an older AG-UI version.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ._messages import media_part_kind

__all__ = [
    "CLIENT_PROTOCOL_VERSION",
    "KNOWN_PROTOCOL_VERSION",
    "RETIRED_TYPES",
    "RetiredShapeTranslator",
    "check_protocol_version",
    "downgrade_input_messages",
    "input_protocol_version",
    "parse_version",
    "peer_predates_subagents",
]

Event = dict[str, Any]
Warn = Callable[[str], None]

#: The protocol version this client declares on ``RunAgentInput.protocolVersion``.
CLIENT_PROTOCOL_VERSION: Final = "1.0"
#: The newest version whose events this client knows (1.1 only adds ``encryptedValueType``).
KNOWN_PROTOCOL_VERSION: Final = (1, 1)


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
    """The compatibility boundary: translates 0.x ``THINKING_*`` events into reasoning.

    The retired events carry no ids, so the span and the message get synthesized ones.
    Each retired type is warned about once per stream (a warning per delta would drown
    the log); ``THINKING_START.title`` has no 1.0 home and is dropped with a warning.
    """

    __slots__ = ("_message_id", "_span_id", "_warn", "_warned")

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self._warned: set[str] = set()
        self._span_id: str | None = None
        self._message_id: str | None = None

    def translate(self, event: Event) -> Event:
        """Return the 1.0 equivalent of a retired event (other events pass unchanged)."""
        retired = event.get("type")
        if type(retired) is not str or retired not in _THINKING_TO_REASONING:
            return event
        target = _THINKING_TO_REASONING[retired]
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
        out: Event = {"type": target}
        if retired == "THINKING_START":
            self._span_id = f"thinking-{uuid.uuid4().hex}"
            out["messageId"] = self._span_id
        elif retired == "THINKING_END":
            out["messageId"] = self._span_id or f"thinking-{uuid.uuid4().hex}"
            self._span_id = None
        elif retired == "THINKING_TEXT_MESSAGE_START":
            self._message_id = f"thinking-message-{uuid.uuid4().hex}"
            out["messageId"] = self._message_id
            out["role"] = "reasoning"
        else:
            out["messageId"] = self._message_id or f"thinking-message-{uuid.uuid4().hex}"
            if retired == "THINKING_TEXT_MESSAGE_END":
                self._message_id = None
        for key, value in event.items():
            if key not in ("type", "title", "messageId", "role"):
                out[key] = value  # delta, base fields, and unknowns for enforcement to judge
        return out


# --------------------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, ...] | None:
    """Parse a dotted numeric version (``"1.0"``, ``"0.0.57"``); ``None`` if it is not one."""
    parts = text.split(".")
    if not all(part.isdigit() and part.isascii() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def check_protocol_version(declared: object) -> str | None:
    """Judge a producer's ``RUN_STARTED.protocolVersion``; return a warning or ``None``.

    Absent means a pre-versioning (0.x) producer and is quiet; so is any version up to
    1.1. A newer version, or one that is not ``MAJOR.MINOR``, is served anyway with a
    warning (AG-UI versioning rules).
    """
    if declared is None:
        return None
    version = parse_version(declared) if isinstance(declared, str) else None
    known = ".".join(map(str, KNOWN_PROTOCOL_VERSION))
    if version is None or len(version) != 2:
        return (
            f"cannot interpret the producer's protocolVersion {declared!r} (expected "
            f"MAJOR.MINOR); proceeding as if it were newer than {known}"
        )
    if version > KNOWN_PROTOCOL_VERSION:
        return (
            f"producer speaks AG-UI {declared}, newer than the {known} this client knows; "
            "proceeding, and unrecognised material will be stripped"
        )
    return None


def _predates(peer_max_version: str | None, version: tuple[int, ...]) -> bool:
    if peer_max_version is None:
        return False
    parsed = parse_version(peer_max_version)
    return parsed is not None and parsed <= version


def peer_predates_subagents(peer_max_version: str | None) -> bool:
    """Whether a peer pinned to ``peer_max_version`` predates subagents (0.0.57 or older)."""
    return _predates(peer_max_version, (0, 0, 57))


def input_protocol_version(peer_max_version: str | None) -> str | None:
    """The ``protocolVersion`` to declare on the run input, or ``None`` to omit it.

    A peer known to predate the field (any 0.x pin) is not sent it.
    """
    return None if _predates(peer_max_version, (0, 99, 99)) else CLIENT_PROTOCOL_VERSION


# --------------------------------------------------------------------------- older peers


def upgrade_binary_part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """The 1.0 part for a 0.x ``binary`` part (``None`` if it names no source)."""
    mime = part.get("mimeType")
    kind = media_part_kind(mime if isinstance(mime, str) else None)
    if part.get("url") is not None:
        source: dict[str, Any] = {"type": "url", "value": part["url"]}
    elif part.get("data") is not None:
        source = {"type": "data", "value": part["data"]}
    elif part.get("id") is not None:
        source = {"type": "file", "value": part["id"]}
    else:
        return None
    if mime is not None:
        source["mimeType"] = mime
    upgraded: dict[str, Any] = {"type": kind, "source": source}
    if part.get("filename") is not None:
        upgraded["metadata"] = {"filename": part["filename"]}
    return upgraded


def downgrade_input_messages(
    messages: Iterable[Mapping[str, Any]], peer_max_version: str | None, warn: Warn
) -> list[dict[str, Any]]:
    """Prepare outgoing ``RunAgentInput.messages`` for the peer (returns new dicts).

    Always: activity messages are removed (they never travel to the producer) and legacy
    ``binary`` content parts are upgraded to typed media parts, losslessly. For a peer
    pinned to 0.0.39 or older, part lists are flattened to their text, with a warning when
    that drops parts. For a peer pinned to 0.0.57 or older, ``subagentRunId`` is removed
    (lossless: the messages flatten into one thread).
    """
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
                if isinstance(part, Mapping) and part.get("type") == "binary":
                    upgraded = upgrade_binary_part(part)
                    if upgraded is None:
                        warn(
                            f"dropped a legacy binary content part of message "
                            f"{copy.get('id')!r}: it has no url, data or id to upgrade"
                        )
                        continue
                    parts.append(upgraded)
                else:
                    parts.append(part)
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
            else:
                copy["content"] = parts
        if strip_attribution:
            copy.pop("subagentRunId", None)
        out.append(copy)
    return out
