"""One MCP tool as an ``AIFunction``, and its approval wrapper.

``MCPTool`` keeps the server's name, description and input schema as they were declared;
``validate_arguments`` checks the arguments against that schema (JSON Schema, via
``jsonschema``) before anything is sent; ``invoke`` calls the tool through its toolset's
session. ``MCPApprovalRequired`` is ``ApprovalRequiredAIFunction`` whose request names the
server beside the tool.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import mcp.types as types
from pydantic import BaseModel, ConfigDict

from .._exceptions import ToolArgumentsError, ToolError
from .._tools import (
    AIFunction,
    AIFunctionDeclaration,
    AITool,
    ApprovalRequiredAIFunction,
    arguments_object,
)

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from ._policy import ApprovalPredicate

__all__ = ["MCPApprovalRequired", "MCPTool", "tool_name"]

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


class _Caller(Protocol):
    server_name: str

    @property
    def tools(self) -> Sequence[AITool]: ...

    async def call(self, tool: MCPTool, arguments: dict[str, Any]) -> Any: ...


class _AnyArguments(BaseModel):
    """Stands in for the pydantic model an ``AIFunction`` built from a Python function has
    (an MCP tool's arguments are checked against its JSON schema instead)."""

    model_config = ConfigDict(extra="allow")


def tool_name(name: str) -> str:
    """The name the model sees: MCP allows characters function-calling APIs do not
    (``.``, ``/``), so each becomes ``_``; at most 64 characters."""
    return _INVALID.sub("_", name)[:64]


def check_schema(tool: types.Tool) -> Validator:
    """A validator for the tool's input schema; ``ToolError`` naming the tool if the schema
    is not a valid JSON schema of an object."""
    import jsonschema  # on the first tool listed: not with ``import agui_chat.mcp``

    schema = tool.input_schema
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise ToolError(f"MCP tool {tool.name!r}: its input schema is not an object schema")
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolError(f"MCP tool {tool.name!r}: invalid input schema: {exc.message}") from None
    validator: Validator = cls(schema)
    return validator


class MCPTool(AIFunction):
    """A tool of an MCP server, callable by the tool loop like any ``AIFunction``.

    ``mcp_tool`` is the tool as the server listed it (annotations included); ``server_name``
    is the server's own name.
    """

    def __init__(self, toolset: _Caller, tool: types.Tool, validator: Validator) -> None:
        description = tool.description or tool.title or ""
        AIFunctionDeclaration.__init__(
            self,
            tool_name(tool.name),
            description,
            copy.deepcopy(dict(tool.input_schema)),
            additional_properties={"mcp_server": toolset.server_name, "mcp_tool": tool.name},
        )
        self.mcp_tool = tool
        self.server_name = toolset.server_name
        self._toolset = toolset
        self._validator = validator
        self.func = self.invoke
        self._model = _AnyArguments
        self._is_async = True

    def validate_arguments(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """A copy of ``arguments`` if they satisfy the tool's input schema, else
        ``ToolArgumentsError`` naming each problem."""
        given = arguments_object(self.name, arguments)
        try:
            value = json.loads(json.dumps(given, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ToolArgumentsError(f"invalid arguments for {self.name!r}: {exc}") from None
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            problems = "; ".join(
                f"argument {'.'.join(str(p) for p in e.path) or '(root)'!r}: {e.message}"
                for e in errors[:5]
            )
            raise ToolArgumentsError(f"invalid arguments for {self.name!r}: {problems}")
        result: dict[str, Any] = value
        return result

    async def invoke(self, arguments: Mapping[str, Any] | None = None) -> Any:
        """Validate ``arguments`` and call the tool on its server."""
        return await self._toolset.call(self, self.validate_arguments(arguments))

    def current(self) -> AITool | None:
        """The tool as its server lists it now (gate and all), from the toolset's latest
        listing; ``None`` if the server no longer lists it. A copied tool list is thereby
        gated like the toolset: a tool re-declared destructive waits for approval."""
        return next((t for t in self._toolset.tools if t.name == self.name), None)

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, server={self.server_name!r})"


class MCPApprovalRequired(ApprovalRequiredAIFunction):
    """An MCP tool that waits for a person's approval; the request names the server."""

    inner: MCPTool

    def __init__(self, inner: MCPTool, *, when: ApprovalPredicate | None = None) -> None:
        predicate = None
        if when is not None:
            tool = inner.mcp_tool

            def predicate(arguments: Mapping[str, Any]) -> bool:
                return bool(when(tool, arguments))

        super().__init__(inner, when=predicate)

    def approval_message(self, call_name: str) -> str:
        return f"Approve {call_name} (MCP server {self.inner.server_name!r})?"
