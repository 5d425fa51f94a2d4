"""An MCP server's elicitation is answered only by the answer to that very question (issue
24 item 4): on the resumed call the server asks again, and if its message or requested
schema differs from the question the person answered, it is a new question, asked again;
the old answer never reaches the server, and the tool's side effect does not happen.

The server is a real one built with the ``mcp`` SDK, served over streamable HTTP in this
process, so the test can change what it asks between the pause and the resume."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp_support import call, model_saw, resume, serving

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionInvokingChatClient,
    InterruptRequestContent,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.mcp import MCPToolset
from agui_server import agui_server
from agui_streams import scripted

pytest.importorskip("mcp")

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel


class Confirm(BaseModel):
    confirm: bool


class Sure(BaseModel):
    sure: bool


class Remover:
    """A real MCP server with one tool, ``remove``, that elicits ``self.message`` with the
    schema of ``self.schema`` before removing a note; ``removed`` is its side effect."""

    def __init__(self) -> None:
        self.message = "Remove note a?"
        self.schema: type[BaseModel] = Confirm
        self.removed: list[tuple[str, dict[str, Any]]] = []
        self.app = MCPServer("remover")

        @self.app.tool()
        async def remove(ctx: Context) -> str:
            """Remove a note once the person confirms."""
            asked = self.message
            answer = await ctx.elicit(asked, self.schema)
            if answer.action != "accept":
                return f"kept ({answer.action})"
            self.removed.append((asked, answer.data.model_dump()))
            return f"removed after {asked!r}"


@pytest.fixture
async def remover() -> AsyncIterator[tuple[Remover, MCPToolset]]:
    server = Remover()
    async with (
        serving(server.app.streamable_http_app()) as base,
        MCPToolset(url=base + "/mcp", approval="never") as toolset,
    ):
        yield server, toolset


def _question(response: ChatResponse) -> InterruptRequestContent:
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [question] = response.input_requests
    assert isinstance(question, InterruptRequestContent)
    return question


async def _paused(toolset: MCPToolset) -> tuple[Any, Any, list[ChatMessage], Any, ChatResponse]:
    model = scripted(call("c1", "remove"), "Done.")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "remove note a")]
    options = ChatOptions(tools=toolset.tools)
    return model, client, history, options, await client.get_response(history, options)


async def test_an_elicitation_with_another_message_on_the_resumed_call_is_asked_again(
    remover: tuple[Remover, MCPToolset],
) -> None:
    server, toolset = remover
    model, client, history, options, paused = await _paused(toolset)
    first = _question(paused)
    assert first.message == "Remove note a?"

    server.message = "Remove note b?"  # the server asks something else on the resumed call
    history = resume(history, paused, first.create_response({"confirm": True}))
    again = await client.get_response(history, options)

    second = _question(again)
    assert second.message == "Remove note b?"
    assert server.removed == []  # the answer about a never reached the server
    assert len(model.calls) == 1

    done = await client.get_response(
        resume(history, again, second.create_response({"confirm": True})), options
    )
    assert done.text == "Done."
    assert server.removed == [("Remove note b?", {"confirm": True})]
    assert model_saw(model)["c1"] == "removed after 'Remove note b?'"


async def test_an_elicitation_with_another_schema_on_the_resumed_call_is_asked_again(
    remover: tuple[Remover, MCPToolset],
) -> None:
    server, toolset = remover
    model, client, history, options, paused = await _paused(toolset)
    first = _question(paused)
    assert first.response_schema is not None and "confirm" in first.response_schema["properties"]

    server.schema = Sure  # same words, another requested schema
    again = await client.get_response(
        resume(history, paused, first.create_response({"confirm": True})), options
    )

    second = _question(again)
    assert second.message == "Remove note a?"
    assert second.response_schema is not None and "sure" in second.response_schema["properties"]
    assert server.removed == []
    assert len(model.calls) == 1


async def test_the_same_elicitation_gets_its_answer_and_the_tool_runs_once(
    remover: tuple[Remover, MCPToolset],
) -> None:
    server, toolset = remover
    model, client, history, options, paused = await _paused(toolset)
    first = _question(paused)

    done = await client.get_response(
        resume(history, paused, first.create_response({"confirm": True})), options
    )

    assert done.text == "Done."
    assert server.removed == [("Remove note a?", {"confirm": True})]
    assert model_saw(model)["c1"] == "removed after 'Remove note a?'"


@pytest.mark.parametrize("change", ["message", "schema"])
async def test_an_elicitation_that_changed_is_asked_again_over_ag_ui(
    remover: tuple[Remover, MCPToolset], change: str
) -> None:
    server, toolset = remover
    model = scripted(call("c1", "remove"), "Done.")
    app = agui_server(model, tools=toolset.tools).app
    async with serving(app) as url, AGUIChatClient(url + "/", timeout=20, max_retries=0) as agui:
        history = [ChatMessage("user", "remove note a")]
        paused = await agui.get_response(history)
        first = _question(paused)
        assert first.message == "Remove note a?"

        if change == "message":
            server.message = "Remove note b?"
        else:
            server.schema = Sure
        history = resume(history, paused, first.create_response({"confirm": True}))
        again = await agui.get_response(history)
        second = _question(again)
        assert (second.message, second.response_schema) != (first.message, first.response_schema)
        assert server.removed == []  # the first answer never reached the server

        reply = {"confirm": False} if change == "message" else {"sure": False}
        done = await agui.get_response(resume(history, again, second.create_response(reply)))
    assert done.text == "Done."
    assert server.removed == [(server.message, reply)]
    assert model_saw(model)["c1"] == f"removed after {server.message!r}"
