"""An MCP ``CallToolResult`` as our contents.

Text blocks become text, images and audio ``DataContent``, resource links ``UriContent``,
embedded resources text or ``DataContent``; ``structuredContent`` is kept in the result's
``additional_properties["structured_content"]``. A result with ``isError`` reaches the model
as a failure text (``"Error: ..."``) and carries a ``ToolError`` as its exception.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import Any

import mcp.types as types

from .._contents import AIContent, DataContent, FunctionResultContent, TextContent, UriContent
from .._exceptions import ToolError

__all__ = ["failure_result", "to_result"]

_log = logging.getLogger("agui_chat.mcp")


def _data(block: Any, kind: str) -> AIContent:
    try:
        raw = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return TextContent(f"[{kind} the server sent is not valid base64]")
    return DataContent(raw, block.mime_type, raw_representation=block)


def _resource(resource: Any) -> AIContent:
    if isinstance(resource, types.TextResourceContents):
        return TextContent(resource.text, raw_representation=resource)
    try:
        raw = base64.b64decode(resource.blob, validate=True)
    except (binascii.Error, ValueError):
        return TextContent(f"[resource {resource.uri} is not valid base64]")
    return DataContent(raw, resource.mime_type, raw_representation=resource)


def to_contents(blocks: list[Any]) -> list[AIContent]:
    """The content blocks of a tool result as our contents (unknown kinds as their JSON)."""
    out: list[AIContent] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            out.append(TextContent(block.text, raw_representation=block))
        elif isinstance(block, types.ImageContent):
            out.append(_data(block, "image"))
        elif isinstance(block, types.AudioContent):
            out.append(_data(block, "audio"))
        elif isinstance(block, types.ResourceLink):
            out.append(UriContent(str(block.uri), block.mime_type, raw_representation=block))
        elif isinstance(block, types.EmbeddedResource):
            out.append(_resource(block.resource))
        else:
            _log.debug("MCP content block of an unknown kind kept as JSON: %r", block)
            dumped = block.model_dump(mode="json") if hasattr(block, "model_dump") else block
            out.append(TextContent(json.dumps(dumped, default=str)))
    return out


def _text_of(contents: list[AIContent]) -> str:
    return "\n".join(c.text for c in contents if isinstance(c, TextContent))


def failure_result(call_id: str, text: str, exception: BaseException) -> FunctionResultContent:
    """A failure the model is told about in words (it may try again or change course)."""
    return FunctionResultContent(call_id, f"Error: {text}", exception=exception)


def to_result(call_id: str, label: str, result: types.CallToolResult) -> FunctionResultContent:
    """``result`` as the ``FunctionResultContent`` of the call ``call_id``.

    All text, no other blocks: the result is that text (a string). Otherwise it is the list
    of contents. ``label`` names the tool in the failure of an ``isError`` result.
    """
    contents = to_contents(list(result.content))
    structured = result.structured_content
    extra = {"structured_content": structured} if structured is not None else None
    if result.is_error:
        text = _text_of(contents) or "the tool reported an error"
        return FunctionResultContent(
            call_id,
            f"Error: {text}",
            exception=ToolError(f"MCP tool {label} failed: {text}"),
            additional_properties=extra,
            raw_representation=result,
        )
    value: Any
    if all(isinstance(c, TextContent) for c in contents):
        value = _text_of(contents)
        if not contents and structured is not None:
            value = json.dumps(structured, default=str)
    else:
        value = contents
    return FunctionResultContent(
        call_id, value, additional_properties=extra, raw_representation=result
    )
