"""``AGUIServer(tools=[toolset])`` holds the MCP toolset, not a copy of its tools: after the
server's ``tools/list_changed`` a tool that became destructive waits for approval on its
next call, and a tool the server removed is "not found" for the model. A client-side tool a
request declares with a server tool's name never replaces it. The MCP server is real (our
hostile ``changing_servers.py`` over stdio); the AG-UI side goes over real HTTP or through
the ASGI app."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_servers import read_log
from mcp_support import call, model_saw, serving, until_hardened

from agui_chat import ChatMessage, ChatResponse, ToolApprovalRequestContent
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.mcp import MCPToolset
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import approve, run_input, scripted, sse_events, user

SHADOW = Path(__file__).with_name("changing_servers.py")
KEY = b"k" * 32
NOT_FOUND = 'Error: Requested function "vanish" not found.'


@pytest.fixture
def toolset(changing_toolset: MCPToolset) -> MCPToolset:
    return changing_toolset


def _served(toolset: MCPToolset, model: ScriptedChatClient) -> AGUIServer:
    return agui_server(model, tools=[toolset], signing_key=KEY).app


def _effects(log: Path, name: str) -> list[dict[str, Any]]:
    return [arguments for tool, arguments in read_log(log) if tool == name]


async def test_a_tool_that_became_destructive_waits_and_a_removed_one_is_not_found(
    toolset: MCPToolset, log: Path
) -> None:
    model = scripted(
        call("c0", "sweep", where="a"),  # run 1: read-only, runs at once
        "swept a",
        call("c1", "harden"),  # run 2: the server changes its list
        "hardened",
        call("c2", "sweep", where="b"),  # run 3: now destructive, so it waits
        "swept b",
        call("c3", "vanish"),  # run 4: gone
        "it is gone",
    )
    app = _served(toolset, model)
    async with serving(app) as url, AGUIChatClient(url + "/", timeout=20, max_retries=0) as client:
        history: list[ChatMessage] = [ChatMessage("user", "sweep a")]

        async def send(*answers: Any) -> ChatResponse:
            if answers:
                history.append(ChatMessage("user", list(answers)))
            response = await client.get_response(history)
            history.extend(response.messages)
            return response

        first = await send()
        assert first.input_requests == [] and first.text == "swept a"
        assert _effects(log, "sweep") == [{"where": "a"}]

        history.append(ChatMessage("user", "harden"))
        assert (await send()).text == "hardened"
        await until_hardened(toolset)

        history.append(ChatMessage("user", "sweep b"))
        paused = await send()
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == "sweep"
        assert request.tool_call.arguments == {"where": "b"}
        assert _effects(log, "sweep") == [{"where": "a"}]  # b waits for the person
        done = await send(request.create_response(True))
        assert done.text == "swept b"
        assert _effects(log, "sweep") == [{"where": "a"}, {"where": "b"}]
        assert model_saw(model)["c2"] == "swept b"

        history.append(ChatMessage("user", "vanish"))
        assert (await send()).text == "it is gone"
    assert model_saw(model)["c3"] == NOT_FOUND
    assert _effects(log, "vanish") == []
    _, options = model.calls[-1]
    assert options is not None and options.tools is not None
    assert "vanish" not in {t.name for t in options.tools}  # no longer offered either


async def _post(app: AGUIServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        response = await http.post("/", json=body)
    assert response.status_code == 200, response.text
    return sse_events(response.content)


async def test_a_client_tool_named_like_a_server_tool_never_replaces_it(
    toolset: MCPToolset, log: Path
) -> None:
    # After harden, the server's sweep is gated. A request declares its own "sweep"
    # (client-side, with a different description): were it to replace the server's, the
    # call would be handed to the client, ungated.
    harden = {t.name: t for t in toolset.tools}["harden"]
    await harden.invoke({})
    await until_hardened(toolset)
    model = scripted(call("c1", "sweep", where="all"), "swept all")
    app = _served(toolset, model)
    declared = {"name": "sweep", "description": "Client's own sweep.", "parameters": {}}
    body = run_input(user("sweep all"), tools=[declared])
    events = await _post(app, body)
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED", events
    [interrupt] = finished["outcome"]["interrupts"]
    assert interrupt["toolCallId"] == "c1"
    assert _effects(log, "sweep") == []
    _, options = model.calls[0]
    assert options is not None and options.tools is not None
    [offered] = [t for t in options.tools if t.name == "sweep"]
    assert offered.description != "Client's own sweep."  # the model saw the server's tool
    resumed = run_input(
        user("sweep all"),
        *_assistant_call("c1", "sweep", '{"where": "all"}'),
        run="r2",
        tools=[declared],
        resume=[approve(interrupt)],
    )
    events = await _post(app, resumed)
    assert events[-1]["type"] == "RUN_FINISHED", events
    assert _effects(log, "sweep") == [{"where": "all"}]  # once, on the server, approved


def _assistant_call(call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    return [
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            ],
        }
    ]


async def test_the_audience_is_fixed_when_the_server_is_built(toolset: MCPToolset) -> None:
    # A source that changes later does not change the audience: tokens issued a moment
    # before the change stay valid.
    app = _served(toolset, scripted())
    before = app.audience
    assert "vanish" in before
    harden = {t.name: t for t in toolset.tools}["harden"]
    await harden.invoke({})
    await until_hardened(toolset)
    assert app.audience == before


# -- agui-chat serve --mcp ------------------------------------------------------------------


@pytest.fixture
def serve_mcp(log: Path) -> Iterator[str]:
    """``agui-chat serve --app changing_app:model --mcp 'python changing_servers.py LOG'``
    as a child process on 127.0.0.1; yields its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGUI_CHAT_"))}
    target = f"{sys.executable} {SHADOW} {log}"
    command = [sys.executable, "-m", "agui_chat", "serve", "--port", str(port)]
    child = subprocess.Popen(
        [*command, "--app", "changing_app:model", "--mcp", target],
        cwd=Path(__file__).parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


async def test_serve_mcp_holds_the_toolset_and_gates_a_tool_that_became_destructive(
    serve_mcp: str, log: Path
) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            try:
                await http.get(serve_mcp, timeout=1)
                break
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    async with AGUIChatClient(serve_mcp, timeout=30, max_retries=0) as client:

        async def say(text: str) -> ChatResponse:
            return await client.get_response([ChatMessage("user", text)])

        assert (await say("gated?")).text == "no"
        assert (await say("harden")).text == "The tool said: hardened"
        for _ in range(250):
            if (await say("gated?")).text == "yes":
                break
            await asyncio.sleep(0.02)
        history = [ChatMessage("user", "b")]
        paused = await client.get_response(history)
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == "sweep"
        assert _effects(log, "sweep") == []
        history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
        done = await client.get_response(history)
    assert done.text == "The tool said: swept b"
    assert _effects(log, "sweep") == [{"where": "b"}]
