"""A client-side tool: the agent runs on the server, the tool runs in the client.

The client advertises ``local_time`` (an ``AIFunction`` in ``ChatOptions.tools``) in the AG-UI
``tools`` field. The server's model calls it; the server cannot run it, so its run ends with the
call pending; ``AGUIChatClient`` runs the tool locally and continues on the same thread with the
result. The server here is in-process (``httpx.ASGITransport``), so the sample runs offline.
"""

from __future__ import annotations

import asyncio
import secrets

import httpx

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    ai_function,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient

TOOL_RUNS: list[str] = []


@ai_function
def local_time(city: str) -> str:
    """The time where the user is (only the client knows).

    Args:
        city: The user's city.
    """
    TOOL_RUNS.append(city)
    return f"09:41 in {city}"


def server_model(messages: list[ChatMessage], options: ChatOptions | None) -> object:
    """Calls the client's tool when it is offered, then reports its result."""
    last = messages[-1]
    if last.role == "tool":
        result = next(c for c in last.contents if isinstance(c, FunctionResultContent))
        return f"The client says it is {result.result}."
    offered = [t.name for t in (options.tools if options and options.tools else [])]
    if "local_time" in offered:
        return [FunctionCallContent("call_time", "local_time", {"city": "Lisbon"})]
    return "No client tool was offered."


async def main() -> None:
    # One process: a key made here is enough (a deployment sets AGUI_CHAT_SIGNING_KEY).
    server = AGUIServer(
        ScriptedChatClient(server_model),
        signing_key=secrets.token_bytes(32),
        approval_store=InMemoryApprovalStore(),
    )
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://localhost")
    async with http, AGUIChatClient("http://localhost/", http_client=http) as client:
        response = await client.get_response(
            [ChatMessage("user", "What time is it here?")], ChatOptions(tools=[local_time])
        )
    print(response.text)
    print(f"local_time ran {len(TOOL_RUNS)} time(s) in the client: {TOOL_RUNS}")


if __name__ == "__main__":
    asyncio.run(main())
