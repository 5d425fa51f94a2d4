"""MEAI parity, issue 16 item 9: calls the service runs itself (a remote MCP server behind the
model). The loop never runs them, passes their approval requests and answers through to the
service untouched, and mixes them with its own approvals (MEAI's
``*_MixedWithMcpApprovalAsync`` tests), streaming and not; the contents round-trip."""

from __future__ import annotations

import json

import pytest
from meai_support import Funcs, invoke, shape

from agui_chat import (
    AIContent,
    ApprovalRequiredAIFunction,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    HostedMcpServerTool,
    McpServerToolCallContent,
    McpServerToolResultContent,
    TextContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from meai_texts import REJECTED

HELLO = ChatMessage("user", "hello")


def mcp_call() -> McpServerToolCallContent:
    return McpServerToolCallContent("callId2", "McpCall", "myServer")


def mcp_result() -> McpServerToolResultContent:
    return McpServerToolResultContent("callId2", [TextContent("Result 2")])


def msg(role: str, *contents: AIContent, message_id: str | None = None) -> ChatMessage:
    return ChatMessage(role, list(contents), message_id=message_id)


def setup(additional: bool) -> tuple[Funcs, ChatOptions | None, list[object]]:
    f = Funcs()
    tools = [ApprovalRequiredAIFunction(f.func1), HostedMcpServerTool("myServer", "https://x/mcp")]
    return f, (None if additional else ChatOptions(tools=list(tools))), tools  # type: ignore[arg-type]


@pytest.mark.parametrize("additional", [False, True], ids=["options", "additional_tools"])
async def test_a_gated_call_becomes_a_request_beside_the_services_mcp_request(
    streaming: bool, additional: bool
) -> None:
    f, options, tools = setup(additional)
    # Func1 under MEAI's name "Func".
    output = [
        msg(
            "assistant",
            FunctionCallContent("callId1", "Func1"),
            ToolApprovalRequestContent("callId2", mcp_call()),
        )
    ]
    response, _ = await invoke(
        options,
        [HELLO],
        [output],
        streaming=streaming,
        additional_tools=tools if additional else (),  # type: ignore[arg-type]
    )
    expected = msg(
        "assistant",
        ToolApprovalRequestContent("approval_callId1", FunctionCallContent("callId1", "Func1")),
        ToolApprovalRequestContent("callId2", mcp_call()),
    )
    assert shape(response.messages) == shape([expected])
    assert [r.request_id for r in response.input_requests] == ["approval_callId1", "callId2"]
    assert f.runs == []


@pytest.mark.parametrize("additional", [False, True], ids=["options", "additional_tools"])
@pytest.mark.parametrize(
    ("approve_func", "approve_mcp"), [(True, True), (True, False), (False, True)]
)
async def test_our_answers_are_handled_and_the_services_pass_through(
    streaming: bool, additional: bool, approve_func: bool, approve_mcp: bool
) -> None:
    f, options, tools = setup(additional)
    history = [
        HELLO,
        msg(
            "assistant",
            ToolApprovalRequestContent("ficc_callId1", FunctionCallContent("callId1", "Func1")),
            ToolApprovalRequestContent("callId2", mcp_call()),
            message_id="resp1",
        ),
        msg(
            "user",
            ToolApprovalResponseContent(
                "ficc_callId1", approve_func, FunctionCallContent("callId1", "Func1")
            ),
            ToolApprovalResponseContent("callId2", approve_mcp, mcp_call()),
        ),
    ]
    ours = (
        FunctionResultContent("callId1", "Result 1")
        if approve_func
        else FunctionResultContent("callId1", REJECTED)
    )
    expected_input = [
        HELLO,
        msg("assistant", ToolApprovalRequestContent("callId2", mcp_call())),
        msg("assistant", FunctionCallContent("callId1", "Func1")),
        msg("tool", ours),
        msg("user", ToolApprovalResponseContent("callId2", approve_mcp, mcp_call())),
    ]
    answer = msg("assistant", TextContent("world"), *([mcp_result()] if approve_mcp else []))
    response, inner = await invoke(
        options,
        history,
        [[answer]],
        streaming=streaming,
        expected_inputs=[expected_input],
        additional_tools=tools if additional else (),  # type: ignore[arg-type]
    )
    assert shape(response.messages) == shape(
        [msg("assistant", FunctionCallContent("callId1", "Func1")), msg("tool", ours), answer]
    )
    assert f.runs == (["Func1"] if approve_func else [])
    # Untouched: the service's answer reaches it as the person gave it.
    [sent] = [
        c
        for m in inner.received[0]
        for c in m.contents
        if isinstance(c, ToolApprovalResponseContent)
    ]
    assert isinstance(sent.tool_call, McpServerToolCallContent)
    assert sent.approved is approve_mcp and not getattr(sent.tool_call, "informational_only", False)


async def test_calls_the_service_ran_are_never_run_and_end_the_turn(streaming: bool) -> None:
    f, options, _ = setup(False)
    answer = msg("assistant", mcp_call(), mcp_result(), TextContent("It said Result 2."))
    response, inner = await invoke(options, [HELLO], [[answer]], streaming=streaming)
    assert shape(response.messages) == shape([answer])
    assert len(inner.received) == 1 and f.runs == []


async def test_an_mcp_answer_without_its_request_is_passed_through_not_refused(
    streaming: bool,
) -> None:
    """Rule 2 (an answer with no request runs nothing) is about our calls; the service's
    answers are the service's business (with a service thread it holds the request)."""
    f, options, _ = setup(False)
    assert options is not None
    options.conversation_id = "conv"
    answer_msg = msg("user", ToolApprovalResponseContent("callId2", True, mcp_call()))
    response, _ = await invoke(
        options,
        [answer_msg],
        [[msg("assistant", mcp_result(), TextContent("world"))]],
        streaming=streaming,
        expected_inputs=[[answer_msg]],
    )
    assert response.text == "world" and f.runs == []


def test_the_hosted_contents_round_trip_losslessly() -> None:
    for content in [
        McpServerToolCallContent("m1", "search", "docs", arguments={"q": "x", "n": [1, 2.5, None]}),
        McpServerToolCallContent("m2", "ping"),
        McpServerToolResultContent("m1", [TextContent("a"), McpServerToolResultContent("inner")]),
        McpServerToolResultContent("m3"),
        ToolApprovalRequestContent("m1", mcp_call(), requires_confirmation=False),
        ToolApprovalResponseContent("m1", True, mcp_call(), reason="fine"),
    ]:
        loaded = AIContent.from_dict(json.loads(json.dumps(content.to_dict())))
        assert type(loaded) is type(content) and loaded == content
        assert loaded.to_dict() == content.to_dict()
    request = ToolApprovalRequestContent("m1", mcp_call())
    response = request.create_response(False, "no")
    assert isinstance(response.tool_call, McpServerToolCallContent)


def test_hosted_contents_check_their_fields() -> None:
    with pytest.raises(ValueError):
        McpServerToolCallContent(" ", "x")
    with pytest.raises(TypeError):
        McpServerToolResultContent("c", "not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        McpServerToolResultContent("c", ["text"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        ToolApprovalRequestContent("r", TextContent("x"))  # type: ignore[arg-type]
    assert HostedMcpServerTool("s", "https://x/mcp").name == "mcp"
