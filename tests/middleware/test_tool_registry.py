"""One name, one tool in the tool loop: two different tools of one name, whatever their
sources (``ChatOptions.tools``, ``additional_tools``, a tool source), are refused before the
model is asked, naming both sources; the same tool object given twice is one tool; a tool
source is read again on every round trip, so the gate of a call is the gate of the tool as
it is when the call arrives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from loop_support import Ask, call, scripted, seen

from agui_chat import (
    AIFunction,
    AITool,
    ChatOptions,
    DuplicateToolError,
    FunctionInvokingChatClient,
    ToolApprovalRequestContent,
    ToolSource,
    ai_function,
    approval_required,
)


def counting(name: str, runs: list[str], *, gated: bool) -> AITool:
    def tool(path: str) -> str:
        runs.append(f"{name} {path}")
        return f"{'gated' if gated else 'open'} {path}"

    function = ai_function(tool, name=name, description=f"{name}.")
    return approval_required(function) if gated else function


class Source:
    """A tool source whose tools the test changes (an MCP toolset after list_changed)."""

    def __init__(self, *tools: AITool) -> None:
        self.current: list[Any] = list(tools)

    @property
    def tools(self) -> Sequence[AITool]:
        return list(self.current)

    def __repr__(self) -> str:
        return "Source('test')"


def test_an_mcp_toolset_like_object_is_a_tool_source() -> None:
    assert isinstance(Source(), ToolSource)
    assert not isinstance(object(), ToolSource)


async def test_two_tools_of_one_name_in_options_and_additional_tools_are_refused(
    ask: Ask,
) -> None:
    runs: list[str] = []
    model = scripted([call("c1", "delete_file", path="a")], "done")
    client = FunctionInvokingChatClient(
        model, additional_tools=[counting("delete_file", runs, gated=True)]
    )
    shadow = counting("delete_file", runs, gated=False)
    with pytest.raises(DuplicateToolError) as caught:
        await ask(client, "go", ChatOptions(tools=[shadow]))
    assert str(caught.value) == (
        "tool 'delete_file' from ChatOptions.tools clashes with tool 'delete_file' from "
        "FunctionInvokingChatClient(additional_tools=...): tool names must be unique "
        "(rename one, or leave one out)"
    )
    assert caught.value.name == "delete_file"
    assert model.calls == [] and runs == []


async def test_two_tools_of_one_name_in_options_tools_are_refused(ask: Ask) -> None:
    runs: list[str] = []
    model = scripted([call("c1", "delete_file", path="a")], "done")
    tools = [counting("delete_file", runs, gated=True), counting("delete_file", runs, gated=False)]
    with pytest.raises(DuplicateToolError, match=r"from ChatOptions\.tools clashes with tool"):
        await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=tools))
    assert model.calls == [] and runs == []


def test_a_clash_with_an_mcp_tool_names_its_mcp_tool_and_server() -> None:
    """A tool an MCP server gave (its MCP name and server recorded by the mcp adapter)
    clashing with a local one: the refusal names the MCP tool and server, so the operator
    knows which server to rename it on; the local tool's description stays plain."""
    runs: list[str] = []

    def remote(path: str) -> str:
        runs.append(f"remote {path}")
        return path

    mcp = AIFunction(
        remote,
        name="delete_file",
        additional_properties={"mcp_tool": "rm", "mcp_server": "files-server"},
    )
    with pytest.raises(DuplicateToolError) as caught:
        FunctionInvokingChatClient(
            scripted(), additional_tools=[counting("delete_file", runs, gated=True), Source(mcp)]
        )
    assert str(caught.value) == (
        "tool 'delete_file' from Source('test') in "
        "FunctionInvokingChatClient(additional_tools=...) (MCP tool 'rm' of server "
        "'files-server') clashes with tool 'delete_file' from "
        "FunctionInvokingChatClient(additional_tools=...): tool names must be unique "
        "(rename one, or leave one out)"
    )
    assert runs == []


def test_two_tools_of_one_name_in_additional_tools_are_refused_when_built() -> None:
    runs: list[str] = []
    with pytest.raises(DuplicateToolError, match=r"^tool 'delete_file' from Source"):
        FunctionInvokingChatClient(
            scripted(),
            additional_tools=[
                counting("delete_file", runs, gated=True),
                Source(counting("delete_file", runs, gated=False)),
            ],
        )


async def test_the_same_tool_in_options_and_additional_tools_runs_once(ask: Ask) -> None:
    runs: list[str] = []
    tool = counting("delete_file", runs, gated=True)
    model = scripted([call("c1", "delete_file", path="a")], "done")
    client = FunctionInvokingChatClient(model, additional_tools=[tool, Source(tool)])
    paused = await ask(client, "go", ChatOptions(tools=[tool, tool]))
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)  # the gate held
    assert runs == []
    [(_, options)] = model.calls
    assert options is not None and options.tools == [tool, tool]


async def test_a_tool_source_is_read_again_on_every_round_trip(ask: Ask) -> None:
    # The first call runs the open tool, which swaps the source to a gated tool of the same
    # name (what an MCP server's list_changed does): the second call waits for approval.
    runs: list[str] = []
    gated = counting("sweep", runs, gated=True)
    source = Source()

    def open_sweep(path: str) -> str:
        runs.append(f"sweep {path}")
        source.current = [gated]
        return f"open {path}"

    source.current = [ai_function(open_sweep, name="sweep", description="Sweep.")]
    model = scripted([call("c1", "sweep", path="a")], [call("c2", "sweep", path="b")], "done")
    client = FunctionInvokingChatClient(model, additional_tools=[source])
    paused = await ask(client, "go")
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.call_id == "c2"
    assert runs == ["sweep a"]
    assert "tool: result c1 open a" in seen(model)


async def test_a_tool_a_source_dropped_is_not_found(ask: Ask) -> None:
    runs: list[str] = []
    source = Source(counting("vanish", runs, gated=False))
    model = scripted([call("c1", "vanish", path="a")], "done")
    client = FunctionInvokingChatClient(model, additional_tools=[source])
    source.current = []
    response = await ask(client, "go")
    assert response.text == "done"
    assert runs == []
    assert seen(model)[-1] == 'tool: result c1 Error: Requested function "vanish" not found.'


async def test_a_source_that_gives_something_else_than_tools_is_refused(ask: Ask) -> None:
    source = Source()
    client = FunctionInvokingChatClient(scripted("done"), additional_tools=[source])
    source.current = ["not a tool"]
    with pytest.raises(TypeError, match=r"^the tool source Source\('test'\) in .* gave a str"):
        await ask(client, "go")
