"""pydantic-ai's AG-UI server (``AGUIAdapter``) for the interop lane, run in its own
virtualenv (tests/interop/peers/pydantic_ai.txt): ``python pydantic_ai_server.py PORT
EFFECTS``.

An ``Agent`` over pydantic-ai's own ``FunctionModel`` (no network) with ``delete_file``
marked ``requires_approval=True`` and ``DeferredToolRequests`` among its outputs, served on
127.0.0.1:PORT by ``AGUIAdapter.dispatch_request`` in its default (stateless) mode. The
model deletes the ``*.txt`` the user names, calls the client's own ``local_time`` tool (a
deferred call the client runs) when asked for the time, repeats the tool results it gets,
and otherwise says hello. Every server tool run appends a JSON line to EFFECTS.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PORT = int(sys.argv[1])
EFFECTS = sys.argv[2]


def reply(messages: list[ModelMessage]) -> str | list[tuple[str, str, dict[str, Any]]]:
    """The scripted model's turn: text, or tool calls ``(id, name, args)``."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    results = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if results:
        return "Tool said: " + "; ".join(str(p.content) for p in results)
    prompts = [p for p in last.parts if isinstance(p, UserPromptPart)]
    text = str(prompts[-1].content) if prompts else ""
    if "time" in text:
        return [("call_time_1", "local_time", {})]
    paths = re.findall(r"[\w./-]+\.txt", text)
    if paths:
        return [(f"call_del_{i + 1}", "delete_file", {"path": p}) for i, p in enumerate(paths)]
    return "Hello from pydantic-ai."


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    turn = reply(messages)
    if isinstance(turn, str):
        yield turn
        return
    yield {
        i: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)
        for i, (call_id, name, args) in enumerate(turn)
    }


agent: Agent[None, str | DeferredToolRequests] = Agent(
    FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests]
)


@agent.tool_plain(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    with open(EFFECTS, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": "delete_file", "path": path}) + "\n")
    return f"deleted {path}"


async def run(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
