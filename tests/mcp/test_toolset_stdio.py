"""MCPToolset over stdio with our own server: listing, the approval policy, calls, results."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from mcp_servers import read_log
from mcp_support import call, model_saw, results, resume, stdio_command

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    DataContent,
    FunctionInvokingChatClient,
    ToolApprovalRequestContent,
    ToolArgumentsError,
    ToolError,
    UriContent,
)
from agui_chat.mcp import MCPApprovalRequired, MCPTool, MCPToolset
from agui_streams import scripted
from meai_texts import rejected


async def test_tools_carry_the_servers_names_descriptions_and_schemas(env: dict[str, str]) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        by_name = {t.name: t for t in toolset.tools}
        assert toolset.server_name == "notes-server"
    assert {"read_note", "delete_note", "greet", "rename", "fail"} <= set(by_name)
    read = by_name["read_note"]
    assert isinstance(read, MCPTool)
    assert read.description == "Read a note."
    assert read.parameters["properties"]["title"]["type"] == "string"
    assert read.parameters["required"] == ["title"]
    assert read.additional_properties["mcp_server"] == "notes-server"


async def test_auto_follows_the_annotations_and_fails_closed(env: dict[str, str]) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        gated = {t.name for t in toolset.tools if isinstance(t, MCPApprovalRequired)}
        free = {t.name for t in toolset.tools if not isinstance(t, MCPApprovalRequired)}
    assert {"delete_note", "archive", "touch_note", "greet"} <= gated  # destructive / unknown
    assert {"read_note", "peek_note", "append_note"} <= free  # read-only / not destructive


async def test_a_read_only_tool_runs_at_once_and_a_destructive_one_waits(
    env: dict[str, str], log: Path
) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted(
            [*call("c1", "read_note", title="a"), *call("c2", "delete_note", title="a")],
            "Read it; deleted it.",
        )
        client = FunctionInvokingChatClient(model)
        history = [ChatMessage("user", "read then delete note a")]
        options = ChatOptions(tools=toolset.tools)
        paused = await client.get_response(history, options)
        assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
        [request] = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert request.tool_call.name == "delete_note"
        assert "notes-server" in (request.message or "")
        assert [n for n, _ in read_log(log)] == ["read_note"]
        assert results(paused.messages)["c1"].result == "note a: hello"

        done = await client.get_response(
            resume(history, paused, request.create_response(True)), options
        )
        assert done.text == "Read it; deleted it."
        assert read_log(log) == [("read_note", {"title": "a"}), ("delete_note", {"title": "a"})]
        assert model_saw(model) == {"c1": "note a: hello", "c2": "deleted a"}


async def test_a_rejected_destructive_call_never_reaches_the_server(
    env: dict[str, str], log: Path
) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted(call("c1", "delete_note", title="a"), "Kept it.")
        client = FunctionInvokingChatClient(model)
        history = [ChatMessage("user", "delete note a")]
        options = ChatOptions(tools=toolset.tools)
        paused = await client.get_response(history, options)
        [request] = paused.input_requests
        await client.get_response(
            resume(history, paused, request.create_response(False, "Keep it.")), options
        )
    assert read_log(log) == []
    assert model_saw(model)["c1"] == rejected("Keep it.")  # given so: the same by either rule


@pytest.mark.parametrize(
    ("approval", "gated"),
    [
        ("always", {"read_note", "delete_note", "archive"}),
        ("never", set()),
        ({"read_note"}, {"read_note"}),
        ({"read_note": "always", "*": "never"}, {"read_note"}),
        ({"archive": "never"}, {"delete_note"}),  # the rest stays "auto"
    ],
)
async def test_connection_and_per_tool_policies(
    env: dict[str, str], approval: object, gated: set[str]
) -> None:
    async with MCPToolset(stdio_command(), env=env, approval=approval) as toolset:  # type: ignore[arg-type]
        names = {t.name for t in toolset.tools if isinstance(t, MCPApprovalRequired)}
    assert names & {"read_note", "delete_note", "archive"} == gated


async def test_a_predicate_sees_the_tool_and_the_validated_arguments(
    env: dict[str, str], log: Path
) -> None:
    seen: list[tuple[str, dict[str, object]]] = []

    def risky(tool: object, arguments: dict[str, object]) -> bool:
        seen.append((tool.name, dict(arguments)))  # type: ignore[attr-defined]
        return arguments.get("days", 30) != 30

    async with MCPToolset(stdio_command(), env=env, approval=risky) as toolset:
        model = scripted(
            [*call("c1", "archive", title="a"), *call("c2", "archive", title="b", days=1)],
            "ok",
        )
        paused = await FunctionInvokingChatClient(model).get_response(
            "archive", ChatOptions(tools=toolset.tools)
        )
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.call_id == "c2"
    assert ("archive", {"title": "a"}) in seen and ("archive", {"title": "b", "days": 1}) in seen
    assert read_log(log) == [("archive", {"title": "a", "days": 30})]


async def test_arguments_are_validated_before_the_call(env: dict[str, str], log: Path) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted(call("c1", "read_note", title=3), "sorry")
        await FunctionInvokingChatClient(model).get_response(
            "read", ChatOptions(tools=toolset.tools)
        )
    text = model_saw(model)["c1"]
    assert "invalid arguments for 'read_note'" in text and "'title'" in text
    assert read_log(log) == []


async def test_arguments_that_are_not_an_object_never_reach_the_server(
    env: dict[str, str], log: Path
) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        [read_note] = [t for t in toolset.tools if t.name == "read_note"]
        with pytest.raises(ToolArgumentsError, match="'read_note' must be a JSON object, got list"):
            await read_note.invoke(["a"])  # type: ignore[arg-type]
    assert read_log(log) == []


async def test_results_map_to_our_contents(env: dict[str, str]) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted([*call("c1", "media"), *call("c2", "stats")], "ok")
        response = await FunctionInvokingChatClient(model).get_response(
            "show", ChatOptions(tools=toolset.tools)
        )
    got = results(response.messages)
    media = got["c1"].result
    assert [type(c).__name__ for c in media] == [
        "TextContent",
        "DataContent",
        "DataContent",
        "UriContent",
    ]
    assert isinstance(media[1], DataContent) and media[1].media_type == "image/png"
    assert isinstance(media[2], DataContent) and media[2].media_type == "audio/wav"
    assert isinstance(media[3], UriContent) and media[3].uri == "file:///notes/a.txt"
    assert got["c2"].additional_properties == {"structured_content": {"notes": 3, "words": 42}}


async def test_an_error_result_reaches_the_model_as_a_failure(env: dict[str, str]) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted(call("c1", "fail", reason="no disk"), "It failed.")
        response = await FunctionInvokingChatClient(model).get_response(
            "go", ChatOptions(tools=toolset.tools)
        )
    result = results(response.messages)["c1"]
    assert isinstance(result.exception, ToolError)
    assert result.result.startswith("Error: ") and "no disk" in result.result


async def test_a_server_that_dies_mid_call_is_a_failure_then_restarted(
    env: dict[str, str], log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        model = scripted(call("c1", "crash"), call("c2", "read_note", title="a"), "Recovered.")
        with caplog.at_level(logging.WARNING, "agui_chat.mcp"):
            response = await FunctionInvokingChatClient(model).get_response(
                "crash, then read", ChatOptions(tools=toolset.tools)
            )
    got = results(response.messages)
    assert got["c1"].result.startswith("Error: the MCP server stopped during the call")
    assert "crashing on purpose" in str(got["c1"].exception)
    assert got["c2"].result == "note a: hello"
    assert [n for n, _ in read_log(log)] == ["crash", "read_note"]


async def test_a_server_that_cannot_start_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="no-such-mcp-server"):
        async with MCPToolset(["no-such-mcp-server", "--x"]):
            pass
    script = tmp_path / "bad.py"
    script.write_text("import sys\nprint('bad config: no token', file=sys.stderr)\nsys.exit(2)\n")
    with pytest.raises(ToolError, match=r"(?s)bad\.py.*bad config: no token"):
        async with MCPToolset(["python3", str(script)]):
            pass


async def test_the_list_is_refreshed_when_the_server_says_it_changed(env: dict[str, str]) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:
        assert "secret" not in {t.name for t in toolset.tools}
        model = scripted(call("c1", "unlock"), "ok")
        await FunctionInvokingChatClient(model).get_response(
            "unlock", ChatOptions(tools=toolset.tools)
        )
        for _ in range(200):
            if "secret" in {t.name for t in toolset.tools}:
                break
            await asyncio.sleep(0.02)
        assert "secret" in {t.name for t in toolset.tools}
