"""The model ``agui-chat serve --app changing_app:model --mcp ...`` serves in
test_server_live_toolset: it calls the tool the user's last message names (``harden``,
``sweep``), and answers ``gated?`` with whether the ``sweep`` it is offered now asks for
approval (so the test can wait for the MCP server's new list without sleeping)."""

from __future__ import annotations

from typing import Any

from agui_chat import (
    ApprovalRequiredAIFunction,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
)
from agui_chat.testing import ScriptedChatClient


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
    last = messages[-1]
    results = [c for c in last.contents if isinstance(c, FunctionResultContent)]
    if results:
        return f"The tool said: {results[-1].result}"
    offered = {t.name: t for t in (options.tools or [])} if options else {}
    if last.text == "gated?":
        sweep = offered.get("sweep")
        gated = sweep is not None and sweep.get_service(ApprovalRequiredAIFunction) is not None
        return "yes" if gated else "no"
    if last.text == "harden":
        return [FunctionCallContent("h1", "harden", {})]
    return [FunctionCallContent(f"s{len(messages)}", "sweep", {"where": last.text})]


def model() -> ScriptedChatClient:
    return ScriptedChatClient(_reply)
