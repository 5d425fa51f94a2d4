"""What an AG-UI server receives, turned into what a chat client takes: the request body
as a ``RunAgentInput`` (1.0, tolerating the 0.1.x shape), its messages as ``ChatMessage``s
and its tools as declaration-only tools. Problems are an :class:`InputError`."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    DataSource,
    FileSource,
    ReasoningMessage,
    RunAgentInput,
    TextPart,
    ToolMessage,
    UrlSource,
)
from ag_ui.core import Tool as WireTool
from pydantic import ValidationError

from ..._contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from ..._exceptions import ToolError
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ..._tools import AIFunctionDeclaration
from ..wire._compat import upgrade_binary_part
from ..wire._event_schema import ROLES
from ..wire._messages import ENCRYPTED_FOR_KEY
from ._peer_compat import apply_client_rules

__all__ = ["InputError", "client_tools", "parse_run_input", "to_chat_messages"]

#: Where a wire value that has no field of its own is kept, in ``additional_properties``.
ENCRYPTED_VALUE = "agui_encrypted_value"
TOOL_ERROR = "agui_error"

_MAX_REPORTED_ERRORS = 10

_log = logging.getLogger("agui_chat.agui")


class InputError(Exception):
    """A request the server refuses before any run starts: an HTTP ``status``, a
    ``code``, a message, and the fields at fault (``[{"field", "message"}]``)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        errors: Sequence[Mapping[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = [dict(e) for e in errors]

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.errors:
            out["errors"] = self.errors
        return out


def _invalid(field: str, message: str) -> InputError:
    return InputError(
        422, "INVALID_INPUT", f"{field}: {message}", [{"field": field, "message": message}]
    )


def parse_run_input(data: Any) -> RunAgentInput:
    """``data`` (parsed JSON) as a ``RunAgentInput``; ``InputError`` (422) naming the
    fields that fail. Members known clients misspell are read under their spec names
    (``_peer_compat``), legacy ``binary`` parts upgraded to 1.0 media parts."""
    if not isinstance(data, dict):
        raise _invalid("(body)", "must be a JSON object (a RunAgentInput)")
    data = _strip_unknown(apply_client_rules(data))
    try:
        return RunAgentInput.model_validate(data)
    except ValidationError as exc:
        errors = [
            {"field": _field_path(e["loc"]), "message": e["msg"]}
            for e in exc.errors(include_url=False, include_input=False)[:_MAX_REPORTED_ERRORS]
        ]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:3])
        raise InputError(
            422, "INVALID_INPUT", f"the body is not a valid RunAgentInput: {summary}", errors
        ) from None


_INPUT_KEYS = frozenset(f.alias or name for name, f in RunAgentInput.model_fields.items())
_ROLES = frozenset(ROLES)
_PART_TYPES = frozenset({"text", "image", "audio", "video", "document", "binary"})
_SOURCE_TYPES = frozenset({"data", "url", "file"})


def _strip_unknown(data: dict[str, Any]) -> dict[str, Any]:
    """Unknown members stripped with a warning, not refused (agui-wire §2, §5.3): top-level
    keys, messages of an unknown role, content parts of an unknown type or source; and
    legacy ``binary`` parts upgraded. What is malformed is left for validation to refuse."""
    dropped: list[str] = []
    out = {k: v for k, v in data.items() if k in _INPUT_KEYS}
    dropped += [f"'{k}'" for k in data if k not in _INPUT_KEYS]
    messages = data.get("messages")
    if isinstance(messages, list):
        kept = []
        for i, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            if isinstance(role, str) and role not in _ROLES:
                dropped.append(f"messages[{i}] (role {role!r})")
                continue
            if isinstance(message, dict) and isinstance(message.get("content"), list):
                parts = []
                for j, part in enumerate(message["content"]):
                    unknown = _unknown_part(part)
                    if unknown:
                        dropped.append(f"messages[{i}].content[{j}] ({unknown})")
                    elif isinstance(part, dict) and part.get("type") == "binary":
                        parts.append(upgrade_binary_part(part) or part)  # or validation says
                    else:
                        parts.append(part)
                message = {**message, "content": parts}
            kept.append(message)
        out["messages"] = kept
    if dropped:
        _log.warning("stripped unknown members of the run input: %s", ", ".join(dropped))
    return out


