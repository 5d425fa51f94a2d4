"""One name, one tool: the registry every tool set is built with, ``ToolSource``, and the
tool loop's tools of one round trip (:func:`tool_map`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ._exceptions import DuplicateToolError
from ._tools import AITool

if TYPE_CHECKING:
    from ._options import ChatOptions


@runtime_checkable
class ToolSource(Protocol):
    """A set of tools that may change while it is in use (``agui_chat.mcp.MCPToolset``);
    ``tools`` is read at each build, so a replaced tool (MCP ``tools/list_changed``) is seen,
    gate and all, from the next build on."""

    @property
    def tools(self) -> Sequence[AITool]:
        """The source's tools as they are now."""
        ...


def _describe(tool: AITool, origin: str) -> str:
    # The mcp adapter records the MCP tool and server names in additional_properties.
    text = f"tool {tool.name!r} from {origin}"
    props = tool.additional_properties
    mcp_name, server = props.get("mcp_tool"), props.get("mcp_server")
    if isinstance(mcp_name, str):
        text += f" (MCP tool {mcp_name!r} of server {server!r})"
    return text


class ToolRegistry:
    """The name -> tool map (``by_name``) of one tool set, built source by source with
    :meth:`add`; each name remembers where its tool came from, so a clash names both."""

    __slots__ = ("_origins", "by_name")

    def __init__(self) -> None:
        self.by_name: dict[str, AITool] = {}
        self._origins: dict[str, str] = {}

    def add(self, items: Iterable[AITool | ToolSource], origin: str) -> list[AITool]:
        """Add ``items`` (tools, and each source's current tools) from ``origin`` (e.g.
        ``"AGUIServer(tools=...)"``); returns the tools they gave, each once (the same object
        twice is one tool). ``DuplicateToolError`` if a name is taken by another tool object,
        gated or not; ``TypeError`` if a source yields something that is not a tool."""
        by_name, origins = self.by_name, self._origins
        given: dict[str, AITool] = {}
        for item in items:
            if isinstance(item, AITool):
                tools: Iterable[AITool] = (item,)
                where = origin
            else:
                where = f"{item!r} in {origin}"
                tools = item.tools
            for tool in tools:
                if not isinstance(tool, AITool):
                    raise TypeError(
                        f"the tool source {where} gave a {type(tool).__name__}, not an AITool"
                    )
                name = tool.name
                existing = by_name.get(name)
                if existing is None:
                    by_name[name] = given[name] = tool
                    origins[name] = where
                elif existing is tool:
                    given[name] = tool
                else:
                    raise DuplicateToolError(
                        f"{_describe(tool, where)} clashes with "
                        f"{_describe(existing, origins[name])}: tool names must be unique "
                        "(rename one, or leave one out)",
                        name=name,
                    )
        return list(given.values())


#: Where the tool loop's own tools come from, as a tool clash names it.
ADDITIONAL_TOOLS = "FunctionInvokingChatClient(additional_tools=...)"


def tool_map(
    additional: Sequence[AITool | ToolSource], options: ChatOptions | None
) -> dict[str, AITool]:
    """The round trip's tools by name; ``DuplicateToolError`` for two tools of one name."""
    registry = ToolRegistry()
    registry.add(additional, ADDITIONAL_TOOLS)
    if options is not None and options.tools:
        registry.add(options.tools, "ChatOptions.tools")
    return registry.by_name
