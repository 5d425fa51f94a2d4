"""The model ``agui-chat serve --app serve_app:model --mcp ...`` serves in test_cli_serve_mcp:
it deletes a note with the MCP server's tool, then says what the tool answered."""

from __future__ import annotations

from typing import Any

from agui_chat import ChatMessage, ChatOptions, FunctionCallContent, FunctionResultContent
from agui_chat.testing import ScriptedChatClient


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    results = [c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]
    if results:
        return f"The tool said: {results[-1].result}"
    names = sorted(t.name for t in (options.tools or [])) if options else []
    assert "delete_note" in names, names
    return [FunctionCallContent("c1", "delete_note", {"title": "a"})]


def model() -> ScriptedChatClient:
    return ScriptedChatClient(_reply)
