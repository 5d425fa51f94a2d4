"""Our messages and options, turned into the JSON body of a Chat Completions request.

Only plain dicts are built here (no SDK types), so the mapping can be read against the
Chat Completions reference and stays stable across ``openai`` SDK versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .._contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    UriContent,
)
from .._messages import ChatMessage
from .._options import ChatOptions, set_fields
from .._schema import dump_json
from .._structured import format_to_wire, response_format_of, schema_instructions
from .._tools import function_declarations

__all__ = [
    "Json",
    "MaxTokensParameter",
    "build_request",
    "call_arguments",
    "message_role",
    "passthrough",
    "to_openai_messages",
    "tool_fields",
]

#: The request field that carries ``ChatOptions.max_output_tokens``.
MaxTokensParameter = Literal["max_completion_tokens", "max_tokens"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_OWN_PREFIX = "agui_"

Json = dict[str, Any]


def build_request(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    model: str,
    max_tokens_parameter: MaxTokensParameter,
    schema_as_instructions: bool = False,
) -> Json:
    """The keyword arguments for ``chat.completions.create`` (without ``stream``).

    With ``schema_as_instructions``, a JSON-schema response format goes as instructions
    instead of ``response_format`` (for servers that take no schema); the reply is still
    validated by structured output.

    Fields we have no value for are left out, so the server's defaults apply. Keys of
    ``options.additional_properties`` (and ``top_k``, which Chat Completions does not define
    but vLLM, llama.cpp and others accept) go into ``extra_body``, i.e. the top level of the
    JSON body; keys starting with ``agui_`` belong to agui_chat's own layers (the AG-UI
    server passes its run input that way) and are never sent.
    """
    options = options or ChatOptions()
    response_format = response_format_of(options)
    instructions = options.instructions
    if schema_as_instructions and response_format is not None and response_format.schema:
        asked = schema_instructions(response_format)
        instructions = f"{instructions}\n\n{asked}" if instructions else asked
        response_format = None
    body: Json = {
        "model": options.model_id or model,
        "messages": to_openai_messages(messages, instructions=instructions),
    }
    body.update(
        set_fields(options, "temperature", "top_p", "frequency_penalty", "presence_penalty", "seed")
    )
    if options.max_output_tokens is not None:
        body[max_tokens_parameter] = options.max_output_tokens
    if options.stop_sequences:
        body["stop"] = list(options.stop_sequences)
    if response_format is not None:
        body["response_format"] = format_to_wire(response_format)
    body.update(tool_fields(options, api="Chat Completions"))
    extra: Json = {}
    if options.top_k is not None:
        extra["top_k"] = options.top_k
    extra.update(passthrough(options))
    if extra:
        body["extra_body"] = extra
    return body


# -- messages ----------------------------------------------------------------------------


def to_openai_messages(
    messages: Sequence[ChatMessage], *, instructions: str | None = None
) -> list[Json]:
    """Chat Completions messages for ``messages``, after a system message of ``instructions``.

    Each ``FunctionResultContent`` becomes its own ``tool`` message. Contents the model does
    not take back (reasoning, approval and interrupt requests and answers, usage, errors)
    are left out, and a message left with nothing to send is dropped.
    """
    out: list[Json] = []
    if instructions:
        out.append({"role": "system", "content": instructions})
    for message in messages:
        role = message_role(message, api="Chat Completions")
        results = [
            _tool_message(c) for c in message.contents if isinstance(c, FunctionResultContent)
        ]
        if role == "tool":
            out += results
            continue
        converted = _message(role, message)
        head = [converted] if converted is not None else []
        # Tool messages must follow the assistant message whose calls they answer.
        out += head + results if role == "assistant" else results + head
    return out


def message_role(message: ChatMessage, *, api: str) -> str:
    """The message's role as ``api`` spells it; a role it has no equivalent for is refused."""
    role = message.role.value.lower()
    if role not in _ROLES:
        raise ValueError(
            f"message role {message.role.value!r} has no {api} equivalent; use "
            "system, developer, user, assistant or tool"
        )
    return role


