"""Structured output: a reply validated into the Python type the caller asked for (``.value``),
once, in the outermost client a call reaches; and the Chat Completions wire form of a format.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ._contents import ErrorContent
from ._exceptions import RefusalError, StructuredOutputError
from ._hitl_contents import InputRequestContent
from ._messages import ChatMessage, as_messages
from ._options import ChatOptions
from ._response_format import (
    ChatResponseFormat,
    OutputSpec,
    output_spec,
    schema_name,
    type_name,
)
from ._role_and_finish_reason import ChatRole

if TYPE_CHECKING:
    from ._responses import ChatResponse, OutputT


def response_format_of(options: ChatOptions | None) -> ChatResponseFormat | None:
    """``options.response_format`` as a ``ChatResponseFormat`` (a type is converted)."""
    fmt = options.response_format if options is not None else None
    if fmt is None or isinstance(fmt, ChatResponseFormat):
        return fmt
    return output_spec(fmt).response_format


class _ChatClient(Protocol):
    """What structured output needs of a ``ChatClient``: its ``get_response``."""

    def get_response(self, messages: Any, options: Any) -> Awaitable[ChatResponse[Any]]: ...


def respond(
    client: _ChatClient,
    messages: Any,
    options: ChatOptions | None,
    response_format: type[OutputT] | None,
    retries: int,
    plain: Callable[[Any, ChatOptions | None], Awaitable[ChatResponse[Any]]] | None = None,
) -> Awaitable[ChatResponse[OutputT]]:
    """A ``get_response`` call with ``response_format=`` / ``retries=``: structured output
    over ``plain`` (by default the client's ``get_response``) when the keyword or the options'
    format (one with an ``output_type``) asks for it, else ``plain`` itself; ``retries``
    without either is a ``ValueError``."""
    call = plain or client.get_response
    spec = _spec(response_format, options)
    if spec is not None:
        return _structured(call, messages, options, spec, retries)
    if retries:
        raise ValueError("retries= repairs structured output: it needs response_format=Model")
    return call(messages, options)


async def get_structured_response(
    client: _ChatClient,
    messages: str | ChatMessage | Iterable[ChatMessage],
    options: ChatOptions | None = None,
    *,
    response_format: type[OutputT] | None = None,
    retries: int = 0,
) -> ChatResponse[OutputT]:
    """Ask any ``ChatClient`` for a reply shaped as ``response_format`` (or the type in
    ``ChatOptions(response_format=Model)``) and validate it into ``.value``, sending the
    errors back up to ``retries`` times to repair it.

    A refused reply is a ``RefusalError``; one that does not validate after the repairs, a
    ``StructuredOutputError``. A run that paused on input requests comes back as it is.
    """
    spec = _spec(response_format, options)
    if spec is None:
        raise ValueError(
            "get_structured_response needs response_format=Model or "
            "ChatOptions(response_format=Model)"
        )
    return await _structured(client.get_response, messages, options, spec, retries)


def _spec(response_format: Any, options: ChatOptions | None) -> OutputSpec | None:
    """The output type asked for: ``response_format``, else the options' format's type."""
    if response_format is not None:
        return output_spec(response_format)
    fmt = response_format_of(options) if isinstance(options, ChatOptions) else None
    return None if fmt is None or fmt.output_type is None else output_spec(fmt.output_type)


async def _structured(
    call: Callable[[Any, ChatOptions | None], Awaitable[ChatResponse[Any]]],
    messages: str | ChatMessage | Iterable[ChatMessage],
    options: ChatOptions | None,
    spec: OutputSpec,
    retries: int,
) -> ChatResponse[Any]:
    if retries < 0:
        raise ValueError(f"retries must be a non-negative int, got {retries!r}")
    inner = options.clone() if options is not None else ChatOptions()
    inner.response_format = spec.inner_format
    history = as_messages(messages)
    usage = None
    for attempt in range(retries + 1):
        response = await call(history, inner)
        if response.usage is not None:
            usage = response.usage if usage is None else usage + response.usage
        paused, refusal = _paused_or_refused(response)
        if paused:
            return response
        if refusal is not None:
            raise RefusalError(
                f"the model refused to answer as {type_name(spec.output_type)}: {refusal}",
                refusal=refusal,
                response=response,
            )
        text = response.text
        value, errors = spec.parse(text)
        if not errors:
            response.usage = usage
            response.set_value(value)
            return response
        if attempt == retries:
            raise StructuredOutputError(
                f"the reply does not validate as {type_name(spec.output_type)} after "
                f"{attempt + 1} attempt(s): {'; '.join(errors[:5])}",
                text=text,
                errors=errors,
                response=response,
                attempts=attempt + 1,
            )
        repair = ChatMessage(ChatRole.USER, _repair_text(errors))
        if response.conversation_id:
            # The service keeps the conversation: send only what is new.
            inner = inner.clone()
            inner.conversation_id = response.conversation_id
            history = [repair]
        else:
            history = [*history, *response.messages, repair]
    raise AssertionError("unreachable")  # pragma: no cover


def format_to_wire(fmt: ChatResponseFormat) -> dict[str, Any]:
    """The Chat Completions ``response_format`` object for ``fmt`` (also sent to AG-UI servers
    in ``forwardedProps``)."""
    if fmt.kind == "text":
        return {"type": "text"}
    if fmt.schema is None:
        return {"type": "json_object"}
    json_schema: dict[str, Any] = {
        "name": schema_name(fmt.schema_name or "response"),
        "schema": dict(fmt.schema),
    }
    if fmt.schema_description:
        json_schema["description"] = fmt.schema_description
    if fmt.strict is not None:
        json_schema["strict"] = fmt.strict
    return {"type": "json_schema", "json_schema": json_schema}


def format_from_wire(data: Any) -> ChatResponseFormat | None:
    """A ``ChatResponseFormat`` from a ``response_format`` object (else ``None``)."""
    if not isinstance(data, Mapping):
        return None
    kind = data.get("type")
    if kind == "text":
        return ChatResponseFormat.TEXT
    if kind == "json_object":
        return ChatResponseFormat.JSON
    spec = data.get("json_schema")
    if kind != "json_schema" or not isinstance(spec, Mapping):
        return None
    schema = spec.get("schema")
    if not isinstance(schema, Mapping):
        return None
    strict = spec.get("strict")
    name, description = spec.get("name"), spec.get("description")
    return ChatResponseFormat(
        "json",
        dict(schema),
        name if isinstance(name, str) else None,
        description if isinstance(description, str) else None,
        strict if isinstance(strict, bool) else None,
    )


def schema_instructions(fmt: ChatResponseFormat) -> str:
    """Instructions asking for JSON that fits ``fmt``, for a client that cannot send a schema."""
    if fmt.schema is None:
        return "Reply with a single JSON value and nothing else."
    schema = json.dumps(fmt.schema, separators=(",", ":"), ensure_ascii=False)
    return (
        "Reply with only a JSON value (no prose, no code fence) that validates against this "
        f"JSON schema: {schema}"
    )


def _paused_or_refused(response: ChatResponse[Any]) -> tuple[bool, str | None]:
    """Whether the run paused on input requests, else the model's refusal (if it refused)."""
    refusal = None
    for message in response.messages:
        for content in message.contents:
            if isinstance(content, InputRequestContent):
                return True, None
            if isinstance(content, ErrorContent) and content.error_code == "refusal":
                refusal = refusal or content.message or "(no reason given)"
    return False, refusal


def _repair_text(errors: list[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors[:20])
    return (
        "Your reply does not match the required JSON schema:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON."
    )
