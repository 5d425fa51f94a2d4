"""Our messages and options, turned into the JSON body of an OpenAI Responses request.

Plain dicts only (no SDK types), so the mapping reads against the Responses reference:
messages become ``input`` items (``message``, ``function_call``, ``function_call_output``,
and ``reasoning`` items we can hand back), ``instructions`` stays ``instructions``, a
response format becomes ``text.format``, ``conversation_id`` becomes
``previous_response_id``, and ``store`` is off unless asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from .._response_format import ChatResponseFormat
from .._schema import dump_json
from .._structured import format_to_wire, response_format_of
from ._request import Json, call_arguments, message_role, passthrough, tool_fields

__all__ = ["ITEM_ID_KEY", "build_responses_request", "to_input_items"]

#: On a ``TextReasoningContent``: the id of the Responses ``reasoning`` item it came from.
ITEM_ID_KEY = "openai_item_id"


def build_responses_request(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    model: str,
    store: bool,
) -> Json:
    """The keyword arguments for ``responses.create`` (without ``stream``).

    Keys of ``options.additional_properties`` (except ``agui_*``, which are our own) go into
    ``extra_body``; ``store`` given there wins over the client's setting.
    """
    options = options or ChatOptions()
    body: Json = {"model": options.model_id or model, "input": to_input_items(messages)}
    if options.instructions:
        body["instructions"] = options.instructions
    body.update(set_fields(options, "temperature", "top_p", "max_output_tokens"))
    if options.conversation_id:
        body["previous_response_id"] = options.conversation_id
    fmt = response_format_of(options)
    if fmt is not None:
        body["text"] = {"format": text_format(fmt)}
    body.update(_tool_fields(options))
    extra = passthrough(options)
    body["store"] = bool(extra.pop("store", store))
    for name, value in set_fields(
        options, "frequency_penalty", "presence_penalty", "seed", "top_k"
    ).items():
        extra.setdefault(name, value)  # not in the Responses API; compatible servers
    if options.stop_sequences:
        extra.setdefault("stop", list(options.stop_sequences))
    if extra:
        body["extra_body"] = extra
    return body


def text_format(fmt: ChatResponseFormat) -> Json:
    """The ``text.format`` object: the Chat Completions one, flattened."""
    wire = format_to_wire(fmt)
    if wire["type"] != "json_schema":
        return wire
    return {"type": "json_schema", **wire["json_schema"]}


# -- messages -------------------------------------------------------------------------------


def to_input_items(messages: Sequence[ChatMessage]) -> list[Json]:
    """The ``input`` items for ``messages``, in order.

    Text goes as ``message`` items; calls and results as ``function_call`` and
    ``function_call_output`` items; reasoning only when it carries the encrypted content and
    item id a stateless request needs. Approval and question contents, usage and errors are
    not for the model and are left out.
    """
    out: list[Json] = []
    for message in messages:
        role = message_role(message, api="Responses")
        parts: list[Json] = []
        for content in message.contents:
            item = _item(content)
            if item is not None:
                if parts:
                    out.append(_message_item(role, parts))
                    parts = []
                out.append(item)
                continue
            part = _part(role, content)
            if part is not None:
                parts.append(part)
        if parts:
            out.append(_message_item(role, parts))
    return out


def _item(content: AIContent) -> Json | None:
    if isinstance(content, FunctionCallContent):
        return {
            "type": "function_call",
            "call_id": content.call_id,
            "name": content.name,
            "arguments": call_arguments(content),
        }
    if isinstance(content, FunctionResultContent):
        return {
            "type": "function_call_output",
            "call_id": content.call_id,
            "output": dump_json(content.result),
        }
    if isinstance(content, TextReasoningContent):
        item_id = (content.additional_properties or {}).get(ITEM_ID_KEY)
        if not content.protected_data or not isinstance(item_id, str):
            return None  # a stateless request cannot hand back reasoning without them
        summary = [{"type": "summary_text", "text": content.text}] if content.text else []
        return {
            "type": "reasoning",
            "id": item_id,
            "summary": summary,
            "encrypted_content": content.protected_data,
        }
    return None


def _message_item(role: str, parts: list[Json]) -> Json:
    if role == "tool":
        role = "user"  # text in a tool message (results went as their own items)
    if role in ("system", "developer", "assistant") or all(
        p["type"] == "input_text" for p in parts
    ):
        text = "".join(p["text"] for p in parts if "text" in p)
        return {"type": "message", "role": role, "content": text}
    return {"type": "message", "role": role, "content": parts}


def _part(role: str, content: AIContent) -> Json | None:
    if isinstance(content, TextContent):
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": kind, "text": content.text} if content.text else None
    if role != "user":
        return None
    if isinstance(content, DataContent):
        if content.has_top_level_media_type("image"):
            return _image(content.uri, content)
        if content.media_type.lower() == "application/pdf":
            return {
                "type": "input_file",
                "filename": content.name or "document.pdf",
                "file_data": content.uri,
            }
        raise ValueError(
            f"the Responses API cannot take {content.media_type!r} data in a user message; "
            "it takes images and PDF files"
        )
    if isinstance(content, UriContent):
        if content.media_type.lower().startswith("image/"):
            return _image(content.uri, content)
        return {"type": "input_file", "file_url": content.uri}
    return None


def _image(url: str, content: AIContent) -> Json:
    detail = (content.additional_properties or {}).get("detail", "auto")
    return {"type": "input_image", "image_url": url, "detail": detail}


# -- options --------------------------------------------------------------------------------


def _tool_fields(options: ChatOptions) -> Json:
    """The Chat Completions tool fields, flattened (and our schemas are not strict-mode
    schemas)."""
    fields = tool_fields(options, api="the Responses API")
    if "tools" in fields:
        fields["tools"] = [{**_flat(t), "strict": False} for t in fields["tools"]]
    if isinstance(fields.get("tool_choice"), dict):
        fields["tool_choice"] = _flat(fields["tool_choice"])
    return fields


def _flat(function: Json) -> Json:
    return {"type": "function", **function["function"]}
