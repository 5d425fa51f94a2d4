"""MCP tools hosted by AGUIServer, driven by AGUIChatClient over real HTTP: a destructive call
approved and rejected, an elicitation answered, declined and asked twice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import read_log
from mcp_support import call, model_saw, serving, stdio_command

from agui_chat import (
    ChatMessage,
    ChatResponse,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.mcp import MCPToolset
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import scripted
from meai_texts import REJECTED


class Chat:
    """A caller's chat loop over AG-UI: the history grows with every response."""

    def __init__(self, client: AGUIChatClient, text: str) -> None:
        self.client = client
        self.history = [ChatMessage("user", text)]

    async def send(self) -> ChatResponse:
        response = await self.client.get_response(self.history)
        self.history += response.messages
        return response

    async def answer(self, *answers: Any) -> ChatResponse:
        self.history.append(ChatMessage("user", list(answers)))
        return await self.send()


@pytest.fixture
async def toolset(env: dict[str, str]) -> AsyncIterator[MCPToolset]:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        yield toolset


def _served(toolset: MCPToolset, model: ScriptedChatClient) -> AGUIServer:
    return agui_server(model, tools=toolset.tools).app


async def test_a_destructive_mcp_call_waits_for_approval_over_ag_ui(
    toolset: MCPToolset, log: Path
) -> None:
    model = scripted(call("c1", "delete_note", title="a"), "Deleted.")
    app = _served(toolset, model)
    async with serving(app) as url, AGUIChatClient(url + "/", timeout=20, max_retries=0) as client:
        chat = Chat(client, "delete note a")
        paused = await chat.send()
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == "delete_note"
        assert "notes-server" in (request.message or "")
        assert read_log(log) == []
        done = await chat.answer(request.create_response(True))
    assert done.text == "Deleted."
    assert read_log(log) == [("delete_note", {"title": "a"})]
    assert model_saw(model)["c1"] == "deleted a"


async def test_a_rejected_mcp_call_never_runs_over_ag_ui(toolset: MCPToolset, log: Path) -> None:
    model = scripted(call("c1", "delete_note", title="a"), "Kept.")
    app = _served(toolset, model)
    async with serving(app) as url, AGUIChatClient(url + "/", timeout=20, max_retries=0) as client:
        chat = Chat(client, "delete note a")
        [request] = (await chat.send()).input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        await chat.answer(request.create_response(False))
    assert read_log(log) == []
    assert model_saw(model)["c1"] == REJECTED


@pytest.mark.parametrize("answered", [True, False])
async def test_an_elicitation_is_a_question_over_ag_ui(
    env: dict[str, str], log: Path, answered: bool
) -> None:
    model = scripted(call("c1", "greet"), "Done.")
    async with MCPToolset(stdio_command(), env=env, approval="never") as toolset:
        app = _served(toolset, model)
        async with (
            serving(app) as url,
            AGUIChatClient(url + "/", timeout=20, max_retries=0) as client,
        ):
            chat = Chat(client, "greet me")
            [question] = (await chat.send()).input_requests
            assert isinstance(question, InterruptRequestContent)
            assert question.message == "What is your name?"
            assert question.tool_call_id == "c1"
            assert question.response_schema is not None
            assert question.response_schema["required"] == ["name"]
            reply = question.create_response({"name": "Ada"}) if answered else question.cancel()
            done = await chat.answer(reply)
    assert done.text == "Done."
    if answered:
        assert model_saw(model)["c1"] == "Hello, Ada!"
        assert ("greet", {"name": "Ada"}) in read_log(log)
    else:
        assert model_saw(model)["c1"] == "no greeting (decline)"
        assert "greet" not in [n for n, _ in read_log(log)]


async def test_two_elicitations_of_one_call_over_ag_ui(toolset: MCPToolset, log: Path) -> None:
    model = scripted(call("c1", "rename", old="a"), "Renamed.")
    app = _served(toolset, model)
    async with serving(app) as url, AGUIChatClient(url + "/", timeout=20, max_retries=0) as client:
        chat = Chat(client, "rename a")
        [q1] = (await chat.send()).input_requests
        assert isinstance(q1, InterruptRequestContent)
        [q2] = (await chat.answer(q1.create_response({"name": "b"}))).input_requests
        assert isinstance(q2, InterruptRequestContent)
        assert q2.message == "Rename a to b?"
        done = await chat.answer(q2.create_response({"confirm": True}))
    assert done.text == "Renamed."
    assert read_log(log) == [("rename", {"old": "a", "new": "b"})]
