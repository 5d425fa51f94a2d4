"""Our messages and options, turned into the ``contents`` and ``config`` of
``generate_content``.

Only plain dicts are built here (the SDK validates them into its types), so the mapping can
be read against the Gemini API reference.

- System and developer messages, wherever they are in the history, and
  ``ChatOptions.instructions`` (first) become ``system_instruction``: Gemini has no system
  turn.
- Tool results become ``function_response`` parts of a ``user`` turn, named after the call
  they answer; consecutive turns of one role are merged, so the results of parallel calls go
  back together, in one turn, in the order of the calls.
- A call id this adapter made up (Gemini sent none) is not sent back: Gemini pairs calls and
  responses by name and order. An id Gemini sent goes back on the call and its response.
- A call held for a person's approval is sent as the call once a result answers it: the
  tool loop answers some itself (two calls of one response sharing an id both get an error,
  and neither runs); results of calls sharing an id are named after those calls, in order.
  A request still waiting for its answer is not sent. A result that answers no call is
  ``InvalidHistoryError`` naming its id: Gemini needs the call's name.
- A structured-output schema goes as ``response_json_schema`` with ``response_mime_type``
  ``application/json``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from .._contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from .._exceptions import InvalidHistoryError
from .._hitl_contents import ToolApprovalRequestContent
from .._messages import ChatMessage
from .._options import ChatOptions, set_fields
from .._schema import to_jsonable
from .._structured import response_format_of
from .._tools import function_declarations

__all__ = ["MADE_ID_PREFIX", "Json", "build_request"]

Json = dict[str, Any]

#: How the ids this adapter makes for Gemini's id-less calls begin.
MADE_ID_PREFIX = "gcall_"

_SYSTEM_ROLES = frozenset({"system", "developer"})
_OWN_PREFIX = "agui_"
_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def build_request(
    messages: Sequence[ChatMessage], options: ChatOptions | None, *, model: str
) -> Json:
    """The keyword arguments for ``models.generate_content`` (and its stream).

    The keys of ``options.additional_properties`` (``thinking_config``, ``safety_settings``
    ...; keys starting with ``agui_`` belong to agui_chat's own layers and are never sent)
    go into the config as they are. ``allow_multiple_tool_calls`` has no Gemini equivalent.
    """
    options = options or ChatOptions()
    system = [options.instructions] if options.instructions else []
    names: dict[str, list[str]] = {}  # call id -> the functions of its calls, in order
    turns: list[Json] = []
    answered = {
        c.call_id for m in messages for c in m.contents if isinstance(c, FunctionResultContent)
    }
    for message in messages:
        role = message.role.value.lower()
        if role in _SYSTEM_ROLES:
            if message.text:
                system.append(message.text)
            continue
        if role not in ("user", "assistant", "tool"):
            raise ValueError(
                f"message role {message.role.value!r} has no Gemini equivalent; use "
                "system, developer, user, assistant or tool"
            )
        results = [
            _function_response(c, names)
            for c in message.contents
            if isinstance(c, FunctionResultContent)
        ]
        if role == "assistant":
            _append(turns, "model", _model_parts(message.contents, names, answered))
            _append(turns, "user", results)
        else:
            _append(turns, "user", results + _user_parts(message.contents))
    config: Json = {"automatic_function_calling": {"disable": True}}
    if system:
        config["system_instruction"] = "\n\n".join(system)
    config.update(
        set_fields(
            options,
            "temperature",
            "top_p",
            "top_k",
            "max_output_tokens",
            "seed",
            "frequency_penalty",
            "presence_penalty",
        )
    )
    if options.stop_sequences:
        config["stop_sequences"] = list(options.stop_sequences)
    fmt = response_format_of(options)
    if fmt is not None and fmt.kind == "json":
        config["response_mime_type"] = "application/json"
        if fmt.schema is not None:
            config["response_json_schema"] = dict(fmt.schema)
    config.update(_tool_fields(options))
    config.update(
        {k: v for k, v in options.additional_properties.items() if not k.startswith(_OWN_PREFIX)}
    )
    return {"model": options.model_id or model, "contents": turns, "config": config}


def _append(turns: list[Json], role: str, parts: list[Json]) -> None:
    if not parts:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["parts"].extend(parts)
    else:
        turns.append({"role": role, "parts": parts})


def _model_parts(
    contents: Sequence[AIContent], names: dict[str, list[str]], answered: set[str]
) -> list[Json]:
    parts: list[Json] = []
    for content in contents:
        if (
            isinstance(content, ToolApprovalRequestContent)
            and isinstance(content.tool_call, FunctionCallContent)
            and content.tool_call.call_id in answered
        ):
            content = content.tool_call  # answered without a person: the call and its answer
        if isinstance(content, TextReasoningContent):
            signature = _signature(content.protected_data)
            if signature is not None:  # Gemini's own thought, signed: it goes back as it came
                parts.append(
                    {"text": content.text, "thought": True, "thought_signature": signature}
                )
        elif isinstance(content, TextContent) and content.text:
            part: Json = {"text": content.text}
            signature = _signature((content.additional_properties or {}).get("thought_signature"))
            if signature is not None:
                part["thought_signature"] = signature
            parts.append(part)
        elif isinstance(content, FunctionCallContent):
            names.setdefault(content.call_id, []).append(content.name)
            call: Json = {"name": content.name, "args": content.arguments or {}}
            if not content.call_id.startswith(MADE_ID_PREFIX):
                call["id"] = content.call_id
            part = {"function_call": call}
            signature = _signature((content.additional_properties or {}).get("thought_signature"))
            if signature is not None:
                part["thought_signature"] = signature
            parts.append(part)
    return parts


def _signature(value: Any) -> bytes | None:
    """A thought signature kept as base64 text, as bytes again (else ``None``)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _function_response(result: FunctionResultContent, names: dict[str, list[str]]) -> Json:
    called = names.get(result.call_id)
    if not called:
        raise InvalidHistoryError(
            f"the tool result for call {result.call_id!r} answers no call earlier in the "
            "history; Gemini needs the call's function name: send the assistant message "
            "that made the call before the result",
            call_id=result.call_id,
        )
    # Calls sharing an id are answered in their order, each result named after its own
    # call's function; the last name stays for any further result of that id.
    name = called.pop(0) if len(called) > 1 else called[0]
    value = to_jsonable(result.result)
    key = "error" if result.exception is not None else "result"
    response: Json = {"name": name, "response": {key: value}}
    if not result.call_id.startswith(MADE_ID_PREFIX):
        response["id"] = result.call_id
    return {"function_response": response}


def _user_parts(contents: Sequence[AIContent]) -> list[Json]:
    parts: list[Json] = []
    for content in contents:
        if isinstance(content, TextContent):
            if content.text:
                parts.append({"text": content.text})
        elif isinstance(content, DataContent):
            parts.append({"inline_data": {"mime_type": content.media_type, "data": content.data}})
        elif isinstance(content, UriContent):
            parts.append({"file_data": {"file_uri": content.uri, "mime_type": content.media_type}})
    return parts


def _tool_fields(options: ChatOptions) -> Json:
    declarations: list[Json] = []
    for tool in function_declarations(options.tools, "Gemini"):
        declared: Json = {"name": tool.name, "parameters_json_schema": tool.parameters}
        if tool.description:
            declared["description"] = tool.description
        declarations.append(declared)
    if not declarations:
        return {}
    out: Json = {"tools": [{"function_declarations": declarations}]}
    mode = options.tool_mode
    if mode is not None:
        calling: Json = {"mode": _MODES[mode.mode]}
        if mode.required_function_name is not None:
            calling["allowed_function_names"] = [mode.required_function_name]
        out["tool_config"] = {"function_calling_config": calling}
    return out
