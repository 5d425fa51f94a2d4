"""An MCP server's tools in the tool loop, with a person approving what the server marks as
destructive: the official filesystem server on a temporary directory.

``MCPToolset`` starts ``@modelcontextprotocol/server-filesystem`` over stdio and hands its
tools to ``ChatOptions(tools=...)``. With ``approval="auto"`` the server's own annotations
decide: ``list_directory`` and ``read_text_file`` are read-only and run at once, while
``write_file`` is destructive and waits for you. The scripted model lists the folder, then
asks to write ``haiku.txt``; you approve (``y``) or reject (anything else, optionally with a
reason) in the terminal, and the sample prints what the folder holds afterwards.

Offline: the model is a ``ScriptedChatClient`` and the server runs from the npm package
``make test`` caches (or pass ``--server path/to/dist/index.js``; without either, ``npx``
fetches the pinned package). ``--yes`` approves without asking.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    TextContent,
    ToolApprovalRequestContent,
)
from agui_chat._display import shown_call
from agui_chat.cli._prompts import approval_prompt, one_line
from agui_chat.mcp import MCPToolset
from agui_chat.testing import ScriptedChatClient

PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"
CACHE = Path(os.environ.get("AGUI_CHAT_CACHE", Path.home() / ".cache" / "agui-chat"))
CACHED = CACHE / "npm/mcp-2026.8.31-2026.8.31/node_modules/@modelcontextprotocol/server-filesystem"
HAIKU = "an old silent pond\na frog jumps into the pond\nsplash! silence again\n"


def server_command(folder: Path, server: str | None) -> list[str]:
    """The filesystem server on ``folder``: the given or cached entry point, else npx."""
    entry = Path(server) if server else CACHED / "dist" / "index.js"
    if entry.exists():
        return ["node", str(entry), str(folder)]
    return ["npx", "-y", PACKAGE, str(folder)]


def scripted_model(folder: Path) -> ScriptedChatClient:
    """List the folder, then write the haiku, then say how it went."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        results = [c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]
        if not results:
            return [FunctionCallContent("list", "list_directory", {"path": str(folder)})]
        if len(results) == 1:
            path = str(folder / "haiku.txt")
            return [FunctionCallContent("write", "write_file", {"path": path, "content": HAIKU})]
        return f"Done: {results[-1].result}"

    return ScriptedChatClient(reply)


def decide(request: ToolApprovalRequestContent, auto: bool) -> Any:
    """Ask the person in the terminal; an empty or 'n' answer rejects."""
    call = request.tool_call
    # Asked as the agui-chat command asks: the whole call, escaped; a long one says so.
    shown = shown_call(call.name, call.arguments)
    prompt = f"{one_line(request.message)}\n{approval_prompt(shown, allow_edits=False)}"
    if auto:
        print(f"{prompt}y (approved with --yes)")
        return request.create_response(True)
    try:
        line = input(prompt).strip()
        while line.lower() in ("v", "view") and shown.cut:
            print(shown.full)
            line = input(prompt).strip()
    except EOFError:
        line = ""
    if line.lower() in ("y", "yes"):
        return request.create_response(True)
    reason = line[1:].strip(" :,-") if line.lower().startswith("n") else line
    return request.create_response(False, reason or None)


async def main(auto: bool, server: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        (folder / "notes.txt").write_text("remember the milk\n")
        async with MCPToolset(server_command(folder, server)) as toolset:
            client = FunctionInvokingChatClient(scripted_model(folder))
            history = [ChatMessage("user", "Write a haiku into haiku.txt")]
            print(f"you> {history[0].text}")
            while True:
                # The tools as they are now: read for each request, so a list the server
                # changed (tools/list_changed) is offered, and gated, as it is.
                options = ChatOptions(tools=toolset.tools)
                response = await client.get_response(history, options)
                history += response.messages
                for message in response.messages:
                    for c in message.contents:
                        if isinstance(c, FunctionResultContent):
                            print(f"  [{c.call_id}] {str(c.result).strip()}")
                        elif isinstance(c, TextContent) and c.text:
                            print(f"assistant> {c.text}")
                if not response.input_requests:
                    break
                answers = [
                    decide(r, auto)
                    for r in response.input_requests
                    if isinstance(r, ToolApprovalRequestContent)
                ]
                history.append(ChatMessage("user", answers))
        print("files:", ", ".join(sorted(p.name for p in folder.iterdir())))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yes", action="store_true", help="approve without asking")
    parser.add_argument("--server", help="the filesystem server's dist/index.js")
    args = parser.parse_args()
    asyncio.run(main(args.yes, args.server))
    sys.exit(0)
