"""An MCP server's tools in the tool loop, with a person approving what the server marks as
destructive: the official filesystem server on a temporary directory.

``MCPToolset`` starts ``@modelcontextprotocol/server-filesystem`` over stdio and hands its
tools to ``ChatOptions(tools=...)``. With ``approval="auto"`` the server's own annotations
decide: ``list_directory`` and ``read_text_file`` are read-only and run at once, while
``write_file`` is destructive and waits for you. The scripted model lists the folder, then
asks to write ``haiku.txt``; you approve (``y``) or reject (``n``, or type your reason: the
model gets it exactly as typed), and the sample prints what the folder holds afterwards. The
call is shown whole up to a limit; past it, the prompt says how much is cut and ``all``
shows the whole, so nothing is hidden (``--content`` writes a text of your own).

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
from agui_chat._display import shown_call, shown_text
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


def scripted_model(folder: Path, content: str = HAIKU) -> ScriptedChatClient:
    """List the folder, then write the haiku, then say how it went."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        results = [c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]
        if not results:
            return [FunctionCallContent("list", "list_directory", {"path": str(folder)})]
        if len(results) == 1:
            path = str(folder / "haiku.txt")
            return [FunctionCallContent("write", "write_file", {"path": path, "content": content})]
        return f"Done: {results[-1].result}"

    return ScriptedChatClient(reply)


def decide(request: ToolApprovalRequestContent, auto: bool) -> Any:
    """Ask the person in the terminal: ``y`` approves; ``n`` or nothing rejects; anything else
    rejects with what was typed, verbatim, as the reason. ``all`` shows a cut call whole."""
    call = request.tool_call
    shown = shown_call(call.name, call.arguments)  # escaped; never cut without saying so
    print(f"{shown_text(request.message or '', multiline=False).text} {shown.text}")
    choices = "[y]es / [n]o / type a reason to reject"
    prompt = f"{choices} / [all] of it? " if shown.cut else f"{choices}? "
    if auto:
        print(f"{prompt}y (approved with --yes)")
        return request.create_response(True)
    while True:
        try:
            line = input(prompt)
        except EOFError:
            line = ""
        if shown.cut and line.strip().lower() == "all":
            print(shown.full)
            continue
        if line.strip().lower() in ("y", "yes"):
            return request.create_response(True)
        no_reason = line.strip().lower() in ("", "n", "no")
        return request.create_response(False, None if no_reason else line)


async def main(auto: bool, server: str | None, content: str = HAIKU) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        (folder / "notes.txt").write_text("remember the milk\n")
        async with MCPToolset(server_command(folder, server)) as toolset:
            client = FunctionInvokingChatClient(scripted_model(folder, content))
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
                            print(f"  [{c.call_id}] {shown_text(str(c.result).strip()).text}")
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
    parser.add_argument("--content", default=HAIKU, help="what the model writes (a haiku)")
    args = parser.parse_args()
    asyncio.run(main(args.yes, args.server, args.content))
    sys.exit(0)
