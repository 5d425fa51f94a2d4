"""``ChatOptions``: per-request settings, plus the tool-mode and response-format values."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ._response_format import ChatResponseFormat

if TYPE_CHECKING:
    from ._tools import AITool

__all__ = ["ChatOptions", "ChatToolMode"]


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
        if self.mode not in ("auto", "none", "required"):
            raise ValueError(f"tool mode must be 'auto', 'none' or 'required', got {self.mode!r}")
        if self.required_function_name is not None and self.mode != "required":
            raise ValueError("required_function_name only goes with mode 'required'")

    @classmethod
    def require_specific(cls, name: str) -> ChatToolMode:
        """The model must call the tool named ``name``."""
        if not isinstance(name, str) or not name:
            raise ValueError("require_specific needs a non-empty tool name")
        return cls("required", name)


ChatToolMode.AUTO = ChatToolMode("auto")
ChatToolMode.NONE = ChatToolMode("none")
ChatToolMode.REQUIRE_ANY = ChatToolMode("required")


@dataclass(slots=True)
class ChatOptions:
    """Settings for one request. Every field is optional; ``None`` means the service default.

    ``conversation_id`` names a conversation the service keeps (for an AG-UI agent: the
    thread id). ``clone()`` is a shallow copy with its own lists and dicts, so middleware can
    change a copy without touching the caller's object.
    """

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

    _NUMERIC: ClassVar[dict[str, tuple[type, ...]]] = {
        "temperature": (int, float),
        "top_p": (int, float),
        "frequency_penalty": (int, float),
        "presence_penalty": (int, float),
        "max_output_tokens": (int,),
        "top_k": (int,),
        "seed": (int,),
    }

    def __post_init__(self) -> None:
        for name, kinds in self._NUMERIC.items():
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
                raise TypeError(f"{name} must be a number, got {type(value).__name__}")
        for name in ("conversation_id", "instructions", "model_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        if self.max_output_tokens is not None and self.max_output_tokens <= 0:
            raise ValueError("max_output_tokens must be positive")
        if self.stop_sequences is not None:
            if isinstance(self.stop_sequences, str):
                raise TypeError("stop_sequences must be a list of str, not a str")
            self.stop_sequences = list(self.stop_sequences)
            for i, stop in enumerate(self.stop_sequences):
                if not isinstance(stop, str):
                    raise TypeError(f"stop_sequences[{i}] must be a str, got {type(stop).__name__}")
        if self.allow_multiple_tool_calls is not None and not isinstance(
            self.allow_multiple_tool_calls, bool
        ):
            raise TypeError(
                "allow_multiple_tool_calls must be a bool, got "
                f"{type(self.allow_multiple_tool_calls).__name__}"
            )
        if self.tools is not None:
            from ._tools import AITool

            self.tools = list(self.tools)
            for i, tool in enumerate(self.tools):
                if not isinstance(tool, AITool):
                    raise TypeError(
                        f"tools[{i}] must be an AITool (use ai_function to wrap a function), "
                        f"got {type(tool).__name__}"
                    )
        if self.tool_mode is not None and not isinstance(self.tool_mode, ChatToolMode):
            raise TypeError("tool_mode must be a ChatToolMode")
        if self.response_format is not None and not isinstance(
            self.response_format, ChatResponseFormat
        ):
            # A type (ChatOptions(response_format=Model)): its strict schema; get_response
            # validates the reply into response.value.
            self.response_format = ChatResponseFormat.for_type(self.response_format)
        if not isinstance(self.additional_properties, dict):
            raise TypeError("additional_properties must be a dict")

    def clone(self) -> ChatOptions:
        """A shallow copy with new ``tools``, ``stop_sequences`` and ``additional_properties``."""
        clone = copy.copy(self)
        if self.tools is not None:
            clone.tools = list(self.tools)
        if self.stop_sequences is not None:
            clone.stop_sequences = list(self.stop_sequences)
        clone.additional_properties = dict(self.additional_properties)
        return clone
