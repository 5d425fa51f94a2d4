"""A server's elicitation as a question for the person, through the tool loop, over stdio
and streamable HTTP: answered, declined, asked twice, and a payload that fails the schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_servers import read_log
from mcp_support import call, model_saw, resume, stdio_command

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionInvokingChatClient,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
)
from agui_chat.mcp import MCPToolset
from agui_streams import scripted


@pytest.fixture(params=["stdio", "http"])
def toolset(request: pytest.FixtureRequest, env: dict[str, str]) -> MCPToolset:
    if request.param == "stdio":
        return MCPToolset(stdio_command(), env=env, approval="never")
    return MCPToolset(url=request.getfixturevalue("http_url"), approval="never")


async def _ask(toolset: MCPToolset, model_replies: list[object], text: str = "greet me"):  # type: ignore[no-untyped-def]
    model = scripted(*model_replies)
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", text)]
    options = ChatOptions(tools=toolset.tools)
    paused = await client.get_response(history, options)
    return model, client, history, options, paused


async def test_an_elicitation_pauses_and_the_answer_reaches_the_server(
    toolset: MCPToolset, log: Path
) -> None:
    async with toolset:
        model, client, history, options, paused = await _ask(
            toolset, [call("c1", "greet"), "Greeted."]
        )
        assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        assert question.message == "What is your name?"
        assert question.reason == "input_required"
        assert question.tool_call_id == "c1"
        assert question.response_schema is not None
        assert question.response_schema["properties"]["name"]["type"] == "string"
        assert [n for n, _ in read_log(log)] == ["greet.before"]  # stopped at the question

        done = await client.get_response(
            resume(history, paused, question.create_response({"name": "Ada"})), options
        )
    assert done.text == "Greeted."
    assert model_saw(model)["c1"] == "Hello, Ada!"
    # The work before the question is done again on the resumed call (documented caveat).
    assert [n for n, _ in read_log(log)] == ["greet.before", "greet.before", "greet"]


async def test_a_cancelled_answer_declines(toolset: MCPToolset, log: Path) -> None:
    async with toolset:
        model, client, history, options, paused = await _ask(toolset, [call("c1", "greet"), "ok"])
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        await client.get_response(resume(history, paused, question.cancel()), options)
    assert model_saw(model)["c1"] == "no greeting (decline)"
    assert ("greet.refused", {"action": "decline"}) in read_log(log)
    assert "greet" not in [n for n, _ in read_log(log)]


async def test_on_cancelled_cancel_tells_the_server_cancel(env: dict[str, str], log: Path) -> None:
    async with MCPToolset(
        stdio_command(), env=env, approval="never", on_cancelled="cancel"
    ) as toolset:
        model, client, history, options, paused = await _ask(toolset, [call("c1", "greet"), "ok"])
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        await client.get_response(resume(history, paused, question.cancel()), options)
    assert model_saw(model)["c1"] == "no greeting (cancel)"


async def test_a_tool_that_elicits_twice_asks_each_question_in_turn(
    toolset: MCPToolset, log: Path
) -> None:
    async with toolset:
        model, client, history, options, first = await _ask(
            toolset, [call("c1", "rename", old="a"), "Renamed."], "rename a"
        )
        [q1] = first.input_requests
        assert isinstance(q1, InterruptRequestContent)
        assert q1.message == "New name for a?"
        history = resume(history, first, q1.create_response({"name": "b"}))
        second = await client.get_response(history, options)
        assert second.finish_reason == ChatFinishReason.INPUT_REQUIRED
        [q2] = second.input_requests
        assert isinstance(q2, InterruptRequestContent)
        assert q2.message == "Rename a to b?"
        assert q2.request_id != q1.request_id
        assert read_log(log) == []
        done = await client.get_response(
            resume(history, second, q2.create_response({"confirm": True})), options
        )
    assert done.text == "Renamed."
    assert model_saw(model)["c1"] == "renamed a to b"
    assert read_log(log) == [("rename", {"old": "a", "new": "b"})]


async def test_a_payload_failing_the_requested_schema_is_refused_before_anything_runs(
    toolset: MCPToolset, log: Path
) -> None:
    async with toolset:
        model, client, history, options, paused = await _ask(
            toolset, [call("c1", "greet"), "never"]
        )
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        with pytest.raises(InvalidResponseError):
            question.create_response({"name": 7})
        forged = InterruptResponseContent(question.request_id, {"name": 7})
        with pytest.raises(InvalidResponseError):
            await client.get_response(resume(history, paused, forged), options)
    assert [n for n, _ in read_log(log)] == ["greet.before"]  # the resume ran nothing
    assert len(model.calls) == 1


async def test_a_gated_tool_that_elicits_asks_for_approval_first(
    env: dict[str, str], log: Path
) -> None:
    async with MCPToolset(stdio_command(), env=env) as toolset:  # greet has no annotations
        model, client, history, options, paused = await _ask(
            toolset, [call("c1", "greet"), "Greeted."]
        )
        [approval] = paused.input_requests
        assert isinstance(approval, ToolApprovalRequestContent)
        assert read_log(log) == []
        history = resume(history, paused, approval.create_response(True))
        asked = await client.get_response(history, options)
        [question] = asked.input_requests
        assert isinstance(question, InterruptRequestContent)
        await client.get_response(
            resume(history, asked, question.create_response({"name": "Bo"})), options
        )
    assert model_saw(model)["c1"] == "Hello, Bo!"
    assert ("greet", {"name": "Bo"}) in read_log(log)


async def test_a_session_of_your_own_with_our_elicitation_callback(log: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from agui_chat.mcp import elicitation_callback

    server = StdioServerParameters(
        command=stdio_command()[0], args=[*stdio_command()[1:], str(log)]
    )
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation_callback) as session,
        MCPToolset(session=session, approval="never") as toolset,
    ):
        model, client, history, options, paused = await _ask(toolset, [call("c1", "greet"), "ok"])
        [question] = paused.input_requests
        assert isinstance(question, InterruptRequestContent)
        await client.get_response(
            resume(history, paused, question.create_response({"name": "Cy"})), options
        )
    assert model_saw(model)["c1"] == "Hello, Cy!"
