"""``ChatOptions``: per-request settings, plus the tool-mode and response-format values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ._response_format import ChatResponseFormat

if TYPE_CHECKING:
    from ._tools import AITool


@dataclass(frozen=True, slots=True)
class ChatToolMode:
    """Whether and how the model must call tools: ``AUTO``, ``NONE``, ``REQUIRE_ANY`` or
    ``ChatToolMode.require_specific(name)``."""

    mode: Literal["auto", "none", "required"]
    required_function_name: str | None = None

    AUTO: ClassVar[ChatToolMode]
    NONE: ClassVar[ChatToolMode]
    REQUIRE_ANY: ClassVar[ChatToolMode]

    def __post_init__(self) -> None:
        if self.required_function_name is not None and self.mode != "required":
            raise ValueError("required_function_name only goes with mode 'required'")

    @classmethod
    def require_specific(cls, name: str) -> ChatToolMode:
        """The model must call the tool named ``name``."""
        if not name:
            raise ValueError("require_specific needs a non-empty tool name")
        return cls("required", name)


ChatToolMode.AUTO = ChatToolMode("auto")
ChatToolMode.NONE = ChatToolMode("none")
ChatToolMode.REQUIRE_ANY = ChatToolMode("required")


@dataclass(slots=True)
class ChatOptions:
    """Settings for one request; ``None`` means the service default. ``conversation_id``
    names a conversation the service keeps (for an AG-UI agent: the thread id); a type as
    ``response_format`` becomes its strict ``ChatResponseFormat``."""

    conversation_id: str | None = None
    instructions: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    top_p: float | None = None
    top_k: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    stop_sequences: list[str] | None = None
    response_format: ChatResponseFormat | type[Any] | None = None
    model_id: str | None = None
    tools: list[AITool] | None = None
    tool_mode: ChatToolMode | None = None
    allow_multiple_tool_calls: bool | None = None
    additional_properties: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_output_tokens is not None and self.max_output_tokens <= 0:
            raise ValueError("max_output_tokens must be positive")
        if self.stop_sequences is not None:
            self.stop_sequences = list(self.stop_sequences)
        if self.tools is not None:
            self.tools = list(self.tools)
        if self.response_format is not None and not isinstance(
            self.response_format, ChatResponseFormat
        ):
            self.response_format = ChatResponseFormat.for_type(self.response_format)

    def clone(self) -> ChatOptions:
        """A shallow copy with its own ``tools``, ``stop_sequences`` and
        ``additional_properties``, for middleware to change."""
        copy = object.__new__(ChatOptions)  # the fields as they are: no __post_init__ again
        for name in _FIELDS:
            setattr(copy, name, getattr(self, name))
        copy.additional_properties = dict(self.additional_properties)
        if self.tools is not None:
            copy.tools = list(self.tools)
        if self.stop_sequences is not None:
            copy.stop_sequences = list(self.stop_sequences)
        return copy


_FIELDS = tuple(f.name for f in dataclasses.fields(ChatOptions))


def set_fields(options: ChatOptions, *names: str) -> dict[str, Any]:
    """The fields ``names`` of ``options`` that are set (not ``None``), by name: what a
    provider adapter sends where its API spells a setting as ``ChatOptions`` does."""
    return {name: value for name in names if (value := getattr(options, name)) is not None}
