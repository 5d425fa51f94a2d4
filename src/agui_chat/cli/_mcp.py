"""``agui-chat serve --mcp TARGET``: an AG-UI server whose tools include an MCP server's.

A TARGET is a URL (``http://`` or ``https://``: streamable HTTP) or a command line (started
over stdio). The MCP sessions live in the served event loop: they are opened when uvicorn
starts the app (ASGI lifespan) and closed when it stops, and the ``AGUIServer`` is built
once they are open, given the toolsets themselves (not a copy of their tools), so a server's
``tools/list_changed`` is seen on the next run. A server that cannot start (or whose tool
names clash with another's) stops ``serve`` with its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._display import visible
from .._tool_registry import ToolSource

__all__ = ["WithMCPTools", "mcp_toolset"]

Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


def mcp_toolset(target: str) -> Any:
    """An ``MCPToolset`` for ``target`` (a URL or a command line); the ``mcp`` extra is
    imported only here."""
    from ..mcp import MCPToolset

    if target.startswith(("http://", "https://")):
        return MCPToolset(url=target)
    command = shlex.split(target)
    if not command:
        raise ValueError("give a command line or a URL")
    return MCPToolset(command)


class WithMCPTools:
    """An ASGI app that opens MCP toolsets on lifespan start-up, then serves
    ``build(toolsets)`` (an ``AGUIServer`` given the open toolsets)."""

    def __init__(self, targets: Sequence[str], build: Callable[[list[ToolSource]], Any]) -> None:
        self.toolsets = [mcp_toolset(t) for t in targets]
        self.build = build
        self.app: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self.app is None:  # pragma: no cover - uvicorn serves only after start-up
            raise RuntimeError("the MCP servers are not open yet")
        await self.app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":  # pragma: no cover - ASGI order
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                opened_sets: list[ToolSource] = []
                for toolset in self.toolsets:
                    opened = await stack.enter_async_context(toolset)
                    opened_sets.append(opened)
                    # What an MCP server calls itself and its tools is its own text.
                    names = ", ".join(t.name for t in opened.tools)
                    print(
                        visible(
                            f"agui-chat: MCP server {opened.server_name!r} ({opened.target}): "
                            f"{names}"
                        ),
                        file=sys.stderr,
                    )
                self.app = self.build(opened_sets)
            except Exception as exc:
                print(visible(f"agui-chat: error: {exc}"), file=sys.stderr)
                # uvicorn logs this message with its own formatter: escaped here.
                await send({"type": "lifespan.startup.failed", "message": visible(str(exc))})
                return
            # The server's own lifespan (it closes its approval store) runs inside ours.
            inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            inner = asyncio.create_task(self.app({"type": "lifespan"}, inbox.get, outbox.put))
            await inbox.put({"type": "lifespan.startup"})
            await send(await outbox.get())
            while (await receive())["type"] != "lifespan.shutdown":  # pragma: no cover
                pass
            await inbox.put({"type": "lifespan.shutdown"})
            await outbox.get()
            await inner
        await send({"type": "lifespan.shutdown.complete"})
