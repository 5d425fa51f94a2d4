"""The contents a message is made of: text, reasoning, data, tool calls and results, errors and
usage. Slotted dataclasses; ``to_dict()`` and ``AIContent.from_dict()`` go through one pydantic
``TypeAdapter`` over every content type, told apart by ``type`` (built on first use).
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ._schema import dump_json
from ._usage import UsageDetails

if TYPE_CHECKING:
    from pydantic import TypeAdapter


# Field metadata pydantic reads: when a field is left out of a dict; flags are strict.
NEVER: Mapping[str, Any] = {"exclude": True}
OMIT_NONE: Mapping[str, Any] = {"exclude_if": lambda value: value is None}
OMIT_FALSE: Mapping[str, Any] = {"exclude_if": lambda value: not value, "strict": True}
OMIT_TRUE: Mapping[str, Any] = {"exclude_if": bool, "strict": True}
STRICT: Mapping[str, Any] = {"strict": True}


def without_type(data: Any) -> Any:
    return {k: v for k, v in data.items() if k != "type"} if isinstance(data, dict) else data


def check_id(value: str, name: str) -> None:
    if not value.strip():
        raise ValueError(f"{name} must not be empty")


@dataclass(slots=True)
class AIContent:
    """Base class of every content; ``raw_representation`` is the provider's own object (never
    serialized)."""

    type: ClassVar[str] = ""
    _registry: ClassVar[dict[str, builtins.type[AIContent]]] = {}
    _adapter: ClassVar[TypeAdapter[Any] | None] = None
    __pydantic_config__: ClassVar[dict[str, Any]] = {
        "extra": "forbid",
        "arbitrary_types_allowed": True,
    }

    additional_properties: dict[str, Any] | None = field(
        default=None, kw_only=True, repr=False, metadata=OMIT_FALSE
    )
    raw_representation: Any = field(
        default=None, kw_only=True, repr=False, compare=False, metadata=NEVER
    )

    def __init_subclass__(cls) -> None:  # no super(): slotted dataclasses are made twice
        if cls.__dict__.get("type"):
            AIContent._registry[cls.type] = cls  # the slotted class replaces the first one
            AIContent._adapter = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``AIContent.from_dict`` loads it back."""
        return _content_adapter().dump_python(self, mode="json", fallback=str)  # type: ignore[no-any-return]

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> AIContent:
        """Load a content written by ``to_dict``; an unknown ``type`` or a field that does not
        fit raises ``ValueError``."""
        if not isinstance(data, Mapping):
            raise TypeError(f"content must be a mapping, got {type(data).__name__}")
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in AIContent._registry:
            raise ValueError(f"unknown content type {kind!r}")
        from pydantic import ValidationError

        try:
            return _content_adapter().validate_python(data)  # type: ignore[no-any-return]
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or '(root)'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            raise ValueError(f"invalid {kind!r} content: {problems}") from None

    @classmethod
    def _from_wire(cls, data: Any) -> Any:  # a to_dict() as the dataclass takes it
        return without_type(data)

    def _to_wire(self, out: dict[str, Any]) -> None:
        """Adjust what pydantic wrote, in place."""


def _content_adapter() -> TypeAdapter[Any]:
    adapter = AIContent._adapter
    if adapter is None:
        from typing import Annotated, Union

        from pydantic import BeforeValidator, Discriminator, Tag, TypeAdapter, WrapSerializer

        members = tuple(
            Annotated[cls, BeforeValidator(cls._from_wire), Tag(kind)]
            for kind, cls in AIContent._registry.items()
        )
        union: Any = Annotated[Union[members], Discriminator(_tag), WrapSerializer(_dump)]  # noqa: UP007
        adapter = AIContent._adapter = TypeAdapter(union)
    return adapter


def _tag(value: Any) -> str | None:
    return value.get("type") if isinstance(value, dict) else getattr(value, "type", None)


def _dump(content: AIContent, handler: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": content.type, **handler(content)}
    content._to_wire(out)
    return out


@dataclass(slots=True)
class TextContent(AIContent):
    """Plain text."""

    type = "text"
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class TextReasoningContent(AIContent):
    """The model's reasoning. ``protected_data`` is opaque (encrypted) reasoning that must be
    sent back unchanged."""

    type = "reasoning"
    text: str = ""
    protected_data: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)


def _parse_data_uri(uri: str) -> tuple[bytes, str]:
    if not uri.startswith("data:"):
        raise ValueError("data must be bytes or a 'data:' URI")
    header, sep, payload = uri[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        raise ValueError("a data URI must be base64-encoded ('data:<type>;base64,...')")
    try:
        raw = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"data URI is not valid base64: {exc}") from exc
    return raw, header[: -len(";base64")]


