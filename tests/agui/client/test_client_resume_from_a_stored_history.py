"""agui-wire §5.4 resume obligations 1 and 2, and issue 4 item 6: a caller that stored the
conversation as JSON and answers later, from a NEW ``AGUIChatClient`` (say after a restart),
with no ids and no options, still resumes on the same ``threadId`` with a new ``runId``,
re-sends the paused call, and sends back the ``state`` the interrupted run left."""

from __future__ import annotations

import json
from typing import Any

from agui_client_support import Agent, run, text, tool_call

from agui_chat import ChatMessage, ToolApprovalRequestContent

USER = ChatMessage("user", "delete /tmp/x", message_id="u1")
INTERRUPT = {"id": "tok-1", "reason": "tool_call", "toolCallId": "c1"}


def pauses_with_state(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(
        body,
        {"type": "STATE_SNAPSHOT", "snapshot": {"step": "confirm", "files": ["/tmp/x"]}},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/asked", "value": True}]},
        tool_call("c1", "delete_file", '{"path":"/tmp/x"}', parent="a1"),
        outcome={"type": "interrupt", "interrupts": [INTERRUPT]},
    )


def resumed(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a2", "Done."))


def stored(messages: list[ChatMessage]) -> list[ChatMessage]:
    """What a caller gets back after saving the conversation as JSON and loading it."""
    return [
        ChatMessage.from_dict(m) for m in json.loads(json.dumps([m.to_dict() for m in messages]))
    ]


async def test_a_new_client_resumes_a_stored_conversation_with_its_thread_and_state() -> None:
    agent = Agent(pauses_with_state, resumed)
    async with agent.client() as first_client:
        paused = await first_client.get_response([USER])
    history = stored([USER, *paused.messages])
    (request,) = [
        c for m in history for c in m.contents if isinstance(c, ToolApprovalRequestContent)
    ]
    history.append(ChatMessage("user", [request.create_response(True)]))

    async with agent.client() as new_client:  # remembers nothing of the first run
        await new_client.get_response(history)

    first, resume = agent.bodies
    assert resume["threadId"] == first["threadId"]
    assert resume["runId"] != first["runId"]
    assert resume["state"] == {"step": "confirm", "files": ["/tmp/x"], "asked": True}
    assert resume["resume"] == [
        {"interruptId": "tok-1", "status": "resolved", "payload": {"approved": True}}
    ]
    assert resume["messages"][-1]["toolCalls"][0]["id"] == "c1"
