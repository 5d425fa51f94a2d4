"""The shape of the model's answer: ``ChatResponseFormat``, and a Python type as a strict JSON
schema (OpenAI's strict mode: closed objects, every property required, defaulted ones
nullable, a non-object root wrapped as ``{"value": ...}``) with its validator (``OutputSpec``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError


@dataclass(frozen=True, slots=True)
class ChatResponseFormat:
    """The shape of the model's answer: ``TEXT``, ``JSON``, ``for_json_schema(schema, ...)`` or
    ``for_type(Model)`` (the strict schema of a Python type, whose reply ``get_response``
    validates into ``response.value``). ``strict`` asks the provider to enforce the schema;
    ``output_type`` is the Python type the schema was made from, if any.
    """

    kind: Literal["text", "json"]
    schema: Mapping[str, Any] | None = None
    schema_name: str | None = None
    schema_description: str | None = None
    strict: bool | None = None
    output_type: Any = None

    TEXT: ClassVar[ChatResponseFormat]
    JSON: ClassVar[ChatResponseFormat]

    @classmethod
    def for_json_schema(
        cls,
        schema: Mapping[str, Any] | type[Any],
        name: str | None = None,
        description: str | None = None,
        *,
        strict: bool | None = None,
    ) -> ChatResponseFormat:
        """JSON constrained by ``schema`` (a JSON schema dict or a pydantic model class)."""
        if isinstance(schema, type):
            from pydantic import TypeAdapter

            name = name or schema.__name__
            schema = TypeAdapter(schema).json_schema()
        return cls("json", dict(schema), name, description, strict)

    @classmethod
    def for_type(cls, output_type: Any) -> ChatResponseFormat:
        """The strict JSON schema of ``output_type`` (a pydantic model, a dataclass, a
        ``TypedDict`` or a type such as ``list[str]``); a ``TypeError`` names a type pydantic
        cannot make a schema for."""
        return output_spec(output_type).response_format


ChatResponseFormat.TEXT = ChatResponseFormat("text")
ChatResponseFormat.JSON = ChatResponseFormat("json")


_NAME = re.compile(r"[^A-Za-z0-9_-]")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)
_WRAP_KEY = "value"


class OutputSpec:
    """A requested output type: its strict schema and its validator."""

    def __init__(self, output_type: Any) -> None:
        from pydantic import TypeAdapter, ValidationError
        from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

        try:
            adapter: TypeAdapter[Any] = TypeAdapter(output_type)
            schema = adapter.json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
            raise TypeError(
                f"response_format={type_name(output_type)} has no JSON schema pydantic can "
                f"make; use a pydantic model, a dataclass, a TypedDict or a type such as "
                f"list[str] ({str(exc).splitlines()[0]})"
            ) from exc
        self.output_type = output_type
        self.adapter = adapter
        self.invalid = ValidationError  # what a reply that does not validate raises
        self.wrapped = schema.get("type") != "object" or "properties" not in schema
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {_WRAP_KEY: schema}, "required": [_WRAP_KEY]}
            if defs:
                schema["$defs"] = defs
        strict, fits = strict_schema(schema)
        description = schema.get("description") if not self.wrapped else None
        self.response_format = ChatResponseFormat(
            "json",
            strict,
            schema_name(type_name(output_type)) or "response",
            description if isinstance(description, str) else None,
            fits,
            output_type,
        )
        #: What inner clients get: the schema without the type (they send it, never validate).
        self.inner_format = dataclasses.replace(self.response_format, output_type=None)

    def parse(self, text: str) -> tuple[Any, list[str]]:
        """The validated value and no errors, or ``None`` and the errors (one line each)."""
        invalid = self.invalid
        if not self.wrapped:
            try:  # the common case, in one pass: the reply is the JSON object asked for
                return self.adapter.validator.validate_json(text), []
            except invalid:
                pass  # a code fence, a null meaning "default", not JSON: the careful path
        match = _FENCE.match(text)
        body = match.group("body") if match else text.strip()
        try:
            data = json.loads(body)
        except ValueError as exc:
            return None, [f"(root): the reply is not JSON ({exc})"]
        if self.wrapped and isinstance(data, dict) and set(data) == {_WRAP_KEY}:
            data = data[_WRAP_KEY]
        try:
            return self.adapter.validate_python(data), []
        except invalid as exc:
            errors = _errors(exc)
        # The strict schema made defaulted properties nullable: a null there means "default".
        try:
            return self.adapter.validate_python(_drop_nulls(data)), []
        except invalid:
            return None, errors


@lru_cache(maxsize=128)
def _cached_spec(output_type: Any) -> OutputSpec:
    return OutputSpec(output_type)


def output_spec(output_type: Any) -> OutputSpec:
    """The ``OutputSpec`` of ``output_type`` (cached per type when the type is hashable)."""
    if isinstance(output_type, type):
        return _cached_spec(output_type)  # a class: hashable, and not one of the refused values
    if output_type is None or isinstance(output_type, (ChatResponseFormat, str, Mapping)):
        raise TypeError(
            f"response_format must be a type (a pydantic model, a dataclass, a TypedDict, "
            f"list[str]...), got {type_name(output_type)}"
        )
    try:
        hash(output_type)
    except TypeError:
        return OutputSpec(output_type)  # an unhashable type expression is not cached
    return _cached_spec(output_type)


# -- the strict schema ---------------------------------------------------------------------


def strict_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``schema`` made strict-compatible, and whether strict mode can take it (not an object
    with free-form keys, such as a ``dict[str, int]``)."""
    fits = [True]
    return _strict(schema, fits), fits[0]


def _strict(node: Any, fits: list[bool]) -> Any:
    if isinstance(node, list):
        return [_strict(item, fits) for item in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _strict(v, fits) for k, v in node.items() if k != "default"}
    if out.get("type") == "object" or "properties" in out:
        properties: dict[str, Any] = out.get("properties") or {}
        extra = out.get("additionalProperties")
        if extra not in (None, False) or (not properties and "additionalProperties" in out):
            fits[0] = False
        else:
            required = set(node.get("required", ()))
            for name, prop in properties.items():
                if name not in required:
                    properties[name] = _nullable(prop)
            out["properties"] = properties
            out["required"] = list(properties)
            out["additionalProperties"] = False
    return out


def _nullable(prop: Any) -> Any:
    if not isinstance(prop, Mapping):
        return prop
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return prop
    options = prop.get("anyOf")
    if isinstance(options, list):
        if any(isinstance(o, Mapping) and o.get("type") == "null" for o in options):
            return prop
        return {**prop, "anyOf": [*options, {"type": "null"}]}
    if isinstance(kind, str) and "enum" not in prop:
        return {**prop, "type": [kind, "null"]}
    return {"anyOf": [dict(prop), {"type": "null"}]}


def schema_name(name: str) -> str:
    """``name`` as a provider takes a schema's name: ``[A-Za-z0-9_-]``, at most 64 long."""
    return _NAME.sub("_", name)[:64]


def type_name(output_type: Any) -> str:
    """How ``output_type`` is named in messages (``Model``, ``list[str]``)."""
    if isinstance(output_type, type) and not getattr(output_type, "__args__", None):
        return output_type.__name__
    return repr(output_type).replace("typing.", "")


def _errors(exc: ValidationError) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    ]


def _drop_nulls(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_drop_nulls(item) for item in data]
    return data
