"""Shared helpers of the MCP tests: our own server's command, uvicorn on 127.0.0.1, the
history a caller sends back after a pause, what the model saw, and the npm servers."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import uvicorn

from agui_chat import (
    ChatMessage,
    ChatResponse,
    FunctionCallContent,
    FunctionResultContent,
    InputResponseContent,
)
from agui_chat.testing import ScriptedChatClient
from real_components import CACHE, missing, require

SERVER = Path(__file__).with_name("mcp_servers.py")
NPM_PINS = {
    "server-filesystem": "2026.8.31",
    "server-everything": "2026.8.31",
}
NPM_DIR = CACHE / "npm" / "mcp-2026.8.31-2026.8.31"


def stdio_command() -> list[str]:
    return [sys.executable, str(SERVER)]


def npm_server(name: str) -> Path:
    """The entry point of an npm MCP server ``make test`` installed (skip/fail if missing)."""
    require("node", "apt-get install nodejs npm")
    package = NPM_DIR / "node_modules" / "@modelcontextprotocol" / name
    entry = package / "dist" / "index.js"
    if not entry.exists():
        missing(
            f"@modelcontextprotocol/{name}@{NPM_PINS[name]}",
            "run 'make test-deps' (mk/mcp.mk installs it into the cache)",
        )
    return entry


def call(call_id: str, name: str, /, **arguments: Any) -> list[FunctionCallContent]:
    return [FunctionCallContent(call_id, name, arguments)]


def resume(
    history: Sequence[ChatMessage], response: ChatResponse, *answers: InputResponseContent
) -> list[ChatMessage]:
    """The history a caller sends after a pause: the paused transcript, then the answers."""
    return [*history, *response.messages, ChatMessage("user", list(answers))]


def results(messages: Sequence[ChatMessage]) -> dict[str, FunctionResultContent]:
    """Every tool result in ``messages``, by call id."""
    return {
        c.call_id: c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)
    }


def model_saw(model: ScriptedChatClient, index: int = -1) -> dict[str, Any]:
    """The tool results the model received on its ``index``-th call, by call id."""
    messages, _ = model.calls[index]
    return {call_id: r.result for call_id, r in results(messages).items()}


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free port of 127.0.0.1 (stopped on exit);
    yields its base URL."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    try:
        for _ in range(500):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def until_hardened(toolset: Any) -> None:
    """Wait for the toolset to have listed the tools again after ``changing_servers.py``'s
    ``harden`` (``sweep`` now gated, ``vanish`` gone)."""
    from agui_chat.mcp import MCPApprovalRequired

    for _ in range(250):
        names = {t.name: t for t in toolset.tools}
        if "vanish" not in names and isinstance(names.get("sweep"), MCPApprovalRequired):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the toolset never saw the new list: {toolset.tools}")
