"""Issue 27 item 4: a LangChain decision the person gives as it is (through
``InterruptResponseContent``) goes to the peer as given, or is refused before anything is
sent, never flipped; a peer's interrupt naming a call no model made can only be answered to
that peer: a local tool of that name never runs."""

from __future__ import annotations

from typing import Any

import pytest
from agui_client_support import Agent, run
from test_client_dialects import USER, done, hitl_per_call, on_interrupt, pause_and_answer

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    ExpiredRequestError,
    FunctionInvokingChatClient,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    UnknownResponseError,
    ai_function,
)


def given(payload: Any) -> Any:
    return lambda requests: [InterruptResponseContent(requests[0].request_id, payload)]


@pytest.mark.parametrize(
    "decision",
    [
        {"type": "approve"},
        {"type": "reject", "message": "keep it"},
        {"type": "reject"},
        {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "b.txt"}}},
    ],
)
async def test_a_langchain_decision_given_by_hand_goes_to_the_peer_as_given(
    decision: dict[str, Any],
) -> None:
    agent = Agent(hitl_per_call, done)
    await pause_and_answer(agent, given(decision))
    assert agent.bodies[1]["resume"] == [
        {"interruptId": "lg-9", "status": "resolved", "payload": decision}
    ]


@pytest.mark.parametrize(
    "decision",
    [
        {"type": "approved"},
        {"type": "approve", "message": "sure"},
        {"type": "reject", "message": 7},
        {"type": "edit", "edited_action": {"name": "rm_rf", "args": {}}},
        {"type": "edit", "edited_action": {"name": "delete_file"}},
    ],
)
async def test_anything_else_is_refused_before_anything_is_sent(decision: dict[str, Any]) -> None:
    agent = Agent(hitl_per_call, done)
    with pytest.raises(InvalidResponseError, match="not a LangChain decision"):
        await pause_and_answer(agent, given(decision))
    assert len(agent.bodies) == 1  # only the first run went out


async def test_through_the_tool_loop_a_hand_decision_is_refused_before_sending() -> None:
    agent = Agent(hitl_per_call, done)
    async with agent.client() as raw:
        client = FunctionInvokingChatClient(raw)
        paused = await client.get_response([USER])
        (request,) = paused.input_requests
        answer = InterruptResponseContent(request.request_id, {"type": "approve"})
        history = [USER, *paused.messages, ChatMessage("user", [answer])]
        with pytest.raises(UnknownResponseError, match="create_response"):
            await client.get_response(history)
    assert len(agent.bodies) == 1


async def test_a_peer_interrupt_naming_a_local_tool_never_runs_it_and_goes_to_the_peer() -> None:
    ran: list[str] = []

    @ai_function
    def rm_local(path: str) -> str:
        """Remove a local file."""
        ran.append(path)
        return "removed"

    value = {"action_requests": [{"name": "rm_local", "args": {"path": "/etc"}}]}
    agent = Agent(lambda body: run(body, on_interrupt(value, "lg-5")), done)
    options = ChatOptions(tools=[rm_local])
    async with agent.client() as raw:
        client = FunctionInvokingChatClient(raw)
        paused = await client.get_response([USER], options)
        (request,) = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        assert (request.tool_call.name, request.tool_call.arguments) == (
            "rm_local",
            {"path": "/etc"},
        )
        # stored and loaded again, it is still the peer's call
        loaded = AIContent.from_dict(request.to_dict())
        assert isinstance(loaded, ToolApprovalRequestContent)
        assert type(loaded.tool_call) is type(request.tool_call)
        history = [USER, *paused.messages, ChatMessage("user", [request.create_response(True)])]
        await client.get_response(history, options)
    assert ran == []
    resumed = agent.bodies[1]
    assert resumed["forwardedProps"]["command"]["resume"] == {"decisions": [{"type": "approve"}]}
    # the call no model made is not written into the peer's history as one
    sent_calls = [c["id"] for m in resumed["messages"] for c in m.get("toolCalls", [])]
    assert "lg-5:0" not in sent_calls


def hitl_expiring(body: dict[str, Any]) -> list[dict[str, Any]]:
    """``hitl_per_call``'s pause, with an interrupt that expired long ago."""
    events = hitl_per_call(body)
    for event in events:
        for interrupt in (event.get("outcome") or {}).get("interrupts", []):
            interrupt["expiresAt"] = "2001-01-01T00:00:00Z"
    return events


@pytest.mark.parametrize(
    "decision",
    [
        {"type": "approve"},
        {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "b.txt"}}},
    ],
)
async def test_a_hand_decision_approving_past_the_expiry_is_refused_before_sending(
    decision: dict[str, Any],
) -> None:
    """A decision given by hand goes through the consent rules like any approval: past the
    interrupt's expiry it can only reject."""
    agent = Agent(hitl_expiring, done)
    with pytest.raises(ExpiredRequestError, match="expired"):
        await pause_and_answer(agent, given(decision))
    assert len(agent.bodies) == 1  # only the first run went out


async def test_a_hand_decision_rejecting_past_the_expiry_is_sent() -> None:
    agent = Agent(hitl_expiring, done)
    await pause_and_answer(agent, given({"type": "reject", "message": "too late"}))
    assert agent.bodies[1]["resume"][0]["payload"] == {"type": "reject", "message": "too late"}
