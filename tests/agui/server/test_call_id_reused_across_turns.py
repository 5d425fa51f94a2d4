"""The call-id trap (issue 25): a model (or a scripted stand-in, as the README's once was)
that gives every call the same id makes the second turn's approval name two different calls.
The server refuses it — nothing runs, and a call the person never saw is not run in place of
the one they approved — and now says why: a call id reused across turns. With an id of its
own per call, as the README's stand-in now does, both approvals run their call once.
Over real HTTP, through ``AGUIChatClient``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agui_chat import (
    ChatMessage,
    FunctionCallContent,
    RunError,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient

Start = Callable[[Any], Awaitable[str]]


def _agent(call_id: Callable[[list[ChatMessage]], str], deleted: list[str]) -> AGUIServer:
    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    def model(messages: list[ChatMessage], options: Any) -> Any:
        last = messages[-1]
        if last.role == "tool":
            return "Done."
        return [FunctionCallContent(call_id(messages), "delete_file", {"path": last.text})]

    return AGUIServer(
        ScriptedChatClient(model),
        tools=[delete_file],
        signing_key="a-test-key-that-is-long-enough-0123",
        approval_store=InMemoryApprovalStore(),
    )


async def _turn(client: AGUIChatClient, history: list[ChatMessage], text: str) -> None:
    """One request and the approval of its pause, the README's answer loop."""
    history.append(ChatMessage("user", text))
    response = await client.get_response(history)
    history += response.messages
    while response.input_requests:
        [request] = response.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        history.append(ChatMessage("user", [request.create_response(True)]))
        response = await client.get_response(history)
        history += response.messages


async def test_a_call_id_reused_across_turns_is_refused_naming_the_cause(
    live_server: Start,
) -> None:
    deleted: list[str] = []
    url = await live_server(_agent(lambda messages: "c1", deleted))
    history: list[ChatMessage] = []
    async with AGUIChatClient(url + "/") as client:
        await _turn(client, history, "a.txt")
        with pytest.raises(RunError) as refused:
            await _turn(client, history, "b.txt")
    assert deleted == ["a.txt"]  # b.txt was approved under a reused id: nothing ran
    assert refused.value.code == "APPROVAL_CALL_MISMATCH"
    assert refused.value.message == (
        "resume[0]: the history's tool call 'c1' differs from the call that was approved: an "
        "earlier call has that id (a call id reused across turns)"
    )


async def test_with_an_id_of_its_own_per_call_both_approvals_run_once(live_server: Start) -> None:
    deleted: list[str] = []
    url = await live_server(_agent(lambda messages: f"call_{len(messages)}", deleted))
    history: list[ChatMessage] = []
    async with AGUIChatClient(url + "/") as client:
        await _turn(client, history, "a.txt")
        await _turn(client, history, "b.txt")
    assert deleted == ["a.txt", "b.txt"]
