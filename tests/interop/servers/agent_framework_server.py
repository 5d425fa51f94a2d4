"""Microsoft Agent Framework's AG-UI server for the interop lane, run in its own virtualenv
(tests/interop/peers/agent_framework.txt): ``python agent_framework_server.py PORT EFFECTS``.

An ``Agent`` over a tiny scripted chat client (Agent Framework's ``BaseChatClient`` with its
function-invocation layer; no network) with ``delete_file`` gated by
``approval_mode="always_require"``, served by ``add_agent_framework_fastapi_endpoint`` on
127.0.0.1:PORT. The model deletes the ``*.txt`` the user names, repeats a tool result it
gets, and otherwise says hello. Every tool run appends a JSON line to EFFECTS.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import uvicorn
from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
from fastapi import FastAPI

PORT = int(sys.argv[1])
EFFECTS = sys.argv[2]


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    with open(EFFECTS, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": "delete_file", "path": path}) + "\n")
    return f"deleted {path}"


def reply(messages: Sequence[Message]) -> list[Content]:
    last = messages[-1]
    results = [c for c in last.contents if c.type == "function_result"]
    if results:
        return [Content.from_text("Tool said: " + "; ".join(str(r.result) for r in results))]
    paths = re.findall(r"[\w./-]+\.txt", last.text or "")
    if paths and last.role == "user":
        return [
            Content.from_function_call(
                f"call_del_{i + 1}", "delete_file", arguments=json.dumps({"path": p})
            )
            for i, p in enumerate(paths)
        ]
    return [Content.from_text("Hello from Agent Framework.")]


class ScriptedChatClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Agent Framework's chat client protocol, answered by ``reply``."""

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Any:
        contents = reply(messages)
        if stream:

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                yield ChatResponseUpdate(role="assistant", contents=contents, finish_reason="stop")

            return self._build_response_stream(updates())

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message("assistant", contents)], finish_reason="stop")

        return response()


app = FastAPI()
agent = Agent(client=ScriptedChatClient(), name="deleter", tools=[delete_file])
add_agent_framework_fastapi_endpoint(app, agent, "/", single_user=True)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
