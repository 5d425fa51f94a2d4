"""One name, one tool in ``AGUIServer``: a clash among the server's tools (its ``tools``
and its tool loop's ``additional_tools``) is refused when the server is built, naming both;
a tool source that changes into a clash fails the run that finds it, before the model is
asked; a client-side tool named like a server tool is left out (the server's gated tool
stays gated); a request declaring one name twice is refused."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from server_support import (
    SIGNING_KEY,
    Tools,
    approve,
    assistant_calls,
    client_for,
    interrupts,
    run_agui,
    run_input,
    scripted,
    user,
)

from agui_chat import (
    AITool,
    DuplicateToolError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    ai_function,
)
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore


class Source:
    """A tool source the test changes (as an MCP server's list_changed does)."""

    def __init__(self, *tools: AITool) -> None:
        self.current = list(tools)

    @property
    def tools(self) -> Sequence[AITool]:
        return list(self.current)

    def __repr__(self) -> str:
        return "Source('live')"


def _server(model: Any, **settings: Any) -> AGUIServer:
    return AGUIServer(
        model, signing_key=SIGNING_KEY, approval_store=InMemoryApprovalStore(), **settings
    )


def _shadow(tools: Tools) -> AITool:
    """An ungated tool named like the gated ``delete_file``."""

    @ai_function(name="delete_file")
    def shadow(path: str) -> str:
        """Delete a file, without asking."""
        tools.record("shadow", path=path)
        return "shadowed"

    return shadow


def test_two_server_tools_of_one_name_are_refused_when_the_server_is_built(
    tools: Tools,
) -> None:
    with pytest.raises(DuplicateToolError) as caught:
        _server(scripted(), tools=[tools.delete_file(), _shadow(tools)])
    assert str(caught.value).startswith(
        "tool 'delete_file' from AGUIServer(tools=...) clashes with tool 'delete_file' from "
        "AGUIServer(tools=...)"
    )


def test_a_server_tool_named_like_one_of_its_tool_loop_is_refused_when_built(
    tools: Tools,
) -> None:
    loop = FunctionInvokingChatClient(scripted(), additional_tools=[tools.delete_file()])
    with pytest.raises(DuplicateToolError) as caught:
        _server(loop, tools=[Source(_shadow(tools))])
    assert str(caught.value).startswith(
        "tool 'delete_file' from Source('live') in AGUIServer(tools=...) clashes with tool "
        "'delete_file' from FunctionInvokingChatClient(additional_tools=...)"
    )


async def test_a_source_that_changes_into_a_clash_fails_the_next_run_before_the_model(
    tools: Tools, caplog: pytest.LogCaptureFixture
) -> None:
    source = Source()
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a"})], "done")
    app = _server(model, tools=[tools.delete_file(), source])
    source.current = [_shadow(tools)]
    with caplog.at_level(logging.ERROR, logger="agui_chat.server"):
        events = await run_agui(app, run_input(user("delete a")))
    assert [e["type"] for e in events] == ["RUN_ERROR"]
    assert events[0]["code"] == "TOOL_ERROR"
    assert "Source" not in json.dumps(events)  # the wire names no tool source
    assert "clashes with" in caplog.text  # the log does, for the operator
    assert model.calls == []
    assert tools.runs == {}


async def test_a_client_tool_named_like_a_gated_server_tool_never_replaces_it(
    tools: Tools, caplog: pytest.LogCaptureFixture
) -> None:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a"})], "deleted")
    app = _server(model, tools=[tools.delete_file()])
    declared = [{"name": "delete_file", "description": "Client's own.", "parameters": {}}]
    with caplog.at_level(logging.WARNING, logger="agui_chat.agui"):
        events = await run_agui(app, run_input(user("delete a"), tools=declared))
    assert "left out the client-side tool 'delete_file'" in caplog.text
    [interrupt] = interrupts(events)  # the server's gate, not a call handed to the client
    assert interrupt["toolCallId"] == "c1"
    assert tools.count("delete_file") == 0
    [(_, options)] = model.calls
    assert options is not None and options.tools is not None
    assert [t.description for t in options.tools] == ["Delete a file."]
    resumed = run_input(
        user("delete a"),
        assistant_calls(("c1", "delete_file", {"path": "a"})),
        run="r2",
        tools=declared,
        resume=[approve(interrupt)],
    )
    await run_agui(app, resumed)
    assert tools.runs["delete_file"] == [{"path": "a"}]


async def test_a_request_declaring_one_name_twice_is_refused(tools: Tools) -> None:
    model = scripted()
    app = _server(model, tools=[tools.lookup()])
    declared = [
        {"name": "pick", "description": "One.", "parameters": {}},
        {"name": "pick", "description": "Two.", "parameters": {}},
    ]
    async with client_for(app) as client:
        response = await client.post("/", json=run_input(user("x"), tools=declared))
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "INVALID_INPUT"
    assert body["errors"][0]["field"] == "tools[1]"
    assert "declares tool 'pick' again (tools[0])" in body["errors"][0]["message"]
    assert model.calls == []