@dataclass(slots=True, init=False)
class DataContent(AIContent):
    """Binary data (an image, a document...) with its media type, from bytes or a base64
    ``data:`` URI; ``ValueError`` without a media type or for any other URI."""

    type = "data"
    data: bytes = field(metadata=NEVER)
    media_type: str = field(metadata=NEVER)
    name: str | None = field(default=None, metadata=OMIT_NONE)

    def __init__(
        self,
        data: bytes | str,
        media_type: str | None = None,
        *,
        name: str | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
    ) -> None:
        if isinstance(data, str):
            data, uri_type = _parse_data_uri(data)
            media_type = media_type or uri_type
        if not media_type:
            raise ValueError("media_type is required for DataContent")
        self.data = bytes(data)
        self.media_type = media_type
        self.name = name
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation

    @property
    def base64_data(self) -> str:
        """The data, base64-encoded."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def uri(self) -> str:
        """The data as a ``data:`` URI."""
        return f"data:{self.media_type};base64,{self.base64_data}"

    def has_top_level_media_type(self, top: str) -> bool:
        """Whether the media type is ``top/*`` (e.g. ``"image"``)."""
        return self.media_type.split("/", 1)[0].lower() == top.lower()

    @classmethod
    def _from_wire(cls, data: Any) -> Any:
        fields = without_type(data)
        if isinstance(fields, dict) and isinstance(fields.get("uri"), str):
            fields["data"], uri_type = _parse_data_uri(fields.pop("uri"))
            fields["media_type"] = fields.get("media_type") or uri_type
            if not fields["media_type"]:
                raise ValueError("media_type is required for DataContent")
        return fields

    def _to_wire(self, out: dict[str, Any]) -> None:
        out["uri"] = self.uri


@dataclass(slots=True, init=False)
class UriContent(AIContent):
    """A reference to content at a URI; the media type is inferred from the path if omitted."""

    type = "uri"
    uri: str
    media_type: str

    def __init__(
        self,
        uri: str,
        media_type: str | None = None,
        *,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
    ) -> None:
        self.uri = uri
        self.media_type = media_type or ""
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation
        self.__post_init__()

    def __post_init__(self) -> None:
        check_id(self.uri, "uri")
        if not self.media_type:
            self.media_type = mimetypes.guess_type(self.uri)[0] or "application/octet-stream"


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]!r} is too large")
    return value


@dataclass(slots=True)
class ToolCallContent(AIContent):
    """Base of every tool call (``FunctionCallContent``: a function call we may run); as
    itself, a call another party runs (a remote peer's), which no tool loop runs: its
    approval passes through to the client that asked."""

    type = "tool_call"

    call_id: str
    name: str
    arguments: dict[str, Any] | None = None


@dataclass(slots=True)
class ToolResultContent(AIContent):
    """Base of every tool result, paired with its call by ``call_id``."""

    call_id: str


@dataclass(slots=True)
class FunctionCallContent(ToolCallContent):
    """A request from the model to call a tool; ``arguments`` ``None`` (or ``{}``) means none.

    A call whose argument text was not a JSON object is :attr:`unparseable` (``raw_arguments``
    holds the text, ``exception`` says why). ``informational_only`` marks a call handled
    elsewhere, which no invoker runs. An empty ``call_id`` or ``name`` is a ``ValueError``.
    """

    type = "function_call"
    raw_arguments: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    informational_only: bool = field(default=False, kw_only=True, metadata=OMIT_FALSE)
    exception: BaseException | None = field(
        default=None, kw_only=True, repr=False, compare=False, metadata=NEVER
    )

    def __post_init__(self) -> None:
        check_id(self.call_id, "call_id")
        check_id(self.name, "name")
        if self.arguments is not None:
            self.arguments = dict(self.arguments)

    @classmethod
    def from_json_arguments(
        cls, call_id: str, name: str, text: str | None, **kwargs: Any
    ) -> FunctionCallContent:
        """Build a call from the argument text a model streamed; bad JSON (also ``NaN``,
        ``Infinity``, numbers too large for a float, nesting too deep) is kept, not raised."""
        if text is None or not text.strip():
            return cls(call_id, name, {}, **kwargs)
        try:
            parsed = json.loads(text, parse_constant=_not_json_constant, parse_float=_finite_float)
        except (ValueError, RecursionError) as exc:
            why = exc if isinstance(exc, ValueError) else ValueError("arguments nest too deeply")
            return cls(call_id, name, None, raw_arguments=text, exception=why, **kwargs)
        if not isinstance(parsed, dict):
            err = ValueError(f"tool arguments must be a JSON object, got {type(parsed).__name__}")
            return cls(call_id, name, None, raw_arguments=text, exception=err, **kwargs)
        return cls(call_id, name, parsed, **kwargs)

    @property
    def unparseable(self) -> bool:
        """Whether the model sent argument text that is not a JSON object (the tool loop
        answers such a call with an error)."""
        return self.arguments is None and (
            self.raw_arguments is not None or self.exception is not None
        )

    def arguments_json(self) -> str:
        """The arguments as JSON text (``{}`` for none); the model's own text if it did not
        parse, so the model sees its mistake."""
        if self.arguments is None and self.raw_arguments is not None:
            return self.raw_arguments
        return dump_json(self.arguments or {})


@dataclass(slots=True)
class FunctionCallUpdateContent(AIContent):
    """A piece of a tool call still being streamed (progress only: the complete call follows
    as a ``FunctionCallContent``, and ``ChatResponse.from_updates`` drops these)."""

    type = "function_call_update"
    call_id: str
    name: str | None = None
    arguments_delta: str = ""


@dataclass(slots=True)
class FunctionResultContent(ToolResultContent):
    """The result of a tool call; ``exception`` (not serialized) is set when the tool failed,
    and ``result`` then holds the text the model was given."""

    type = "function_result"
    result: Any = None
    exception: BaseException | None = field(
        default=None, kw_only=True, repr=False, compare=False, metadata=NEVER
    )


@dataclass(slots=True)
class ErrorContent(AIContent):
    """An error reported in-band (for example an AG-UI ``RUN_ERROR``)."""

    type = "error"
    message: str
    error_code: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    details: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)


@dataclass(slots=True)
class UsageContent(AIContent):
    """Token usage, as a content so it can travel inside a stream of updates."""

    type = "usage"
    details: UsageDetails

    @classmethod
    def _from_wire(cls, data: Any) -> Any:
        fields = without_type(data)
        if isinstance(fields, dict) and isinstance(fields.get("details"), dict):
            fields["details"] = UsageDetails.from_dict(fields["details"])
        return fields

    def _to_wire(self, out: dict[str, Any]) -> None:
        out["details"] = self.details.to_dict()
