"""``MCPToolset``: the tools of any MCP server in the tool loop, destructive ones gated by
default, the server's elicitations as questions for the person (see docs/mcp.md).

Needs the ``mcp`` extra: ``pip install 'agui-chat[mcp]'``.
"""

from __future__ import annotations

from .._extras import needs_extra

with needs_extra("mcp", by="agui_chat.mcp"):
    from ._policy import ApprovalPolicy, auto_requires_approval
    from ._tool import MCPApprovalRequired, MCPTool
    from ._toolset import MCPToolset, elicitation_callback

__all__ = [
    "ApprovalPolicy",
    "MCPApprovalRequired",
    "MCPTool",
    "MCPToolset",
    "auto_requires_approval",
    "elicitation_callback",
]
