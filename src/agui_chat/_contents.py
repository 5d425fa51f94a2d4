"""The contents a message is made of: text, reasoning, data, tool calls and results, errors and
usage (the human-in-the-loop requests and answers are in ``_hitl_contents``).

Every content serializes with ``to_dict()`` and loads back with ``AIContent.from_dict()``;
the ``type`` key picks the class, and an unknown ``type`` is an error that names it.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import mimetypes
from collections.abc import Mapping
from typing import Any, ClassVar

from ._schema import dump_json, to_jsonable
from ._usage import UsageDetails

__all__ = [
    "AIContent",
    "DataContent",
    "ErrorContent",
    "FunctionCallContent",
    "FunctionCallUpdateContent",
    "FunctionResultContent",
    "TextContent",
    "TextReasoningContent",
    "ToolCallContent",
    "ToolResultContent",
    "UriContent",
    "UsageContent",
]


def _check_str(value: Any, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _check_id(value: Any, name: str) -> None:
    _check_str(value, name)
    if not value.strip():
        raise ValueError(f"{name} must not be empty")


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def _check_mapping(value: Any, name: str) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")


class AIContent:
    """Base class of every content.

    ``additional_properties`` travels with the content (and is serialized);
    ``raw_representation`` is the provider's own object and is never serialized.
    """

    __slots__ = ("additional_properties", "raw_representation")
    type: ClassVar[str] = ""
    _registry: ClassVar[dict[str, builtins.type[AIContent]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("type"):
            AIContent._registry[cls.type] = cls

    def __init__(
        self,
        *,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
    ) -> None:
        _check_mapping(additional_properties, "additional_properties")
        self.additional_properties = additional_properties
        self.raw_representation = raw_representation

    # -- serialization -------------------------------------------------------------------
    def _fields(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``AIContent.from_dict`` loads it back."""
        out: dict[str, Any] = {"type": self.type}
        out.update(self._fields())
        if self.additional_properties:
            out["additional_properties"] = to_jsonable(self.additional_properties)
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(**data)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> AIContent:
        """Load a content written by ``to_dict``; an unknown ``type`` raises ``ValueError``."""
        if not isinstance(data, Mapping):
            raise TypeError(f"content must be a mapping, got {type(data).__name__}")
        kind = data.get("type")
        cls = AIContent._registry.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(f"unknown content type {kind!r}")
        fields = dict(data)
        del fields["type"]
        try:
            return cls._load(fields)
        except TypeError as exc:
            raise ValueError(f"invalid {kind!r} content: {exc}") from exc

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AIContent)
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({shown})"


class TextContent(AIContent):
    """Plain text."""

    __slots__ = ("text",)
    type = "text"

    def __init__(self, text: str, **kwargs: Any) -> None:
        if kwargs:
            super().__init__(**kwargs)
        else:
            self.additional_properties = None
            self.raw_representation = None
        if text.__class__ is not str:
            _check_str(text, "text")
        self.text = text

    def _fields(self) -> dict[str, Any]:
        return {"text": self.text}

    def __str__(self) -> str:
        return self.text