def _unknown_part(part: Any) -> str | None:
    """What makes a content part unknown (its type, or its source's type), if anything."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if isinstance(kind, str) and kind not in _PART_TYPES:
        return f"type {kind!r}"
    source = part.get("source")
    source_kind = source.get("type") if isinstance(source, dict) else None
    if isinstance(source_kind, str) and source_kind not in _SOURCE_TYPES:
        return f"source type {source_kind!r}"
    return None


def _field_path(loc: Iterable[int | str]) -> str:
    """``("messages", 0, "user", "content")`` -> ``"messages[0].content"`` (the segments
    pydantic adds for union members are not fields)."""
    out = ""
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _is_union_segment(part, previous):
            continue
        else:
            out += f".{part}" if out else part
        previous = part
    return out or "(body)"


def _is_union_segment(part: str, previous: int | str | None) -> bool:
    if "[" in part or part in _TYPE_NAMES:
        return True
    return part in _UNION_TAGS and (isinstance(previous, int) or previous == "source")


_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "dict", "list", "none"})
# The discriminator values of the message, content-part and part-source unions.
_UNION_TAGS = _ROLES | _PART_TYPES | _SOURCE_TYPES


def to_chat_messages(run_input: RunAgentInput) -> list[ChatMessage]:
    """The input's ``messages`` as ``ChatMessage``s (``InputError`` naming one that cannot be).

    Consecutive assistant tool-call messages are merged (as clients that split parallel
    calls send them); ``reasoning`` messages and the ``encryptedValue`` of an assistant
    message or tool call become ``TextReasoningContent`` (the latter naming its owner under
    ``agui_encrypted_for``, as ``AGUIChatClient`` writes it); any other message's
    ``encryptedValue`` is kept under ``agui_encrypted_value``; ``activity`` messages go.
    """
    out: list[ChatMessage] = []
    for index, wire in enumerate(run_input.messages):
        try:
            message = _to_chat_message(wire)
        except (TypeError, ValueError) as exc:
            raise _invalid(f"messages[{index}]", str(exc)) from None
        if message is None:
            continue
        previous = out[-1] if out else None
        if (
            previous is not None
            and message.role == ChatRole.ASSISTANT
            and previous.role == ChatRole.ASSISTANT
            and _has_calls(message)
            and _has_calls(previous)
        ):
            previous.contents.extend(message.contents)
            continue
        out.append(message)
    return out


def _has_calls(message: ChatMessage) -> bool:
    return any(isinstance(c, FunctionCallContent) for c in message.contents)


def _to_chat_message(wire: Any) -> ChatMessage | None:
    role = wire.role
    if role == "activity":
        return None
    extra: dict[str, Any] = {}
    contents: list[AIContent]
    chat_role: ChatRole | str = role
    if isinstance(wire, AssistantMessage):
        contents = []
        if wire.encrypted_value is not None:
            contents.append(_encrypted("message", wire.id, wire.encrypted_value))
        if wire.content:
            contents.append(TextContent(wire.content))
        for call in wire.tool_calls or []:
            if call.encrypted_value is not None:
                contents.append(_encrypted("tool-call", call.id, call.encrypted_value))
            contents.append(
                FunctionCallContent.from_json_arguments(
                    call.id, call.function.name, call.function.arguments
                )
            )
    elif isinstance(wire, ToolMessage):
        result: Any = _text_of(wire.content)
        if wire.error:
            extra[TOOL_ERROR] = wire.error
            result = result or wire.error
        contents = [FunctionResultContent(wire.tool_call_id, result)]
    elif isinstance(wire, ReasoningMessage):
        chat_role = ChatRole.ASSISTANT
        contents = [TextReasoningContent(wire.content, protected_data=wire.encrypted_value)]
    else:
        contents = _user_contents(wire.content)
    if wire.encrypted_value is not None and not isinstance(
        wire, (AssistantMessage, ReasoningMessage)
    ):
        extra[ENCRYPTED_VALUE] = wire.encrypted_value
    return ChatMessage(
        chat_role,
        contents,
        author_name=getattr(wire, "name", None),
        message_id=wire.id,
        additional_properties=extra or None,
    )


def _encrypted(subtype: str, entity_id: str, value: str) -> TextReasoningContent:
    """Opaque reasoning a provider encrypted, for the message or tool call it belongs to."""
    return TextReasoningContent(
        "",
        protected_data=value,
        additional_properties={ENCRYPTED_FOR_KEY: {"subtype": subtype, "entityId": entity_id}},
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.text for p in content or [] if isinstance(p, TextPart))


def _user_contents(content: Any) -> list[AIContent]:
    if isinstance(content, str):
        return [TextContent(content)]
    out: list[AIContent] = []
    for part in content or []:
        if isinstance(part, TextPart):
            out.append(TextContent(part.text))
            continue
        source = part.source
        if isinstance(source, DataSource):
            out.append(DataContent(f"data:{source.mime_type};base64,{source.value}"))
        elif isinstance(source, UrlSource):
            out.append(UriContent(source.value, source.mime_type))
        elif isinstance(source, FileSource):
            props: dict[str, Any] = {"agui_source": "file"}
            if source.provider is not None:
                props["agui_provider"] = source.provider
            out.append(UriContent(source.value, source.mime_type, additional_properties=props))
    return out


def client_tools(
    tools: Sequence[WireTool] | None, server_names: Iterable[str] = ()
) -> list[AIFunctionDeclaration]:
    """The client's tools as declaration-only tools (the client runs them).

    One named like a server tool is left out with a warning (a client can neither take over
    a server tool's calls nor run it ungated); a name declared twice is refused (422).
    """
    reserved = set(server_names)
    seen: dict[str, int] = {}
    out: list[AIFunctionDeclaration] = []
    for index, tool in enumerate(tools or []):
        if tool.name in seen:
            raise _invalid(
                f"tools[{index}]",
                f"declares tool {tool.name!r} again (tools[{seen[tool.name]}]): tool names "
                "must be unique",
            )
        seen[tool.name] = index
        if tool.name in reserved:
            _log.warning(
                "left out the client-side tool %r (tools[%d]): the server has a tool of that name",
                tool.name,
                index,
            )
            continue
        parameters = tool.parameters if isinstance(tool.parameters, Mapping) else None
        try:
            out.append(AIFunctionDeclaration(tool.name, tool.description or "", parameters))
        except (ToolError, TypeError) as exc:
            raise _invalid(f"tools[{index}]", str(exc)) from None
    return out
