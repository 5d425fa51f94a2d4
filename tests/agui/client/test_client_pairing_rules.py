"""``AGUIChatClient`` pairs the answers to a remote pause with the tool loop's pairing step:
a partial answer and a second answer to one request are refused, before anything is sent,
with the same error and the same text as the tool loop gives in process."""

from __future__ import annotations

from typing import Any

import pytest
from agui_client_support import Agent, run, text, tool_call

from agui_chat import (
    ChatMessage,
    DuplicateResponseError,
    FunctionCallContent,
    FunctionInvokingChatClient,
    HumanInTheLoopError,
    UnansweredRequestError,
    ai_function,
    approval_required,
)
from agui_chat.testing import ScriptedChatClient

USER = ChatMessage("user", "delete two files", message_id="u1")


def remote_approval(interrupt_id: str, call_id: str) -> dict[str, Any]:
    return {"id": interrupt_id, "reason": "tool_call", "toolCallId": call_id}


def remote_pause(body: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = list(text("a1", "I will delete them."))
    for call_id in ("c1", "c2"):
        events += tool_call(call_id, "delete_file", '{"path":"/tmp/x"}', parent="a1")
    interrupts = [remote_approval("approval_c1", "c1"), remote_approval("approval_c2", "c2")]
    return run(body, *events, outcome={"type": "interrupt", "interrupts": interrupts})


async def refused_remotely(answer: Any, error: type[Exception]) -> str:
    agent = Agent(remote_pause)
    async with agent.client() as client:
        response = await client.get_response([USER])
        answers = answer(response.input_requests)
        history = [USER, *response.messages, ChatMessage("user", answers)]
        with pytest.raises(error) as caught:
            await client.get_response(history)
    assert len(agent.requests) == 1, "nothing may be sent for a refused answer"
    return str(caught.value)


async def refused_in_process(answer: Any, error: type[Exception]) -> str:
    runs: list[str] = []

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        runs.append(path)
        return "deleted"

    calls = [FunctionCallContent(c, "delete_file", {"path": "/tmp/x"}) for c in ("c1", "c2")]
    replies: list[Any] = [calls]
    loop = FunctionInvokingChatClient(
        ScriptedChatClient(lambda messages, options: replies.pop(0)),
        additional_tools=[delete_file],
    )
    response = await loop.get_response([USER])
    history = [USER, *response.messages, ChatMessage("user", answer(response.input_requests))]
    with pytest.raises(error) as caught:
        await loop.get_response(history)
    assert runs == []
    return str(caught.value)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (lambda rs: [rs[0].create_response(True)], UnansweredRequestError),
        (
            lambda rs: [rs[0].create_response(True), rs[1].create_response(True)] * 2,
            DuplicateResponseError,
        ),
    ],
    ids=["partial", "twice"],
)
async def test_the_client_refuses_as_the_tool_loop_does(
    answer: Any, error: type[HumanInTheLoopError]
) -> None:
    remote = await refused_remotely(answer, error)
    local = await refused_in_process(answer, error)
    assert remote == local
    assert "'approval_c2'" in remote or "'approval_c1'" in remote
