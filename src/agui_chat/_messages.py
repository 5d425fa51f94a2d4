"""``ChatMessage``: one message of a conversation, made of contents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._contents import AIContent, TextContent
from ._role_and_finish_reason import ChatRole
from ._schema import to_jsonable

_FIELDS = {
    "role": str,
    "contents": list,
    "author_name": str,
    "message_id": str,
    "additional_properties": dict,
}


class ChatMessage:
    """A message: a role and a list of contents (a ``str`` is one ``TextContent``)."""

    __slots__ = (
        "additional_properties",
        "author_name",
        "contents",
        "message_id",
        "raw_representation",
        "role",
    )

    def __init__(
        self,
        role: ChatRole | str,
        contents: str | Sequence[AIContent] | None = None,
        *,
        author_name: str | None = None,
        message_id: str | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
    ) -> None:
        self.role = ChatRole.coerce(role)
        self.contents: list[AIContent] = (
            [TextContent(contents)] if isinstance(contents, str) else list(contents or [])
        )
        self.author_name = author_name.strip() or None if author_name else None
        self.message_id = message_id
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation

    @property
    def text(self) -> str:
        """The text of every ``TextContent``, joined."""
        return "".join(c.text for c in self.contents if isinstance(c, TextContent))

    def clone(self, contents: Sequence[AIContent] | None = None) -> ChatMessage:
        """A shallow copy with its own contents list: these ``contents`` if given, else a copy
        of this message's (its fields are valid already: copied as they are, not checked
        again)."""
        copy = object.__new__(ChatMessage)
        copy.role, copy.author_name = self.role, self.author_name
        copy.message_id, copy.raw_representation = self.message_id, self.raw_representation
        copy.contents = list(self.contents if contents is None else contents)
        properties = self.additional_properties
        copy.additional_properties = dict(properties) if properties else None
        return copy

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` loads it back losslessly."""
        out: dict[str, Any] = {
            "role": self.role.value,
            "contents": [c.to_dict() for c in self.contents],
        }
        if self.author_name is not None:
            out["author_name"] = self.author_name
        if self.message_id is not None:
            out["message_id"] = self.message_id
        if self.additional_properties:
            out["additional_properties"] = to_jsonable(self.additional_properties)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatMessage:
        """Load a message written by :meth:`to_dict`; ``ValueError`` for a field that does not
        fit, ``TypeError`` for data that is not a mapping."""
        if not isinstance(data, Mapping):
            raise TypeError(f"message must be a mapping, got {type(data).__name__}")
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown message fields: {', '.join(sorted(unknown))}")
        if "role" not in data:
            raise ValueError("a message needs a 'role'")
        for name, kind in _FIELDS.items():
            if data.get(name) is not None and not isinstance(data[name], kind):
                raise ValueError(f"message field {name!r} must be a {kind.__name__}")
        return cls(
            data["role"],
            [AIContent.from_dict(c) for c in data.get("contents", [])],
            author_name=data.get("author_name"),
            message_id=data.get("message_id"),
            additional_properties=data.get("additional_properties"),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChatMessage):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChatMessage(role={self.role.value!r}, contents={self.contents!r})"


def as_messages(messages: str | ChatMessage | Iterable[ChatMessage]) -> list[ChatMessage]:
    """What a caller passes to a chat client, as a new list (a ``str`` is one user message)."""
    if isinstance(messages, str):
        return [ChatMessage(ChatRole.USER, messages)]
    if isinstance(messages, ChatMessage):
        return [messages]
    return list(messages)
