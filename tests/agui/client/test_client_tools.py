"""Client-side tools: the caller's own functions, run locally and answered in a new run."""

from __future__ import annotations

from typing import Any

import pytest
from agui_client_support import Agent, run, text, tool_call, tool_result

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionInvokingChatClient,
    ToolApprovalRequestContent,
    UnansweredRequestError,
    ai_function,
    approval_required,
)

USER = ChatMessage("user", "what time is it?", message_id="u1")


class Clock:
    """A client-side tool that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

        @ai_function
        def now(zone: str) -> str:
            """The current time in a time zone."""
            self.calls.append(zone)
            return "12:34"

        self.tool = now


def calls_now(pending: list[str] | None, *, answered: bool = False) -> Any:
    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = tool_call("c1", "now", '{"zone":"UTC"}', parent="a1")
        if answered:
            events.append(tool_result("t1", "c1", "server said 09:00"))
        outcome: dict[str, Any] = {"type": "success"}
        if pending is not None:
            outcome["pendingToolCallIds"] = pending
        return run(body, events, outcome=outcome)

    return script


def answers_with_text(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a2", "It is 12:34."))


async def test_a_pending_client_tool_runs_once_and_is_answered_in_a_new_run() -> None:
    clock = Clock()
    agent = Agent(calls_now(["c1"]), answers_with_text)

    async with agent.client() as client:
        response = await client.get_response([USER], ChatOptions(tools=[clock.tool]))

    assert clock.calls == ["UTC"]
    assert response.text == "It is 12:34."
    first, second = agent.bodies
    assert second["threadId"] == first["threadId"] and second["runId"] != first["runId"]
    assert second["messages"][-2:] == [
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "now", "arguments": '{"zone":"UTC"}'},
                }
            ],
        },
        {
            "id": second["messages"][-1]["id"],
            "role": "tool",
            "toolCallId": "c1",
            "content": "12:34",
        },
    ]


async def test_client_tools_are_advertised_on_every_run() -> None:
    clock = Clock()
    agent = Agent(calls_now(["c1"]), answers_with_text)

    async with agent.client() as client:
        await client.get_response([USER], ChatOptions(tools=[clock.tool]))

    assert [[t["name"] for t in b["tools"]] for b in agent.bodies] == [["now"], ["now"]]


async def test_pending_calls_are_derived_from_the_stream_when_the_outcome_lists_none() -> None:
    clock = Clock()
    agent = Agent(calls_now(None), answers_with_text)

    async with agent.client() as client:
        await client.get_response([USER], ChatOptions(tools=[clock.tool]))

    assert clock.calls == ["UTC"]


async def test_a_client_tool_call_the_server_answered_is_not_run() -> None:
    clock = Clock()
    agent = Agent(calls_now(None, answered=True))

    async with agent.client() as client:
        await client.get_response([USER], ChatOptions(tools=[clock.tool]))

    assert clock.calls == []
    assert len(agent.requests) == 1


async def test_a_call_the_outcome_does_not_list_as_pending_is_not_run() -> None:
    clock = Clock()
    agent = Agent(calls_now(["other"]))

    async with agent.client() as client:
        await client.get_response([USER], ChatOptions(tools=[clock.tool]))

    assert clock.calls == []


async def test_streaming_shows_the_call_before_its_local_result() -> None:
    clock = Clock()
    agent = Agent(calls_now(["c1"]), answers_with_text)

    async with agent.client() as client:
        updates = [
            u async for u in client.get_streaming_response([USER], ChatOptions(tools=[clock.tool]))
        ]

    kinds = [type(c).__name__ for u in updates for c in u.contents]
    assert kinds.index("FunctionCallContent") < kinds.index("FunctionResultContent")
    assert updates[-1].finish_reason == ChatFinishReason.STOP


# -------------------------------------------------------------------- approvals, locally


def guarded_clock() -> tuple[Clock, Any]:
    clock = Clock()
    return clock, approval_required(clock.tool)


async def test_approval_on_a_client_tool_is_asked_locally_without_a_resume() -> None:
    clock, guarded = guarded_clock()
    agent = Agent(calls_now(["c1"]), answers_with_text)
    options = ChatOptions(tools=[guarded])

    async with agent.client() as client:
        first = await client.get_response([USER], options)
        assert first.finish_reason == ChatFinishReason.INPUT_REQUIRED
        assert clock.calls == []
        (request,) = first.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        history = [USER, *first.messages, ChatMessage("user", [request.create_response(True)])]
        second = await client.get_response(history, options)

    assert clock.calls == ["UTC"]
    assert second.text == "It is 12:34."
    assert len(agent.requests) == 2
    assert "resume" not in agent.bodies[1]
    assert agent.bodies[1]["messages"][-1]["content"] == "12:34"


async def test_a_client_tool_rejected_locally_never_runs() -> None:
    clock, guarded = guarded_clock()
    agent = Agent(calls_now(["c1"]), answers_with_text)
    options = ChatOptions(tools=[guarded])

    async with agent.client() as client:
        first = await client.get_response([USER], options)
        answer = first.input_requests[0].create_response(False, "not now")  # type: ignore[attr-defined]
        await client.get_response([USER, *first.messages, ChatMessage("user", [answer])], options)

    assert clock.calls == []
    assert "resume" not in agent.bodies[1]
    assert "Tool call invocation rejected. not now" in agent.bodies[1]["messages"][-1]["content"]


async def test_the_tool_loop_leaves_a_servers_approval_to_the_server() -> None:
    clock = Clock()
    interrupt = {"id": "tok-1", "reason": "tool_call", "toolCallId": "c5"}

    def pauses(body: dict[str, Any]) -> list[dict[str, Any]]:
        return run(
            body,
            tool_call("c5", "delete_file", '{"path":"x"}', parent="a1"),
            outcome={"type": "interrupt", "interrupts": [interrupt]},
        )

    agent = Agent(pauses, answers_with_text)
    options = ChatOptions(tools=[clock.tool])
    async with agent.client() as client:
        first = await client.get_response([USER], options)
        answer = first.input_requests[0].create_response(True)  # type: ignore[attr-defined]
        await client.get_response([USER, *first.messages, ChatMessage("user", [answer])], options)

    assert agent.bodies[1]["resume"] == [
        {"interruptId": "tok-1", "status": "resolved", "payload": {"approved": True}}
    ]
    assert clock.calls == []


async def test_a_partial_answer_is_refused_before_any_local_tool_runs() -> None:
    clock, guarded = guarded_clock()

    def pauses(body: dict[str, Any]) -> list[dict[str, Any]]:
        return run(
            body,
            tool_call("c1", "now", '{"zone":"UTC"}', parent="a1"),
            outcome={
                "type": "interrupt",
                "interrupts": [{"id": "q-1", "reason": "input_required", "message": "Sure?"}],
            },
        )

    agent = Agent(pauses)
    options = ChatOptions(tools=[guarded])
    async with agent.client() as client:
        first = await client.get_response([USER], options)
        local = next(r for r in first.input_requests if isinstance(r, ToolApprovalRequestContent))
        history = [USER, *first.messages, ChatMessage("user", [local.create_response(True)])]
        with pytest.raises(UnansweredRequestError, match="q-1"):
            await client.get_response(history, options)

    assert clock.calls == []
    assert len(agent.requests) == 1


async def test_the_tool_loop_inside_is_reachable_as_a_service() -> None:
    agent = Agent()
    async with agent.client(max_iterations=7) as client:
        loop = client.get_service(FunctionInvokingChatClient)

    assert loop is not None and loop.max_iterations == 7
