"""agui-wire §2: ``threadId``, ``runId``, ``messages``, ``state``, ``tools``, ``context`` and
``forwardedProps`` are on every ``RunAgentInput`` the client sends (0.x servers require the
last three), with ``protocolVersion: "1.0"`` — not only on a first turn, but on a resume, on
the follow-up run that answers a client-side tool, and on a retried request."""

from __future__ import annotations

from typing import Any

import httpx
from ag_ui.core import RunAgentInput
from agui_client_support import Agent, run, text, tool_call

from agui_chat import ChatMessage, ChatOptions, ai_function

ALWAYS = {"threadId", "runId", "messages", "state", "tools", "context", "forwardedProps"}
USER = ChatMessage("user", "go", message_id="u1")


def assert_complete(body: dict[str, Any]) -> None:
    assert set(body) >= ALWAYS, f"missing {ALWAYS - set(body)}"
    assert body["protocolVersion"] == "1.0"
    assert isinstance(body["tools"], list) and isinstance(body["context"], list)
    assert body["forwardedProps"] is not None
    RunAgentInput.model_validate(body)


def ok(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a9", "done"))


async def test_a_resume_carries_every_field() -> None:
    interrupt = {"id": "q-1", "reason": "input_required", "message": "Which?"}
    agent = Agent(lambda b: run(b, outcome={"type": "interrupt", "interrupts": [interrupt]}), ok)
    async with agent.client() as client:
        paused = await client.get_response([USER])
        answer = paused.input_requests[0].create_response("blue")  # type: ignore[attr-defined]
        await client.get_response([USER, *paused.messages, ChatMessage("user", [answer])])

    assert agent.bodies[1]["resume"] == [
        {"interruptId": "q-1", "status": "resolved", "payload": "blue"}
    ]
    for body in agent.bodies:
        assert_complete(body)


async def test_the_follow_up_run_for_a_client_tool_carries_every_field() -> None:
    @ai_function
    def now(zone: str) -> str:
        """The time in a zone."""
        return "12:00"

    def calls_now(body: dict[str, Any]) -> list[dict[str, Any]]:
        events = tool_call("c1", "now", '{"zone":"UTC"}', parent="a1")
        return run(body, events, outcome={"type": "success", "pendingToolCallIds": ["c1"]})

    agent = Agent(calls_now, ok)
    async with agent.client() as client:
        await client.get_response([USER], ChatOptions(tools=[now]))

    assert len(agent.bodies) == 2
    assert agent.bodies[1]["messages"][-1]["role"] == "tool"
    for body in agent.bodies:
        assert_complete(body)


async def test_a_retried_request_carries_every_field() -> None:
    agent = Agent(httpx.Response(503), ok)
    async with agent.client() as client:
        await client.get_response([USER])

    assert len(agent.bodies) == 2
    for body in agent.bodies:
        assert_complete(body)
