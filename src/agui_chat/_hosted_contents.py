"""Calls the service runs itself: a remote MCP server's tool called by the model's service
(MEAI's ``McpServerToolCallContent`` / ``McpServerToolResultContent``), and the hosted tool
that offers such a server to the model (``HostedMcpServerTool``).

The tool loop never runs these calls: it passes them, and their approval requests and
answers (a ``ToolApprovalRequestContent`` whose ``tool_call`` is an MCP call), through to the
service untouched. Both contents round-trip losslessly through ``to_dict``/``from_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._contents import (
    AIContent,
    ToolCallContent,
    ToolResultContent,
    _check_id,
    _check_mapping,
    _check_str,
)
from ._schema import to_jsonable
from ._tools import AITool

__all__ = ["HostedMcpServerTool", "McpServerToolCallContent", "McpServerToolResultContent"]


class McpServerToolCallContent(ToolCallContent):
    """A call of a tool on a remote MCP server, made and run by the model's service."""

    __slots__ = ("arguments", "name", "server_name")
    type = "mcp_server_tool_call"

    def __init__(
        self,
        call_id: str,
        name: str,
        server_name: str | None = None,
        *,
        arguments: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_id(call_id, "call_id")
        _check_id(name, "name")
        _check_str(server_name, "server_name", optional=True)
        _check_mapping(arguments, "arguments")
        self.call_id = call_id
        self.name = name
        self.server_name = server_name
        self.arguments: dict[str, Any] | None = dict(arguments) if arguments is not None else None

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"call_id": self.call_id, "name": self.name}
        if self.server_name is not None:
            out["server_name"] = self.server_name
        if self.arguments is not None:
            out["arguments"] = to_jsonable(self.arguments)
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(data.pop("call_id"), data.pop("name"), data.pop("server_name", None), **data)


class McpServerToolResultContent(ToolResultContent):
    """What a remote MCP server's tool returned, as contents (``outputs``)."""

    __slots__ = ("outputs",)
    type = "mcp_server_tool_result"

    def __init__(
        self, call_id: str, outputs: Sequence[AIContent] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        _check_id(call_id, "call_id")
        if outputs is not None:
            if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Sequence):
                raise TypeError(f"outputs must be a list of contents, got {type(outputs).__name__}")
            for i, c in enumerate(outputs):
                if not isinstance(c, AIContent):
                    raise TypeError(f"outputs[{i}] must be an AIContent, got {type(c).__name__}")
        self.call_id = call_id
        self.outputs: list[AIContent] | None = list(outputs) if outputs is not None else None

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"call_id": self.call_id}
        if self.outputs is not None:
            out["outputs"] = [c.to_dict() for c in self.outputs]
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        outputs = data.pop("outputs", None)
        if outputs is not None:
            if not isinstance(outputs, list):
                raise TypeError("outputs must be a list")
            outputs = [AIContent.from_dict(c) for c in outputs]
        return cls(data.pop("call_id"), outputs, **data)


class HostedMcpServerTool(AITool):
    """A remote MCP server the model's service calls itself (MEAI's ``HostedMcpServerTool``).

    Not a function: the tool loop never runs its calls, and keeps it in the options on the
    last round trip (only function tools are withdrawn there). ``approval_mode`` is the
    service's: ``"always_require"``, ``"never_require"`` or ``None`` (the service default).
    """

    def __init__(
        self,
        server_name: str,
        server_address: str,
        *,
        server_description: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        approval_mode: str | None = None,
        headers: Mapping[str, str] | None = None,
        additional_properties: Mapping[str, Any] | None = None,
    ) -> None:
        _check_id(server_name, "server_name")
        _check_id(server_address, "server_address")
        _check_str(server_description, "server_description", optional=True)
        _check_str(approval_mode, "approval_mode", optional=True)
        _check_mapping(headers, "headers")
        _check_mapping(additional_properties, "additional_properties")
        self.name = "mcp"
        self.description = server_description or ""
        self.server_name = server_name
        self.server_address = server_address
        self.server_description = server_description
        self.allowed_tools = list(allowed_tools) if allowed_tools is not None else None
        self.approval_mode = approval_mode
        self.headers = dict(headers) if headers is not None else None
        self.additional_properties = dict(additional_properties or {})

    def __repr__(self) -> str:
        return f"HostedMcpServerTool(server_name={self.server_name!r})"