class TextReasoningContent(AIContent):
    """The model's reasoning. ``protected_data`` is opaque (encrypted) reasoning that must be
    sent back unchanged."""

    __slots__ = ("protected_data", "text")
    type = "reasoning"

    def __init__(self, text: str = "", *, protected_data: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_str(text, "text")
        _check_str(protected_data, "protected_data", optional=True)
        self.text = text
        self.protected_data = protected_data

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        if self.protected_data is not None:
            out["protected_data"] = self.protected_data
        return out


class DataContent(AIContent):
    """Binary data (an image, a document...) with its media type.

    Build it from bytes (``DataContent(b"...", media_type="image/png")``) or from a
    ``data:`` URI (``DataContent("data:image/png;base64,...")``).
    """

    __slots__ = ("data", "media_type", "name")
    type = "data"

    def __init__(
        self,
        data: bytes | str,
        media_type: str | None = None,
        *,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(data, str):
            if not data.startswith("data:"):
                raise ValueError("data must be bytes or a 'data:' URI")
            header, sep, payload = data[5:].partition(",")
            if not sep or not header.endswith(";base64"):
                raise ValueError("a data URI must be base64-encoded ('data:<type>;base64,...')")
            try:
                raw = base64.b64decode(payload, validate=True)
            except binascii.Error as exc:
                raise ValueError(f"data URI is not valid base64: {exc}") from exc
            media_type = media_type or header[: -len(";base64")] or None
            data = raw
        elif not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes or a data URI str, got {type(data).__name__}")
        if not media_type:
            raise ValueError("media_type is required for DataContent")
        _check_str(media_type, "media_type")
        _check_str(name, "name", optional=True)
        self.data = bytes(data)
        self.media_type = media_type
        self.name = name

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

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri}
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(data.pop("uri"), **data)


class UriContent(AIContent):
    """A reference to content at a URI; the media type is inferred from the path if omitted."""

    __slots__ = ("media_type", "uri")
    type = "uri"

    def __init__(self, uri: str, media_type: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_id(uri, "uri")
        _check_str(media_type, "media_type", optional=True)
        self.uri = uri
        self.media_type = media_type or mimetypes.guess_type(uri)[0] or "application/octet-stream"

    def _fields(self) -> dict[str, Any]:
        return {"uri": self.uri, "media_type": self.media_type}


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]!r} is too large")
    return value


def _strict_json(text: str) -> Any:
    """``json.loads`` that refuses what is not JSON (``NaN``, ``Infinity``) and numbers
    that overflow a float; raises ``ValueError`` or ``RecursionError``."""
    return json.loads(text, parse_constant=_not_json_constant, parse_float=_finite_float)


class ToolCallContent(AIContent):
    """Base of every tool call (``FunctionCallContent``: a function call we may run)."""

    __slots__ = ("call_id",)
    call_id: str
    name: str
    arguments: dict[str, Any] | None


class ToolResultContent(AIContent):
    """Base of every tool result, paired with its call by ``call_id``."""

    __slots__ = ("call_id",)
    call_id: str


class FunctionCallContent(ToolCallContent):
    """A request from the model to call a tool.

    ``arguments`` is the parsed argument object: ``None`` (or ``{}``) means the call has no
    arguments. If the model sent text that is not a JSON object, the call is
    :attr:`unparseable`: ``arguments`` is ``None``, ``raw_arguments`` holds the text and
    ``exception`` says why. ``informational_only`` marks a call already handled elsewhere
    (by the server, or by an earlier loop), so no invoker runs it.
    """

    __slots__ = ("arguments", "exception", "informational_only", "name", "raw_arguments")
    type = "function_call"

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        raw_arguments: str | None = None,
        informational_only: bool = False,
        exception: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_id(call_id, "call_id")
        _check_id(name, "name")
        _check_mapping(arguments, "arguments")
        _check_str(raw_arguments, "raw_arguments", optional=True)
        self.call_id = call_id
        self.name = name
        self.arguments: dict[str, Any] | None = dict(arguments) if arguments is not None else None
        self.raw_arguments = raw_arguments
        self.informational_only = _check_bool(informational_only, "informational_only")
        self.exception = exception

    @classmethod
    def from_json_arguments(
        cls, call_id: str, name: str, text: str | None, **kwargs: Any
    ) -> FunctionCallContent:
        """Build a call from the argument text a model streamed; bad JSON is kept, not raised.

        Text that is not strict JSON is bad JSON: ``NaN`` and ``Infinity`` (which Python's
        ``json`` accepts), numbers too large for a float, and nesting too deep to parse
        (``RecursionError``) all leave ``arguments`` ``None`` with ``exception`` saying why.
        """
        if text is None or not text.strip():
            return cls(call_id, name, {}, **kwargs)
        try:
            parsed = _strict_json(text)
        except (ValueError, RecursionError) as exc:
            why = exc if isinstance(exc, ValueError) else ValueError("arguments nest too deeply")
            return cls(call_id, name, None, raw_arguments=text, exception=why, **kwargs)
        if not isinstance(parsed, dict):
            err = ValueError(f"tool arguments must be a JSON object, got {type(parsed).__name__}")
            return cls(call_id, name, None, raw_arguments=text, exception=err, **kwargs)
        return cls(call_id, name, parsed, **kwargs)

    @property
    def unparseable(self) -> bool:
        """Whether the model sent argument text that is not a JSON object (the call cannot
        run; the tool loop answers it with an error). A call with no arguments is not."""
        return self.arguments is None and (
            self.raw_arguments is not None or self.exception is not None
        )

    def arguments_json(self) -> str:
        """The arguments as JSON text (``{}`` for none); the model's own text if it did not
        parse, so the model sees its mistake. The inverse of :meth:`from_json_arguments`."""
        if self.arguments is None and self.raw_arguments is not None:
            return self.raw_arguments
        return dump_json(self.arguments or {})

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"call_id": self.call_id, "name": self.name}
        out["arguments"] = to_jsonable(self.arguments) if self.arguments is not None else None
        if self.raw_arguments is not None:
            out["raw_arguments"] = self.raw_arguments
        if self.informational_only:
            out["informational_only"] = True
        return out


