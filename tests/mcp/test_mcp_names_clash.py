"""One name, one tool, against a real MCP server (our hostile ``changing_servers.py`` over
stdio) whose tools claim to be read-only: one is named like a local gated tool, another
(``write.file``) is normalised into a local gated tool's name. Before the registry the MCP
tool silently replaced the local one and ran without approval; now the tool set is refused
when it is built, naming both sources, and neither tool runs."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import read_log
from mcp_support import call, model_saw

from agui_chat import (
    AITool,
    ChatOptions,
    DuplicateToolError,
    FunctionInvokingChatClient,
    ToolError,
    approval_required,
)
from agui_chat.agui import AGUIServer
from agui_chat.mcp import MCPToolset
from agui_server import agui_server
from agui_streams import scripted

SHADOW = Path(__file__).with_name("changing_servers.py")
KEY = b"k" * 32

# (local tool name, the MCP server's name for the tool that takes it)
CLASHES = [("delete_note", "delete_note"), ("write_file", "write.file")]


@pytest.fixture
def toolset(changing_toolset: MCPToolset) -> MCPToolset:
    return changing_toolset


def local_gated(name: str, runs: list[dict[str, Any]]) -> AITool:
    """A local tool that needs approval, counting its runs."""

    def run(**arguments: Any) -> str:
        runs.append(arguments)
        return "local ran"

    def delete_note(title: str) -> str:
        """Delete a note."""
        return run(title=title)

    def write_file(path: str, text: str) -> str:
        """Write a file."""
        return run(path=path, text=text)

    return approval_required({"delete_note": delete_note, "write_file": write_file}[name])


def _names_both(message: str, name: str, mcp_name: str, local_origin: str) -> None:
    assert message.startswith(f"tool {name!r} from "), message
    assert f"MCP tool {mcp_name!r} of server 'shadow-server'" in message, message
    assert f"tool {name!r} from {local_origin}" in message, message
    assert "clashes with" in message


@pytest.mark.parametrize(("name", "mcp_name"), CLASHES)
@pytest.mark.parametrize(
    "given",
    ["toolset in additional_tools", "copy in options.tools"],
)
async def test_the_tool_loop_refuses_an_mcp_tool_named_like_a_local_gated_tool(
    toolset: MCPToolset, log: Path, name: str, mcp_name: str, given: str
) -> None:
    runs: list[dict[str, Any]] = []
    local = local_gated(name, runs)
    model = scripted(call("c1", name, title="a", path="a", text="x"), "done")
    if given == "toolset in additional_tools":
        client = FunctionInvokingChatClient(model, additional_tools=[toolset])
        options = ChatOptions(tools=[local])
    else:
        client = FunctionInvokingChatClient(model)
        options = ChatOptions(tools=[local, *toolset.tools])
    with pytest.raises(DuplicateToolError) as caught:
        await client.get_response("go", options)
    _names_both(str(caught.value), name, mcp_name, "ChatOptions.tools")
    assert caught.value.name == name
    assert isinstance(caught.value, ToolError)
    assert model.calls == []  # the model was never asked
    assert runs == []
    assert read_log(log) == []


@pytest.mark.parametrize(("name", "mcp_name"), CLASHES)
@pytest.mark.parametrize(
    ("build", "local_origin"),
    [
        (lambda m, local, ts: AGUIServer(m, tools=[local, ts]), "AGUIServer(tools=...)"),
        (lambda m, local, ts: AGUIServer(m, tools=[ts, local]), "MCPToolset("),
        (
            lambda m, local, ts: AGUIServer(
                FunctionInvokingChatClient(m, additional_tools=[local]), tools=[ts]
            ),
            "FunctionInvokingChatClient(additional_tools=...)",
        ),
    ],
    ids=["local first", "toolset first", "local in the tool loop"],
)
async def test_the_agui_server_refuses_the_clash_when_it_is_built(
    toolset: MCPToolset,
    log: Path,
    name: str,
    mcp_name: str,
    build: Callable[[Any, AITool, MCPToolset], AGUIServer],
    local_origin: str,
) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted()
    with pytest.raises(DuplicateToolError) as caught:
        build(model, local_gated(name, runs), toolset)
    message = str(caught.value)
    assert f"MCP tool {mcp_name!r} of server 'shadow-server'" in message, message
    assert "MCPToolset(" in message and "AGUIServer(tools=...)" in message, message
    assert local_origin in message
    assert runs == [] and read_log(log) == [] and model.calls == []


async def test_the_same_toolset_given_twice_is_one_set_of_tools(
    toolset: MCPToolset, log: Path
) -> None:
    # The same objects through two sources are not a clash (and run once).
    model = scripted(call("c1", "vanish"), "done")
    client = FunctionInvokingChatClient(model, additional_tools=[toolset])
    server = agui_server(client, tools=[toolset, *toolset.tools], signing_key=KEY).app
    assert server.audience.startswith("tools:")
    response = await client.get_response("go", ChatOptions(tools=toolset.tools))
    assert response.text == "done"
    assert read_log(log) == [("vanish", {})]


async def test_a_server_listing_two_tools_of_one_model_name_does_not_open(
    env: dict[str, str], log: Path
) -> None:
    with pytest.raises(DuplicateToolError) as caught:
        async with MCPToolset([sys.executable, str(SHADOW)], env={**env, "MCP_TWINS": "1"}):
            pass
    assert "lists tools 'write.file' and 'write_file', which are both named 'write_file'" in (
        str(caught.value)
    )
    assert read_log(log) == []


async def test_a_list_change_into_a_clash_leaves_the_toolset_offering_no_tools(
    toolset: MCPToolset, log: Path
) -> None:
    twin = {t.name: t for t in toolset.tools}["twin"]
    await twin.invoke({})
    for _ in range(250):
        if not toolset.tools:
            break
        await asyncio.sleep(0.02)
    assert toolset.tools == []
    model = scripted(call("c1", "delete_note", title="a"), "done")
    client = FunctionInvokingChatClient(model, additional_tools=[toolset])
    assert (await client.get_response("go")).text == "done"
    assert model_saw(model)["c1"] == 'Error: Requested function "delete_note" not found.'
    assert read_log(log) == [("twin", {})]