def _message(role: str, message: ChatMessage) -> Json | None:
    if role == "assistant":
        return _assistant_message(message)
    if role == "user":
        content: Any = _user_content(message.contents)
    else:
        content = message.text
    if not content:
        return None
    out: Json = {"role": role, "content": content}
    if message.author_name:
        out["name"] = message.author_name
    return out


def _assistant_message(message: ChatMessage) -> Json | None:
    calls = [_tool_call(c) for c in message.contents if isinstance(c, FunctionCallContent)]
    text = message.text
    if not text and not calls:
        return None
    out: Json = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    if message.author_name:
        out["name"] = message.author_name
    return out


def call_arguments(call: FunctionCallContent) -> str:
    """A call's arguments as JSON text (what the model wrote, if it did not parse, so it can
    see its own mistake)."""
    if call.arguments is None and call.raw_arguments is not None:
        return call.raw_arguments
    return dump_json(call.arguments or {})


def _tool_call(call: FunctionCallContent) -> Json:
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": call_arguments(call)},
    }


def _tool_message(result: FunctionResultContent) -> Json:
    return {"role": "tool", "tool_call_id": result.call_id, "content": dump_json(result.result)}


def _user_content(contents: Sequence[AIContent]) -> str | list[Json]:
    """A plain string when the message is only text (every compatible server takes that),
    else a list of content parts."""
    parts = [p for p in (_user_part(c) for c in contents) if p is not None]
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _user_part(content: AIContent) -> Json | None:
    if isinstance(content, TextContent):
        return {"type": "text", "text": content.text}
    if isinstance(content, DataContent):
        return _data_part(content)
    if isinstance(content, UriContent):
        if content.media_type.lower().startswith("image/"):
            return _image_part(content.uri, content)
        raise ValueError(
            f"Chat Completions takes only images by URL, not {content.media_type!r} "
            f"({content.uri}); send the bytes as DataContent instead"
        )
    return None


def _data_part(content: DataContent) -> Json:
    media_type = content.media_type.lower()
    if content.has_top_level_media_type("image"):
        return _image_part(content.uri, content)
    if media_type in _AUDIO_FORMATS:
        return {
            "type": "input_audio",
            "input_audio": {"data": content.base64_data, "format": _AUDIO_FORMATS[media_type]},
        }
    if media_type == "application/pdf":
        return {
            "type": "file",
            "file": {"filename": content.name or "document.pdf", "file_data": content.uri},
        }
    raise ValueError(
        f"Chat Completions cannot take {content.media_type!r} data in a user message; it "
        "takes images, WAV or MP3 audio and PDF files"
    )


def _image_part(url: str, content: AIContent) -> Json:
    image: Json = {"url": url}
    detail = (content.additional_properties or {}).get("detail")
    if detail is not None:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


# -- options -----------------------------------------------------------------------------


def tool_fields(options: ChatOptions, *, api: str) -> Json:
    """``tools``, ``tool_choice`` and ``parallel_tool_calls`` for ``options``, as Chat
    Completions spells them; nothing without tools (Chat Completions rejects the other two
    without tools). Only function tools can be sent: any other is refused, naming ``api``."""
    tools: list[Json] = []
    for tool in function_declarations(options.tools, api):
        function: Json = {"name": tool.name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = tool.parameters
        tools.append({"type": "function", "function": function})
    if not tools:
        return {}
    out: Json = {"tools": tools}
    mode = options.tool_mode
    if mode is not None:
        name = mode.required_function_name
        out["tool_choice"] = (
            mode.mode if name is None else {"type": "function", "function": {"name": name}}
        )
    if options.allow_multiple_tool_calls is not None:
        out["parallel_tool_calls"] = options.allow_multiple_tool_calls
    return out


def passthrough(options: ChatOptions) -> Json:
    """The keys of ``options.additional_properties`` that go into the body as they are: all
    but those starting with ``agui_``, which belong to agui_chat's own layers (the AG-UI
    server passes its run input that way) and are never sent."""
    return {k: v for k, v in options.additional_properties.items() if not k.startswith(_OWN_PREFIX)}
