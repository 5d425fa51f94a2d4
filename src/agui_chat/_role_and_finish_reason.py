"""Small string-valued types: roles and finish reasons, compared case-insensitively."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

_V = TypeVar("_V", bound="_CaseInsensitiveValue")


class _CaseInsensitiveValue:
    """A string value that equals plain strings and peers regardless of case."""

    __slots__ = ("_key", "value")
    _kind: ClassVar[str] = "value"

    def __init__(self, value: str) -> None:
        if isinstance(value, _CaseInsensitiveValue):
            value = value.value
        if not isinstance(value, str):
            raise TypeError(f"{self._kind} must be a str, got {type(value).__name__}")
        if not value.strip():
            raise ValueError(f"{self._kind} must not be empty")
        self.value = value
        self._key = value.lower()

    @classmethod
    def coerce(cls: type[_V], value: _V | str) -> _V:
        """Return ``value`` as this type (strings are wrapped)."""
        return value if isinstance(value, cls) else cls(value)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _CaseInsensitiveValue):
            return type(other) is type(self) and other._key == self._key
        if isinstance(other, str):
            return other.lower() == self._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.value,))


class ChatRole(_CaseInsensitiveValue):
    """Who wrote a message: ``SYSTEM``, ``USER``, ``ASSISTANT``, ``TOOL`` or a custom role
    (``ChatRole("Developer") == "developer"``)."""

    __slots__ = ()
    _kind = "role"

    SYSTEM: ClassVar[ChatRole]
    USER: ClassVar[ChatRole]
    ASSISTANT: ClassVar[ChatRole]
    TOOL: ClassVar[ChatRole]


for _n in ("system", "user", "assistant", "tool"):
    setattr(ChatRole, _n.upper(), ChatRole(_n))


class ChatFinishReason(_CaseInsensitiveValue):
    """Why a response ended; ``INPUT_REQUIRED``: the run paused for a person's answers."""

    __slots__ = ()
    _kind = "finish reason"

    STOP: ClassVar[ChatFinishReason]
    LENGTH: ClassVar[ChatFinishReason]
    TOOL_CALLS: ClassVar[ChatFinishReason]
    CONTENT_FILTER: ClassVar[ChatFinishReason]
    INPUT_REQUIRED: ClassVar[ChatFinishReason]
    CANCELLED: ClassVar[ChatFinishReason]
    ERROR: ClassVar[ChatFinishReason]


for _n in ("stop", "length", "tool_calls", "content_filter", "input_required", "cancelled"):
    setattr(ChatFinishReason, _n.upper(), ChatFinishReason(_n))
ChatFinishReason.ERROR = ChatFinishReason("error")
