"""Our AG-UI server as its own process, for bench/peers.py: ``python agui_chat_server.py PORT
EFFECTS STORE``.

The same scripted model as the peer servers in tests/interop/servers/ (it deletes the
``*.txt`` the user names with a gated ``delete_file``, repeats the tool results it gets, and
otherwise says hello), behind ``AGUIServer`` with the approval store ``STORE`` (a URL:
``memory://``, ``sqlite:///path``, ``redis://...``), served by uvicorn on 127.0.0.1:PORT.
Every tool run appends a JSON line to EFFECTS.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import uvicorn

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    approval_required,
)
from agui_chat.agui import AGUIServer
from agui_chat.testing import ScriptedChatClient

PORT = int(sys.argv[1])
EFFECTS = sys.argv[2]
STORE = sys.argv[3]


@approval_required
def delete_file(path: str) -> str:
    """Delete a file."""
    with open(EFFECTS, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": "delete_file", "path": path}) + "\n")
    return f"deleted {path}"


def reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    last = messages[-1]
    results = [c.result for c in last.contents if isinstance(c, FunctionResultContent)]
    if results:
        return "Tool said: " + "; ".join(str(r) for r in results)
    paths = re.findall(r"[\w./-]+\.txt", last.text)
    if paths:
        return [
            FunctionCallContent(f"call_del_{i + 1}", "delete_file", {"path": p})
            for i, p in enumerate(paths)
        ]
    return "Hello from agui_chat."


app = AGUIServer(ScriptedChatClient(reply), tools=[delete_file], approval_store=STORE)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
