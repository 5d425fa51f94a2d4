"""Our messages and options, turned into the keyword arguments of ``messages.create``.

Only plain dicts are built here (no SDK types), so the mapping can be read against the
Messages API reference and stays stable across ``anthropic`` SDK versions.

- System and developer messages, wherever they are in the history, and
  ``ChatOptions.instructions`` (first) become the ``system`` prompt: the Messages API has
  no system turn.
- A tool message (and results in any other message) becomes ``tool_result`` blocks of a
  user turn; consecutive turns of one role are merged, so the results of parallel calls
  go back together in the one user turn that follows the calls, results first.
- A structured-output schema goes as ``output_config.format`` (the API's own structured
  output); JSON without a schema, which the API has no mode for, as instructions.
"""

from __future__ import annotations

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
from .._messages import ChatMessage
from .._options import ChatOptions, set_fields
from .._schema import dump_json
from .._structured import response_format_of, schema_instructions
from .._tools import function_declarations

__all__ = ["Json", "build_request"]

Json = dict[str, Any]

_SYSTEM_ROLES = frozenset({"system", "developer"})
_OWN_PREFIX = "agui_"
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def build_request(
    messages: Sequence[ChatMessage], options: ChatOptions | None, *, model: str, max_tokens: int
) -> Json:
    """The keyword arguments for ``messages.create`` (without ``stream``).

    ``temperature``, ``top_p``, ``top_k`` and the keys of ``options.additional_properties``
    (``thinking``, ``metadata``...; keys starting with ``agui_`` belong to agui_chat's own
    layers and are never sent) go into ``extra_body``, the top level of the JSON body, so an
    SDK that no longer lists a field still sends it. ``seed`` and the frequency and presence
    penalties have no Messages API equivalent and are not sent.
    """
    options = options or ChatOptions()
    system = [options.instructions] if options.instructions else []
    turns: list[Json] = []
    for message in messages:
        role = message.role.value.lower()
        if role in _SYSTEM_ROLES:
            if message.text:
                system.append(message.text)
            continue
        if role not in ("user", "assistant", "tool"):
            raise ValueError(
                f"message role {message.role.value!r} has no Messages API equivalent; use "
                "system, developer, user, assistant or tool"
            )
        results = [
            _tool_result(c) for c in message.contents if isinstance(c, FunctionResultContent)
        ]
        if role == "assistant":
            _append(turns, "assistant", _assistant_blocks(message.contents))
            _append(turns, "user", results)
        else:
            _append(turns, "user", results + _user_blocks(message.contents))
    for turn in turns:
        if turn["role"] == "user":  # tool results must open the turn that answers the calls
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    body: Json = {
        "model": options.model_id or model,
        "max_tokens": options.max_output_tokens or max_tokens,
        "messages": turns,
    }
    fmt = response_format_of(options)
    if fmt is not None and fmt.kind == "json":
        if fmt.schema is not None:
            body["output_config"] = {"format": {"type": "json_schema", "schema": dict(fmt.schema)}}
        else:
            system.append(schema_instructions(fmt))
    if system:
        body["system"] = "\n\n".join(system)
    if options.stop_sequences:
        body["stop_sequences"] = list(options.stop_sequences)
    body.update(_tool_fields(options))
    extra = set_fields(options, "temperature", "top_p", "top_k")
    extra.update(
        {k: v for k, v in options.additional_properties.items() if not k.startswith(_OWN_PREFIX)}
    )
    if extra:
        body["extra_body"] = extra
    return body


def _append(turns: list[Json], role: str, blocks: list[Json]) -> None:
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _assistant_blocks(contents: Sequence[AIContent]) -> list[Json]:
    blocks: list[Json] = []
    for content in contents:
        if isinstance(content, TextReasoningContent) and content.protected_data:
            # Only Anthropic's own (signed) thinking goes back; a summary without its
            # signature would be refused, so it is left out.
            if content.text:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": content.text,
                        "signature": content.protected_data,
                    }
                )
            else:
                blocks.append({"type": "redacted_thinking", "data": content.protected_data})
        elif isinstance(content, TextContent) and content.text:
            blocks.append({"type": "text", "text": content.text})
        elif isinstance(content, FunctionCallContent):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": content.call_id,
                    "name": content.name,
                    # Arguments that did not parse cannot go back as an object: the
                    # call's result already tells the model what was wrong.
                    "input": content.arguments or {},
                }
            )
    return blocks


def _tool_result(result: FunctionResultContent) -> Json:
    block: Json = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": dump_json(result.result),
    }
    if result.exception is not None:
        block["is_error"] = True
    return block


def _user_blocks(contents: Sequence[AIContent]) -> list[Json]:
    blocks: list[Json] = []
    for content in contents:
        if isinstance(content, TextContent):
            if content.text:
                blocks.append({"type": "text", "text": content.text})
        elif isinstance(content, DataContent):
            blocks.append(_data_block(content))
        elif isinstance(content, UriContent):
            kind = "image" if content.media_type.lower().startswith("image/") else "document"
            blocks.append({"type": kind, "source": {"type": "url", "url": content.uri}})
    return blocks


def _data_block(content: DataContent) -> Json:
    media_type = content.media_type.lower()
    if media_type in _IMAGE_TYPES:
        kind = "image"
    elif media_type == "application/pdf":
        kind = "document"
    elif media_type.startswith("text/"):
        return {
            "type": "document",
            "source": {
                "type": "text",
                "media_type": "text/plain",
                "data": content.data.decode("utf-8", "replace"),
            },
        }
    else:
        raise ValueError(
            f"the Messages API cannot take {content.media_type!r} data; it takes JPEG, PNG, "
            "GIF and WebP images, PDF and plain-text documents"
        )
    return {
        "type": kind,
        "source": {"type": "base64", "media_type": media_type, "data": content.base64_data},
    }


def _tool_fields(options: ChatOptions) -> Json:
    tools: list[Json] = []
    for tool in function_declarations(options.tools, "the Messages API"):
        declared: Json = {"name": tool.name, "input_schema": tool.parameters}
        if tool.description:
            declared["description"] = tool.description
        tools.append(declared)
    if not tools:
        return {}
    out: Json = {"tools": tools}
    mode = options.tool_mode
    choice: Json | None = None
    if mode is not None:
        if mode.required_function_name is not None:
            choice = {"type": "tool", "name": mode.required_function_name}
        else:
            choice = {"type": {"auto": "auto", "none": "none", "required": "any"}[mode.mode]}
    if options.allow_multiple_tool_calls is False:
        choice = choice or {"type": "auto"}
        if choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
    if choice is not None:
        out["tool_choice"] = choice
    return out
