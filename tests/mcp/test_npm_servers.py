"""The official npm MCP servers (pinned, installed by mk/mcp.mk): the filesystem server on a
temporary directory with approval="auto" (reads run at once, writes and moves wait for a
person), and the everything server's elicitation answered and declined, through the tool
loop and through AGUIServer + AGUIChatClient over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_support import call, model_saw, npm_server, resume, serving

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.mcp import MCPToolset
from agui_server import agui_server
from agui_streams import scripted
from meai_texts import REJECTED

ELICIT = "trigger-elicitation-request"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "notes.txt").write_text("remember the milk")
    return folder.resolve()


def filesystem(root: Path) -> MCPToolset:
    return MCPToolset(["node", str(npm_server("server-filesystem")), str(root)])


def everything() -> MCPToolset:
    return MCPToolset(["node", str(npm_server("server-everything")), "stdio"])


def _listing(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


async def test_reading_runs_at_once(root: Path) -> None:
    async with filesystem(root) as toolset:
        model = scripted(call("c1", "read_text_file", path=str(root / "notes.txt")), "Milk.")
        response = await FunctionInvokingChatClient(model).get_response(
            "what is in notes.txt?", ChatOptions(tools=toolset.tools)
        )
    assert response.input_requests == []
    assert "remember the milk" in model_saw(model)["c1"]


async def _gated(root: Path, calls: list[FunctionCallContent], approved: bool) -> Any:
    """Run ``calls`` against the filesystem server: check the call waits (nothing changed
    in the folder), answer it, and return the model (to see what it was told)."""
    async with filesystem(root) as toolset:
        model = scripted(calls, "Done.")
        client = FunctionInvokingChatClient(model)
        history = [ChatMessage("user", "change the folder")]
        options = ChatOptions(tools=toolset.tools)
        paused = await client.get_response(history, options)
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == calls[0].name
        assert "secure-filesystem-server" in (request.message or "")
        assert _listing(root) == ["notes.txt"]  # nothing changed while waiting
        await client.get_response(
            resume(history, paused, request.create_response(approved)), options
        )
    return model


@pytest.mark.parametrize("approved", [True, False])
async def test_write_file_waits_for_approval(root: Path, approved: bool) -> None:
    target = root / "new.txt"
    model = await _gated(root, call("c1", "write_file", path=str(target), content="hi"), approved)
    if approved:
        assert target.read_text() == "hi"
        assert _listing(root) == ["new.txt", "notes.txt"]
    else:
        assert _listing(root) == ["notes.txt"]
        assert model_saw(model)["c1"] == REJECTED


@pytest.mark.parametrize("approved", [True, False])
async def test_move_file_waits_for_approval(root: Path, approved: bool) -> None:
    move = call("c1", "move_file", source=str(root / "notes.txt"), destination=str(root / "b"))
    await _gated(root, move, approved)
    assert _listing(root) == (["b"] if approved else ["notes.txt"])


@pytest.mark.parametrize("answered", [True, False])
async def test_the_everything_servers_elicitation_through_the_tool_loop(answered: bool) -> None:
    async with everything() as toolset:
        assert ELICIT in {t.name for t in toolset.tools}
        model = scripted(call("c1", ELICIT), "ok")
        client = FunctionInvokingChatClient(model)
        history = [ChatMessage("user", "ask me")]
        options = ChatOptions(tools=toolset.tools)
        paused = await client.get_response(history, options)
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        assert question.message == "Please provide inputs for the following fields:"
        assert question.response_schema is not None
        assert question.response_schema["required"] == ["name"]
        reply = question.create_response({"name": "Ada"}) if answered else question.cancel()
        await client.get_response(resume(history, paused, reply), options)
    seen = model_saw(model)["c1"]
    assert len(model.calls) == 2
    if answered:
        assert '"action": "accept"' in seen and '"name": "Ada"' in seen
    else:
        assert "declined" in seen and '"action": "decline"' in seen


@pytest.mark.parametrize("answered", [True, False])
async def test_the_everything_servers_elicitation_over_ag_ui(answered: bool) -> None:
    async with everything() as toolset:
        model = scripted(call("c1", ELICIT), "ok")
        app = agui_server(model, tools=toolset.tools).app
        async with (
            serving(app) as url,
            AGUIChatClient(url + "/", timeout=20, max_retries=0) as client,
        ):
            history = [ChatMessage("user", "ask me")]
            paused = await client.get_response(history)
            [question] = paused.input_requests
            assert isinstance(question, InterruptRequestContent)
            assert question.tool_call_id == "c1"
            reply = question.create_response({"name": "Ada"}) if answered else question.cancel()
            history += [*paused.messages, ChatMessage("user", [reply])]
            done = await client.get_response(history)
    assert done.text == "ok"
    seen = model_saw(model)["c1"]
    assert ('"name": "Ada"' in seen) is answered
    assert ('"action": "decline"' in seen) is not answered
