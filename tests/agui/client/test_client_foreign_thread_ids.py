"""A server whose runs name another thread than the request's (aimock's AG-UI mock does
so): a ``ProtocolError`` that says the server broke which rule and how to proceed, and the
opt-in tolerance ``accept_foreign_thread_ids=True``, off by default."""

from __future__ import annotations

from typing import Any

import pytest
from agui_client_support import Agent, text

from agui_chat import ChatMessage, ProtocolError


def foreign_run(body: dict[str, Any]) -> list[dict[str, Any]]:
    ids = {"threadId": "mock-thread", "runId": body["runId"]}
    return [{"type": "RUN_STARTED", **ids}, *text("m1", "hello"), {"type": "RUN_FINISHED", **ids}]


async def test_the_error_names_the_server_the_rule_and_the_way_out() -> None:
    agent = Agent(foreign_run)
    async with agent.client() as client:
        with pytest.raises(ProtocolError) as caught:
            await client.get_response("hi")
    message = str(caught.value)
    request_thread = agent.bodies[0]["threadId"]
    assert (
        f"the server's RUN_STARTED names thread 'mock-thread', the request's is "
        f"'{request_thread}': the server does not echo threadId (AG-UI 1.0"
    ) in message
    assert "agui-wire §5.1" in message
    assert "accept_foreign_thread_ids=True" in message


async def test_the_tolerance_keeps_the_conversation_on_the_requests_thread() -> None:
    warnings: list[str] = []
    agent = Agent(foreign_run, foreign_run)
    async with agent.client(accept_foreign_thread_ids=True, on_warning=warnings.append) as client:
        first = await client.get_response("hi")
        assert first.text == "hello"
        history = [ChatMessage("user", "hi"), *first.messages, ChatMessage("user", "again")]
        second = await client.get_response(history)
    assert second.text == "hello"
    assert agent.bodies[1]["threadId"] == agent.bodies[0]["threadId"] != "mock-thread"
    tolerated = [w for w in warnings if "does not echo threadId" in w]
    assert len(tolerated) == 2  # once per request
    assert "tolerated (accept_foreign_thread_ids=True)" in tolerated[0]
