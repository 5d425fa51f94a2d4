"""MEAI parity, issue 16 item 2 and the loop's bookkeeping: ``informational_only`` on the
calls the loop ran, on calls the service answered itself, and skipped when set; two tool
loops stacked run a call once; a tool that changes the tools is heard on the next round
trip (MEAI's ``InformationalOnly_*``, ``ServerHandledFunctionCalls_*`` and
``RespectsChatOptionsToolsModificationsByFunctionTool_*`` tests), streaming and not."""

from __future__ import annotations

from meai_support import Funcs, invoke

from agui_chat import (
    ApprovalRequiredAIFunction,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    TextContent,
    ai_function,
    current_invocation,
)
from agui_chat.testing import ScriptedChatClient

HELLO = ChatMessage("user", "hello")
DONE = ChatMessage("assistant", [TextContent("Done")])


def _calls(response: ChatResponse) -> list[FunctionCallContent]:
    return [c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)]


async def test_a_call_that_ran_is_marked_informational(streaming: bool) -> None:
    f = Funcs()
    response, _ = await invoke(
        ChatOptions(tools=[f.func1]),
        [HELLO],
        [[ChatMessage("assistant", [FunctionCallContent("callId1", "Func1")])], [DONE]],
        streaming=streaming,
    )
    assert [(c.call_id, c.informational_only) for c in _calls(response)] == [("callId1", True)]
    assert f.runs == ["Func1"]


async def test_calls_marked_informational_are_neither_run_nor_gated(streaming: bool) -> None:
    f = Funcs()
    handled = FunctionCallContent("callId1", "Func1", informational_only=True)
    response, inner = await invoke(
        ChatOptions(tools=[ApprovalRequiredAIFunction(f.func1), f.func2]),
        [HELLO],
        [
            [
                ChatMessage(
                    "assistant", [handled, FunctionCallContent("callId2", "Func2", {"i": 1})]
                )
            ],
            [DONE],
        ],
        streaming=streaming,
    )
    assert f.runs == ["Func2(1)"]
    assert response.input_requests == []
    assert len(inner.received) == 2


async def test_a_call_the_service_answered_in_the_same_turn_is_marked_and_not_run(
    streaming: bool,
) -> None:
    f = Funcs()
    turn = [
        ChatMessage(
            "assistant",
            [
                FunctionCallContent("callId1", "Func1"),
                FunctionCallContent("callId2", "Func2", {"i": 2}),
            ],
        ),
        ChatMessage("tool", [FunctionResultContent("callId1", "Server Result")]),
    ]
    response, _ = await invoke(
        ChatOptions(tools=[f.func1, f.func2]), [HELLO], [turn, [DONE]], streaming=streaming
    )
    assert f.runs == ["Func2(2)"]  # only the call the service left for us
    assert all(c.informational_only for c in _calls(response))
    results = {
        c.call_id: c.result
        for m in response.messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }
    assert results == {"callId1": "Server Result", "callId2": "Result 2: 2"}


async def test_two_stacked_loops_run_a_call_once(streaming: bool) -> None:
    runs: list[str] = []

    @ai_function(name="Func1")
    def func1() -> str:
        """Func1."""
        runs.append("Func1")
        return "Result 1"

    replies = [[FunctionCallContent("callId1", "Func1")], "Done"]
    model = ScriptedChatClient(lambda m, o: replies.pop(0))
    outer = FunctionInvokingChatClient(FunctionInvokingChatClient(model))
    options = ChatOptions(tools=[func1])
    if streaming:
        response = ChatResponse.from_updates(
            [u async for u in outer.get_streaming_response("hello", options)]
        )
    else:
        response = await outer.get_response("hello", options)
    assert runs == ["Func1"]
    assert [c.informational_only for c in _calls(response)] == [True]
    assert response.text.endswith("Done")


async def test_a_tool_that_adds_a_tool_is_heard_on_the_next_round_trip(streaming: bool) -> None:
    @ai_function(name="FunctionB")
    def function_b() -> str:
        """B."""
        return "FunctionB result"

    @ai_function(name="FunctionA")
    def function_a() -> str:
        """A."""
        context = current_invocation()
        assert context is not None and context.options is not None
        assert context.options.tools is not None
        context.options.tools.append(function_b)
        return "FunctionA result"

    response, inner = await invoke(
        ChatOptions(tools=[function_a]),
        [HELLO],
        [
            [ChatMessage("assistant", [FunctionCallContent("callId1", "FunctionA")])],
            [ChatMessage("assistant", [FunctionCallContent("callId2", "FunctionB")])],
            [DONE],
        ],
        streaming=streaming,
    )
    results = [
        c.result
        for m in response.messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    ]
    assert results == ["FunctionA result", "FunctionB result"]
    assert len(inner.received) == 3
