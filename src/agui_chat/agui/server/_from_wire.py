"""What an AG-UI server receives, turned into what a chat client takes: the request body
as a ``RunAgentInput`` (1.0, tolerating the 0.1.x shape), its messages as ``ChatMessage``s
and its tools as declaration-only tools. Problems are an :class:`InputError`."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
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
from ..._exceptions import ProtocolError, ToolError
from ..._messages import ChatMessage
from ..._response_format import ChatResponseFormat
from ..._role_and_finish_reason import ChatRole
from ..._structured import format_from_wire
from ..._tools import AIFunctionDeclaration
from ..wire._compat import upgrade_binary_part
from ..wire._event_schema import RUN_INPUT, EventEnforcer
from ..wire._messages import ENCRYPTED_FOR_KEY
from ._peer_compat import apply_client_rules

#: Where a wire value that has no field of its own is kept, in ``additional_properties``.
ENCRYPTED_VALUE = "agui_encrypted_value"
TOOL_ERROR = "agui_error"

_log = logging.getLogger("agui_chat.agui")


class InputError(Exception):
    """A request the server refuses before any run starts: an HTTP ``status``, a
    ``code``, a message, and the ``field`` at fault, if one is."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        self.message = message if field is None else f"{field}: {message}"
        super().__init__(self.message)
        self.status = status
        self.code = code
        self.errors = [] if field is None else [{"field": field, "message": message}]

    def body(self) -> dict[str, Any]:
        """The JSON error body (``errors``: ``[{"field", "message"}]``)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.errors:
            out["errors"] = self.errors
        return out


def _invalid(field: str, message: str) -> InputError:
    return InputError(422, "INVALID_INPUT", message, field)


class _Malformed(ProtocolError):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path = path


class _InputChecker(EventEnforcer):
    """The wire schema's checks, reporting the path of what is malformed."""

    __slots__ = ()

    def malformed(self, path: str, problem: str) -> ProtocolError:
        return _Malformed(path, problem)


def parse_run_input(data: Any) -> RunAgentInput:
    """``data`` (parsed JSON, changed in place) as a ``RunAgentInput``; ``InputError`` (422)
    naming the field that fails. Unknown members (top-level keys, messages of an unknown
    role, content parts of an unknown type or source, members of a known object) are
    stripped with a warning, not refused (agui-wire §2, §5.3); members known clients misspell
    are read under their spec names (``_peer_compat``), legacy ``binary`` parts upgraded to
    1.0 media parts. An unknown ``resume`` status is refused, not stripped."""
    if not isinstance(data, dict):
        raise _invalid("(body)", "must be a JSON object (a RunAgentInput)")
    apply_client_rules(data)
    messages = data.get("messages")
    for message in messages if isinstance(messages, list) else []:
        parts = message.get("content") if isinstance(message, dict) else None
        if isinstance(parts, list):
            message["content"] = [
                upgrade_binary_part(p) or p
                if isinstance(p, dict) and p.get("type") == "binary"
                else p
                for p in parts
            ]
    resume = data.pop("resume", None)  # an answer is never dropped as unrecognised
    checker = _InputChecker(_log.warning)
    checker.event_type = "RunAgentInput"  # what the warnings name
    try:
        RUN_INPUT.check(data, "", checker)
    except _Malformed as exc:
        path = re.sub(r"/(\d+)", r"[\1]", exc.path).replace("/", ".").lstrip(".")
        raise _invalid(path or "(body)", str(exc)) from None
    try:
        return RunAgentInput.model_validate({**data, "resume": resume})
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        raise _invalid(field.lstrip(".") or "(body)", error["msg"]) from None


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
        if out and all(
            m.role == ChatRole.ASSISTANT
            and any(isinstance(c, FunctionCallContent) for c in m.contents)
            for m in (out[-1], message)
        ):
            out[-1].contents.extend(message.contents)
        else:
            out.append(message)
    return out


def _to_chat_message(wire: Any) -> ChatMessage | None:
    if wire.role == "activity":
        return None
    extra: dict[str, Any] = {}
    contents: list[AIContent]
    chat_role: ChatRole | str = wire.role
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
    tools: Sequence[WireTool] | None, server_names: Collection[str] = ()
) -> list[AIFunctionDeclaration]:
    """The client's tools as declaration-only tools (the client runs them).

    One named like a server tool is left out with a warning (a client can neither take over
    a server tool's calls nor run it ungated); a name declared twice is refused (422).
    """
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
        if tool.name in server_names:
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


def forwarded_response_format(forwarded_props: Any) -> ChatResponseFormat | None:
    """The Chat Completions ``response_format`` a client put in ``forwardedProps``, or ``None``."""
    if not isinstance(forwarded_props, Mapping):
        return None
    return format_from_wire(forwarded_props.get("response_format"))
