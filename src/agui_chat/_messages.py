"""``ChatMessage``: one message of a conversation, made of contents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._contents import AIContent, TextContent
from ._role_and_finish_reason import ChatRole
from ._schema import to_jsonable

__all__ = ["ChatMessage", "as_messages"]


class ChatMessage:
    """A message: a role and a list of contents.

    ``contents`` may be a ``str`` (one ``TextContent``) or a list of contents; ``text`` joins
    the text of its ``TextContent`` items.
    """

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
        if not isinstance(role, (ChatRole, str)):
            raise TypeError(f"role must be a ChatRole or str, got {type(role).__name__}")
        self.role = ChatRole.coerce(role)
        if contents is None:
            items: list[AIContent] = []
        elif isinstance(contents, str):
            items = [TextContent(contents)]
        elif isinstance(contents, AIContent):
            raise TypeError("contents must be a str or a list of contents; wrap it in a list")
        elif not isinstance(contents, Iterable) or isinstance(contents, (bytes, Mapping)):
            raise TypeError(
                f"contents must be a str or a list of contents, got {type(contents).__name__}"
            )
        else:
            items = list(contents)
            for i, item in enumerate(items):
                if not isinstance(item, AIContent):
                    raise TypeError(
                        f"contents[{i}] must be an AIContent, got {type(item).__name__}"
                    )
        if author_name is not None and not isinstance(author_name, str):
            raise TypeError(f"author_name must be a str, got {type(author_name).__name__}")
        if message_id is not None and not isinstance(message_id, str):
            raise TypeError(f"message_id must be a str, got {type(message_id).__name__}")
        if additional_properties is not None and not isinstance(additional_properties, Mapping):
            raise TypeError("additional_properties must be a mapping")
        self.contents: list[AIContent] = items
        self.author_name = author_name.strip() or None if author_name else None
        self.message_id = message_id
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation

    @property
    def text(self) -> str:
        """The text of every ``TextContent``, joined."""
        return "".join(c.text for c in self.contents if isinstance(c, TextContent))

    def clone(self) -> ChatMessage:
        """A shallow copy with its own contents list."""
        return ChatMessage(
            self.role,
            list(self.contents),
            author_name=self.author_name,
            message_id=self.message_id,
            additional_properties=(
                dict(self.additional_properties) if self.additional_properties else None
            ),
            raw_representation=self.raw_representation,
        )

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
        """Load a message written by :meth:`to_dict`."""
        if not isinstance(data, Mapping):
            raise TypeError(f"message must be a mapping, got {type(data).__name__}")
        unknown = set(data) - {
            "role",
            "contents",
            "author_name",
            "message_id",
            "additional_properties",
        }
        if unknown:
            raise ValueError(f"unknown message fields: {', '.join(sorted(unknown))}")
        if "role" not in data:
            raise ValueError("a message needs a 'role'")
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
    """Normalise what a caller passes to a chat client into a new list of messages.

    A ``str`` becomes one user message. Anything else that is not messages is a
    ``TypeError`` naming the offending item.
    """
    if isinstance(messages, str):
        return [ChatMessage(ChatRole.USER, messages)]
    if isinstance(messages, ChatMessage):
        return [messages]
    if isinstance(messages, (bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(
            f"messages must be a str or a sequence of ChatMessage, got {type(messages).__name__}"
        )
    out = list(messages)
    for i, m in enumerate(out):
        if not isinstance(m, ChatMessage):
            raise TypeError(f"messages[{i}] must be a ChatMessage, got {type(m).__name__}")
    return out