class FunctionCallUpdateContent(AIContent):
    """A piece of a tool call still being streamed: its arguments text so far arrives in
    ``arguments_delta`` pieces. For showing progress only; the complete call follows as a
    ``FunctionCallContent``, and ``ChatResponse.from_updates`` drops these."""

    __slots__ = ("arguments_delta", "call_id", "name")
    type = "function_call_update"

    def __init__(
        self, call_id: str, name: str | None = None, arguments_delta: str = "", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        _check_id(call_id, "call_id")
        _check_str(name, "name", optional=True)
        _check_str(arguments_delta, "arguments_delta")
        self.call_id = call_id
        self.name = name
        self.arguments_delta = arguments_delta

    def _fields(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "name": self.name, "arguments_delta": self.arguments_delta}


class FunctionResultContent(ToolResultContent):
    """The result of a tool call, paired with the call by ``call_id``.

    ``exception`` is set when the tool failed (it is not serialized; ``result`` holds the
    text the model was given).
    """

    __slots__ = ("exception", "result")
    type = "function_result"

    def __init__(
        self,
        call_id: str,
        result: Any = None,
        *,
        exception: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_id(call_id, "call_id")
        self.call_id = call_id
        self.result = result
        self.exception = exception

    def _fields(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "result": to_jsonable(self.result)}


class ErrorContent(AIContent):
    """An error reported in-band (for example an AG-UI ``RUN_ERROR``)."""

    __slots__ = ("details", "error_code", "message")
    type = "error"

    def __init__(
        self,
        message: str,
        *,
        error_code: str | None = None,
        details: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_str(message, "message")
        _check_str(error_code, "error_code", optional=True)
        _check_str(details, "details", optional=True)
        self.message = message
        self.error_code = error_code
        self.details = details

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.error_code is not None:
            out["error_code"] = self.error_code
        if self.details is not None:
            out["details"] = self.details
        return out


class UsageContent(AIContent):
    """Token usage, as a content so it can travel inside a stream of updates."""

    __slots__ = ("details",)
    type = "usage"

    def __init__(self, details: UsageDetails, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(details, UsageDetails):
            raise TypeError(f"details must be UsageDetails, got {type(details).__name__}")
        self.details = details

    def _fields(self) -> dict[str, Any]:
        return {"details": self.details.to_dict()}

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(UsageDetails.from_dict(data.pop("details")), **data)
