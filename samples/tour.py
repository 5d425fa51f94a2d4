"""The tour: a chat loop with a tool that needs approval and one that asks a question, first
in-process through a pipeline, then over AG-UI (a real server on a free port of 127.0.0.1,
a client talking to it over HTTP). Offline: the model is a ``ScriptedChatClient``.

Both halves use the same answer loop: send the history, append what the run added (once),
answer every pause — an approval with ``create_response(True)``, a question with its
payload — and send again until the run finishes. ``delete_file`` runs once per approval.

Run ``.venv/bin/python samples/tour.py`` (after ``make demo``), or ``python samples/tour.py``
wherever ``agui-chat[server]`` is installed.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid

import uvicorn

from agui_chat import (
    AIContent,
    ChatClient,
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    InputRequestContent,
    InputResponseContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.testing import ScriptedChatClient

DELETED: list[str] = []


@approval_required  # never runs on the model's say-so
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    DELETED.append(path)
    return f"deleted {path}"


@ai_function
def deploy(service: str) -> str:
    """Deploy a service, asking which build.

    Args:
        service: The service to deploy.
    """
    answer = request_input(
        "Which build?",
        response_schema={
            "type": "object",
            "properties": {"build": {"type": "integer"}},
            "required": ["build"],
        },
    )
    return "cancelled" if answer.cancelled else f"deployed {service} #{answer.payload['build']}"


def answer(request: InputRequestContent) -> InputResponseContent:
    """What the person says: approve the call, answer the question with build 7."""
    if isinstance(request, ToolApprovalRequestContent):
        return request.create_response(True)  # or create_response(False, "why not")
    return request.create_response({"build": 7})  # a question's answer is its payload


async def ask(
    client: ChatClient, history: list[ChatMessage], text: str, options: ChatOptions | None = None
) -> ChatResponse:
    history.append(ChatMessage("user", text))
    response = await client.get_response(history, options)
    history += response.messages  # once per request
    while response.input_requests:  # the run paused for a person
        history.append(ChatMessage("user", [answer(r) for r in response.input_requests]))
        response = await client.get_response(history, options)
        history += response.messages
    return response


def model(messages: list[ChatMessage], options: ChatOptions | None) -> str | list[AIContent]:
    """A stand-in for a real model: calls the tool the user asks for, then reports."""
    last = messages[-1]
    if last.role == "tool":
        return f"Done: {last.contents[0].result}."  # type: ignore[attr-defined]
    tool, args = (
        ("deploy", {"service": "web"})
        if "deploy" in last.text
        else ("delete_file", {"path": "draft.txt"})
    )
    return [FunctionCallContent(f"call_{uuid.uuid4().hex[:8]}", tool, args)]


async def main() -> None:
    # 1. In-process: a pipeline with the tool loop. First added is outermost; retry sits
    #    inside the tool loop, so it never re-runs a tool.
    client = (
        ChatClientBuilder(ScriptedChatClient(model)).use_function_invocation().use_retry().build()
    )
    options = ChatOptions(tools=[delete_file, deploy])
    history: list[ChatMessage] = []
    for text in ("Delete the draft.", "Now deploy."):
        print(f"in-process: {(await ask(client, history, text, options)).text}")

    # 2. Over the wire: host the same agent as an AG-UI endpoint (an ASGI app) ... One
    #    process serves and talks to itself, so a key made now and a store in memory will do.
    app = AGUIServer(
        ScriptedChatClient(model),
        tools=[delete_file, deploy],
        signing_key=secrets.token_hex(32),
        approval_store="memory://",
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/"
    # ... and talk to it (or to any AG-UI agent) through the same ChatClient interface.
    async with AGUIChatClient(url) as remote:
        history = []
        for text in ("Delete the draft.", "Now deploy."):
            print(f"over AG-UI: {(await ask(remote, history, text)).text}")
    server.should_exit = True
    await serving
    print(f"delete_file ran {len(DELETED)} time(s)")
    print(
        "the AG-UI history: "
        + " ".join(f"{m.role}{[type(c).__name__ for c in m.contents]}" for m in history)
    )


if __name__ == "__main__":
    asyncio.run(main())
