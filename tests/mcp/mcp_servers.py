"""Our own MCP server for the tests, built with the SDK's server API (``MCPServer``; FastMCP
in mcp 1.x): a tool for each kind of annotation, tools that elicit once and twice, a tool
that fails, one that kills the server, one that adds a tool (list-changed).

Every tool that does something appends a line ``name json(arguments)`` to the file named by
``$MCP_TEST_LOG`` (or the path given to :func:`build`), so a test counts side effects even
when the server is a subprocess. ``python mcp_servers.py [LOG]`` serves it over stdio.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    AudioContent,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel

PIXEL = base64.b64encode(b"\x89PNG fake").decode()


class Name(BaseModel):
    name: str


class Confirm(BaseModel):
    confirm: bool


def read_log(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The side effects recorded so far: ``(tool, arguments)`` in order."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        name, _, args = line.partition(" ")
        out.append((name, json.loads(args)))
    return out


def build(log: Path | None = None) -> MCPServer:
    log_path = log or Path(os.environ["MCP_TEST_LOG"])
    app = MCPServer("notes-server")

    def record(tool: str, /, **arguments: Any) -> None:
        with log_path.open("a") as f:
            f.write(f"{tool} {json.dumps(arguments)}\n")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def read_note(title: str) -> str:
        """Read a note."""
        record("read_note", title=title)
        return f"note {title}: hello"

    @app.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_note(title: str) -> str:
        """Delete a note."""
        record("delete_note", title=title)
        return f"deleted {title}"

    @app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def append_note(title: str, text: str) -> str:
        """Append to a note (never destroys anything)."""
        record("append_note", title=title, text=text)
        return "appended"

    @app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=True))
    def peek_note(title: str) -> str:
        """Read-only, whatever the destructive hint says."""
        record("peek_note", title=title)
        return "peeked"

    @app.tool(annotations=ToolAnnotations(title="Touch"))
    def touch_note(title: str) -> str:
        """Annotations without either hint."""
        record("touch_note", title=title)
        return "touched"

    @app.tool()
    def archive(title: str, days: int = 30) -> str:
        """No annotations at all."""
        record("archive", title=title, days=days)
        return f"archived {title} for {days} days"

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Ask the person's name, then greet them (elicits once)."""
        record("greet.before")
        answer = await ctx.elicit("What is your name?", Name)
        if answer.action != "accept":
            record("greet.refused", action=answer.action)
            return f"no greeting ({answer.action})"
        record("greet", name=answer.data.name)
        return f"Hello, {answer.data.name}!"

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def rename(old: str, ctx: Context) -> str:
        """Ask the new name, then ask to confirm (elicits twice)."""
        first = await ctx.elicit(f"New name for {old}?", Name)
        if first.action != "accept":
            return f"kept {old} ({first.action})"
        second = await ctx.elicit(f"Rename {old} to {first.data.name}?", Confirm)
        if second.action != "accept" or not second.data.confirm:
            return f"kept {old}"
        record("rename", old=old, new=first.data.name)
        return f"renamed {old} to {first.data.name}"

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fail(reason: str) -> str:
        """Always fails."""
        raise ToolError(f"cannot do that: {reason}")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def crash() -> str:
        """Kills the server process mid-call."""
        record("crash")
        print("notes-server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def media() -> list[Any]:
        """Returns an image, audio and a resource link besides text."""
        return [
            TextContent(type="text", text="here"),
            ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            AudioContent(type="audio", data=PIXEL, mime_type="audio/wav"),
            ResourceLink(type="resource_link", uri="file:///notes/a.txt", name="a.txt"),
        ]

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def stats() -> dict[str, int]:
        """Structured output."""
        return {"notes": 3, "words": 42}

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def unlock(ctx: Context) -> str:
        """Adds a tool and tells the client the list changed."""

        def secret() -> str:
            """The unlocked tool."""
            return "secret"

        app.add_tool(secret, annotations=ToolAnnotations(read_only_hint=True))
        await ctx.session.send_tool_list_changed()
        return "unlocked"

    return app


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else None).run()
